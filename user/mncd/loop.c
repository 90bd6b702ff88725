// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* loop.c - the epoll event loop: accept, JSON-lines framing, bounded buffers, group commit.
 *
 * One thread, non-blocking sockets, level-triggered epoll. Each iteration:
 *   1. read every readable client, cut complete lines, handle each request -> its response is
 *      appended to the client's output queue (not sent yet);
 *   2. commit: first the iteration's ledger charges (the ledger is in deferred mode while the
 *      loop runs: a charge is counted at once and its record queued, mnc_lb_set_deferred) are
 *      made durable with one fdatasync of the ledger; then the iteration's state changes AND
 *      its audit records (hash-chained lines, exact bytes; the audit log is in deferred mode
 *      too) become one journal record with one fdatasync; then the audit lines are appended
 *      to audit.jsonl without a sync of their own (startup re-appends any the file lost:
 *      store.c). So every decision, charge and change is durable before any response that
 *      acknowledges it leaves the daemon, and a crash between the two syncs leaves a charge
 *      without its release, never the reverse (group commit: at most two fdatasyncs per
 *      iteration whatever the number of requests in it; it was one per charge plus two);
 *   3. send queued output; a client whose queue exceeds cfg.max_output (it does not read its
 *      responses) is disconnected, and nobody else waits for it.
 * Request lines are limited to MNC_PROTO_MAX_LINE bytes: a longer line gets an error response
 * and the rest of it is discarded up to its newline; the connection stays usable.
 *
 * Identity is per request (mncd.h, ident.c). Every accepted socket has SO_PASSCRED and (Linux
 * 6.5+) SO_PASSPIDFD (set on the listener, inherited at accept), and is read with recvmsg: each
 * chunk carries its writer's credentials, and the kernel never returns bytes of two writers in
 * one recvmsg. Where the connecting process's pidfd can vouch for its own chunks (Linux 6.13+,
 * mncd_peer_vouch) SO_PASSPIDFD is turned off at accept, and each read first peeks at the next
 * chunk's writer; another writer turns it on again before its chunk is read (peer_hold). A line remembers the
 * sender of its first byte; a byte from another sender makes the whole line refused. Any fd a
 * client sends (SCM_RIGHTS) is closed at once (MSG_CMSG_CLOEXEC, the control buffer holds the
 * kernel's maximum of SCM_MAX_FD fds), so sending fds cannot fill mncd's fd table; truncated
 * control data (MSG_CTRUNC) makes the chunk's sender unknown, and its line is refused.
 *
 * Connection caps: besides max_clients (global), a connection opened from a registered agent
 * cgroup counts against that agent (max_clients_per_agent), any other against its uid
 * (max_clients_per_uid); the admin uid outside the mnc tree only against max_clients. Counted
 * by the accept-time identity (SO_PEERCRED), which is used for nothing else but "is a broker
 * connected" (mncd_mncl_conn).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdalign.h>
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

#include "coro.h"
#include "json_write.h"
#include "mnc/ledger_backend.h"
#include "mncd.h"

#define MAX_EVENTS 256
#define READ_CHUNK 65536
#define READ_BUDGET (2u << 20) /* bytes read per client per iteration (fairness) */
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04
#endif
#define SCM_MAX_FDS 253 /* the kernel's SCM_MAX_FD: at most this many fds per message */
/* credentials + pidfd + a full SCM_RIGHTS batch + an SCM_SECURITY label, with room to spare */
#define CMSG_BUF                                                                                                       \
    (CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int)) + CMSG_SPACE(SCM_MAX_FDS * sizeof(int)) +              \
     CMSG_SPACE(4096))

enum cap_kind { CAP_NONE = 0, CAP_AGENT, CAP_UID };

typedef struct client {
    int fd;
    mncd_ident who;         /* accept-time identity: connection accounting only */
    enum cap_kind cap;      /* which per-principal count this connection holds */
    uint32_t cap_key;       /* agent id or uid */
    mncd_ident_cache cache; /* last resolved request sender (ident.c) */
    mncd_cred line_from;    /* sender of the current line's first byte */
    bool line_started;      /* the current line has at least one byte (or its newline) */
    bool line_mixed;        /* ... and bytes from another (or an unknown) sender */
    bool fds_noted;         /* received fds were reported once */
    /* The connecting process (SO_PEERPIDFD), held while peer_vouches: SO_PASSPIDFD is then off
     * and a chunk of that process is vouched for by this pidfd (mncd_peer_vouch) instead of
     * a pidfd made for every chunk. Off (for good) once another process writes. */
    int peer_pidfd;
    pid_t peer_pid;
    uint64_t peer_ino;
    bool peer_vouches;
    bool refused; /* refused by a cap: only its error line is sent, then closed */
    char *in;
    size_t in_len, in_cap;
    bool discarding;
    char *out;
    size_t out_len, out_off, out_cap;
    bool eof, dead, touched, epollout;
    bool busy;                      /* a request of this client is suspended in a job (its answer comes first) */
    bool zombie;                    /* closed while busy: freed when the job ends */
    struct queued *q_head, *q_tail; /* its later requests, parsed and identified, in order */
    struct client *prev, *next;     /* all clients, so shutdown can free them */
} client;

/* Fleet mode: a disclose runs as a job, in a coroutine (coro.h), and suspends while it waits
 * for PostgreSQL (mnc_lb_set_wait): the loop serves other requests meanwhile, so up to
 * MAX_JOBS charges are in flight and PostgreSQL commits them together. A client's requests are
 * still answered in order: while one of them is suspended, its later ones wait in its queue
 * (already identified: identity is per request and resolved when the line arrives). Like any
 * request, a job's state changes and audit records are made durable by the commit of the
 * iteration in which it finishes, before its answer is sent. */
#define MAX_JOBS MNC_LB_PG_POOL
#define DEFER_US 2000 /* longest a commit waits for more jobs to finish (group commit) */

typedef struct queued {
    mnc_request q;
    mncd_ident who;
    struct queued *next;
} queued;

typedef struct job {
    bool used;
    struct loop *l;
    client *c;
    mnc_request q;
    mncd_ident who;
    cJSON *resp;
    mncd_coro *co;
} job;

typedef struct uid_count {
    uint32_t uid, n;
} uid_count;

typedef struct loop {
    mncd *d;
    int ep, lfd, sfd;
    int spare; /* an fd kept in reserve: freed to accept the admin when the fd table is full */
    bool stopping;
    bool reload; /* SIGHUP: stop like SIGTERM, then main() re-executes mncd (docs/mncd.md) */
    client **touched;
    size_t n_touched, cap_touched;
    client *clients;
    uint32_t agent_conns[MNC_MAX_PRINCIPALS]; /* open connections per agent (accept identity) */
    uid_count *uid_conns;                     /* open connections per uid, n > 0 entries */
    size_t n_uid_conns, cap_uid_conns;
    job jobs[MAX_JOBS]; /* epoll data of a waiting job points here */
    int n_jobs;
    bool commit_deferred; /* the last iteration's changes are not durable yet */
    struct timespec deferred_since;
    mnc_jbuf resp; /* a response's line, printed here then copied to its client's queue */
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
    touch(l, c);
    return 0;
}

static void respond(loop *l, client *c, cJSON *resp)
{
    if (!resp) {
        static const char oom[] = "{\"ok\":false,\"decision\":\"error\",\"reason\":\"internal\",\"error\":\"out of "
                                  "memory\"}\n";
        out_append(l, c, oom, sizeof(oom) - 1);
        return;
    }
    if (cJSON_IsRaw(resp) && resp->valuestring) { /* an answer already written as text (answer.h) */
        if (out_append(l, c, resp->valuestring, strlen(resp->valuestring)) == 0)
            out_append(l, c, "\n", 1);
        cJSON_Delete(resp);
        return;
    }
    /* Printed into one buffer the loop reuses (json_write.h: cJSON's bytes without its
     * allocations and printf), not a line allocated per response. */
    l->resp.len = 0;
    int rc = mnc_json_print(&l->resp, resp) != 0 || mnc_jbuf_reserve(&l->resp, 1) != 0 ? -1 : 0;
    cJSON_Delete(resp);
    if (rc != 0) {
        respond(l, c, NULL);
        return;
    }
    l->resp.p[l->resp.len++] = '\n';
    out_append(l, c, l->resp.p, l->resp.len);
}

/* A request line whose bytes did not all come from one identified sender: nothing acts on
 * it. Refused with an error and one audit record. */
static void refuse_line(loop *l, client *c, cJSON *id)
{
    char det[200], rec[200], p1[MNC_AUDIT_HV_MAX], p2[MNC_AUDIT_HV_MAX];
    /* the record names the pids by keyed hash (an agent picks which of its processes writes:
     * docs/threat-model.md, "Records about agents") and counts against the connection's agent */
    if (!c->line_from.known) {
        snprintf(det, sizeof(det),
                 "request refused: the kernel gave no sender credentials for "
                 "its bytes (connection of pid %d)",
                 (int)c->who.pid);
        snprintf(rec, sizeof(rec),
                 "request refused: the kernel gave no sender credentials for its bytes (connection of pid %s)",
                 mncd_hv_u64(l->d, (uint64_t)c->who.pid, p1));
    } else {
        snprintf(det, sizeof(det),
                 "request refused: its bytes came from more than one sender "
                 "(first pid %d uid %u; connection of pid %d)",
                 (int)c->line_from.pid, (unsigned)c->line_from.uid, (int)c->who.pid);
        snprintf(rec, sizeof(rec),
                 "request refused: its bytes came from more than one sender (first pid %s uid %u; connection of "
                 "pid %s)",
                 mncd_hv_u64(l->d, (uint64_t)c->line_from.pid, p1), (unsigned)c->line_from.uid,
                 mncd_hv_u64(l->d, (uint64_t)c->who.pid, p2));
    }
    mncd_audit(l->d, "request", c->who.agent, -1, NULL, "deny", MNC_R_INVALID, rec);
    respond(l, c, mnc_resp_error(id, MNC_R_INVALID, "%s", det));
}

static void job_main(void *arg)
{
    job *j = arg;
    j->resp = mncd_handle(j->l->d, &j->who, &j->q);
}

/* A job has returned: its answer goes out (unless its client is gone). */
static void job_finish(loop *l, job *j)
{
    client *c = j->c;
    if (!c->zombie)
        respond(l, c, j->resp);
    else
        cJSON_Delete(j->resp);
    mnc_request_free(&j->q);
    mncd_coro_free(j->co);
    memset(j, 0, sizeof(*j));
    l->n_jobs--;
    c->busy = false;
    if (c->zombie)
        free(c);
    else
        touch(l, c);
}

/* Handles one identified request (q is consumed): a disclose in fleet mode as a job, which may
 * suspend (c->busy), everything else - and a disclose when every job slot is taken - now. */
static void dispatch(loop *l, client *c, mnc_request *q, const mncd_ident *who)
{
    if (q->verb == MNC_V_DISCLOSE && l->n_jobs < MAX_JOBS && mncd_fleet_on(l->d)) {
        job *j = NULL;
        for (int i = 0; i < MAX_JOBS && !j; i++)
            if (!l->jobs[i].used)
                j = &l->jobs[i];
        *j = (job){.used = true, .l = l, .c = c, .q = *q, .who = *who};
        if ((j->co = mncd_coro_new(job_main, j))) {
            l->n_jobs++;
            if (mncd_coro_run(j->co))
                job_finish(l, j);
            else
                c->busy = true;
            return;
        }
        memset(j, 0, sizeof(*j)); /* no coroutine: handle it here, blocking */
    }
    respond(l, c, mncd_handle(l->d, who, q));
    mnc_request_free(q);
}

/* The client's queued requests, in order, until one suspends. */
static void drain(loop *l, client *c)
{
    while (!c->busy && !c->zombie && c->q_head) {
        queued *x = c->q_head;
        c->q_head = x->next;
        if (!c->q_head)
            c->q_tail = NULL;
        dispatch(l, c, &x->q, &x->who);
        free(x);
    }
}

/* A waiting job's connection is readable: resume it. */
static void job_resume(loop *l, job *j)
{
    client *c = j->c;
    if (!mncd_coro_run(j->co))
        return;
    bool zombie = c->zombie;
    job_finish(l, j);
    if (!zombie)
        drain(l, c);
}

/* mnc_lb_set_wait hooks: inside a job, wait for fd through the loop's epoll (the job
 * suspends); elsewhere block on it. */
static int job_wait(void *arg, int fd)
{
    loop *l = arg;
    mncd_coro *co = mncd_coro_self();
    job *j = NULL;
    for (int i = 0; co && i < MAX_JOBS && !j; i++)
        if (l->jobs[i].used && l->jobs[i].co == co)
            j = &l->jobs[i];
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.ptr = j};
    if (j && epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) == 0) {
        mncd_coro_yield();
        epoll_ctl(l->ep, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, 30000)) < 0 && errno == EINTR)
        ;
    return r == 1 ? 0 : -1;
}

static bool job_suspendable(void *arg)
{
    (void)arg;
    return mncd_coro_self() != NULL;
}

/* cr: credentials of the chunk that holds the line's newline (the same sender as all of its
 * bytes unless c->line_mixed). */
static void handle_line(loop *l, client *c, const char *line, size_t len, const mncd_cred *cr)
{
    bool bad = c->line_mixed || !c->line_from.known || !mncd_cred_same(&c->line_from, cr);
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 && !bad)
        return; /* blank lines are keep-alives */
    mnc_request q;
    cJSON *id = NULL;
    char err[256];
    if (bad) {
        /* the id is echoed only so a client can match the error; nothing else is parsed */
        if (mnc_request_parse(line, len, &q, &id, err, sizeof(err)) == 0)
            mnc_request_free(&q);
        refuse_line(l, c, id);
        cJSON_Delete(id);
        return;
    }
    mncd_ident who;
    if (mncd_ident_request(l->d, cr, &c->cache, &who) != 0) {
        refuse_line(l, c, NULL);
        return;
    }
    if (mnc_request_parse(line, len, &q, &id, err, sizeof(err)) != 0) {
        respond(l, c, mnc_resp_error(id, MNC_R_INVALID, "%s", err));
        cJSON_Delete(id);
        return;
    }
    if (c->busy) { /* answered in order: after the suspended one */
        queued *x = malloc(sizeof(*x));
        if (!x) {
            respond(l, c, NULL);
            mnc_request_free(&q);
            return;
        }
        *x = (queued){.q = q, .who = who};
        if (c->q_tail)
            c->q_tail->next = x;
        else
            c->q_head = x;
        c->q_tail = x;
        return;
    }
    dispatch(l, c, &q, &who);
}

static void too_long(loop *l, client *c)
{
    respond(l, c,
            mnc_resp_error(NULL, MNC_R_INVALID,
                           "request line longer than %u bytes; it "
                           "was discarded",
                           MNC_PROTO_MAX_LINE));
}

/* The line being assembled gets bytes (or its newline) from sender cr. */
static void line_from(client *c, const mncd_cred *cr)
{
    if (!c->line_started) {
        c->line_from = *cr;
        c->line_from.pidfd = -1; /* the fd lives only as long as its chunk */
        c->line_started = true;
        c->line_mixed = !cr->known;
    } else if (!mncd_cred_same(&c->line_from, cr)) {
        c->line_mixed = true;
    }
}

static void line_reset(client *c)
{
    c->line_started = false;
    c->line_mixed = false;
}

/* Feeds one chunk of received bytes (all from the sender cr) through the framer. */
static void feed(loop *l, client *c, const char *p, size_t n, const mncd_cred *cr)
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
        line_from(c, cr);
        if (c->in_len + part > MNC_PROTO_MAX_LINE) {
            too_long(l, c);
            c->in_len = 0;
            line_reset(c);
            if (!nl) {
                c->discarding = true;
                return;
            }
        } else if (nl && c->in_len == 0) {
            handle_line(l, c, p, part, cr); /* common case: no copy */
            line_reset(c);
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
                handle_line(l, c, c->in, c->in_len, cr);
                c->in_len = 0;
                line_reset(c);
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

/* Takes the sender credentials out of one recvmsg's control data and closes every fd that
 * came with it (SCM_RIGHTS, SCM_PIDFD is kept in cr->pidfd for the caller to close). */
static void take_cmsgs(client *c, struct msghdr *mh, mncd_cred *cr)
{
    memset(cr, 0, sizeof(*cr));
    cr->pidfd = -1;
    size_t n_fds = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_len < CMSG_LEN(0))
            continue;
        size_t dlen = cm->cmsg_len - CMSG_LEN(0);
        if (cm->cmsg_type == SCM_RIGHTS) {
            for (size_t i = 0; i + sizeof(int) <= dlen; i += sizeof(int)) {
                int fd;
                memcpy(&fd, CMSG_DATA(cm) + i, sizeof(fd));
                if (fd >= 0)
                    close(fd);
                n_fds++;
            }
        } else if (cm->cmsg_type == SCM_CREDENTIALS && dlen >= sizeof(struct ucred)) {
            struct ucred uc;
            memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
            /* pid 0: the kernel attached no credentials to this chunk (sent while neither end
             * asked for them); the "uid" is then the overflow uid. Not a sender. */
            cr->known = uc.pid > 0;
            cr->pid = uc.pid;
            cr->uid = uc.uid;
            cr->gid = uc.gid;
        } else if (cm->cmsg_type == SCM_PIDFD && dlen >= sizeof(int)) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
            if (fd >= 0) {
                if (cr->pidfd >= 0)
                    close(cr->pidfd);
                cr->pidfd = fd;
            } else {
                cr->gone = true; /* the kernel could not make a pidfd: the sender has exited */
            }
        }
    }
    if (mh->msg_flags & MSG_CTRUNC)
        cr->known = false; /* part of the control data is missing: the sender is not proven */
    if ((n_fds || (mh->msg_flags & MSG_CTRUNC)) && !c->fds_noted) {
        fprintf(stderr,
                "mncd: client pid %d sent file descriptors%s; they were closed (noted "
                "once per connection)\n",
                (int)c->who.pid, mh->msg_flags & MSG_CTRUNC ? " (control data truncated)" : "");
        c->fds_noted = true;
    }
}

/* The pid of the next chunk's writer, without taking the chunk (MSG_PEEK). Any fd a peek
 * installs is closed. Returns 1 (*pid; 0 if the chunk has no credentials), 0 at end of
 * stream, -1 with errno. */
static int peek_writer(client *c, pid_t *pid)
{
    char b;
    alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(SCM_MAX_FDS * sizeof(int))];
    struct iovec iov = {.iov_base = &b, .iov_len = 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t r;
    do
        r = recvmsg(c->fd, &mh, MSG_PEEK | MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return (int)r;
    mncd_cred cr;
    take_cmsgs(c, &mh, &cr);
    if (cr.pidfd >= 0)
        close(cr.pidfd);
    *pid = cr.known ? cr.pid : 0;
    return 1;
}

/* Stops relying on the peer's pidfd: every chunk from now on brings its own (SO_PASSPIDFD).
 * The kernel makes a chunk's pidfd when it is read, so this covers the chunk just peeked. */
static void peer_stop_vouching(client *c)
{
    int one = 1;
    c->peer_vouches = false;
    close(c->peer_pidfd);
    c->peer_pidfd = -1;
    if (setsockopt(c->fd, SOL_SOCKET, SO_PASSPIDFD, &one, sizeof(one)) != 0) {
        fprintf(stderr, "mncd: SO_PASSPIDFD: %s; closing the connection (its writers cannot be proven)\n",
                strerror(errno));
        c->dead = true;
    }
}

static void client_read(loop *l, client *c)
{
    char buf[READ_CHUNK];
    alignas(struct cmsghdr) char cbuf[CMSG_BUF];
    size_t budget = READ_BUDGET;
    while (budget > 0 && !c->dead) {
        /* The connecting process's chunks need no pidfd of their own (mncd_peer_vouch); the
         * first chunk of any other writer (a child, a process it passed the fd to) turns
         * SO_PASSPIDFD back on before it is read. */
        bool vouched = false;
        uint64_t vouched_cg = 0;
        if (c->peer_vouches) {
            pid_t wp = 0;
            int pk = peek_writer(c, &wp);
            if (pk < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && budget < READ_BUDGET)
                return; /* this call already read everything there was */
            if (pk < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                c->dead = true;
                return;
            }
            /* Readable, yet the peek found nothing: a queued skb the peek skips (an MSG_OOB
             * byte without SO_OOBINLINE was one) would keep the level-triggered socket readable
             * and the loop spinning. Only a read takes it, and only with a pidfd per chunk may
             * it read. */
            if (pk < 0)
                peer_stop_vouching(c);
            else if (pk > 0 && mncd_peer_vouch(c->peer_pidfd, c->peer_pid, wp, &vouched_cg) == 1)
                vouched = true;
            else if (pk > 0)
                peer_stop_vouching(c);
            if (c->dead)
                return;
        }
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t r = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                c->dead = true;
            return;
        }
        mncd_cred cr;
        take_cmsgs(c, &mh, &cr); /* always: fds may arrive with any chunk */
        if (vouched) {
            /* the chunk peeked is the chunk read (mncd is its only reader); a pidfd of its own
             * would be one more of the same process */
            if (cr.known && cr.pid == c->peer_pid && cr.pidfd < 0) {
                cr.pidfd = c->peer_pidfd; /* lent: never closed here */
                cr.ino = c->peer_ino;
                cr.cgid = vouched_cg;
            } else {
                cr.known = false; /* cannot happen; if it does, the chunk has no proven sender */
            }
        } else {
            mncd_cred_inode(&cr);
        }
        bool own_pidfd = cr.pidfd >= 0 && !vouched; /* a lent pidfd is not closed below */
        if (r == 0) {
            if (own_pidfd)
                close(cr.pidfd);
            /* Peer finished sending. A partial last line (client disconnected mid-request) is
             * dropped: it was never a complete request. */
            c->eof = true;
            c->in_len = 0;
            line_reset(c);
            touch(l, c);
            return;
        }
        feed(l, c, buf, (size_t)r, &cr);
        if (own_pidfd)
            close(cr.pidfd);
        budget = budget > (size_t)r ? budget - (size_t)r : 0;
        /* A short read took everything queued (or stopped where the next bytes have another
         * sender): no second recvmsg just to hear EAGAIN. Anything left keeps the socket
         * readable, and the level-triggered epoll brings it back next iteration. */
        if ((size_t)r < sizeof(buf))
            return;
    }
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

static void client_free(loop *l, client *c)
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
static bool client_flush(loop *l, client *c)
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

static void do_accept(loop *l)
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
            if (n <= 0 || out_append(l, c, msg, (size_t)n) != 0)
                c->dead = true;
            touch(l, c);
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

/* The iteration's group commit. No mnc_audit_sync here: in deferred mode the audit lines are
 * made durable by the journal record that carries them (that second fdatasync is what this
 * design removes); lines written to audit.jsonl are synced on clean close or by `audit`. */
static bool commit(loop *l)
{
    /* charges before the state and audit records that refer to them (see the top) */
    if (l->d->ledger && mnc_lb_flush(l->d->ledger) != 0) {
        fprintf(stderr,
                "mncd: ledger commit failed: %s; stopping without acknowledging "
                "(fail closed)\n",
                strerror(errno));
        return false;
    }
    if (mncd_store_commit(&l->d->store) != 0) {
        fprintf(stderr,
                "mncd: state journal commit (state changes + audit records) failed: %s; "
                "stopping without acknowledging (fail closed)\n",
                strerror(errno));
        return false;
    }
    if (l->d->fatal) {
        fprintf(stderr, "mncd: audit log append failed earlier; stopping without acknowledging "
                        "(fail closed)\n");
        return false;
    }
    return true;
}

/* SIGHUP: a restart in place on the edited config and policy, if it would start (reload.c);
 * otherwise the daemon keeps its policy. Both audited. */
static void on_reload(loop *l)
{
    char why[1024];
    bool ok = mncd_reload_check(l->d, why, sizeof(why)) == 0;
    char det[1100];
    snprintf(det, sizeof(det), "%s: %s", ok ? "reloading (restart in place)" : "reload refused, policy kept", why);
    fprintf(stderr, "mncd: SIGHUP: %s\n", det);
    mncd_audit(l->d, "daemon.reload", -1, -1, NULL, ok ? "allow" : "deny", ok ? MNC_OK : MNC_R_INVALID, det);
    if (ok) {
        l->reload = true;
        l->d->reload = true;
        l->stopping = true;
    }
}

int mncd_run(mncd *d)
{
    loop l = {.d = d, .ep = -1, .lfd = -1, .sfd = -1, .spare = -1};
    int rc = 1;
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGHUP); /* reload: reload.c */
    signal(SIGPIPE, SIG_IGN);
    if (sigprocmask(SIG_BLOCK, &ss, NULL) != 0 || (l.sfd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
        (l.ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        fprintf(stderr, "mncd: setup: %s\n", strerror(errno));
        goto out;
    }
    /* --privsep: the enforcer bound it (mon_kern.c) */
    if ((l.lfd = d->psp ? mon_kern_listen_fd(d) : make_listener(d->cfg.socket)) < 0)
        goto out;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l.lfd};
    struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &l.sfd};
    if (epoll_ctl(l.ep, EPOLL_CTL_ADD, l.lfd, &ev) != 0 || epoll_ctl(l.ep, EPOLL_CTL_ADD, l.sfd, &sev) != 0) {
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
    if (d->ledger && mnc_lb_set_deferred(d->ledger, true) != 0) {
        fprintf(stderr, "mncd: ledger: %s\n", strerror(errno));
        goto out;
    }
    mnc_lb_set_wait(d->ledger, job_wait, job_suspendable, &l);
    fprintf(stderr, "mncd %s: listening on %s, state in %s, %d contract(s)\n", MNCD_VERSION, d->cfg.socket,
            d->cfg.state_dir, d->policy->n_contracts);

    struct epoll_event evs[MAX_EVENTS];
    while (!l.stopping) {
        int to = mncd_fleet_timeout(d, mncd_mncl_pending_approvals(d));
        if (l.commit_deferred && (to < 0 || to > 1))
            to = 1; /* ms: the deferred commit is due within DEFER_US */
        int n = epoll_wait(l.ep, evs, MAX_EVENTS, to);
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
                    if (si.ssi_signo != SIGHUP)
                        l.stopping = true;
                    else if (!l.stopping && d->psp) /* the monitor cannot re-execute the enforcer */
                        fprintf(stderr, "mncd: SIGHUP: no reload under --privsep; restart mncd\n");
                    else if (!l.stopping)
                        on_reload(&l);
            } else if (evs[i].data.ptr >= (void *)kfds && evs[i].data.ptr < (void *)(kfds + nk)) {
                mncd_kern_ready(d, *(int *)evs[i].data.ptr);
            } else if (evs[i].data.ptr >= (void *)l.jobs && evs[i].data.ptr < (void *)(l.jobs + MAX_JOBS)) {
                job_resume(&l, evs[i].data.ptr);
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
        if (mncd_fleet_tick(d)) {               /* fleet mode, database up: reconnect done (fleet.c) */
            if (mncd_mncl_pending_approvals(d)) /* decisions other hosts took */
                mncd_fleet_poll(d, mncd_mncl_apply_remote);
            mncd_mncl_tick(d); /* approval deadlines, also while no request arrives */
        }
        /* Group commit across jobs: while jobs are waiting for PostgreSQL, an iteration may
         * leave its commit - and the sending of its answers, which must follow the commit -
         * to a later iteration, at most DEFER_US after the first one deferred, so that jobs
         * finishing in that window share one fdatasync (mncd's state journal and
         * PostgreSQL's WAL otherwise take turns on the disk, one sync per answer). */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!l.commit_deferred)
            l.deferred_since = now;
        long waited_us =
            (now.tv_sec - l.deferred_since.tv_sec) * 1000000 + (now.tv_nsec - l.deferred_since.tv_nsec) / 1000;
        if (l.n_jobs > 0 && waited_us < DEFER_US) {
            l.commit_deferred = true;
            continue; /* answers stay queued, touched clients stay touched */
        }
        if (!commit(&l))
            goto out; /* nothing of this iteration is acknowledged */
        l.commit_deferred = false;
        mncd_fleet_anchor(d, false); /* the head is durable now */
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
    /* Jobs waiting for PostgreSQL get up to 5 s to finish (their answers are committed
     * below); one still waiting then is abandoned: its charge may be committed, but nothing
     * was released - the safe direction. */
    for (int waited = 0; l.n_jobs > 0 && waited < 5000; waited += 50) {
        int n = epoll_wait(l.ep, evs, MAX_EVENTS, 50);
        for (int i = 0; i < n; i++)
            if (evs[i].data.ptr >= (void *)l.jobs && evs[i].data.ptr < (void *)(l.jobs + MAX_JOBS))
                job_resume(&l, evs[i].data.ptr);
    }
    mncd_audit(d, "daemon.stop", -1, -1, NULL, "allow", MNC_OK,
               l.reload ? "SIGHUP: reload (mncd restarts in place)" : "SIGTERM");
    if (!commit(&l))
        goto out;
    mncd_fleet_anchor(d, true); /* always at shutdown */
    /* charges after the loop (shutdown of other layers) are durable at return again */
    if (d->ledger && mnc_lb_set_deferred(d->ledger, false) != 0) {
        fprintf(stderr, "mncd: ledger commit failed: %s\n", strerror(errno));
        goto out;
    }
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
                if (!c->dead && c->out_len > c->out_off && client_flush(&l, c) && c->out_len > c->out_off)
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
    if (l.spare >= 0)
        close(l.spare);
    if (l.ep >= 0)
        close(l.ep);
    mnc_lb_set_wait(d->ledger, NULL, NULL, NULL);
    free(l.touched);
    free(l.resp.p);
    free(l.uid_conns);
    return rc;
}
