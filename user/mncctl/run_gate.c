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
#include <linux/seccomp.h>
#include <sys/ioctl.h>
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
             !(peer.ss_family == AF_UNIX && pl <= sizeof(sa_family_t)))
        e = shutdown(sk, how) == 0 ? 0 : errno;
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
    rc = seccomp_notify_receive(nfd, req);
    if (rc == 0) {
        bool untainted = untainted_fn(arg);
        int e = untainted ? 0 : req->data.nr == SYS_shutdown ? tainted_shutdown(nfd, req) : EPERM;
        resp->id = req->id;
        resp->val = 0;
        resp->error = -e;
        resp->flags = untainted ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
        if (e == EPERM)
            (*denied)++;
        rc = seccomp_notify_respond(nfd, resp);
        if (rc == -ENOENT)
            rc = 0; /* the call was interrupted (a signal, the agent gone): nothing to answer */
    } else if (rc == -EINTR || rc == -ENOENT) {
        rc = 0;
    }
    seccomp_notify_free(req, resp);
    return rc;
}
