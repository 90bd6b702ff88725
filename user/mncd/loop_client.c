// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* loop_client.c - the event loop's connections (loop_int.h): accept with the accept-time identity
 * and the connection caps (max_clients, per agent, per uid; see loop.c's top), the listening
 * socket, each client's output queue and its flush, and a client's end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "loop_int.h"

void lp_touch(loop *l, client *c)
{
    if (c->touched)
        return;
    if (l->n_touched == l->cap_touched) {
        size_t nc = l->cap_touched ? l->cap_touched * 2 : 64;
        client **n = realloc(l->touched, nc * sizeof(*n));
        if (!n) { /* cannot track it: drop the client rather than lose track of its output */
            c->dead = true;
            return;
        }
        l->touched = n;
        l->cap_touched = nc;
    }
    c->touched = true;
    l->touched[l->n_touched++] = c;
}

int lp_out_append(loop *l, client *c, const char *s, size_t n)
{
    if (c->dead)
        return -1;
    if (c->out_len - c->out_off + n > l->d->cfg.max_output) {
        fprintf(stderr,
                "mncd: client pid %d uid %u queued more than %zu response bytes without "
                "reading them; disconnecting it\n",
                (int)c->who.pid, (unsigned)c->who.uid, l->d->cfg.max_output);
        c->dead = true;
        return -1;
    }
    if (c->out_off > 0 && c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    if (c->out_len + n > c->out_cap) {
        if (c->out_off > 0) { /* compact before growing */
            memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
            c->out_len -= c->out_off;
            c->out_off = 0;
        }
        size_t nc = c->out_cap ? c->out_cap : 4096;
        while (nc < c->out_len + n)
            nc *= 2;
        if (nc != c->out_cap) {
            char *nb = realloc(c->out, nc);
            if (!nb) {
                c->dead = true;
                return -1;
            }
            c->out = nb;
            c->out_cap = nc;
        }
    }
    memcpy(c->out + c->out_len, s, n);
    c->out_len += n;
    lp_touch(l, c);
    return 0;
}

static void cap_release(loop *l, client *c);

/* At accept: keeps the connecting process's pidfd and turns SO_PASSPIDFD off if that pidfd can
 * vouch for its chunks (pidfs and PIDFD_GET_INFO, Linux 6.13+: a per-process inode and the
 * cgroup id); else closes it and every chunk keeps bringing its own pidfd. Takes pidfd. */
static void peer_hold(client *c, int pidfd)
{
    c->peer_pidfd = -1;
    c->peer_vouches = false;
    if (pidfd < 0)
        return;
    mncd_cred pc = {.known = true, .pid = c->who.pid, .pidfd = pidfd};
    mncd_cred_inode(&pc);
    int zero = 0;
    if (pc.ino == 0 || c->who.pid <= 0 || setsockopt(c->fd, SOL_SOCKET, SO_PASSPIDFD, &zero, sizeof(zero)) != 0) {
        close(pidfd);
        return;
    }
    c->peer_pidfd = pidfd;
    c->peer_pid = c->who.pid;
    c->peer_ino = pc.ino;
    c->peer_vouches = true;
}

void lp_client_free(loop *l, client *c)
{
    while (c->q_head) {
        queued *x = c->q_head;
        c->q_head = x->next;
        mnc_request_free(&x->q);
        free(x);
    }
    c->q_tail = NULL;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if (c->peer_pidfd >= 0)
        close(c->peer_pidfd);
    free(c->in);
    free(c->out);
    if (!c->refused) {
        mncd_mncl_conn(l->d, &c->who, -1);
        cap_release(l, c);
    }
    l->d->n_clients--;
    if (c->busy) { /* its job still points here: freed when it ends (job_finish) */
        c->zombie = true;
        c->dead = true;
        return;
    }
    free(c);
}

/* Sends queued output. Returns false if the client must be closed. */
bool lp_client_flush(loop *l, client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0)
            return false;
        c->out_off += (size_t)w;
    }
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    bool want = c->out_len > 0;
    if (want != c->epollout) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u), .data.ptr = c};
        if (epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
            return false;
        c->epollout = want;
    }
    return !(c->eof && c->out_len == 0);
}

/* ---- connection caps (accept-time identity) */

static uid_count *uid_slot(loop *l, uint32_t uid, bool add)
{
    for (size_t i = 0; i < l->n_uid_conns; i++)
        if (l->uid_conns[i].uid == uid)
            return &l->uid_conns[i];
    if (!add)
        return NULL;
    if (l->n_uid_conns == l->cap_uid_conns) {
        size_t nc = l->cap_uid_conns ? l->cap_uid_conns * 2 : 16;
        uid_count *n = realloc(l->uid_conns, nc * sizeof(*n));
        if (!n)
            return NULL;
        l->uid_conns = n;
        l->cap_uid_conns = nc;
    }
    l->uid_conns[l->n_uid_conns] = (uid_count){.uid = uid, .n = 0};
    return &l->uid_conns[l->n_uid_conns++];
}

/* Decides which count a new connection holds and takes one. Returns NULL (taken, or no cap
 * applies: the admin uid outside the mnc tree), or the name of the cap that refuses it. */
static const char *cap_take(loop *l, client *c)
{
    const mncd_ident *w = &c->who;
    if (w->via == MNCD_VIA_CGROUP && w->agent >= 0 && w->agent < MNC_MAX_PRINCIPALS) {
        if (l->agent_conns[w->agent] >= l->d->cfg.max_clients_per_agent)
            return "max_clients_per_agent";
        l->agent_conns[w->agent]++;
        c->cap = CAP_AGENT;
        c->cap_key = (uint32_t)w->agent;
        return NULL;
    }
    if (w->admin) /* admin uid, no agent cgroup, not in the mnc tree (mncd_ident_tree_rule) */
        return NULL;
    uid_count *u = uid_slot(l, (uint32_t)w->uid, true);
    if (!u)
        return "max_clients_per_uid"; /* out of memory: refuse rather than not count */
    if (u->n >= l->d->cfg.max_clients_per_uid) {
        if (u->n == 0)
            l->uid_conns[--l->n_uid_conns] = *u; /* never happens (cap >= 1); keep tidy */
        return "max_clients_per_uid";
    }
    u->n++;
    c->cap = CAP_UID;
    c->cap_key = (uint32_t)w->uid;
    return NULL;
}

static void cap_release(loop *l, client *c)
{
    if (c->cap == CAP_AGENT && l->agent_conns[c->cap_key] > 0) {
        l->agent_conns[c->cap_key]--;
    } else if (c->cap == CAP_UID) {
        uid_count *u = uid_slot(l, c->cap_key, false);
        if (u && u->n > 0 && --u->n == 0)
            *u = l->uid_conns[--l->n_uid_conns]; /* drop the empty entry (order is free) */
    }
    c->cap = CAP_NONE;
}

/* The one-line JSON error for a connection refused by a cap. Returns its length or -1. */
static int refuse_line_for(char *msg, size_t n, const char *cap, size_t limit)
{
    int r = snprintf(msg, n,
                     "{\"ok\":false,\"decision\":\"error\",\"reason\":\"internal\","
                     "\"error\":\"too many clients: %s (%zu) reached\",\"cap\":\"%s\"}\n",
                     cap, limit, cap);
    return r > 0 && (size_t)r < n ? r : -1;
}

/* Best effort for the global cap (no client struct, no audit record: as before). */
static void refuse_conn(int fd, const char *cap, size_t limit)
{
    char msg[256];
    int n = refuse_line_for(msg, sizeof(msg), cap, limit);
    if (n > 0) {
        ssize_t w = send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w;
    }
}

void lp_accept(loop *l)
{
    for (;;) {
        if (l->spare < 0)
            l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        bool from_spare = false;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && l->spare >= 0) {
            /* The fd table is full: the reserve makes room for one connection, served only if
             * it is the admin's (below); anyone else is told and closed. */
            close(l->spare);
            l->spare = -1;
            fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            from_spare = fd >= 0;
        }
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "mncd: accept: %s\n", strerror(errno));
            return;
        }
        /* Inherited from the listener (make_listener); set again so that a kernel that did not
         * copy them still attributes what follows. A chunk without credentials is refused
         * anyway (take_cmsgs). Without SO_PASSCRED nothing could be attributed: fail closed. */
        int one = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0) {
            fprintf(stderr, "mncd: SO_PASSCRED: %s; closing the connection\n", strerror(errno));
            close(fd);
            continue;
        }
        /* An MSG_OOB byte stays in the stream as its writer's data: otherwise the peek before
         * each read (client_read) skips it while the socket stays readable (red team: one OOB
         * byte spun the loop at 100% CPU). */
        if (setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)) != 0) {
            fprintf(stderr, "mncd: SO_OOBINLINE: %s; closing the connection\n", strerror(errno));
            close(fd);
            continue;
        }
        /* SO_PASSPIDFD: inherited where the kernel has it; make_listener said if it has not */
        client *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        int peer_pidfd = -1;
        if (mncd_ident_resolve(fd, l->d->policy, &l->d->cfg, &c->who, &peer_pidfd) != 0) {
            fprintf(stderr, "mncd: no peer credentials on a new connection; closing it\n");
            close(fd);
            free(c);
            continue;
        }
        peer_hold(c, peer_pidfd);
        mncd_ident_tree_rule(&c->who); /* unregistered cgroup in the mnc tree: nobody */
        /* The global cap after the identity: the admin (uid, outside every agent cgroup and the
         * mnc tree, by the kernel's SO_PEERCRED) always gets through, whatever others hold
         * (issue 36, 5c: one agent's 1,100 connections locked `mncctl whoami` out). */
        if (!c->who.admin && (from_spare || l->d->n_clients >= l->d->cfg.max_clients)) {
            refuse_conn(fd, "max_clients", l->d->cfg.max_clients);
            close(fd);
            if (c->peer_pidfd >= 0)
                close(c->peer_pidfd);
            free(c);
            continue;
        }
        const char *cap = cap_take(l, c);
        if (cap) {
            bool per_agent = strcmp(cap, "max_clients_per_agent") == 0;
            char det[160], ph[MNC_AUDIT_HV_MAX]; /* the pid by keyed hash (core.c) */
            snprintf(det, sizeof(det), "connection refused: %s (%zu) reached (pid %s uid %u)", cap,
                     per_agent ? l->d->cfg.max_clients_per_agent : l->d->cfg.max_clients_per_uid,
                     mncd_hv_u64(l->d, (uint64_t)c->who.pid, ph), (unsigned)c->who.uid);
            mncd_audit(l->d, "connect", per_agent ? c->who.agent : -1, -1, NULL, "deny", MNC_R_INTERNAL, det);
            /* The error line leaves after this iteration's commit (the audit record is durable
             * first, as for every response); the connection is then closed. It is never read. */
            char msg[256];
            int n = refuse_line_for(msg, sizeof(msg), cap,
                                    per_agent ? l->d->cfg.max_clients_per_agent : l->d->cfg.max_clients_per_uid);
            c->refused = true;
            c->eof = true;
            l->d->n_clients++;
            c->next = l->clients;
            if (l->clients)
                l->clients->prev = c;
            l->clients = c;
            if (n <= 0 || lp_out_append(l, c, msg, (size_t)n) != 0)
                c->dead = true;
            lp_touch(l, c);
            continue;
        }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            cap_release(l, c);
            close(fd);
            if (c->peer_pidfd >= 0)
                close(c->peer_pidfd);
            free(c);
            continue;
        }
        l->d->n_clients++;
        mncd_mncl_conn(l->d, &c->who, +1); /* MNC-D: is a broker connected? */
        c->next = l->clients;
        if (l->clients)
            l->clients->prev = c;
        l->clients = c;
    }
}

int lp_listener(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "mncd: socket path too long: %s\n", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    /* Create the parent directory (e.g. /run/mnc) if needed. */
    char dir[sizeof(sa.sun_path)];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "mncd: cannot create %s: %s\n", dir, strerror(errno));
            return -1;
        }
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "mncd: socket: %s\n", strerror(errno));
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno != EADDRINUSE)
            goto fail;
        /* A live daemon answers a connect; a stale socket file does not. */
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (probe >= 0)
            close(probe);
        if (live) {
            fprintf(stderr, "mncd: another mncd is already listening on %s\n", path);
            close(fd);
            return -1;
        }
        unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
            goto fail;
    }
    /* Per-request identity: the kernel attaches credentials to a chunk only if SO_PASSCRED /
     * SO_PASSPIDFD is on when it is sent. Set on the listener, accept() copies them to the new
     * socket (unix_sock_inherit_flags) before any byte can be sent on it unattributed; setting
     * them on the accepted socket alone would leave a window after accept(). */
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
        goto fail;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSPIDFD, &one, sizeof(one)) != 0)
        fprintf(stderr,
                "mncd: SO_PASSPIDFD unsupported (%s; Linux < 6.5): senders are identified "
                "by SCM_CREDENTIALS alone\n",
                strerror(errno));
    else
        mncd_ident_expect_pidfd(); /* from now on a chunk without one is not proven */
    /* Any local process may connect: identity comes from the kernel, not from file
     * permissions, and an unidentified caller can do nothing but whoami. */
    if (chmod(path, 0666) != 0 || listen(fd, 512) != 0)
        goto fail;
    return fd;
fail:
    fprintf(stderr, "mncd: cannot listen on %s: %s\n", path, strerror(errno));
    close(fd);
    return -1;
}
