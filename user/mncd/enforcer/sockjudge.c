// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockjudge.c - the pre-taint sweep's decisions (sockscan_int.h): the kernel's rules applied
 * to the peer of each existing connection of a tainted agent, and what is done about a
 * disallowed one (shutdown, disconnect, drain, destroy), each reported. */
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

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* ---- decisions: the kernel's rules, on the peer of an existing connection */

/* A peer's bound name for the audit: an abstract name as '@' and all its bytes (its length is
 * part of it: "@name?" is "\0name\0"), a pathname up to its first NUL; '?' for any byte
 * outside 0x20..0x7e. */
static void peer_text(const char *name, int len, char *out, size_t n)
{
    if (len <= 0) {
        snprintf(out, n, "(unnamed)");
        return;
    }
    bool abstract = name[0] == 0;
    size_t j = 0;
    for (int i = 0; i < len && j + 1 < n; i++) {
        char c = name[i];
        if (i == 0 && abstract)
            c = '@';
        else if (c == 0 && !abstract)
            break;
        out[j++] = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    out[j] = 0;
}

/* A UNIX peer by its bound name (len bytes of sun_path, as sock_diag reports it; type: the
 * socket's, which is its peer's too), keyed by the
 * same mnc_unix_key_build the connect_unix/sendmsg_unix hooks use. */
static unsigned decide_unix_name(ctx *c, const char *name, int len, unsigned type, unsigned *cls, uint32_t *id)
{
    *cls = MNC_SINK_EXTERNAL;
    *id = MNC_ID_NONE;
    if (len <= 0)
        return mnc_decide(c->t, *cls, *id); /* unnamed peer: nobody we can name */
    union mnc_unix_buf b;
    memset(&b, 0, sizeof(b));
    uint32_t n = len < MNC_UNIX_PATH_MAX ? (uint32_t)len : MNC_UNIX_PATH_MAX;
    memcpy(b.key.path, name, n);
    int kind = mnc_unix_key_build(&b, n, type);
    if (kind == MNC_UNIX_PATHNAME && c->t->tainted && !mnc_unix_key_canonical(&b))
        return MNC_K_DENY_UNIX_PATH;
    struct mnc_sink s;
    if (mnc_unix_sink_lookup(c->sock_unix, &b, &s) == 0) {
        *cls = s.cls;
        *id = s.id;
    }
    return mnc_decide(c->t, *cls, *id);
}

static const char *unix_kind(uint8_t type)
{
    return type == SOCK_STREAM ? "unix_stream" : type == SOCK_SEQPACKET ? "unix_seqpacket" : "unix_dgram";
}

/* Is the process that connected this socket (or made the pair) one of the agent's? pfd: a
 * copy of the PEER socket; SO_PEERPIDFD names the task whose credentials the peer recorded at
 * connect()/socketpair() (the connector), as a pidfd, so a reused pid cannot fool it. Linux
 * 6.18 has no SO_PEERCGROUPID (checked on the CI kernel: option 83 is SO_PASSRIGHTS). */
static bool connector_in_agent(ctx *c, int pfd)
{
    int pidfd = -1;
    socklen_t l = sizeof(pidfd);
    if (getsockopt(pfd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) != 0 || pidfd < 0)
        return false;
    char p[64], b[512];
    snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", pidfd);
    long pid = -1;
    if (mnc_read_file(p, b, sizeof(b)) == 0) {
        const char *q = strstr(b, "\nPid:");
        if (q)
            pid = strtol(q + 5, NULL, 10); /* -1: exited */
    }
    close(pidfd);
    return pid > 0 && pid <= INT_MAX && mncd_u32set_has(&c->sc.pids, (uint32_t)pid);
}

/* fd `fd` of pid holding socket ino, found by reading /proc/PID/fd: 0 (*out filled) or -1 */
static int held_by(pid_t pid, uint32_t ino, mncd_holder *out)
{
    char dp[64];
    snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dp);
    if (!d)
        return -1;
    int rc = -1;
    for (struct dirent *de; rc && (de = readdir(d));) {
        char link[64];
        ssize_t n = de->d_name[0] == '.' ? -1 : readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = 0;
        if (mncd_socket_ino(link) == ino) {
            *out = (mncd_holder){ino, pid, atoi(de->d_name)};
            rc = 0;
        }
    }
    closedir(d);
    return rc;
}

/* A process outside the agent holding socket `peer`, the peer of the agent's socket (fd: mncd's
 * copy of it). First the process whose credentials the connection recorded (SO_PEERCRED: the
 * listener's, or the pair's maker): the usual holder, found without walking the host; else the
 * host pass (hostscan.h). 0 (*h filled) or -1 (none found, or the pass failed: c->failed). */
static int peer_holder(ctx *c, int fd, uint32_t peer, mncd_holder *h)
{
    struct ucred uc;
    socklen_t l = sizeof(uc);
    if (!c->hs_done && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) == 0 && uc.pid > 0 && uc.pid != getpid() &&
        !mncd_u32set_has(&c->sc.pids, (uint32_t)uc.pid) && held_by(uc.pid, peer, h) == 0)
        return 0;
    if (mncd_sweep_hostscan(c) != 0)
        return -1;
    const mncd_holder *x = mncd_hostscan_holder(&c->hs, peer);
    if (!x)
        return -1;
    *h = *x;
    return 0;
}

/* Did a process of the agent create this UNIX socket (fd: mncd's copy)? Proof by the inode's
 * owner uid (the creator's fsuid); where the uid cannot tell (root or unknown-uid instances),
 * by the connector of its peer (connector_in_agent), read on an outside holder's copy of the
 * peer: a socket the agent connected itself. No proof (unconnected, a datagram peer, the peer
 * in flight, the connector exited): not the agent's. */
static bool unix_own(ctx *c, int fd, const uent *e)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    int r = mncd_judge_own_by_uid(c, st.st_uid);
    if (r >= 0)
        return r == 1;
    if (!e->peer || e->peer == UINT32_MAX)
        return false;
    mncd_holder h;
    int pfd = peer_holder(c, fd, e->peer, &h) == 0 ? mncd_grab(h.pid, h.fd, e->peer) : -1;
    if (pfd < 0)
        return false;
    bool own = connector_in_agent(c, pfd);
    close(pfd);
    return own;
}

/* Everything queued to the agent on a socket mncd shut: received and discarded, every fd in
 * flight closed (it would otherwise reach the agent after the sweep). */
static void drain_report(ctx *c, const mncd_sweep_act *a0, int fd)
{
    int n = 0;
    long b = 0;
    int r = mncd_drain(fd, &n, &b);
    c->st->inflight_fds += n;
    if (r == 0 && n == 0)
        return;
    char why[128];
    snprintf(why, sizeof(why), "%d fd(s) in flight and %ld byte(s) queued to the agent, discarded", n, b);
    mncd_sweep_act a = *a0;
    a.action = "drain";
    a.why = why;
    a.refuse = false;
    a.err = r < 0 ? -r : 0;
    mncd_judge_report(c, &a);
}

/* how: SHUT_RDWR (then drained), SHUT_WR (receiving stays; the caller peeks), or -1 (the
 * agent's own connected datagram socket: only disconnected; its sendto stays judged by
 * sendmsg_unix). A connected datagram socket is disconnected first in every case. */
static void shut_unix(ctx *c, mncd_sweep_act *a, const uent *e, int fd, int how)
{
    a->action = "shutdown";
    if (e->type == SOCK_DGRAM && e->peer) {
        struct sockaddr sa = {.sa_family = AF_UNSPEC};
        a->action = how == -1 ? "disconnect" : "disconnect+shutdown";
        if (connect(fd, &sa, sizeof(sa)) != 0)
            a->err = errno;
    }
    /* a shutdown of an unconnected socket still marks it (ENOTCONN): later sends get EPIPE */
    if (!a->err && how != -1 && shutdown(fd, how) != 0 && errno != ENOTCONN)
        a->err = errno;
    if (mncd_judge_report(c, a) != 0 || a->err)
        return;
    if (how == SHUT_RDWR)
        drain_report(c, a, fd);
}

static void judge_inflight_fd(ctx *c, const sfd *s, int fd);

typedef struct peekctx {
    ctx *c;
    const sfd *s;
} peekctx;

static int inflight_cb(void *arg, int fd)
{
    peekctx *p = arg;
    judge_inflight_fd(p->c, p->s, fd);
    return p->c->failed ? -ECANCELED : 0;
}

/* A socket the agent keeps receiving on: every fd queued on it is judged (inflight.h). A
 * listener has no queue of its own (its pending connections are shut_listener's), nor has a
 * stream or seqpacket socket that was never connected (the kernel's state, as dumped while the
 * agent is frozen: nothing can reach it; recvmsg would fail EINVAL or ENOTCONN). */
static void peek_unix(ctx *c, const sfd *s, const uent *e, int fd)
{
    if (e->state == UNIX_LISTEN || c->failed || (e->type != SOCK_DGRAM && e->state == UNIX_UNCONNECTED))
        return;
    int n = 0;
    peekctx p = {c, s};
    int r = mncd_peek_inflight(fd, e->type, inflight_cb, &p, &n);
    c->st->inflight_fds += n;
    if (r && !c->failed) {
        mncd_sweep_act a = {.pid = s->pid,
                            .fd = s->fd,
                            .ino = s->ino,
                            .kind = unix_kind(e->type),
                            .action = "inspect",
                            .why = r == -E2BIG ? "its receive queue is longer than mncd inspects (16384 messages or "
                                                 "64 MiB): fds in flight to the agent may be missed"
                                   : r == -EMSGSIZE ? "control data truncated: some fds in flight to the agent not seen"
                                                    : "peek of the fds in flight to the agent on its receive queue",
                            .err = r == -E2BIG ? E2BIG : -r,
                            .dst_cls = MNC_SINK_EXTERNAL,
                            .dst_id = MNC_ID_NONE};
        snprintf(a.peer, sizeof(a.peer), "(receive queue)");
        mncd_judge_report(c, &a);
    }
}

/* A listener of a tainted agent: shut it (no new connections: ECONNREFUSED) and take and shut
 * the connections still waiting in its backlog (accepted later they would be unjudged). */
static void shut_listener(ctx *c, const sfd *s, const uent *e, int fd)
{
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = s->fd,
                        .ino = s->ino,
                        .kind = "unix_listener",
                        .action = "shutdown",
                        .dst_cls = MNC_SINK_EXTERNAL,
                        .dst_id = MNC_ID_NONE,
                        .reason = MNC_K_DENY_EXTERNAL};
    peer_text(e->name, e->namelen, a.peer, sizeof(a.peer));
    if (shutdown(fd, SHUT_RDWR) != 0)
        a.err = errno;
    if (mncd_judge_report(c, &a) != 0 || a.err)
        return;
    /* The open file is shared with the agent, which is frozen: O_NONBLOCK for the drain is
     * invisible to it and restored before the thaw. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        mncd_sweep_act b = a;
        b.action = "drain";
        b.err = errno;
        mncd_judge_report(c, &b);
        return;
    }
    for (int i = 0; i < 100000; i++) {
        int p = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (p < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINVAL) {
                mncd_sweep_act b = a;
                b.kind = "unix_pending";
                b.action = "drain";
                b.err = errno;
                mncd_judge_report(c, &b);
            }
            break; /* EINVAL: a shut-down listener with an empty backlog */
        }
        mncd_sweep_act b = a;
        b.kind = "unix_pending";
        b.fd = -1;
        struct stat st;
        b.ino = fstat(p, &st) == 0 ? (uint32_t)st.st_ino : 0;
        snprintf(b.peer, sizeof(b.peer), "(pending connection on %.150s)", a.peer);
        if (shutdown(p, SHUT_RDWR) != 0)
            b.err = errno;
        close(p); /* closing it also drops whatever the client queued, fds included */
        mncd_judge_report(c, &b);
    }
    if (fcntl(fd, F_SETFL, fl) != 0) {
        mncd_sweep_act b = a;
        b.action = "restore flags";
        b.err = errno;
        mncd_judge_report(c, &b);
    }
}

/* The peer's bound name: from the table, else (peer in another network namespace) from the
 * socket itself. Returns its length (0: unnamed). */
static int unix_peer_name(ctx *c, const uent *e, int fd, char name[MNC_UNIX_PATH_MAX])
{
    int len = 0;
    const uent *pe = e->peer ? mncd_diag_unix_find(&c->g, e->peer) : NULL;
    if (pe) {
        len = pe->namelen;
        memcpy(name, pe->name, (size_t)len);
    } else if (e->peer) {
        struct sockaddr_un su;
        socklen_t sl = sizeof(su);
        if (getpeername(fd, (struct sockaddr *)&su, &sl) == 0 && sl > offsetof(struct sockaddr_un, sun_path)) {
            len = (int)(sl - offsetof(struct sockaddr_un, sun_path));
            if (len > MNC_UNIX_PATH_MAX)
                len = MNC_UNIX_PATH_MAX;
            memcpy(name, su.sun_path, (size_t)len);
        }
    }
    while (len > 0 && name[0] != 0 && name[len - 1] == 0)
        len--; /* pathnames may carry their terminating NUL */
    return len;
}

static void held_why(const mncd_holder *h, const uent *e, char *why, size_t n)
{
    snprintf(why, n, "%s socket %" PRIu32 " is also held outside the agent by pid %d fd %d",
             h->ino == e->ino ? "this" : "the peer", h->ino, (int)h->pid, h->fd);
}

/* A pair of the agent's own sockets that leads outside after all (why): shut both ways and
 * drained. */
static void shut_pair(ctx *c, mncd_sweep_act *a, const uent *e, int fd, const char *why)
{
    a->why = why;
    snprintf(a->peer, sizeof(a->peer), "(the agent's own socket %" PRIu32 ")", e->peer);
    shut_unix(c, a, e, fd, SHUT_RDWR);
}

void mncd_judge_pairs(ctx *c)
{
    if (!c->npend)
        return;
    if (!c->failed && mncd_sweep_hostscan(c) == 0)
        for (int i = 0; i < c->npend && !c->failed; i++) {
            pend *p = &c->pend[i];
            const mncd_holder *h = mncd_hostscan_holder(&c->hs, p->e.ino);
            if (!h)
                h = mncd_hostscan_holder(&c->hs, p->e.peer);
            if (!h)
                continue;
            char why[192];
            held_why(h, &p->e, why, sizeof(why));
            mncd_sweep_act a = {.pid = p->s.pid,
                                .fd = p->s.fd,
                                .ino = p->s.ino,
                                .kind = unix_kind(p->e.type),
                                .dst_cls = MNC_SINK_EXTERNAL,
                                .dst_id = MNC_ID_NONE,
                                .reason = mnc_decide(c->t, MNC_SINK_EXTERNAL, MNC_ID_NONE)};
            c->st->kept--;
            shut_pair(c, &a, &p->e, p->fd, why);
        }
    for (int i = 0; i < c->npend; i++)
        close(c->pend[i].fd);
    c->npend = 0;
}

/* Is name (len bytes) bound by a listener the agent holds? A connection to it waiting in its
 * backlog then has both ends in the agent. */
static bool agent_listener_named(ctx *c, const char *name, int len)
{
    for (int i = 0; i < c->g.nu; i++) {
        const uent *l = &c->g.u[i];
        if (l->state == UNIX_LISTEN && l->namelen == len && memcmp(l->name, name, (size_t)len) == 0 &&
            mncd_u32set_has(&c->sc.inos, l->ino))
            return true;
    }
    return false;
}

/* One UNIX socket of the agent (fd: mncd's copy of it). */
void mncd_judge_unix(ctx *c, const sfd *s, const uent *e, int fd)
{
    bool dead = (e->shut & 3) == 3; /* shut both ways (e.g. by an earlier sweep): nothing can be sent */
    if (e->state == UNIX_LISTEN) {
        if (!dead && c->t->tainted)
            shut_listener(c, s, e, fd);
        return;
    }
    uent named;
    if (!e->peer && e->type != SOCK_DGRAM && e->state == UNIX_ESTABLISHED) {
        /* connected, yet sock_diag names no peer inode: the peer is a connection still waiting
         * in a listener's backlog (it gets an inode at accept(); what the agent writes now is
         * read after it: attack preconnect_unix_backlog), or it was released. getpeername
         * names the listener: judged by that name. */
        named = *e;
        named.peer = UINT32_MAX;
        e = &named;
        char nm[MNC_UNIX_PATH_MAX];
        int len = unix_peer_name(c, e, fd, nm);
        if (len > 0 && agent_listener_named(c, nm, len)) {
            c->st->kept += !dead; /* the agent's own listener: both ends in the agent */
            peek_unix(c, s, e, fd);
            return;
        }
    }
    if (e->peer && mncd_u32set_has(&c->sc.mine, e->peer)) {
        c->st->kept += !dead; /* the monitor (mncd never passes fds) */
        return;
    }
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = s->fd,
                        .ino = s->ino,
                        .kind = unix_kind(e->type),
                        .dst_cls = MNC_SINK_EXTERNAL,
                        .dst_id = MNC_ID_NONE};
    char why[192];
    if (e->peer && mncd_u32set_has(&c->sc.inos, e->peer)) {
        /* both ends in the agent: no boundary crossed, unless a process outside holds either
         * end too, or the agent's data in flight to an outside peer may carry one */
        a.reason = mnc_decide(c->t, MNC_SINK_EXTERNAL, MNC_ID_NONE);
        if (mnc_kreason_allows(a.reason) || dead) {
            c->st->kept += !dead;
            peek_unix(c, s, e, fd);
            return;
        }
        if (c->out_inflight) {
            snprintf(why, sizeof(why), "the agent's data in flight to an outside peer may carry it (%s)", c->out_what);
            shut_pair(c, &a, e, fd, why);
            return;
        }
        if (c->defer) { /* kept for now; its outside holders are looked for after the thaw */
            c->st->kept++;
            peek_unix(c, s, e, fd);
            int copy = c->failed ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
            if (copy < 0 || mnc_grow((void **)&c->pend, &c->cpend, c->npend, sizeof(*c->pend), 8) != 0) {
                if (copy >= 0)
                    close(copy);
                if (!c->failed && !c->err[0])
                    mnc_errf(c->err, c->errlen, 0, "keep socket %" PRIu32 " for the pair check: %s", e->ino,
                             strerror(copy < 0 ? errno : ENOMEM));
                c->failed = true;
                return;
            }
            c->pend[c->npend++] = (pend){*s, *e, copy};
            return;
        }
        if (mncd_sweep_hostscan(c) != 0)
            return;
        const mncd_holder *h = mncd_hostscan_holder(&c->hs, e->ino);
        if (!h)
            h = mncd_hostscan_holder(&c->hs, e->peer);
        if (!h) {
            c->st->kept++;
            peek_unix(c, s, e, fd);
            return;
        }
        held_why(h, e, why, sizeof(why));
        shut_pair(c, &a, e, fd, why);
        return;
    }
    if (dead) {
        peek_unix(c, s, e, fd); /* what is queued can still be read */
        return;
    }
    char name[MNC_UNIX_PATH_MAX];
    int len = unix_peer_name(c, e, fd, name);
    if (e->peer)
        peer_text(name, len, a.peer, sizeof(a.peer));
    else
        snprintf(a.peer, sizeof(a.peer), "(unconnected)");
    if (!unix_own(c, fd, e)) {
        /* the cgroup hooks judge its connect/sendto by its creator's cgroup: leads outside */
        c->st->foreign++;
        a.why = "created outside the agent";
        a.reason = mnc_decide(c->t, MNC_SINK_EXTERNAL, MNC_ID_NONE);
        /* a named datagram socket receives from anyone who knows its name: how many of an
         * outsider's datagrams the agent reads shows in UNIX_DIAG_RQLEN (unix_dgram_rqlen_given),
         * so it is shut for receiving too (senders then get EPIPE) and drained */
        bool named_dgram = !e->peer && e->type == SOCK_DGRAM && e->namelen;
        int how = e->peer || named_dgram ? SHUT_RDWR : SHUT_WR;
        int done = how == SHUT_RDWR ? 3 : 2; /* e->shut: RCV 1, SEND 2 */
        if (mnc_kreason_allows(a.reason) || (!e->peer && (e->shut & done) == done)) {
            c->st->kept += mnc_kreason_allows(a.reason); /* else: shut by an earlier sweep */
            peek_unix(c, s, e, fd);
            return;
        }
        shut_unix(c, &a, e, fd, how);
        if (how == SHUT_WR)
            peek_unix(c, s, e, fd);
        return;
    }
    if (!e->peer) {
        peek_unix(c, s, e, fd); /* the agent's own: a later connect()/sendto() is hooked */
        return;
    }
    a.reason = decide_unix_name(c, name, len, e->type, &a.dst_cls, &a.dst_id);
    if (mnc_kreason_allows(a.reason)) {
        c->st->kept++;
        peek_unix(c, s, e, fd);
        return;
    }
    if (e->type == SOCK_DGRAM) {
        /* disconnect (POSIX: connect with AF_UNSPEC): a send() without address then fails with
         * ENOTCONN; a sendto() with an address is judged by sendmsg_unix as usual */
        shut_unix(c, &a, e, fd, -1);
        peek_unix(c, s, e, fd);
    } else {
        shut_unix(c, &a, e, fd, SHUT_RDWR);
    }
}

/* A socket our tables do not know: a UNIX socket in another network namespace, or another
 * family. UNIX ones are judged from the socket itself; the peer's inode is then unknown, so
 * only its name counts. */
void mncd_judge_other(ctx *c, const sfd *s, int fd)
{
    int dom = 0, type = 0, acc = 0, proto = 0;
    socklen_t l = sizeof(dom);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) != 0) {
        mncd_sweep_act a = {
            .pid = s->pid, .fd = s->fd, .ino = s->ino, .kind = "socket", .action = "inspect", .err = errno};
        snprintf(a.peer, sizeof(a.peer), "?");
        mncd_judge_report(c, &a);
        return;
    }
    if (dom == AF_INET || dom == AF_INET6) {
        mncd_judge_inet(c, s, fd, s->ino, "created outside the agent", false);
        return;
    }
    l = sizeof(type);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
    l = sizeof(proto);
    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
    if (dom != AF_UNIX) {
        struct stat st;
        /* Netlink included, routing sockets too: the agent may open none itself (run_confine.c),
         * and one handed in queues the kernel's answers where /proc/net/netlink shows them, or
         * hands them to whoever shares it (netlink_route_given). On both backends: the lsm
         * hooks judge sends on IP and UNIX sockets only. */
        if (fstat(fd, &st) == 0 && mncd_judge_own_by_uid(c, st.st_uid) == 1)
            return;
        c->st->foreign++;
        mncd_sweep_act a = {.pid = s->pid,
                            .fd = s->fd,
                            .ino = s->ino,
                            .kind = dom == AF_NETLINK ? "netlink" : "socket",
                            .action = "refuse",
                            .refuse = true,
                            .reason = MNC_K_DENY_EXTERNAL,
                            .dst_cls = MNC_SINK_EXTERNAL,
                            .dst_id = MNC_ID_NONE,
                            .why = "a socket of a family the sweep cannot shut, created outside the agent"};
        snprintf(a.peer, sizeof(a.peer), "(family %d protocol %d)", dom, proto);
        mncd_judge_report(c, &a);
        return;
    }
    l = sizeof(acc);
    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l);
    uent e = {.ino = s->ino, .type = (uint8_t)type, .state = acc ? UNIX_LISTEN : UNIX_ESTABLISHED};
    struct sockaddr_un su;
    socklen_t sl = sizeof(su);
    if (acc && getsockname(fd, (struct sockaddr *)&su, &sl) == 0 && sl > offsetof(struct sockaddr_un, sun_path)) {
        e.namelen = (uint8_t)(sl - offsetof(struct sockaddr_un, sun_path));
        memcpy(e.name, su.sun_path, e.namelen);
    }
    sl = sizeof(su);
    if (!acc && getpeername(fd, (struct sockaddr *)&su, &sl) == 0)
        e.peer = UINT32_MAX; /* "some peer": unix_find misses, so the name comes from getpeername */
    else if (!acc && errno == ENOTCONN && type != SOCK_DGRAM)
        e.state = UNIX_UNCONNECTED; /* never connected: no peer, no queue */
    mncd_judge_unix(c, s, &e, fd);
}

/* Any other object parked in flight on a socket the agent keeps: a file, pipe, FIFO, device or
 * memfd the agent takes back after the delivery, where no fd scan sees it (attacks
 * file_fd_own_queue, memfd_own_queue). Only a read-only regular file or directory is harmless
 * (writing needs a new open, which Landlock judges); anything else refuses the delivery. */
static void judge_inflight_other(ctx *c, const sfd *s, int fd, const struct stat *st)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && mnc_receive_harmless(st->st_mode, (fl & O_ACCMODE) != O_RDONLY))
        return; /* the lsm backend's file_receive rule (mnc_abi.h) */
    char why[128];
    snprintf(why, sizeof(why), "%s parked in flight on the agent's socket %" PRIu32 ": may lead outside",
             S_ISREG(st->st_mode) ? "a file open for writing" : "a pipe, FIFO, device or other non-socket fd", s->ino);
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = -1,
                        .ino = (uint32_t)st->st_ino,
                        .kind = "file",
                        .action = "refuse",
                        .refuse = true,
                        .why = why,
                        .reason = MNC_K_DENY_EXTERNAL,
                        .dst_cls = MNC_SINK_EXTERNAL,
                        .dst_id = MNC_ID_NONE};
    char path[64], link[200];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, link, sizeof(link) - 1);
    link[n > 0 ? n : 0] = 0;
    snprintf(a.peer, sizeof(a.peer), "%s", n > 0 ? link : "(unnamed)");
    mncd_judge_report(c, &a);
}

/* An fd found queued on a socket the agent keeps (mncd's duplicate of it). A socket in flight
 * counts as leading outside whoever made it (an agent that parks its own socket in a queue
 * loses it), except IP sockets created in the agent's cgroups (egress judges those). Other
 * objects: judge_inflight_other. */
static void judge_inflight_fd(ctx *c, const sfd *s, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        mncd_sweep_act a = {.pid = s->pid,
                            .fd = -1,
                            .kind = "file",
                            .action = "inspect",
                            .why = "fstat of an fd in flight to the agent",
                            .err = errno,
                            .dst_cls = MNC_SINK_EXTERNAL,
                            .dst_id = MNC_ID_NONE};
        mncd_judge_report(c, &a);
        return;
    }
    if (!S_ISSOCK(st.st_mode)) {
        if (!c->lsm) /* lsm: file_receive judges it when the agent takes it */
            judge_inflight_other(c, s, fd, &st);
        return;
    }
    int dom = 0, type = 0;
    socklen_t l = sizeof(dom);
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l);
    l = sizeof(type);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
    char why[96];
    snprintf(why, sizeof(why), "in flight to the agent on its socket %" PRIu32, s->ino);
    if (dom == AF_INET || dom == AF_INET6) {
        mncd_judge_inet(c, s, fd, (uint32_t)st.st_ino, why, true);
        return;
    }
    mncd_sweep_act a = {.pid = s->pid,
                        .fd = -1,
                        .ino = (uint32_t)st.st_ino,
                        .why = why,
                        .dst_cls = MNC_SINK_EXTERNAL,
                        .dst_id = MNC_ID_NONE};
    a.reason = mnc_decide(c->t, MNC_SINK_EXTERNAL, MNC_ID_NONE);
    if (dom == AF_UNIX) {
        if (mnc_kreason_allows(a.reason))
            return;
        a.kind = unix_kind((uint8_t)type);
        struct sockaddr_un su;
        socklen_t sl = sizeof(su);
        int len = 0;
        if (getpeername(fd, (struct sockaddr *)&su, &sl) == 0 && sl > offsetof(struct sockaddr_un, sun_path))
            len = (int)(sl - offsetof(struct sockaddr_un, sun_path));
        peer_text(su.sun_path, len, a.peer, sizeof(a.peer));
        uent e = {.ino = a.ino, .type = (uint8_t)type, .peer = len || type != SOCK_DGRAM ? 1 : 0};
        shut_unix(c, &a, &e, fd, SHUT_RDWR);
        return;
    }
    int proto = 0;
    l = sizeof(proto);
    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
    /* another family (netlink, ...): refused on the lsm backend too, whose hooks judge sends on
     * IP and UNIX sockets only */
    a.kind = dom == AF_NETLINK ? "netlink" : "socket";
    a.action = "refuse";
    a.refuse = true;
    snprintf(a.peer, sizeof(a.peer), "(family %d protocol %d)", dom, proto);
    mncd_judge_report(c, &a);
}
