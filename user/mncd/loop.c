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

#include "loop_int.h"
#include "sdnotify.h"

static void respond(loop *l, client *c, cJSON *resp)
{
    if (!resp) {
        static const char oom[] = "{\"ok\":false,\"decision\":\"error\",\"reason\":\"internal\",\"error\":\"out of "
                                  "memory\"}\n";
        lp_out_append(l, c, oom, sizeof(oom) - 1);
        return;
    }
    if (cJSON_IsRaw(resp) && resp->valuestring) { /* an answer already written as text (answer.h) */
        if (lp_out_append(l, c, resp->valuestring, strlen(resp->valuestring)) == 0)
            lp_out_append(l, c, "\n", 1);
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
    lp_out_append(l, c, l->resp.p, l->resp.len);
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
        lp_touch(l, c);
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
            lp_touch(l, c);
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
    if ((l.lfd = d->psp ? mon_kern_listen_fd(d) : lp_listener(d->cfg.socket)) < 0)
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
    (void)mnc_sd_notify("READY=1"); /* Type=notify (sdnotify.h) */
    uint64_t wd_ms = mnc_sd_watchdog_ms(), wd_last = 0;

    struct epoll_event evs[MAX_EVENTS];
    while (!l.stopping) {
        if (wd_ms && !d->fatal && mnc_now_ms() - wd_last >= wd_ms) { /* the loop turns: WatchdogSec= */
            (void)mnc_sd_notify("WATCHDOG=1");
            wd_last = mnc_now_ms();
        }
        int to = mncd_fleet_timeout(d, mncd_mncl_pending_approvals(d));
        if (wd_ms && (to < 0 || (uint64_t)to > wd_ms))
            to = (int)wd_ms;
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
                lp_accept(&l);
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
                    lp_touch(&l, c);
                if (evs[i].events & (EPOLLHUP | EPOLLERR) && !(evs[i].events & EPOLLIN))
                    c->dead = true;
                if (c->dead)
                    lp_touch(&l, c);
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
            if (c->dead || !lp_client_flush(&l, c))
                lp_client_free(&l, c);
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
                if (!c->dead && c->out_len > c->out_off && lp_client_flush(&l, c) && c->out_len > c->out_off)
                    pending++;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (!pending || t1.tv_sec - t0.tv_sec >= 2)
                break;
            struct epoll_event evs2[MAX_EVENTS];
            (void)epoll_wait(l.ep, evs2, MAX_EVENTS, 20);
        }
        while (l.clients)
            lp_client_free(&l, l.clients);
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
