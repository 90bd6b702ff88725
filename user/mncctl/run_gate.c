// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_gate.c - a server agent's bind/listen/autobind, answered by the launcher from the taint
 * (contract in run_gate.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "run_gate.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, unsigned long long)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

/* The whole of n bytes (write when out, else read), through EINTR: 0, or -errno (-EPIPE at
 * end of file). */
static int full_io(int sock, void *buf, size_t n, bool out)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = out ? write(sock, (char *)buf + done, n - done) : read(sock, (char *)buf + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EPIPE;
        done += (size_t)r;
    }
    return 0;
}

int run_gate_send_fd(int sock, int fd)
{
    int32_t num = fd;
    char ack = 0;
    int rc = full_io(sock, &num, sizeof(num), true);
    if (rc == 0)
        rc = full_io(sock, &ack, 1, false);
    return rc != 0 ? rc : ack == 't' ? 0 : -EPROTO;
}

int run_gate_recv_fd(int sock, pid_t child)
{
    int32_t num = -1;
    if (full_io(sock, &num, sizeof(num), false) != 0 || num < 0)
        return -1;
    int pfd = (int)syscall(SYS_pidfd_open, child, 0);
    int fd = pfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pfd, num, 0) : -1; /* O_CLOEXEC */
    if (pfd >= 0)
        close(pfd);
    /* each gated call is a round trip through us: ask the kernel to wake the agent's thread on
     * the CPU we answer from (Linux >= 6.6; older kernels refuse the flag, which only costs time) */
    if (fd >= 0)
        (void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (unsigned long long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    char ack = 't';
    if (fd >= 0 && full_io(sock, &ack, 1, true) != 0) {
        close(fd);
        fd = -1;
    }
    return fd; /* not taken: the child reads end of file and reports */
}

/* run_gate_answer's verdict: the agent's entry in the pinned taint map, under the id the
 * principal binding gives its name now (a restarted mncd may have renumbered the principals:
 * mnc_kern_bind_check; unbound or renumbering: tainted, fail closed) */
struct kern_agent {
    mnc_kern *k;
    const char *agent;
    uint32_t *agent_id;
};

static bool kern_untainted(void *arg)
{
    const struct kern_agent *a = arg;
    struct mnc_taint t;
    return a->k && mnc_kern_bind_check(a->k, a->agent, MNC_SINK_AGENT, a->agent_id) >= 0 &&
           mnc_kern_taint_get(a->k, *a->agent_id, &t) == 0 && !t.tainted;
}

int run_gate_answer(int nfd, mnc_kern *k, const char *agent, uint32_t *agent_id, unsigned long *denied)
{
    struct kern_agent a = {k, agent, agent_id};
    return run_gate_answer_with(nfd, kern_untainted, &a, denied);
}

/* The thread group of task tid (the notifying task may be any thread; pidfd_open wants a
 * process), from /proc/TID/status; -1 if gone. */
static pid_t tgid_of(pid_t tid)
{
    char p[64], line[128];
    snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
    FILE *f = fopen(p, "re");
    pid_t tg = -1;
    while (f && tg < 0 && fgets(line, sizeof(line), f))
        if (strncmp(line, "Tgid:", 5) == 0)
            tg = (pid_t)atoi(line + 5);
    if (f)
        fclose(f);
    return tg;
}

/* Asks unix_diag about the UNIX socket with inode ino (UDIAG_SHOW_PEER): 0 and its peer's inode
 * in *peer (0: none), -ENOENT when no such socket is left (closed by every holder), -1 when it
 * cannot be told (no unix_diag in this kernel). */
static int unix_diag_peer(unsigned ino, unsigned *peer)
{
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct unix_diag_req r;
    } q = {.h = {.nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST},
           .r = {.sdiag_family = AF_UNIX,
                 .udiag_states = ~0u,
                 .udiag_ino = ino,
                 .udiag_show = UDIAG_SHOW_PEER,
                 .udiag_cookie = {~0u, ~0u}}};
    union {
        struct nlmsghdr h;
        char b[1024];
    } a;
    int rc = -1;
    *peer = 0;
    ssize_t n = send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q) ? recv(nl, &a, sizeof(a), 0) : -1;
    if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) && a.h.nlmsg_type == NLMSG_ERROR &&
        ((const struct nlmsgerr *)NLMSG_DATA(&a.h))->error == -ENOENT)
        rc = -ENOENT;
    if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct unix_diag_msg)) && a.h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
        a.h.nlmsg_len <= (size_t)n) {
        rc = 0;
        const char *p = (const char *)NLMSG_DATA(&a.h) + sizeof(struct unix_diag_msg);
        const char *end = (const char *)&a + a.h.nlmsg_len;
        while (p + sizeof(struct nlattr) <= end) {
            const struct nlattr *at = (const struct nlattr *)(const void *)p;
            if (at->nla_len < sizeof(*at) || p + at->nla_len > end)
                break;
            if (at->nla_type == UNIX_DIAG_PEER && at->nla_len >= sizeof(*at) + sizeof(unsigned))
                memcpy(peer, p + sizeof(*at), sizeof(*peer));
            p += NLA_ALIGN(at->nla_len);
        }
    }
    close(nl);
    return rc;
}

/* Where the cgroup v2 hierarchy is mounted (read once), or "" */
static const char *cg2_mount(void)
{
    static char m[PATH_MAX / 2];
    static bool read_once;
    if (!read_once) {
        read_once = true;
        FILE *f = fopen("/proc/self/mounts", "re");
        char dev[64], dir[sizeof(m)], type[64];
        while (f && fscanf(f, "%63s %2047s %63s %*[^\n]", dev, dir, type) == 3)
            if (strcmp(type, "cgroup2") == 0) {
                snprintf(m, sizeof(m), "%s", dir);
                break;
            }
        if (f)
            fclose(f);
    }
    return m;
}

/* Whether a process of the agent (the cgroup of thread group tg, every process in it: an agent
 * cannot make cgroups below its own) holds the socket with inode ino. */
static bool agent_holds(pid_t tg, unsigned ino)
{
    if (!ino || !cg2_mount()[0])
        return false;
    char p[PATH_MAX * 2], line[PATH_MAX];
    snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)tg);
    FILE *f = fopen(p, "re");
    char *cg = NULL; /* the unified hierarchy's line; v1 ones may come first on a hybrid host */
    while (f && !cg && fgets(line, sizeof(line), f))
        cg = strncmp(line, "0::/", 4) == 0 ? line + 3 : NULL;
    if (f)
        fclose(f);
    if (!cg)
        return false;
    cg[strcspn(cg, "\n")] = 0;
    char want[64];
    snprintf(want, sizeof(want), "socket:[%u]", ino);
    snprintf(p, sizeof(p), "%s%s/cgroup.procs", cg2_mount(), cg);
    f = fopen(p, "re");
    bool found = false;
    for (int pid; !found && f && fscanf(f, "%d", &pid) == 1;) {
        snprintf(p, sizeof(p), "/proc/%d/fd", pid);
        DIR *d = opendir(p);
        struct dirent *e;
        while (d && !found && (e = readdir(d))) {
            char lp[PATH_MAX], tgt[64];
            snprintf(lp, sizeof(lp), "/proc/%d/fd/%s", pid, e->d_name);
            ssize_t l = readlink(lp, tgt, sizeof(tgt) - 1);
            found = l > 0 && (tgt[l] = 0, strcmp(tgt, want) == 0);
        }
        if (d)
            closedir(d);
    }
    if (f)
        fclose(f);
    return found;
}

/* Whether the peer of sk (a UNIX stream or seqpacket socket without a named peer: a socketpair's
 * other end, or an accepted client) is inside the agent thread group tg belongs to: held by one
 * of its processes, or closed by everyone. (mncd's fd scan refused the delivery while one of the
 * agent's sockets was held outside, and a tainted agent cannot hand one out since: the other
 * end of a pair it made is its own or gone.) */
static bool peer_inside(pid_t tg, int sk)
{
    struct stat st;
    unsigned peer = 0, pp;
    if (fstat(sk, &st) != 0)
        return false;
    int r = unix_diag_peer((unsigned)st.st_ino, &peer);
    if (r == -ENOENT) {
        /* not in our network namespace: the agent's own (--netns), where no dump an outsider
         * makes lists its sockets, and every end of a pair it made is its own */
        char p[64];
        struct stat mine, its;
        snprintf(p, sizeof(p), "/proc/%d/ns/net", (int)tg);
        return stat("/proc/self/ns/net", &mine) == 0 && stat(p, &its) == 0 && mine.st_ino != its.st_ino;
    }
    if (r != 0)
        return false;
    if (peer == 0) /* connected (the caller's getpeername said so), the peer released: gone */
        return true;
    /* held, else gone: a holder that exits (a child done with its stdin) drops its fd table
     * before the last reference to the socket goes, so "held by none, not gone yet" lasts a
     * moment: looked at again for up to 20 ms */
    for (int i = 0; i < 20; i++) {
        if (agent_holds(tg, peer) || unix_diag_peer(peer, &pp) == -ENOENT)
            return true;
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    return false;
}

/* A tainted agent's shutdown(fd, how), as an errno for the answer (0: done).
 * Why at all: shutdown(2) on an unconnected UDP socket fails with ENOTCONN but still records the
 * directions, and sock_diag shows them to every user (2 bits per socket: attacks
 * udp_shutdown_diag, udp_shutdown_autobind).
 * What is allowed: a connected connection-oriented socket whose peer has a name (a TCP
 * connection, or a UNIX one to a listener: the connect hooks judged that peer; ending it is how
 * protocols finish); EPERM for any other socket. A UNIX peer without a name is the other end of
 * a socketpair (or a client a server accepted): nothing judged it, and the agent makes as many
 * as it likes, each shut state read back by everyone through unix_diag (attack
 * unix_pair_shutdown: 112 bits in 6.8 ms before this rule).
 * Why done HERE, on our copy of the agent's socket, rather than letting the call go on after
 * looking: the agent could put another socket on that fd number between our look and the
 * kernel's call; the copy is the object we looked at. */
static int tainted_shutdown(int nfd, const struct seccomp_notif *req)
{
    int fd = (int)req->data.args[0], how = (int)req->data.args[1];
    pid_t tg = tgid_of((pid_t)req->pid);
    int pfd = tg > 0 ? (int)syscall(SYS_pidfd_open, tg, 0) : -1;
    if (pfd < 0)
        return EPERM;
    /* req->pid names the notifying task only while the notification is pending */
    if (seccomp_notify_id_valid(nfd, req->id) != 0) {
        close(pfd);
        return EPERM;
    }
    int sk = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    int e = sk < 0 && errno == EBADF ? EBADF : EPERM;
    close(pfd);
    if (sk < 0)
        return e;
    int type = 0;
    socklen_t tl = sizeof(type);
    struct sockaddr_storage peer;
    socklen_t pl = sizeof(peer);
    if (getsockopt(sk, SOL_SOCKET, SO_TYPE, &type, &tl) != 0)
        e = errno == ENOTSOCK ? ENOTSOCK : EPERM;
    else if ((type == SOCK_STREAM || type == SOCK_SEQPACKET) && getpeername(sk, (struct sockaddr *)&peer, &pl) == 0 &&
             (!(peer.ss_family == AF_UNIX && pl <= sizeof(sa_family_t)) || (how == SHUT_WR && peer_inside(tg, sk))))
        e = shutdown(sk, how) == 0 ? 0 : errno;
    close(sk);
    return e;
}

/* A tainted agent's setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE|TCP_KEEPINTVL|TCP_KEEPCNT, ...), the
 * only calls that reach us (run_confine.c): accepted and NOT applied. A keepalive timer is a
 * value the agent chooses that sock_diag (`ss -o`) shows every user as the connection's timer,
 * about 15 bits per setting (tcp_keepalive_diag), so a tainted agent's value may not reach the
 * socket; the kernel's defaults still detect a dead peer, only later. Runtimes set these on every
 * connection (libuv's keepalive in Node's fetch and http, Go's dialer, curl) and fail the
 * connection on EPERM. 0 on a TCP socket; ENOTSOCK, ENOPROTOOPT (not TCP) or EBADF otherwise,
 * as the kernel would answer. */
static int tainted_keepalive(int nfd, const struct seccomp_notif *req)
{
    pid_t tg = tgid_of((pid_t)req->pid);
    int pfd = tg > 0 ? (int)syscall(SYS_pidfd_open, tg, 0) : -1;
    if (pfd < 0)
        return EPERM;
    if (seccomp_notify_id_valid(nfd, req->id) != 0) {
        close(pfd);
        return EPERM;
    }
    int sk = (int)syscall(SYS_pidfd_getfd, pfd, (int)req->data.args[0], 0);
    int e = sk < 0 && errno == EBADF ? EBADF : EPERM;
    close(pfd);
    if (sk < 0)
        return e;
    int proto = 0;
    socklen_t l = sizeof(proto);
    if (getsockopt(sk, SOL_SOCKET, SO_PROTOCOL, &proto, &l) != 0)
        e = errno == ENOTSOCK ? ENOTSOCK : EPERM;
    else
        e = proto == IPPROTO_TCP ? 0 : ENOPROTOOPT;
    close(sk);
    return e;
}

int run_gate_answer_with(int nfd, bool (*untainted_fn)(void *arg), void *arg, unsigned long *denied)
{
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    int rc = seccomp_notify_alloc(&req, &resp);
    if (rc != 0)
        return rc;
    /* the raw ioctls, not libseccomp's wrappers: those report every kernel error as ECANCELED,
     * and ENOENT (a call withdrawn because a signal interrupted it, or its task gone: it is
     * asked again when restarted) must not end the gate. It did: after the first signal during
     * a gated call, every later lock, shutdown or bind of the agent failed with ENOSYS. */
    rc = ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, req) == 0 ? 0 : -errno;
    if (rc == 0) {
        bool untainted = untainted_fn(arg);
        int e = untainted                                                                 ? 0
                : req->data.nr == SYS_shutdown                                            ? tainted_shutdown(nfd, req)
                : req->data.nr == SYS_setsockopt && (int)req->data.args[1] == IPPROTO_TCP ? tainted_keepalive(nfd, req)
                                                                                          : EPERM;
        resp->id = req->id;
        resp->val = 0;
        resp->error = -e;
        resp->flags = untainted ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
        if (e == EPERM)
            (*denied)++;
        rc = ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0 ? 0 : -errno;
        if (rc == -ENOENT)
            rc = 0; /* the call was interrupted (a signal, the agent gone): nothing to answer */
    } else if (rc == -EINTR || rc == -ENOENT) {
        rc = 0;
    }
    seccomp_notify_free(req, resp);
    return rc;
}
