/* loop.c - the epoll event loop: accept, JSON-lines framing, bounded buffers, group commit.
 *
 * One thread, non-blocking sockets, level-triggered epoll. Each iteration:
 *   1. read every readable client, cut complete lines, handle each request -> its response is
 *      appended to the client's output queue (not sent yet);
 *   2. commit: the iteration's state changes AND its audit records (hash-chained lines, exact
 *      bytes; the audit log is in deferred mode while the loop runs) become one journal record
 *      with one fdatasync; then the audit lines are appended to audit.jsonl without a sync of
 *      their own (startup re-appends any the file lost: store.c). So every decision and change
 *      is durable before any response that acknowledges it leaves the daemon (group commit:
 *      one fdatasync per iteration, not per request; it was two, journal then audit log);
 *   3. send queued output; a client whose queue exceeds cfg.max_output (it does not read its
 *      responses) is disconnected, and nobody else waits for it.
 * Request lines are limited to MNC_PROTO_MAX_LINE bytes: a longer line gets an error response
 * and the rest of it is discarded up to its newline; the connection stays usable.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mncd.h"

#define MAX_EVENTS 256
#define READ_CHUNK 65536
#define READ_BUDGET (2u << 20) /* bytes read per client per iteration (fairness) */

typedef struct client {
    int fd;
    mncd_ident who;
    char *in;
    size_t in_len, in_cap;
    bool discarding;
    char *out;
    size_t out_len, out_off, out_cap;
    bool eof, dead, touched, epollout;
    struct client *prev, *next; /* all clients, so shutdown can free them */
} client;

typedef struct loop {
    mncd *d;
    int ep, lfd, sfd;
    bool stopping;
    client **touched;
    size_t n_touched, cap_touched;
    client *clients;
} loop;

static void touch(loop *l, client *c)
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

static int out_append(loop *l, client *c, const char *s, size_t n)
{
    if (c->dead)
        return -1;
    if (c->out_len - c->out_off + n > l->d->cfg.max_output) {
        fprintf(stderr, "mncd: client pid %d uid %u queued more than %zu response bytes without "
                "reading them; disconnecting it\n", (int)c->who.pid, (unsigned)c->who.uid,
                l->d->cfg.max_output);
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
    touch(l, c);
    return 0;
}

static void respond(loop *l, client *c, cJSON *resp)
{
    if (!resp) {
        static const char oom[] =
            "{\"ok\":false,\"decision\":\"error\",\"reason\":\"internal\",\"error\":\"out of "
            "memory\"}\n";
        out_append(l, c, oom, sizeof(oom) - 1);
        return;
    }
    size_t n;
    char *s = mnc_resp_line(resp, &n);
    cJSON_Delete(resp);
    if (!s) {
        respond(l, c, NULL);
        return;
    }
    out_append(l, c, s, n);
    free(s);
}

static void handle_line(loop *l, client *c, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0)
        return; /* blank lines are keep-alives */
    mnc_request q;
    cJSON *id = NULL;
    char err[256];
    if (mnc_request_parse(line, len, &q, &id, err, sizeof(err)) != 0) {
        respond(l, c, mnc_resp_error(id, MNC_R_INVALID, "%s", err));
        cJSON_Delete(id);
        return;
    }
    respond(l, c, mncd_handle(l->d, &c->who, &q));
    mnc_request_free(&q);
}

static void too_long(loop *l, client *c)
{
    respond(l, c, mnc_resp_error(NULL, MNC_R_INVALID, "request line longer than %u bytes; it "
                                 "was discarded", MNC_PROTO_MAX_LINE));
}

/* Feeds received bytes through the framer. */
static void feed(loop *l, client *c, const char *p, size_t n)
{
    while (n > 0 && !c->dead) {
        if (c->discarding) {
            const char *nl = memchr(p, '\n', n);
            if (!nl)
                return;
            n -= (size_t)(nl + 1 - p);
            p = nl + 1;
            c->discarding = false;
            continue;
        }
        const char *nl = memchr(p, '\n', n);
        size_t part = nl ? (size_t)(nl - p) : n;
        if (c->in_len + part > MNC_PROTO_MAX_LINE) {
            too_long(l, c);
            c->in_len = 0;
            if (!nl) {
                c->discarding = true;
                return;
            }
        } else if (nl && c->in_len == 0) {
            handle_line(l, c, p, part); /* common case: no copy */
        } else {
            if (c->in_len + part > c->in_cap) {
                size_t nc = c->in_cap ? c->in_cap : 4096;
                while (nc < c->in_len + part)
                    nc *= 2;
                char *nb = realloc(c->in, nc);
                if (!nb) {
                    c->dead = true;
                    return;
                }
                c->in = nb;
                c->in_cap = nc;
            }
            memcpy(c->in + c->in_len, p, part);
            c->in_len += part;
            if (nl) {
                handle_line(l, c, c->in, c->in_len);
                c->in_len = 0;
                if (c->in_cap > (1u << 16)) { /* do not keep a 1 MiB buffer per idle client */
                    free(c->in);
                    c->in = NULL;
                    c->in_cap = 0;
                }
            }
        }
        if (!nl)
            return;
        n -= part + 1;
        p = nl + 1;
    }
}

static void client_read(loop *l, client *c)
{
    char buf[READ_CHUNK];
    size_t budget = READ_BUDGET;
    while (budget > 0 && !c->dead) {
        ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                c->dead = true;
            return;
        }
        if (r == 0) {
            /* Peer finished sending. A partial last line (client disconnected mid-request) is
             * dropped: it was never a complete request. */
            c->eof = true;
            c->in_len = 0;
            touch(l, c);
            return;
        }
        feed(l, c, buf, (size_t)r);
        budget = budget > (size_t)r ? budget - (size_t)r : 0;
    }
}

static void client_free(loop *l, client *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        l->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in);
    free(c->out);
    mncd_mncl_conn(l->d, &c->who, -1);
    free(c);
    l->d->n_clients--;
}

/* Sends queued output. Returns false if the client must be closed. */
static bool client_flush(loop *l, client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
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
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u),
                                 .data.ptr = c};
        if (epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
            return false;
        c->epollout = want;
    }
    return !(c->eof && c->out_len == 0);
}

static void do_accept(loop *l)
{
    for (;;) {
        int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "mncd: accept: %s\n", strerror(errno));
            return;
        }
        if (l->d->n_clients >= l->d->cfg.max_clients) {
            static const char full[] = "{\"ok\":false,\"decision\":\"error\",\"reason\":"
                                       "\"internal\",\"error\":\"too many clients\"}\n";
            ssize_t w = send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(fd);
            continue;
        }
        client *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        if (mncd_ident_resolve(fd, l->d->policy, &l->d->cfg, &c->who) != 0) {
            fprintf(stderr, "mncd: no peer credentials on a new connection; closing it\n");
            close(fd);
            free(c);
            continue;
        }
        mncd_kern_ident(l->d, &c->who); /* unregistered cgroup in the mnc tree: nobody */
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
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

static int make_listener(const char *path)
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

/* The iteration's group commit. No mnc_audit_sync here: in deferred mode the audit lines are
 * made durable by the journal record that carries them (that second fdatasync is what this
 * design removes); lines written to audit.jsonl are synced on clean close or by `audit`. */
static bool commit(loop *l)
{
    if (mncd_store_commit(&l->d->store) != 0) {
        fprintf(stderr, "mncd: state journal commit (state changes + audit records) failed: %s; "
                "stopping without acknowledging (fail closed)\n", strerror(errno));
        return false;
    }
    if (l->d->fatal) {
        fprintf(stderr, "mncd: audit log append failed earlier; stopping without acknowledging "
                "(fail closed)\n");
        return false;
    }
    return true;
}

int mncd_run(mncd *d)
{
    loop l = {.d = d, .ep = -1, .lfd = -1, .sfd = -1};
    int rc = 1;
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    signal(SIGPIPE, SIG_IGN);
    if (sigprocmask(SIG_BLOCK, &ss, NULL) != 0 ||
        (l.sfd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
        (l.ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        fprintf(stderr, "mncd: setup: %s\n", strerror(errno));
        goto out;
    }
    if ((l.lfd = make_listener(d->cfg.socket)) < 0)
        goto out;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l.lfd};
    struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &l.sfd};
    if (epoll_ctl(l.ep, EPOLL_CTL_ADD, l.lfd, &ev) != 0 ||
        epoll_ctl(l.ep, EPOLL_CTL_ADD, l.sfd, &sev) != 0) {
        fprintf(stderr, "mncd: epoll: %s\n", strerror(errno));
        goto out;
    }
    int kfds[MNCD_KERN_MAX_FDS]; /* kernel layer: deny events, cgroup watches, timer */
    int nk = mncd_kern_fds(d, kfds);
    for (int i = 0; i < nk; i++) {
        struct epoll_event kev = {.events = EPOLLIN, .data.ptr = &kfds[i]};
        if (epoll_ctl(l.ep, EPOLL_CTL_ADD, kfds[i], &kev) != 0) {
            fprintf(stderr, "mncd: epoll (kernel layer): %s\n", strerror(errno));
            goto out;
        }
    }
    /* Records appended during startup went to the file directly: make them durable, then let
     * the loop's records ride in its journal records (one fdatasync per iteration). */
    if (mnc_audit_sync(d->audit) != 0 || mnc_audit_set_deferred(d->audit, true) != 0) {
        fprintf(stderr, "mncd: audit log sync failed: %s\n", strerror(errno));
        goto out;
    }
    fprintf(stderr, "mncd %s: listening on %s, state in %s, %d contract(s)\n", MNCD_VERSION,
            d->cfg.socket, d->cfg.state_dir, d->policy->n_contracts);

    struct epoll_event evs[MAX_EVENTS];
    while (!l.stopping) {
        int n = epoll_wait(l.ep, evs, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "mncd: epoll_wait: %s\n", strerror(errno));
            goto out;
        }
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == &l.lfd) {
                do_accept(&l);
            } else if (evs[i].data.ptr == &l.sfd) {
                struct signalfd_siginfo si;
                while (read(l.sfd, &si, sizeof(si)) == sizeof(si))
                    l.stopping = true;
            } else if (evs[i].data.ptr >= (void *)kfds && evs[i].data.ptr < (void *)(kfds + nk)) {
                mncd_kern_ready(d, *(int *)evs[i].data.ptr);
            } else {
                client *c = evs[i].data.ptr;
                if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
                    client_read(&l, c);
                if (evs[i].events & EPOLLOUT)
                    touch(&l, c);
                if (evs[i].events & (EPOLLHUP | EPOLLERR) && !(evs[i].events & EPOLLIN))
                    c->dead = true;
                if (c->dead)
                    touch(&l, c);
            }
        }
        if (!commit(&l))
            goto out; /* nothing of this iteration is acknowledged */
        for (size_t i = 0; i < l.n_touched; i++) {
            client *c = l.touched[i];
            c->touched = false;
            if (c->dead || !client_flush(&l, c))
                client_free(&l, c);
        }
        l.n_touched = 0;
    }
    /* SIGTERM: stop accepting, then make everything acknowledged durable and deliver what is
     * queued (bounded wait), then record the stop. */
    epoll_ctl(l.ep, EPOLL_CTL_DEL, l.lfd, NULL);
    close(l.lfd);
    l.lfd = -1;
    unlink(d->cfg.socket);
    mncd_audit(d, "daemon.stop", -1, -1, NULL, "allow", MNC_OK, "SIGTERM");
    if (!commit(&l))
        goto out;
    /* Records appended after the loop (shutdown of other layers) go to the file directly and
     * are synced by mnc_audit_close; nothing is pending after a successful commit. */
    if (mnc_audit_set_deferred(d->audit, false) != 0 || mnc_audit_sync(d->audit) != 0) {
        fprintf(stderr, "mncd: audit log sync failed: %s\n", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    /* Best-effort final delivery of already-committed responses (up to 2 s), then free every
     * client. After a failed commit nothing more is sent: those responses were never durable. */
    if (l.ep >= 0) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            int pending = 0;
            for (client *c = l.clients; rc == 0 && c; c = c->next)
                if (!c->dead && c->out_len > c->out_off && client_flush(&l, c) &&
                    c->out_len > c->out_off)
                    pending++;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (!pending || t1.tv_sec - t0.tv_sec >= 2)
                break;
            struct epoll_event evs2[MAX_EVENTS];
            (void)epoll_wait(l.ep, evs2, MAX_EVENTS, 20);
        }
        while (l.clients)
            client_free(&l, l.clients);
    }
    if (l.lfd >= 0) {
        close(l.lfd);
        unlink(d->cfg.socket);
    }
    if (l.sfd >= 0)
        close(l.sfd);
    if (l.ep >= 0)
        close(l.ep);
    free(l.touched);
    return rc;
}
