// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_selftest.c - the functional self-test: enforcement is claimed only after the attached
 * programs were seen to deny (EPERM) and to allow, for a real process in a real cgroup.
 *
 * Why: programs can load and attach and still enforce nothing (wrong tree, wrong attach type,
 * a kernel that ignores them). Only observing the effect proves it. The test uses a scratch
 * cgroup <tree>/.selftest.<pid>, an agent id reserved for self-tests, and a UNIX path under a
 * directory that does not exist, so it never touches a real agent's entries. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kern_int.h"

void mnc_selftest_add(mnc_selftest *st, const char *name, int want, int got)
{
    if (st->n >= (int)(sizeof(st->c) / sizeof(st->c[0])))
        return;
    mnc_selftest_case *c = &st->c[st->n++];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->want = want;
    c->got = got;
    c->pass = want == got;
}

static void selftest_not_run(mnc_selftest *st, const char *what)
{
    if (st->n_not_run < (int)(sizeof(st->not_run) / sizeof(st->not_run[0])))
        snprintf(st->not_run[st->n_not_run++], sizeof(st->not_run[0]), "%s", what);
}

/* Each probe returns 0 on success or the errno it saw. */
static int try_socket(int family, int type, int proto)
{
    int fd = socket(family, type | SOCK_CLOEXEC, proto);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static int try_inet(int family, bool send, int *skipped)
{
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == EAFNOSUPPORT) {
            *skipped = 1;
            return 0;
        }
        return errno;
    }
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(9); /* discard; nothing needs to listen for a UDP connect */
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*a);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(9);
        a->sin6_addr = in6addr_loopback;
        len = sizeof(*a);
    }
    int rc = send ? (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) : connect(fd, (struct sockaddr *)&ss, len);
    int e = rc < 0 ? errno : 0;
    close(fd);
    if (family == AF_INET6 && (e == EADDRNOTAVAIL || e == ENETUNREACH))
        *skipped = 1; /* no IPv6 loopback configured */
    return e;
}

static int try_unix(const char *path, bool send)
{
    int fd = socket(AF_UNIX, (send ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct sockaddr_un a;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    int rc = send ? (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a))
                  : connect(fd, (struct sockaddr *)&a, sizeof(a));
    int e = rc < 0 ? errno : 0;
    close(fd);
    return e;
}

/* The egress re-check (sock_egress.bpf.c): sockets connected while untainted. The receivers
 * were created by the parent, outside the tree, so they are ordinary external peers. */
struct egress_peers {
    int tcp_listen; /* 127.0.0.1, listening */
    int udp;        /* 127.0.0.1, bound */
    struct sockaddr_in tcp_addr, udp_addr;
};

static int egress_peers_open(struct egress_peers *p)
{
    memset(p, 0, sizeof(*p));
    p->udp = -1;
    socklen_t l = sizeof(p->tcp_addr);
    struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    p->tcp_listen = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->tcp_listen < 0 || bind(p->tcp_listen, (struct sockaddr *)&lo, sizeof(lo)) != 0 ||
        listen(p->tcp_listen, 4) != 0 || getsockname(p->tcp_listen, (struct sockaddr *)&p->tcp_addr, &l) != 0)
        return -errno;
    l = sizeof(p->udp_addr);
    p->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (p->udp < 0 || bind(p->udp, (struct sockaddr *)&lo, sizeof(lo)) != 0 ||
        getsockname(p->udp, (struct sockaddr *)&p->udp_addr, &l) != 0)
        return -errno;
    return 0;
}

static void egress_peers_close(struct egress_peers *p)
{
    if (p->tcp_listen >= 0)
        close(p->tcp_listen);
    if (p->udp >= 0)
        close(p->udp);
}

/* 0 if one byte arrives on fd within the timeout, EPERM if nothing does (dropped), else errno. A
 * loopback packet that the egress program lets through is queued at the receiver before send()
 * returns, so the wait only costs time when the packet was dropped. */
static int received(int fd, int timeout_ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n = poll(&pfd, 1, timeout_ms);
    if (n < 0)
        return errno;
    if (n == 0)
        return EPERM;
    char b[16];
    return recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0 ? 0 : errno;
}

static int send_one(int fd) { return send(fd, "x", 1, MSG_NOSIGNAL) == 1 ? 0 : errno; }

int mnc_selftest_datagram_received(int from, const struct sockaddr_in *to, int rfd, int timeout_ms)
{
    if (sendto(from, "x", 1, MSG_NOSIGNAL, (const struct sockaddr *)to, sizeof(*to)) != 1)
        return errno;
    return received(rfd, timeout_ms);
}

/* The child: enters the scratch cgroup, then walks the phases, changing its own registration
 * through the inherited map fds (map syscalls are not subject to the socket hooks). */
static void child(mnc_kern *k, mnc_selftest *st, const char *procs, uint64_t cgid, uint32_t agent,
                  const struct egress_peers *ep)
{
    if (mnc_write_file(procs, "0") != 0) {
        snprintf(st->error, sizeof(st->error), "cannot enter scratch cgroup %.300s: %s", procs, strerror(errno));
        _exit(2);
    }
    char path[96], mncd[96];
    snprintf(path, sizeof(path), "/nonexistent-mnc-selftest-%d/peer.sock", (int)getpid());
    snprintf(mncd, sizeof(mncd), "/nonexistent-mnc-selftest-%d/mncd.sock", (int)getpid());
    int skip;

    /* A: registered nowhere: fail closed */
    mnc_selftest_add(st, "sock_create: unknown cgroup in the tree is denied", EPERM,
                     try_socket(AF_INET, SOCK_DGRAM, 0));
    mnc_selftest_add(st, "connect_unix: unknown cgroup in the tree is denied", EPERM, try_unix(path, false));

    /* B: registered, tainted, nothing allowed */
    struct mnc_taint t;
    memset(&t, 0, sizeof(t));
    t.tainted = 1;
    if (mnc_kern_taint_set(k, agent, &t) != 0 || mnc_kern_register_cgroup(k, cgid, agent, MNC_AGENT_F_SELFTEST) != 0 ||
        mnc_kern_sink_unix_add(k, mncd, MNC_ID_NONE, MNC_SINK_MNCD) != 0) {
        snprintf(st->error, sizeof(st->error), "cannot write the maps: %s", strerror(errno));
        _exit(2);
    }
    mnc_selftest_add(st, "connect4: tainted -> unregistered 127.0.0.1:9 denied", EPERM,
                     try_inet(AF_INET, false, &skip));
    mnc_selftest_add(st, "sendmsg4: tainted -> unregistered 127.0.0.1:9 denied", EPERM, try_inet(AF_INET, true, &skip));
    skip = 0;
    int e6 = try_inet(AF_INET6, false, &skip);
    if (!skip)
        mnc_selftest_add(st, "connect6: tainted -> unregistered [::1]:9 denied", EPERM, e6);
    else
        selftest_not_run(st, "connect6 (no IPv6 loopback [::1] on this host)");
    skip = 0;
    e6 = try_inet(AF_INET6, true, &skip);
    if (!skip)
        mnc_selftest_add(st, "sendmsg6: tainted -> unregistered [::1]:9 denied", EPERM, e6);
    else
        selftest_not_run(st, "sendmsg6 (no IPv6 loopback [::1] on this host)");
    mnc_selftest_add(st, "connect_unix: tainted -> unregistered path denied", EPERM, try_unix(path, false));
    mnc_selftest_add(st, "sendmsg_unix: tainted -> unregistered path denied", EPERM, try_unix(path, true));
    /* allowed by the hook, then the kernel finds no socket there: ENOENT, not EPERM */
    mnc_selftest_add(st, "connect_unix: tainted -> mncd socket allowed", ENOENT, try_unix(mncd, false));
    mnc_selftest_add(st, "sock_create: raw IPv4 socket denied", EPERM, try_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));

    /* C: untainted: no false blocks */
    memset(&t, 0, sizeof(t));
    if (mnc_kern_taint_set(k, agent, &t) != 0) {
        snprintf(st->error, sizeof(st->error), "cannot write the taint map: %s", strerror(errno));
        _exit(2);
    }
    mnc_selftest_add(st, "connect4: untainted -> 127.0.0.1:9 allowed", 0, try_inet(AF_INET, false, &skip));
    mnc_selftest_add(st, "sendmsg_unix: untainted -> path allowed (ENOENT)", ENOENT, try_unix(path, true));
    mnc_selftest_add(st, "sock_create: untainted UDP socket allowed", 0, try_socket(AF_INET, SOCK_DGRAM, 0));

    /* D: connected while untainted, tainted afterwards: egress re-checks every packet */
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int acc = -1;
    if (c < 0 || u < 0 || connect(c, (const struct sockaddr *)&ep->tcp_addr, sizeof(ep->tcp_addr)) != 0 ||
        connect(u, (const struct sockaddr *)&ep->udp_addr, sizeof(ep->udp_addr)) != 0 ||
        (acc = accept4(ep->tcp_listen, NULL, NULL, SOCK_CLOEXEC)) < 0) {
        snprintf(st->error, sizeof(st->error), "egress case: cannot connect to the 127.0.0.1 peers: %s",
                 strerror(errno));
        _exit(2);
    }
    /* abortive close: a FIN would be dropped by egress and retransmitted after this cgroup is
     * gone; set now, as a tainted agent cannot set SO_LINGER */
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    int e = setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) != 0 ? errno : 0;
    int sndbuf = 65536;
    mnc_selftest_add(st, "setsockopt: untainted SO_SNDBUF allowed", 0,
                     setsockopt(u, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) != 0 ? errno : 0);
    e = e ? e : send_one(c);
    mnc_selftest_add(st, "egress: untainted TCP send delivered", 0, e ? e : received(acc, 1000));
    /* ingress: the parent's socket (outside the tree, so an unregistered peer) sends to u */
    struct sockaddr_in ua;
    socklen_t ual = sizeof(ua);
    int ue = getsockname(u, (struct sockaddr *)&ua, &ual) != 0 ? errno : 0;
    mnc_selftest_add(st, "ingress: untainted UDP receive delivered", 0,
                     ue ? ue : mnc_selftest_datagram_received(ep->udp, &ua, u, 1000));
    t.tainted = 1;
    if (mnc_kern_taint_set(k, agent, &t) != 0) {
        snprintf(st->error, sizeof(st->error), "cannot write the taint map: %s", strerror(errno));
        _exit(2);
    }
    /* TCP queues the byte and reports success; the program drops the segment */
    e = send_one(c);
    mnc_selftest_add(st, "egress: tainted send on pre-taint TCP dropped", EPERM, e ? e : received(acc, 200));
    mnc_selftest_add(st, "egress: tainted send on pre-taint UDP -> EPERM", EPERM, send_one(u));
    /* the sender's sendto succeeds; the program drops the datagram before u's queue */
    mnc_selftest_add(st, "ingress: tainted UDP gets nothing from an unregistered peer", EPERM,
                     ue ? ue : mnc_selftest_datagram_received(ep->udp, &ua, u, 200));
    mnc_selftest_add(st, "setsockopt: tainted SO_SNDBUF -> EPERM", EPERM,
                     setsockopt(u, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) != 0 ? errno : 0);
    close(acc);
    close(c);
    close(u);
    mnc_kern_sink_unix_del(k, mncd);
    _exit(0);
}

int mnc_kern_selftest(mnc_kern *k, mnc_selftest *out)
{
    memset(out, 0, sizeof(*out));
    if (!k->tree[0]) {
        snprintf(out->error, sizeof(out->error), "no mnc tree recorded under %.300s (not attached)", k->root);
        return -ENOENT;
    }
    mnc_selftest *st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (st == MAP_FAILED) {
        int e = errno;
        snprintf(out->error, sizeof(out->error), "mmap: %s", strerror(e));
        return -e;
    }
    memset(st, 0, sizeof(*st));
    struct egress_peers ep;
    int prc = egress_peers_open(&ep);
    if (prc != 0) {
        snprintf(out->error, sizeof(out->error), "egress peers on 127.0.0.1: %s", strerror(-prc));
        egress_peers_close(&ep);
        munmap(st, sizeof(*st));
        return prc;
    }
    char cg[MNC_TREE_PATH_MAX + 64], procs[MNC_TREE_PATH_MAX + 96];
    snprintf(cg, sizeof(cg), "%s/.selftest.%d", k->tree, (int)getpid());
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
    uint32_t agent = MNC_SELFTEST_AGENT_BASE | ((uint32_t)getpid() & 0xfffffu);
    uint64_t cgid = 0;
    int rc = 0;
    if (mkdir(cg, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        snprintf(out->error, sizeof(out->error), "mkdir %.300s: %s", cg, strerror(-rc));
        goto out_unmap;
    }
    if ((rc = mnc_cgroup_id(cg, &cgid)) != 0) {
        snprintf(out->error, sizeof(out->error), "cgroup id of %.300s: %s", cg, strerror(-rc));
        goto out_rmdir;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        snprintf(out->error, sizeof(out->error), "fork: %s", strerror(-rc));
        goto out_rmdir;
    }
    if (pid == 0)
        child(k, st, procs, cgid, agent, &ep);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            rc = -errno;
            break;
        }
    *out = *st;
    if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        if (!out->error[0])
            snprintf(out->error, sizeof(out->error), "self-test child died (status 0x%x)", status);
        rc = -ECHILD;
    }
out_rmdir:
    mnc_kern_unregister_cgroup(k, cgid);
    {
        __u32 a = agent;
        bpf_map_delete_elem(k->fd_taint, &a);
    }
    /* the reaped child leaves the cgroup asynchronously; retry briefly */
    for (int i = 0; i < 100 && rmdir(cg) != 0 && errno == EBUSY; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
out_unmap:
    egress_peers_close(&ep);
    munmap(st, sizeof(*st));
    if (rc == 0) {
        out->pass = out->n > 0;
        for (int i = 0; i < out->n; i++)
            out->pass = out->pass && out->c[i].pass;
        if (!out->pass)
            rc = -ENOTRECOVERABLE;
    }
    return rc;
}

int mnc_selftest_test_hook(mnc_selftest *st, int rc)
{
    const char *want = getenv("MNC_TEST_SELFTEST_FAIL");
    if (!want || !*want || !st)
        return rc;
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->c[i].name, want) == 0) {
            st->c[i].got = -1;
            st->c[i].pass = false;
            st->pass = false;
            return -ENOTRECOVERABLE;
        }
    return rc;
}
