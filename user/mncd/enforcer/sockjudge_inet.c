// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockjudge_inet.c - the pre-taint sweep's decisions on IP sockets (sockscan_int.h): the
 * agent's own datagram sockets settled, sockets it did not create shut (TCP: the delivery
 * refused), and its TCP connections that egress would drop aborted; each reported. UNIX and
 * other sockets: sockjudge.c. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "inflight.h"
#include "mnc_util.h"
#include "sockscan_int.h"

static bool agent_cg(const mncd_sweep_cg *cgs, int ncg, uint64_t id);
static int destroy_tcp(ctx *c, const tent *e);
static bool tcp_may_send(uint8_t state);

/* IP sockets proved the agent's by INET_DIAG_CGROUP_ID in an earlier sweep. An unbound socket
 * in CLOSE state (fresh, or aborted by SOCK_DESTROY) is in no sock_diag dump, so its cgroup
 * cannot be read again. Kept by socket cookie (SO_COOKIE: 64 bits, never reused while the host
 * runs), not by inode number, which the kernel hands out again once its 32-bit counter wraps. */
#define OWN_CACHE 4096
static struct {
    uint64_t cookie;
    uint32_t agent;
} own_cache[OWN_CACHE];
static int own_next;

static uint64_t cookie_of(int fd)
{
    uint64_t c = 0;
    socklen_t l = sizeof(c);
    return getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &l) == 0 && l == sizeof(c) ? c : 0;
}

static bool own_cached(uint32_t agent, uint64_t cookie)
{
    for (int i = 0; cookie && i < OWN_CACHE; i++)
        if (own_cache[i].cookie == cookie && own_cache[i].agent == agent)
            return true;
    return false;
}

static void own_remember(uint32_t agent, uint64_t cookie)
{
    if (!cookie || own_cached(agent, cookie))
        return;
    own_cache[own_next].cookie = cookie;
    own_cache[own_next].agent = agent;
    own_next = (own_next + 1) % OWN_CACHE;
}

/* The TCP and UDP dumps, made at the first IP socket the sweep meets (sockdiag.h). false: they
 * failed (the sweep fails: c->failed, err set). */
static bool inet_ready(ctx *c)
{
    char why[256];
    c->saw_inet = true;
    if (mncd_diag_load_inet(&c->g, why, sizeof(why)) == 0)
        return true;
    c->failed = true;
    if (!c->err[0])
        mnc_errf(c->err, c->errlen, 0, "%s", why);
    return false;
}

static tent *inet_find(ctx *c, uint32_t ino)
{
    for (int i = 0; i < c->g.nt; i++)
        if (c->g.t[i].ino == ino)
            return &c->g.t[i];
    return NULL;
}

/* An IP socket (fd: mncd's copy). Created in the agent's cgroups: egress judges its packets by
 * that cgroup (TCP also by judge_tcp). Otherwise it leads outside: shut (a shut UDP, raw or
 * ping socket stays shut: sendto gets EPIPE even after a new connect), and for TCP the
 * delivery is refused as well: connect(AF_UNSPEC) clears a TCP socket's shutdown, and a new
 * connect on it would be judged by its creator's cgroup. */
/* The most datagrams one drain takes: far more than a receive buffer holds (a few hundred at the
 * default size, some thousands at rmem_max); reaching it means a peer keeps sending as fast as
 * mncd reads, and the delivery is refused rather than delivered onto a queue nobody emptied. */
#define DRAIN_MAX 65536

/* Disconnects a tainted agent's own connected datagram socket whose peer its taint disallows
 * (sock_inet, as connect4/6 judge; a peer agent's unregistered port counts as external here).
 * Why: on a connected socket send() meets no sendmsg4 hook, so the socket is state the agent
 * changes unjudged: a cork it grows (tx_queue, udp_cork_pending) and a connection it may drop
 * (AF_UNSPEC: state and rem_address, udp_disconnect_state); egress only drops the packets.
 * Disconnected, a send needs an address again, which sendmsg4 judges. */
static void disconnect_own_datagram(ctx *c, const sfd *s, int fd, uint32_t ino, bool in_flight)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t sl = sizeof(ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        return; /* not connected */
    struct mnc_inet_key k;
    memset(&k, 0, sizeof(k));
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *si = (const struct sockaddr_in *)&ss;
        k.family = AF_INET;
        memcpy(k.addr, &si->sin_addr, 4);
        k.port = ntohs(si->sin_port);
        inet_ntop(AF_INET, &si->sin_addr, ip, sizeof(ip));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *si = (const struct sockaddr_in6 *)&ss;
        mnc_inet_key_set6(&k, si->sin6_addr.s6_addr);
        k.port = ntohs(si->sin6_port);
        inet_ntop(AF_INET6, &si->sin6_addr, ip, sizeof(ip));
    } else {
        return;
    }
    unsigned cls = MNC_SINK_EXTERNAL;
    uint32_t id = MNC_ID_NONE;
    struct mnc_sink sk;
    if (mnc_inet_sink_lookup(c->sock_inet, &k, &sk) == 0) {
        cls = sk.cls;
        id = sk.id;
    }
    unsigned r = mnc_decide(c->t, cls, id);
    if (mnc_kreason_allows(r))
        return;
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = in_flight ? -1 : s->fd,
                        .ino = ino,
                        .action = "disconnect",
                        .kind = "udp",
                        .reason = r,
                        .dst_cls = cls,
                        .dst_id = id,
                        .why = "a connected datagram socket sends without the sendmsg hook"};
    snprintf(a.peer, sizeof(a.peer), ss.ss_family == AF_INET ? "%s:%u" : "[%s]:%u", ip, k.port);
    struct sockaddr un = {.sa_family = AF_UNSPEC};
    if (connect(fd, &un, sizeof(un)) != 0)
        a.err = errno;
    mncd_judge_report(c, &a);
}

/* A tainted agent's own datagram socket (UDP, UDP-Lite, ping), before the delivery:
 *   - a pending cork (MSG_MORE, UDP_CORK) is pushed out (UDP_CORK off), through egress, which
 *     judges it with the new taint: its length is tx_queue, data appended to it meets no hook;
 *   - IP_RECVERR / IPV6_RECVERR off, which purges the error queue: it counts in rx_queue, and an
 *     outsider can fill it with ICMP errors in the agent's name (udp_errqueue_self_source); a
 *     tainted agent may not set them again (mnc_sockopt_verdict);
 *   - connected to a peer the taint disallows: disconnected (disconnect_own_datagram);
 *   - the datagrams queued on it are dropped: how many of them the agent reads after the
 *     delivery is visible to every user (/proc/net/udp rx_queue, sock_diag), and an outsider
 *     could have queued them while the agent was untainted (udp_recvq_filled_before). After the
 *     taint cgroup_skb/ingress admits only peers the agent may send to.
 * The agent loses the datagrams that arrived before the delivery and that it had not read (UDP
 * promises no delivery; DNS and QUIC retransmit) and a cork it had not finished. */
static void settle_own_datagrams(ctx *c, const sfd *s, int fd, uint32_t ino, const char *why, bool in_flight)
{
    int type = 0, dom = 0, proto = 0, off = 0;
    socklen_t l = sizeof(type);
    if (!c->t->tainted || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 || type != SOCK_DGRAM)
        return;
    l = sizeof(dom);
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l);
    l = sizeof(proto);
    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
    /* errors are ignored: a ping socket has no UDP_CORK, an IPv4 socket no IPV6_RECVERR */
    if (proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE)
        (void)setsockopt(fd, IPPROTO_UDP, UDP_CORK, &off, sizeof(off));
    (void)setsockopt(fd, IPPROTO_IP, IP_RECVERR, &off, sizeof(off));
    if (dom == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &off, sizeof(off));
    disconnect_own_datagram(c, s, fd, ino, in_flight);
    long n = 0;
    char b;
    int err = 0, errs = 0;
    while (!err) {
        ssize_t r = recv(fd, &b, 1, MSG_DONTWAIT | MSG_TRUNC);
        if (r >= 0) {
            if (++n > DRAIN_MAX)
                err = E2BIG;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break; /* empty */
        } else if (errno != EINTR && ++errs > 16) {
            /* a pending error (ICMP on a connected socket) is consumed by the recv that reports
             * it, with datagrams possibly queued behind it; one that never clears is a failure */
            err = errno;
        }
    }
    if (n == 0 && !err)
        return;
    char w[160];
    snprintf(w, sizeof(w),
             "%s%s%ld datagram(s) queued before the delivery dropped: how many the agent reads is "
             "visible to every user",
             in_flight ? why : "", in_flight ? "; " : "", n);
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = in_flight ? -1 : s->fd,
                        .ino = ino,
                        .why = w,
                        .action = "drain",
                        .kind = proto == IPPROTO_UDP ? "udp" : "inet",
                        .reason = MNC_K_DENY_EXTERNAL,
                        .dst_cls = MNC_SINK_EXTERNAL,
                        .dst_id = MNC_ID_NONE,
                        .err = err};
    snprintf(a.peer, sizeof(a.peer), "(its receive queue)");
    mncd_judge_report(c, &a);
}

void mncd_judge_inet(ctx *c, const sfd *s, int fd, uint32_t ino, const char *why, bool in_flight)
{
    if (!inet_ready(c))
        return;
    tent *e = inet_find(c, ino);
    struct stat st;
    if (fstat(fd, &st) != 0)
        st.st_uid = (uid_t)-1;
    bool own = e && e->has_cg ? agent_cg(c->cgs, c->ncg, e->cgid)
                              : own_cached(c->agent, cookie_of(fd)) || mncd_judge_own_by_uid(c, st.st_uid) == 1;
    if (own) {
        if (e && e->has_cg)
            own_remember(c->agent, cookie_of(fd));
        settle_own_datagrams(c, s, fd, ino, why, in_flight);
        return;
    }
    c->st->foreign++;
    int type = 0, proto = 0;
    socklen_t l = sizeof(type);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
    l = sizeof(proto);
    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = in_flight ? -1 : s->fd,
                        .ino = ino,
                        .why = why,
                        .action = "shutdown",
                        .kind = proto == IPPROTO_TCP   ? "tcp"
                                : proto == IPPROTO_UDP ? "udp"
                                                       : "inet",
                        .dst_cls = MNC_SINK_EXTERNAL,
                        .dst_id = MNC_ID_NONE};
    a.reason = mnc_decide(c->t, MNC_SINK_EXTERNAL, MNC_ID_NONE);
    if (mnc_kreason_allows(a.reason)) {
        c->st->kept++;
        return;
    }
    /* shut both ways already (an earlier sweep): a datagram socket stays so; TCP is refused again */
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    if (type != SOCK_STREAM && poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP))
        return;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t sl = sizeof(ss);
    char ip[INET6_ADDRSTRLEN] = "?";
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET) {
        struct sockaddr_in *si = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &si->sin_addr, ip, sizeof(ip));
        snprintf(a.peer, sizeof(a.peer), "%s:%u", ip, ntohs(si->sin_port));
    } else if (ss.ss_family == AF_INET6 && sl >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 *si = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &si->sin6_addr, ip, sizeof(ip));
        snprintf(a.peer, sizeof(a.peer), "[%s]:%u", ip, ntohs(si->sin6_port));
    } else {
        snprintf(a.peer, sizeof(a.peer), "(unconnected)");
    }
    if (e && e->proto == IPPROTO_TCP && tcp_may_send(e->state)) {
        int r = destroy_tcp(c, e); /* the current connection ends at once (ECONNABORTED) */
        if (r == 0)
            a.action = "destroy+shutdown";
    }
    if (shutdown(fd, SHUT_RDWR) != 0 && errno != ENOTCONN)
        a.err = errno;
    /* lsm: a send on it is judged by the sending task, and connect(AF_UNSPEC) too: shut stays */
    if (mncd_judge_report(c, &a) != 0 || a.err || type != SOCK_STREAM || c->lsm)
        return;
    mncd_sweep_act b = a;
    b.action = "refuse";
    b.refuse = true;
    b.why = "a TCP socket created outside the agent cannot be shut for good (connect(AF_UNSPEC) re-arms it, "
            "and the hooks judge it by its creator's cgroup)";
    mncd_judge_report(c, &b);
}

/* ---- TCP: what egress would drop, aborted at once */

static bool tcp_may_send(uint8_t state)
{
    /* ESTABLISHED, SYN_SENT, FIN_WAIT1, CLOSE_WAIT, LAST_ACK, CLOSING */
    return state == 1 || state == 2 || state == 4 || state == 8 || state == 9 || state == 11;
}

static int inet_lookup(ctx *c, const tent *e, struct mnc_sink *s)
{
    struct mnc_inet_key k;
    memset(&k, 0, sizeof(k));
    mnc_inet_key_set6(&k, e->dst); /* sock_diag gives IPv4 as v4-mapped: back to IPv4 */
    k.port = e->dport;
    return mnc_inet_sink_lookup(c->sock_inet, &k, s);
}

static bool agent_cg(const mncd_sweep_cg *cgs, int ncg, uint64_t id)
{
    for (int i = 0; i < ncg; i++)
        if (cgs[i].cgid == id)
            return true;
    return false;
}

static int destroy_tcp(ctx *c, const tent *e) { return mncd_diag_destroy_tcp(&c->g, e); }

void mncd_judge_tcp(ctx *c, const mncd_sweep_cg *cgs, int ncg)
{
    /* no IP socket held or in flight: nothing of the agent's to abort promptly (a TCP socket
     * made in its cgroups and held elsewhere is still judged per packet by egress) */
    if (!c->saw_inet || !inet_ready(c))
        return;
    for (int i = 0; i < c->g.nt && !c->failed; i++) {
        tent *e = &c->g.t[i];
        if (e->proto != IPPROTO_TCP)
            continue; /* UDP: egress gives EPERM per packet; foreign ones are judge_inet's */
        /* the socket's cgroup, as egress identifies it (bpf_skb_cgroup_id); kernels without the
         * attribute: the sockets the agent's processes hold */
        bool ours = e->has_cg ? agent_cg(cgs, ncg, e->cgid) : (e->ino && mncd_u32set_has(&c->sc.inos, e->ino));
        if (!ours || !tcp_may_send(e->state) || !c->t->tainted)
            continue;
        unsigned cls = MNC_SINK_EXTERNAL;
        uint32_t id = MNC_ID_NONE;
        struct mnc_sink s;
        if (inet_lookup(c, e, &s) == 0) {
            cls = s.cls;
            id = s.id;
        } else {
            /* a local peer: the other end of the pair is in the table; its creator's agent is
             * the destination (like egress's loopback socket lookup) */
            for (int j = 0; j < c->g.nt; j++) {
                tent *p = &c->g.t[j];
                if (p == e || p->proto != IPPROTO_TCP || p->sport != e->dport || p->dport != e->sport ||
                    memcmp(p->src, e->dst, 16) || memcmp(p->dst, e->src, 16) || !p->has_cg)
                    continue;
                struct mnc_agent pa;
                if (mnc_kern_lookup_cgroup(c->k, p->cgid, &pa) == 0) {
                    cls = MNC_SINK_AGENT;
                    id = pa.agent_id;
                }
                break;
            }
            if (cls == MNC_SINK_AGENT && id == c->agent) {
                c->st->kept++;
                continue; /* between processes of the same agent */
            }
        }
        unsigned r = mnc_decide(c->t, cls, id);
        if (mnc_kreason_allows(r)) {
            c->st->kept++;
            continue;
        }
        mncd_sweep_act a = {
            .ino = e->ino, .fd = -1, .kind = "tcp", .action = "destroy", .reason = r, .dst_cls = cls, .dst_id = id};
        char ip[INET6_ADDRSTRLEN] = "?";
        inet_ntop(e->v4 ? AF_INET : AF_INET6, e->v4 ? (const void *)(e->dst + 12) : (const void *)e->dst, ip,
                  sizeof(ip));
        snprintf(a.peer, sizeof(a.peer), e->v4 ? "%s:%u" : "[%s]:%u", ip, e->dport);
        int rc = destroy_tcp(c, e);
        if (rc == -EOPNOTSUPP) {
            /* CONFIG_INET_DIAG_DESTROY off: egress still drops every packet; only the prompt
             * error is lost. Not a reason to refuse the delivery. */
            c->st->tcp_destroy_unsupported++;
            continue;
        }
        if (rc == -ENOENT)
            continue; /* closed meanwhile */
        a.err = rc < 0 ? -rc : 0;
        mncd_judge_report(c, &a);
    }
}
