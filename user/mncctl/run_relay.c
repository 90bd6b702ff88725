// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_relay.c - the launcher relays the agent's stdout and stderr by its taint (run_relay.h). */
#include "run_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mnc/protocol.h"
#include "mncctl.h"
#include "run_gate.h"

/* The keeper (run_relay.h): joins cg, drops every fd but its lifeline, waits for EOF on it. */
static void keeper_main(const char *cg, int life)
{
    signal(SIGINT, SIG_IGN); /* the terminal's ^C is the agent's and the launcher's business */
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    prctl(PR_SET_NAME, "mnc-stdio-keep", 0, 0, 0); /* recognisable in ps / cgroup.procs */
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1)
        _exit(1);
    close(fd);
    if (life > 0)
        syscall(SYS_close_range, 0u, (unsigned)life - 1, 0u);
    syscall(SYS_close_range, (unsigned)life + 1, ~0u, 0u);
    char c;
    while (read(life, &c, 1) < 0 && errno == EINTR)
        ;
    _exit(0);
}

int run_relay_open(run_relay *r, bool passthrough, const char *cg)
{
    memset(r, 0, sizeof(*r));
    r->out[0] = r->out[1] = r->err[0] = r->err[1] = -1;
    r->keeper = -1;
    r->keeper_fd = -1;
    if (passthrough)
        return 0;
    if (pipe2(r->out, O_CLOEXEC) != 0 || pipe2(r->err, O_CLOEXEC) != 0) {
        mncctl_err("run: stdio pipes: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (r->out[i] >= 0)
                close(r->out[i]);
            if (r->err[i] >= 0)
                close(r->err[i]);
        }
        return -1;
    }
    r->active = true;
    int life[2];
    if (pipe2(life, O_CLOEXEC) != 0) {
        mncctl_err("run: stdio keeper pipe: %s", strerror(errno));
        return 0; /* the relay still fails closed without it */
    }
    fflush(NULL);
    pid_t kp = fork();
    if (kp == 0) {
        close(life[1]);
        keeper_main(cg, life[0]);
    }
    close(life[0]);
    if (kp < 0) {
        mncctl_err("run: stdio keeper: fork: %s", strerror(errno));
        close(life[1]);
        return 0;
    }
    r->keeper = kp;
    r->keeper_fd = life[1];
    return 0;
}

/* Lets the keeper go (the relay is done): the cgroup can empty now. */
static void keeper_release(run_relay *r)
{
    if (r->keeper_fd >= 0)
        close(r->keeper_fd);
    r->keeper_fd = -1;
    if (r->keeper > 0)
        while (waitpid(r->keeper, NULL, 0) < 0 && errno == EINTR)
            ;
    r->keeper = -1;
}

int run_relay_child(run_relay *r, char *why, size_t whylen)
{
    if (!r->active)
        return 0;
    /* dup2 clears O_CLOEXEC on the new fds: 1 and 2 survive the exec, the originals do not */
    if (dup2(r->out[1], 1) < 0 || dup2(r->err[1], 2) < 0) {
        snprintf(why, whylen, "stdio: dup2: %s", strerror(errno));
        return -1;
    }
    close(r->out[0]);
    close(r->out[1]);
    close(r->err[0]);
    close(r->err[1]);
    if (r->keeper_fd >= 0)
        close(r->keeper_fd);
    /* stdin is an input, but the caller's fd 0 is often writable: a terminal is opened
     * read-write once for 0, 1 and 2, and a socket always is. Written to, it would carry the
     * agent's output past the relay. And even read-only it is the caller's open file
     * description: its offset (lseek on a file), its flags (F_SETFL) and its owner (F_SETOWN)
     * are read back by whoever shares it (attack stdin_file_offset). The agent gets a fresh
     * read-only open of the same file through /proc (still root here), whatever the mode: an
     * offset and flags of its own. What cannot be reopened (a socket) becomes /dev/null - the
     * agent loses that input, never the other way round. The object itself stays shared: a
     * pipe's size and a terminal's settings are refused by the seccomp filter (run_confine.c). */
    int fl = fcntl(0, F_GETFL);
    if (fl >= 0) {
        /* O_NONBLOCK: a FIFO whose writer has gone would block this open forever; the flag
         * is then cleared on the new description, which is the agent's alone */
        int ro = open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        int nf = ro >= 0 && !(fl & O_NONBLOCK) ? fcntl(ro, F_GETFL) : 0;
        if (nf < 0 || (ro >= 0 && !(fl & O_NONBLOCK) && fcntl(ro, F_SETFL, nf & ~O_NONBLOCK) != 0)) {
            snprintf(why, whylen, "stdio: cannot clear O_NONBLOCK on the reopened stdin: %s", strerror(errno));
            close(ro);
            return -1;
        }
        if (ro < 0) {
            /* fd 2 is the relay's pipe already: the operator sees this through the relay */
            dprintf(2,
                    "mncctl: run: the caller's stdin cannot be reopened for the agent alone (%s): "
                    "the agent gets /dev/null as stdin (--stdio passthrough keeps it)\n",
                    strerror(errno));
            ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
        } else {
            /* a file the caller had read part of: the agent goes on where the caller was */
            off_t at = lseek(0, 0, SEEK_CUR);
            if (at > 0 && lseek(ro, at, SEEK_SET) != at) {
                snprintf(why, whylen, "stdio: cannot position the reopened stdin: %s", strerror(errno));
                close(ro);
                return -1;
            }
        }
        if (ro < 0 || dup2(ro, 0) < 0) {
            snprintf(why, whylen, "stdio: cannot reopen stdin for the agent: %s", strerror(errno));
            return -1;
        }
        close(ro);
    }
    return 0;
}

void run_relay_use_tty(run_relay *r, const int master[2])
{
    int *in[2] = {&r->out[0], &r->err[0]};
    for (int i = 0; i < 2; i++) {
        if (master[i] < 0)
            continue;
        if (!r->active) {
            close(master[i]);
            continue;
        }
        if (*in[i] >= 0)
            close(*in[i]);
        *in[i] = master[i];
    }
}

void run_relay_parent(run_relay *r)
{
    if (!r->active)
        return;
    close(r->out[1]);
    close(r->err[1]);
    r->out[1] = r->err[1] = -1;
}

/* ---- one stream */
typedef struct stream {
    const char *name; /* "stdout" | "stderr" */
    int in;           /* pipe read end, -1 at EOF */
    int dst;          /* 1 | 2 */
    bool have_sink;   /* the policy's sink for this stream exists (class log) */
    uint32_t sink;
    const char *sink_name; /* its name ("stdout", "stderr" or "console") */
    bool dst_broken;       /* our own stdout/stderr is gone (EPIPE): keep draining, drop */
    bool noted;            /* the operator was told once that output is withheld */
} stream;

typedef struct relay_ctx {
    mnc_kern *k;
    const char *agent;
    uint32_t agent_id;
    const char *sock;
    int mncd;                /* connection for quarantine.put, -1 if none yet / lost */
    bool mncd_failed;        /* told the operator once */
    unsigned long long lost; /* withheld bytes mncd did not take (reported with the next put) */
} relay_ctx;

/* May this chunk, read before this call, go out on s? Only with an untainted agent, or a taint
 * whose φ names the stream's sink. Fail closed on anything unknown. */
static bool may_pass(relay_ctx *c, stream *s)
{
    struct mnc_taint t;
    /* ids as the principal binding gives them now: a restarted mncd may have renumbered them */
    if (mnc_kern_bind_check(c->k, c->agent, MNC_SINK_AGENT, &c->agent_id) < 0 ||
        mnc_kern_taint_get(c->k, c->agent_id, &t) != 0)
        return false;
    if (!t.tainted)
        return true;
    return s->have_sink && mnc_kern_bind_check(c->k, s->sink_name, MNC_SINK_LOG, &s->sink) >= 0 &&
           mnc_decide(&t, MNC_SINK_LOG, s->sink) == MNC_K_ALLOW_SCOPE;
}

static char *b64(const unsigned char *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc((n + 2) / 3 * 4 + 1), *q = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *q++ = a[v >> 18 & 63];
        *q++ = a[v >> 12 & 63];
        *q++ = i + 1 < n ? a[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? a[v & 63] : '=';
    }
    *q = 0;
    return o;
}

/* Hands a withheld chunk to mncd's quarantine. Never forwards it anywhere else: if mncd does not
 * take it, the bytes are dropped and counted (fail closed). */
static void quarantine(relay_ctx *c, const stream *s, const unsigned char *buf, size_t n)
{
    char err[512] = "mncd not used (--kernel-only)";
    bool ok = false;
    if (c->sock && c->mncd < 0)
        c->mncd = mnc_client_connect(c->sock, err, sizeof(err));
    if (c->mncd >= 0) {
        cJSON *req = cJSON_CreateObject(), *resp = NULL;
        char *data = b64(buf, n);
        if (req && data && cJSON_AddStringToObject(req, "verb", "quarantine.put") &&
            cJSON_AddStringToObject(req, "agent", c->agent) && cJSON_AddStringToObject(req, "stream", s->name) &&
            cJSON_AddStringToObject(req, "data", data) &&
            (c->lost == 0 || cJSON_AddNumberToObject(req, "lost", (double)c->lost))) {
            if (mnc_client_call(c->mncd, req, &resp, err, sizeof(err)) == 0) {
                const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");
                ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"));
                if (!ok)
                    snprintf(err, sizeof(err), "%s", cJSON_IsString(e) ? e->valuestring : "refused");
            } else {
                close(c->mncd); /* the connection is out of step or gone: reconnect next time */
                c->mncd = -1;
            }
        } else {
            snprintf(err, sizeof(err), "out of memory");
        }
        free(data);
        cJSON_Delete(req);
        cJSON_Delete(resp);
    }
    if (ok) {
        c->lost = 0; /* mncd audited them with this record */
        return;
    }
    c->lost += n;
    if (!c->mncd_failed)
        mncctl_err("run: agent \"%s\": withheld output could not be quarantined (%s): dropped, counted as lost",
                   c->agent, err);
    c->mncd_failed = true;
}

static void write_all(stream *s, const unsigned char *buf, size_t n)
{
    size_t done = 0;
    while (!s->dst_broken && done < n) {
        ssize_t w = write(s->dst, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s->dst_broken = true; /* the reader went away (EPIPE; SIGPIPE is ignored) */
            break;
        }
        done += (size_t)w;
    }
}

/* Reads one chunk from s and decides it. Returns 1 if bytes were handled, 0 at EOF or (non-
 * blocking) nothing to read, -1 on a read error (the stream is closed). */
static int pump(relay_ctx *c, stream *s, unsigned char *buf)
{
    ssize_t n;
    while ((n = read(s->in, buf, RUN_RELAY_CHUNK)) < 0 && errno == EINTR)
        ;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n < 0 && errno == EIO) /* a terminal's master once every slave fd is closed: its end of file */
        n = 0;
    if (n <= 0) {
        close(s->in);
        s->in = -1;
        return n == 0 ? 0 : -1;
    }
    /* the lookup comes after the read: see the ordering guarantee in run_relay.h */
    if (may_pass(c, s)) {
        write_all(s, buf, (size_t)n);
        return 1;
    }
    if (!s->noted) {
        /* a fixed note, no bytes and no counts: the launcher's stderr is a log channel too */
        mncctl_err("run: agent \"%s\" is tainted and its scope does not allow %s: its %s is withheld "
                   "(kept in mncd's quarantine, audited)",
                   c->agent, isatty(s->dst) ? "the console" : s->name, s->name);
        s->noted = true;
    }
    quarantine(c, s, buf, (size_t)n);
    return 1;
}

static void resolve_sink(mnc_kern *k, stream *s)
{
    const char *name = isatty(s->dst) ? "console" : s->name;
    unsigned cls = 0;
    s->sink_name = name;
    s->have_sink = mnc_kern_name_find(k, name, &s->sink, &cls) == 0 && cls == MNC_SINK_LOG;
}

/* Answers the gate's pending calls (run_gate.h); stops polling it when it failed. */
static void gate_ready(int *gate, mnc_kern *k, uint32_t *agent_id, const char *agent, unsigned long *denied)
{
    int rc = run_gate_answer(*gate, k, agent, agent_id, denied);
    if (rc != 0) {
        mncctl_err("run: agent \"%s\": the launcher's gate failed (%s); the agent's later gated calls (locks, "
                   "shutdown, a server's bind and listen) fail",
                   agent, strerror(-rc));
        close(*gate);
        *gate = -1;
    }
}

/* The relay is off (--stdio passthrough): wait for the agent, answering the gate meanwhile. */
static int wait_gated(mnc_kern *k, const char *agent, uint32_t agent_id, pid_t pid, int gate, unsigned long *denied,
                      int *status)
{
    int pfd = gate >= 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    while (gate >= 0 && pfd >= 0) {
        struct pollfd p[2] = {{.fd = pfd, .events = POLLIN}, {.fd = gate, .events = POLLIN}};
        int n = poll(p, 2, -1);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (p[1].revents & POLLIN))
            gate_ready(&gate, k, &agent_id, agent, denied);
        if (n > 0 && (p[0].revents & POLLIN))
            break;
    }
    if (pfd >= 0)
        close(pfd);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

int run_relay_loop(run_relay *r, mnc_kern *k, const char *agent, uint32_t agent_id, const char *sock, pid_t pid,
                   int gate, int *status)
{
    *status = 127 << 8;
    unsigned long denied = 0;
    if (!r->active)
        return wait_gated(k, agent, agent_id, pid, gate, &denied, status);
    relay_ctx c = {.k = k, .agent = agent, .agent_id = agent_id, .sock = sock, .mncd = -1};
    stream st[2] = {{.name = "stdout", .in = r->out[0], .dst = 1}, {.name = "stderr", .in = r->err[0], .dst = 2}};
    r->out[0] = r->err[0] = -1; /* owned by st[] now */
    for (int i = 0; i < 2; i++)
        resolve_sink(k, &st[i]);
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe);
    unsigned char *buf = malloc(RUN_RELAY_CHUNK);
    /* pidfd: the agent's exit wakes the poll even while its children keep the pipes open */
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    bool exited = false;
    int rc = 0;
    while (buf && !exited && (st[0].in >= 0 || st[1].in >= 0)) {
        struct pollfd p[4] = {{.fd = st[0].in, .events = POLLIN},
                              {.fd = st[1].in, .events = POLLIN},
                              {.fd = pfd, .events = POLLIN},
                              {.fd = gate, .events = POLLIN}};
        int n = poll(p, 4, pfd >= 0 ? -1 : 100);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && gate >= 0 && (p[3].revents & POLLIN))
            gate_ready(&gate, k, &c.agent_id, agent, &denied);
        for (int i = 0; n > 0 && i < 2; i++)
            if (st[i].in >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                pump(&c, &st[i], buf);
        if ((pfd >= 0 && n > 0 && (p[2].revents & POLLIN)) || pfd < 0) {
            pid_t w = waitpid(pid, status, WNOHANG);
            if (w == pid)
                exited = true;
            else if (w < 0 && errno != EINTR) {
                rc = -1;
                exited = true;
            }
        }
    }
    /* The agent is gone (or both pipes hit EOF): drain what is left without blocking on
     * processes of the agent that still hold the pipes (remove_cgroup kills them). */
    for (int i = 0; i < 2; i++) {
        if (st[i].in < 0)
            continue;
        if (fcntl(st[i].in, F_SETFL, O_NONBLOCK) != 0) {
            close(st[i].in);
            st[i].in = -1;
            continue;
        }
        while (buf && st[i].in >= 0 && pump(&c, &st[i], buf) > 0)
            ;
        if (st[i].in >= 0)
            close(st[i].in);
    }
    if (!exited) {
        while (waitpid(pid, status, 0) < 0)
            if (errno != EINTR) {
                *status = 127 << 8;
                rc = -1;
                break;
            }
    }
    if (!buf)
        mncctl_err("run: stdio relay: out of memory; the agent's output was not relayed");
    /* no count: how much a tainted agent wrote is its choice (attack covert_relay_lost_count);
     * the relay's "withheld" note carries none either */
    if (c.lost)
        mncctl_err("run: agent \"%s\": withheld output was lost (mncd did not take it)", agent);
    if (pfd >= 0)
        close(pfd);
    if (c.mncd >= 0)
        close(c.mncd);
    free(buf);
    sigaction(SIGPIPE, &old_pipe, NULL);
    keeper_release(r);
    return rc;
}
