// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atk.c - the attack corpus's harness: orchestrator, outside collector, verifier helpers, and
 * the agent-side client for mncd's JSON-lines socket. Contracts in atk.h. */
#include "atk.h"

#include <arpa/inet.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/mount.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_ 65536
#define AGENT_TIMEOUT_MS 40000

/* ------------------------------------------------------------------ both sides */

const char *atk_arg(struct atk_ctx *c, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < c->nkv; i++)
        if (strncmp(c->kv[i], key, kl) == 0 && c->kv[i][kl] == '=')
            return c->kv[i] + kl + 1;
    return NULL;
}

long atk_argl(struct atk_ctx *c, const char *key)
{
    const char *v = atk_arg(c, key);
    return v ? strtol(v, NULL, 0) : -1;
}

void atk_set(struct atk_ctx *c, const char *key, const char *fmt, ...)
{
    char val[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    if (c->nkv >= ATK_MAXKV)
        return;
    size_t n = strlen(key) + strlen(val) + 2;
    char *s = malloc(n);
    if (!s)
        return;
    snprintf(s, n, "%s=%s", key, val);
    c->kv[c->nkv++] = s;
}

const char *atk_errname(int err)
{
    if (err == 0)
        return "OK";
    const char *n = strerrorname_np(err);
    return n ? n : "E?";
}

int atk_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ------------------------------------------------------------------ agent side */

/* The control channel to the orchestrator: a file in the agent's workspace (ctl=PATH, created
 * by the orchestrator), not stdout. `mncctl run` relays (docs/kernel.md, "Stdio") the agent's stdout and
 * withholds it once the agent is tainted, and the launcher's stdout is what the stdio attacks'
 * verifier reads for the canary. The orchestrator opens the file only briefly to read it and
 * never while a recv is under way (see atk_recv_soft): mncd refuses a delivery while an
 * outsider holds a file of the agent's workspace (fdscan "held_outside"). */
static int ctl_fd = -1;

void atk_say(struct atk_ctx *c, const char *fmt, ...)
{
    (void)c;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(buf) - 2)
        n = (int)sizeof(buf) - 2;
    for (int i = 0; i < n; i++)
        if (buf[i] == '\n')
            buf[i] = ' ';
    buf[n++] = '\n';
    /* one write() per line on an O_APPEND fd: lines of forked children never interleave */
    if (ctl_fd < 0 || atk_write_all(ctl_fd, buf, (size_t)n) < 0)
        _exit(5); /* the orchestrator cannot hear us: it reports the run as an ERROR */
}

void atk_note(struct atk_ctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (c->dir[0]) { /* orchestrator side (a verifier hook): into the result line, not stdout */
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%sverifier: %s", l ? ", " : "", buf);
        return;
    }
    atk_say(c, "note %s", buf);
}

long atk_try(struct atk_ctx *c, const char *what, long rc)
{
    int e = errno;
    atk_note(c, "%s: %s", what, rc < 0 ? atk_errname(e) : "OK");
    errno = e;
    return rc;
}

void atk_sync(struct atk_ctx *c, const char *tag)
{
    char line[64];
    atk_say(c, "sync %s", tag);
    if (!fgets(line, sizeof(line), stdin))
        exit(4); /* the orchestrator is gone */
}

int atk_unix(int type, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len;
    if (path[0] == '@') {
        size_t n = strlen(path + 1);
        if (n >= sizeof(sa.sun_path) - 1) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(sa.sun_path + 1, path + 1, n);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        if (strlen(path) >= sizeof(sa.sun_path)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        strcpy(sa.sun_path, path);
        len = sizeof(sa);
    }
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int atk_mncd(struct atk_ctx *c)
{
    const char *s = atk_arg(c, "sock");
    return s ? atk_unix(SOCK_STREAM, s) : -1;
}

int atk_call(int fd, const char *req, char *resp, size_t n)
{
    if (atk_write_all(fd, req, strlen(req)) < 0 || atk_write_all(fd, "\n", 1) < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < n) {
        ssize_t r = read(fd, resp + got, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (resp[got] == '\n')
            break;
        got++;
    }
    resp[got] = 0;
    return 0;
}

/* the value of "key":"..." after `from` in a JSON text (no escapes expected in our values) */
static int json_str(const char *js, const char *key, char *out, size_t n)
{
    char pat[96];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *p = strstr(js, pat);
    if (!p)
        return -1;
    p += strlen(pat);
    const char *e = strchr(p, '"');
    if (!e || (size_t)(e - p) >= n)
        return -1;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = 0;
    return 0;
}

int atk_recv_soft(struct atk_ctx *c, char *why, size_t n)
{
    static char resp[LINE_MAX_];
    const char *ctl = getenv("ATK_CONTROL_SECRET");
    if (ctl) { /* positive control: an untainted process given the canary directly */
        snprintf(c->secret, sizeof(c->secret), "%s", ctl);
        atk_say(c, "recv ok");
        return 0;
    }
    /* "hold": the orchestrator reads what we said so far, closes the control file and answers;
     * it opens the file again only when it grows, i.e. after this recv returned */
    char line[16];
    atk_say(c, "hold recv");
    if (!fgets(line, sizeof(line), stdin))
        exit(4); /* the orchestrator is gone */
    int fd = atk_mncd(c);
    if (fd < 0) {
        snprintf(why, n, "connect mncd: %s", atk_errname(errno));
        return -1;
    }
    if (atk_call(fd, "{\"verb\":\"recv\"}", resp, sizeof(resp)) < 0) {
        close(fd);
        snprintf(why, n, "no response");
        return -1;
    }
    close(fd);
    /* an object an earlier attack of the run left queued (its recv refused, or never made) comes
     * first in the same answer: take this run's disclosure (obj=, from the orchestrator) */
    const char *mine = NULL;
    if (atk_arg(c, "obj")) {
        char pat[64];
        snprintf(pat, sizeof(pat), "\"id\":\"%.40s\"", atk_arg(c, "obj"));
        mine = strstr(resp, pat);
    }
    const char *v = strstr(mine ? mine : resp, "\"values\":");
    const char *o = strstr(resp, "\"object\":{");
    if (mine)
        o = mine - 1;
    const char *den = strstr(resp, "\"denied\":[{");
    if (!v && den) { /* mncd refused the delivery: the product blocked the attack before it held anything */
        char reason[64] = "?", err[160] = "";
        json_str(den, "reason", reason, sizeof(reason));
        json_str(den, "error", err, sizeof(err));
        snprintf(why, n, "refused %s: %.150s", reason, err);
        if (c->retry_refused)
            return -2; /* the attack notes how often it asked */
        atk_say(c, "recv refused %s: %s", reason, err);
        exit(0);
    }
    if (!strstr(resp, "\"ok\":true") || !v || json_str(v, "selected_slot", c->secret, sizeof(c->secret)) < 0) {
        snprintf(why, n, "%.199s", resp);
        for (char *p = why; *p; p++)
            if (*p == '\n')
                *p = ' ';
        return -1;
    }
    if (o)
        json_str(o, "id", c->object, sizeof(c->object));
    atk_say(c, "recv ok");
    return 0;
}

int atk_recv(struct atk_ctx *c)
{
    char why[256];
    if (atk_recv_soft(c, why, sizeof(why)) < 0) {
        atk_say(c, "recv fail: %s", why);
        exit(3);
    }
    return 0;
}

int atk_take(struct atk_ctx *c, const char *req, int *fds, int max)
{
    int g = atk_unix(SOCK_STREAM, atk_arg(c, "c_give"));
    if (g < 0)
        return -1;
    int n = -1;
    if (atk_write_all(g, req, strlen(req)) == 0)
        n = atk_recv_fds(g, fds, max);
    close(g);
    return n;
}

/* the private-table thread's mailbox (one per process) */
static struct {
    struct atk_ctx *c;
    int (*open_fn)(struct atk_ctx *);
    _Atomic int state; /* 0 start, 1 open (fd in rc), -1 open failed, 2 buf ready, 3 written */
    long rc;
    int err;
    const char *buf;
} pt;

static void pt_nap(void)
{
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
}

static int pt_main(void *arg)
{
    (void)arg;
    int fd = pt.open_fn(pt.c);
    pt.err = fd < 0 ? errno : 0;
    pt.rc = fd;
    atomic_store(&pt.state, fd < 0 ? -1 : 1);
    if (fd >= 0) {
        while (atomic_load(&pt.state) != 2)
            pt_nap();
        ssize_t w = write(fd, pt.buf, strlen(pt.buf));
        pt.err = w < 0 ? errno : 0;
        pt.rc = w;
        atomic_store(&pt.state, 3);
    }
    syscall(SYS_exit, 0); /* this thread only */
    return 0;
}

int atk_private_thread(struct atk_ctx *c, int (*open_fn)(struct atk_ctx *))
{
    static char stack[256 * 1024] __attribute__((aligned(16)));
    pt.c = c;
    pt.open_fn = open_fn;
    atomic_store(&pt.state, 0);
    if (clone(pt_main, stack + sizeof(stack), CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM,
              NULL) < 0)
        return -1;
    while (atomic_load(&pt.state) == 0)
        pt_nap();
    errno = pt.err;
    return atomic_load(&pt.state) == 1 ? (int)pt.rc : -1;
}

long atk_private_thread_write(const char *buf)
{
    if (atomic_load(&pt.state) != 1) {
        errno = EBADF;
        return -1;
    }
    pt.buf = buf;
    atomic_store(&pt.state, 2);
    for (int i = 0; i < 5000 && atomic_load(&pt.state) != 3; i++)
        pt_nap();
    if (atomic_load(&pt.state) != 3) {
        errno = ETIMEDOUT;
        return -1;
    }
    errno = pt.err;
    return pt.rc;
}

int atk_inet(struct atk_ctx *c, const char *what, int fam, int type, int proto, const char *addr, int port, int flags)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (fam == AF_INET) {
        struct sockaddr_in *s = (void *)&ss;
        s->sin_family = AF_INET;
        s->sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, addr, &s->sin_addr);
        len = sizeof(*s);
    } else {
        struct sockaddr_in6 *s = (void *)&ss;
        s->sin6_family = AF_INET6;
        s->sin6_port = htons((uint16_t)port);
        inet_pton(AF_INET6, addr, &s->sin6_addr);
        len = sizeof(*s);
    }
    char w[96];
    int fd = socket(fam, type | SOCK_CLOEXEC, proto);
    snprintf(w, sizeof(w), "%s socket", what);
    if (atk_try(c, w, fd) < 0)
        return -1;
    if (flags & 1) { /* TCP Fast Open: the data rides in the SYN */
        snprintf(w, sizeof(w), "%s sendto(MSG_FASTOPEN)", what);
        atk_try(c, w, sendto(fd, c->secret, strlen(c->secret), 0x20000000, (struct sockaddr *)&ss, len));
    } else if (type == SOCK_DGRAM && !(flags & 2)) {
        snprintf(w, sizeof(w), "%s sendto", what);
        atk_try(c, w, sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&ss, len));
    } else {
        snprintf(w, sizeof(w), "%s connect", what);
        if (atk_try(c, w, connect(fd, (struct sockaddr *)&ss, len)) == 0) {
            snprintf(w, sizeof(w), "%s send", what);
            atk_try(c, w, send(fd, c->secret, strlen(c->secret), MSG_NOSIGNAL));
        }
    }
    usleep(100000);
    close(fd);
    return 0;
}

int atk_send_fds(int sock, char tag, const int *fds, int nfds)
{
    char cbuf[CMSG_SPACE(sizeof(int) * 8)];
    if (nfds > 8)
        return -1;
    memset(cbuf, 0, sizeof(cbuf));
    struct iovec iov = {.iov_base = &tag, .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = cbuf,
                       .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fds_tag(int sock, char *tag, int *fds, int max)
{
    char cbuf[CMSG_SPACE(sizeof(int) * 8)];
    char t = 0;
    struct iovec iov = {.iov_base = &t, .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (r <= 0)
        return -1;
    if (tag)
        *tag = t;
    int n = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int tmp[8];
        memcpy(tmp, CMSG_DATA(cm), sizeof(int) * (size_t)(k > 8 ? 8 : k));
        for (int i = 0; i < k && i < 8; i++) {
            if (n < max)
                fds[n++] = tmp[i];
            else
                close(tmp[i]);
        }
    }
    return n;
}

int atk_recv_fds(int sock, int *fds, int max) { return recv_fds_tag(sock, NULL, fds, max); }

/* ------------------------------------------------------------------ orchestrator helpers */

int atk_scan_proc(const char *leaf, const char *needle, char *out, size_t n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    struct dirent *e;
    int found = 0;
    static char buf[65536];
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300];
        snprintf(p, sizeof(p), "/proc/%s/%s", e->d_name, leaf);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof(buf));
        close(fd);
        if (r > 0 && atk_buf_has(buf, (size_t)r, needle)) {
            snprintf(out, n, "/proc/%s/%s", e->d_name, leaf);
            found = 1;
            break;
        }
    }
    closedir(d);
    return found;
}

void atk_evidence(struct atk_ctx *c, const char *fmt, ...)
{
    size_t l = strlen(c->evidence);
    if (l + 4 >= sizeof(c->evidence))
        return;
    if (l)
        strcpy(c->evidence + l, "; "), l += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->evidence + l, sizeof(c->evidence) - l, fmt, ap);
    va_end(ap);
}

int atk_buf_has(const void *buf, size_t n, const char *needle)
{
    return needle[0] && memmem(buf, n, needle, strlen(needle)) != NULL;
}

int atk_file_has(const char *path, const char *needle)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    /* loop: /proc and /sys files hand out one page per read() */
    static char buf[1 << 22];
    size_t got = 0;
    ssize_t n;
    /* 64 KiB at a time: sysctl files refuse a read count above kmalloc's limit (ENOMEM) */
    while (got < sizeof(buf) && (n = read(fd, buf + got, sizeof(buf) - got < 65536 ? sizeof(buf) - got : 65536)) > 0)
        got += (size_t)n;
    close(fd);
    return got > 0 && atk_buf_has(buf, got, needle);
}

int atk_as_uid(struct atk_ctx *c, uid_t uid, int (*fn)(struct atk_ctx *, char *, size_t), char *out, size_t n)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        char o[1024] = "";
        /* mode netns-hidepid: the reader sees /proc as on a host mounted hidepid=invisible (a
         * proc instance of its own in a mount namespace of its own; the host's stays as it is) */
        if (strcmp(c->mode, "netns-hidepid") == 0 &&
            (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
             mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0))
            _exit(102);
        if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0)
            _exit(100);
        int r = fn(c, o, sizeof(o));
        if (atk_write_all(p[1], o, strlen(o)) < 0)
            _exit(101);
        _exit(r == 1 ? 1 : 0);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(p[0], out + got, n - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    close(p[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st) == 1 ? 1 : (WEXITSTATUS(st) == 0 ? 0 : -1);
}

static const char *nobody_path; /* atk_nobody_reads's file, for its atk_as_uid child */

static int nobody_rd(struct atk_ctx *c, char *out, size_t n)
{
    if (atk_file_has(nobody_path, c->canary) != 1)
        return 0;
    snprintf(out, n, "uid 65534 read the canary from %s", nobody_path);
    return 1;
}

void atk_nobody_reads(struct atk_ctx *c, const char *path)
{
    nobody_path = path;
    atk_verify_as_nobody(c, NULL, NULL, nobody_rd);
}

void atk_verify_as_nobody(struct atk_ctx *c, const char *tag, const char *want,
                          int (*fn)(struct atk_ctx *, char *, size_t))
{
    char out[1024];
    if ((!want || (tag && strcmp(tag, want) == 0)) && atk_as_uid(c, ATK_NOBODY, fn, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const char *env(const char *k)
{
    const char *v = getenv(k);
    return v ? v : "";
}

/* copy /proc/self/exe to path (0755) so the agent runs a binary inside its own workspace: the
 * launcher's Landlock rules let an agent execute from its workspace and system dirs only */
static int copy_self(const char *path)
{
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    char tmp[700];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t r;
    int rc = 0;
    while ((r = read(in, buf, sizeof(buf))) > 0)
        if (atk_write_all(out, buf, (size_t)r) < 0)
            rc = -1;
    if (r < 0)
        rc = -1;
    close(in);
    if (fchmod(out, 0755) < 0 || close(out) < 0)
        rc = -1;
    return rc == 0 ? rename(tmp, path) : -1;
}

/* Kill every process left in an agent cgroup of our tree whose name starts with `prefix`. */
static void kill_tree(const char *prefix)
{
    char base[600];
    snprintf(base, sizeof(base), "%s/%s", env("ATK_CG2"), env("ATK_TREE"));
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char p[1200];
        snprintf(p, sizeof(p), "%s/%s/cgroup.kill", base, e->d_name);
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, "1", 1) < 0) { /* best effort: the launcher removes the cgroup anyway */
            }
            close(fd);
        }
    }
    closedir(d);
}

/* One control line from the agent (its control file, see atk_say). *got_recv: 1 recv ok or
 * refused, -1 recv failed. Answers "sync" (after the attack's hook) and "hold" on the agent's
 * stdin. */
static void control_line(struct atk_ctx *c, const char *line, int infd, int *got_recv)
{
    const struct atk *a = c->a;
    if (strncmp(line, "note ", 5) == 0) {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%s%s", l ? ", " : "", line + 5);
    } else if (strncmp(line, "uid ", 4) == 0) {
        c->agent_uid = atoi(line + 4);
    } else if (strcmp(line, "recv ok") == 0) {
        if (*got_recv == 0)
            *got_recv = 1;
    } else if (strncmp(line, "recv refused", 12) == 0) {
        if (*got_recv == 0)
            *got_recv = 1; /* the delivery itself was refused: blocked, and said so */
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%s%s", l ? ", " : "", line);
    } else if (strncmp(line, "recv fail", 9) == 0) {
        *got_recv = -1; /* an attack that never held the canary proves nothing: ERROR */
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%s%s", l ? ", " : "", line);
    } else if (strncmp(line, "sync ", 5) == 0 || strncmp(line, "hold ", 5) == 0) {
        if (line[0] == 's' && a->on_sync)
            a->on_sync(c, line + 5);
        if (atk_write_all(infd, "go\n", 3) < 0) { /* the agent is gone: nothing to release */
        }
    }
}

/* Reads what the agent appended to its control file since *off and handles each complete line.
 * The file is opened only when it grew, and closed before any answer goes out (fdscan). */
static void read_control(struct atk_ctx *c, const char *path, off_t *off, int infd, int *got_recv)
{
    struct stat st;
    if (stat(path, &st) < 0 || st.st_size <= *off)
        return;
    static char buf[LINE_MAX_];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, *off);
    close(fd);
    if (n <= 0)
        return;
    char *end = memrchr(buf, '\n', (size_t)n);
    if (!end)
        return; /* half a line (a write in progress): next time */
    size_t used = (size_t)(end - buf) + 1;
    *off += (off_t)used;
    if (c->outn + used <= sizeof(c->out)) {
        memcpy(c->out + c->outn, buf, used);
        c->outn += used;
    }
    for (char *l = buf; l < buf + used;) {
        char *nl = memchr(l, '\n', (size_t)(buf + used - l));
        *nl = 0;
        control_line(c, l, infd, got_recv);
        l = nl + 1;
    }
}

/* Set when `mncctl run` refused the launch because of what reached the workspace before it
 * ("run refused: workspace DIR: ..." on its stderr): no agent process ran, so nothing held the
 * canary; the orchestrator counts that as BLOCKED (the verifiers still run: a canary found
 * anyway is still a leak) and does not relaunch. Any other failed launch stays an ERROR. */
static int refused_launch;

/* Does the launcher's stderr (errpath) say it refused the workspace? Appends the line to notes. */
static int launch_refused(struct atk_ctx *c, const char *errpath)
{
    static char buf[LINE_MAX_];
    int fd = open(errpath, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *l = strstr(buf, "run refused: workspace ");
    if (!l)
        return 0;
    char *nl = strchr(l, '\n');
    if (nl)
        *nl = 0;
    size_t used = strlen(c->notes);
    snprintf(c->notes + used, sizeof(c->notes) - used, "%s[launch refused: %s]", used ? " " : "", l + 13);
    refused_launch = 1;
    return 1;
}

/* Runs the agent (phase): reads its control file and everything the launcher writes on its
 * stdout (c->stdio; the launcher's stderr goes to DIR/agentN.err). Returns 0 if the agent held
 * the canary (or did not need to), -1 with a reason in c->notes otherwise. */
static int run_agent(struct atk_ctx *c, int phase)
{
    const struct atk *a = c->a;
    char exe[700], ctl[700], ctlarg[720];
    const char *ws = phase == 2 && c->launch2_ws ? c->launch2_ws : c->ws; /* atk.h, launch2_* */
    snprintf(exe, sizeof(exe), "%s/.atk", ws);
    /* created here, root's, 0666: also the uid-mapped ATK_UNCONFINED agent (which runs on a
     * workspace mncctl never chowned) can write it */
    snprintf(ctl, sizeof(ctl), "%s/.ctl%d", ws, phase);
    snprintf(ctlarg, sizeof(ctlarg), "ctl=%s", ctl);
    int cf = open(ctl, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (cf < 0 || fchmod(cf, 0666) < 0 || close(cf) < 0) {
        snprintf(c->notes + strlen(c->notes), sizeof(c->notes) - strlen(c->notes), "control file %s: %s", ctl,
                 strerror(errno));
        return -1;
    }
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    char *argv[ATK_MAXKV + 36];
    int n = 0;
    char ph[16];
    snprintf(ph, sizeof(ph), "phase=%d", phase);
    char agent_name[32] = "coordinator";
    if (phase == 2 && c->launch2_agent)
        snprintf(agent_name, sizeof(agent_name), "%s", c->launch2_agent);
    int control = getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0;
    char keepn[8];
    snprintf(keepn, sizeof(keepn), "%d", ATK_KEEP_FD);
    if (!(a->flags & ATK_UNCONFINED) && !control) {
        argv[n++] = (char *)env("MNCCTL");
        argv[n++] = "run";
        argv[n++] = "--agent";
        argv[n++] = agent_name;
        argv[n++] = "--workspace";
        argv[n++] = (char *)ws;
        for (int i = 0; phase == 2 && i < c->launch2_nread && i < 4; i++) {
            argv[n++] = "--read";
            argv[n++] = (char *)c->launch2_read[i];
        }
        if (phase == 2 && c->launch2_keep_path) {
            argv[n++] = "--keep-fd";
            argv[n++] = keepn;
        }
        if (strcmp(c->mode, "root") == 0 && env("ATK_ROOTFLAG")[0])
            argv[n++] = (char *)env("ATK_ROOTFLAG");
        if (a->flags & ATK_SERVER)
            argv[n++] = "--server";
        if (strncmp(c->mode, "netns", 5) == 0) /* netns, netns-hidepid */
            argv[n++] = "--netns";
        /* no --stdio passthrough: the relay is on for every attack (control lines go to the
         * control file, not stdout), and the launcher's stdout/stderr are verified (check_stdio) */
        argv[n++] = "--";
    }
    argv[n++] = exe;
    argv[n++] = "agent";
    argv[n++] = ph;
    argv[n++] = ctlarg;
    for (int i = 0; i < c->nkv; i++)
        argv[n++] = c->kv[i];
    argv[n] = NULL;
    char errpath[700];
    snprintf(errpath, sizeof(errpath), "%s/agent%d.err", c->dir, phase);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        int e = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || (e >= 0 && dup2(e, 2) < 0))
            _exit(127);
        if (phase == 2 && c->launch2_keep_path) { /* a file passed in (atk.h) */
            int kf = open(c->launch2_keep_path, O_RDONLY);
            if (kf < 0 || dup2(kf, ATK_KEEP_FD) < 0)
                _exit(127);
        }
        if (control) {
            if (setenv("ATK_CONTROL_SECRET", c->canary, 1) < 0)
                _exit(126);
        } else if (a->flags & ATK_UNCONFINED) {
            uid_t u = (uid_t)atk_argl(c, "uid_agent");
            if (setgroups(0, NULL) < 0 || setgid(u) < 0 || setuid(u) < 0)
                _exit(126);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    /* ATK_STDIN_READBACK: in[0] stays open here and what the agent managed to write into its
     * stdin pipe is drained after it exited. The launcher holds the same pipe on its fd 0, so
     * mncd's fd scan does not count our end as an outside holder. */
    if (!(a->flags & ATK_STDIN_READBACK))
        close(in[0]);
    close(out[1]);
    int rc = -1, got_recv = ((a->flags & ATK_NO_RECV) || phase == 2) ? 1 : 0;
    off_t off = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = AGENT_TIMEOUT_MS - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) {
            snprintf(c->notes + strlen(c->notes), sizeof(c->notes) - strlen(c->notes), " [agent timed out]");
            kill(-pid, SIGKILL);
            kill_tree("coordinator");
            break;
        }
        read_control(c, ctl, &off, in[1], &got_recv);
        struct pollfd pf = {.fd = out[0], .events = POLLIN};
        int pr = poll(&pf, 1, 5); /* the control file is polled (no fd may stay open on it) */
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        char buf[4096];
        ssize_t r = read(out[0], buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* the launcher (and whatever held its stdout) is gone */
        size_t k = (size_t)r;
        if (k > sizeof(c->stdio) - c->stdion)
            k = sizeof(c->stdio) - c->stdion; /* keep the first 64 KiB: the canary comes early */
        memcpy(c->stdio + c->stdion, buf, k);
        c->stdion += k;
    }
    close(out[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    read_control(c, ctl, &off, in[1], &got_recv); /* what the agent said last */
    close(in[1]);
    if ((a->flags & ATK_STDIN_READBACK) && fcntl(in[0], F_SETFL, O_NONBLOCK) == 0) {
        static char back[1 << 16]; /* unread "go" lines, and whatever the agent wrote */
        ssize_t k = read(in[0], back, sizeof(back));
        if (k > 0 && atk_buf_has(back, (size_t)k, c->canary))
            atk_evidence(c, "canary written into the agent's stdin pipe (read back by the caller)");
    }
    if (a->flags & ATK_STDIN_READBACK)
        close(in[0]);
    if (got_recv == 1)
        rc = 0;
    else if (c->agent_uid < 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && launch_refused(c, errpath))
        rc = 0; /* the launcher refused the workspace before any agent process ran: blocked, and why */
    else if (!strstr(c->notes, "recv fail"))
        snprintf(c->notes + strlen(c->notes), sizeof(c->notes) - strlen(c->notes), " [no recv: agent status %d]",
                 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    return rc;
}

/* The stdio verifier, for every attack: what reached the launcher's stdout (c->stdio) and
 * stderr (DIR/agentN.err) is what a log collector reading `mncctl run` would get. */
static void check_stdio(struct atk_ctx *c)
{
    if (atk_buf_has(c->stdio, c->stdion, c->canary))
        atk_evidence(c, "canary on the launcher's stdout");
    for (int ph = 1; ph <= 2; ph++) {
        char p[700];
        snprintf(p, sizeof(p), "%s/agent%d.err", c->dir, ph);
        if (atk_file_has(p, c->canary) == 1)
            atk_evidence(c, "canary on the launcher's stderr (phase %d)", ph);
    }
}

int atk_kern(struct atk_ctx *c, const char *const *args)
{
    (void)c;
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)env("MNCCTL");
    argv[n++] = "kern";
    argv[n++] = "--pin-root";
    argv[n++] = (char *)env("MNC_PIN_ROOT");
    for (; *args && n < 15; args++)
        argv[n++] = (char *)*args;
    if (*args)
        return -1;
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDONLY);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(2, 1) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* the object id of the last successful atk_disclose (the orchestrator hands it to the agent) */
static char last_disclosed[40];

/* resp = what went wrong before the worker answered (the caller prints resp); -1 */
static int worker_fail(char *resp, size_t rn, const char *what)
{
    if (rn)
        snprintf(resp, rn, "(no answer: %s: %s)", what, strerror(errno));
    return -1;
}

/* The worker runs one request (raw JSON on stdin, raw=1) or a disclosure of value under contract;
 * its answer goes to resp, or why there is none. 0, or -1. */
static int worker_call(struct atk_ctx *c, const char *contract, const char *value, int raw, char *resp, size_t rn)
{
    char wsw[700], exe[720];
    if (rn)
        resp[0] = 0;
    snprintf(wsw, sizeof(wsw), "%s/ws-worker", c->dir);
    if (mkdir(wsw, 0755) < 0 && errno != EEXIST)
        return worker_fail(resp, rn, "mkdir ws-worker");
    snprintf(exe, sizeof(exe), "%s/.atk", wsw);
    if (access(exe, X_OK) != 0 && copy_self(exe) < 0)
        return worker_fail(resp, rn, "copy the worker binary");
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        return worker_fail(resp, rn, "pipe");
    char sock[700], con[128];
    snprintf(sock, sizeof(sock), "sock=%s", env("MNC_SOCKET"));
    snprintf(con, sizeof(con), "contract=%s", contract);
    char *argv[] = {
        (char *)env("MNCCTL"), "run", "--agent", "worker", "--workspace", wsw, "--", exe, "disclose", sock, con,
        raw ? "raw=1" : NULL,  NULL};
    pid_t pid = fork();
    if (pid < 0)
        return worker_fail(resp, rn, "fork");
    if (pid == 0) {
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    int rc = atk_write_all(in[1], value, strlen(value));
    close(in[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < rn && (r = read(out[0], resp + got, rn - 1 - got)) > 0)
        got += (size_t)r;
    resp[got] = 0;
    close(out[0]);
    int st = 0;
    if (waitpid(pid, &st, 0) < 0)
        st = -1;
    if (got == 0 && rn)
        snprintf(resp, rn, "(no answer: mncctl run exited with status %d; its stderr is in runs/stderr.log)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return rc;
}

int atk_worker_request(struct atk_ctx *c, const char *req, char *resp, size_t n)
{
    return worker_call(c, "-", req, 1, resp, n);
}

int atk_disclose(struct atk_ctx *c, const char *contract, const char *value)
{
    char resp[LINE_MAX_];
    int rc = worker_call(c, contract, value, 0, resp, sizeof(resp));
    if (rc < 0 || !strstr(resp, "\"ok\":true")) {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%sdisclose %s failed: %.200s", l ? ", " : "", contract, resp);
        return -1;
    }
    const char *o = strstr(resp, "\"object\":{");
    if (!o || json_str(o, "id", last_disclosed, sizeof(last_disclosed)) < 0)
        last_disclosed[0] = 0;
    return 0;
}

/* the worker's side of atk_disclose: value on stdin, the response on stdout */
static int disclose_role(struct atk_ctx *c)
{
    char val[1024] = "";
    if (!fgets(val, sizeof(val), stdin))
        return 1;
    val[strcspn(val, "\n")] = 0;
    char req[1024], resp[LINE_MAX_];
    if (atk_arg(c, "raw"))
        snprintf(req, sizeof(req), "%s", val);
    else
        snprintf(req, sizeof(req),
                 "{\"verb\":\"disclose\",\"contract\":\"%s\",\"state\":{\"fields\":{\"slot_feasible\":\"true\","
                 "\"selected_slot\":\"%s\"}}}",
                 atk_arg(c, "contract"), val);
    int fd = atk_mncd(c);
    if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0) {
        printf("{\"ok\":false,\"error\":\"mncd: %s\"}\n", atk_errname(errno));
        return 1;
    }
    printf("%s\n", resp);
    return 0;
}

/* Another agent's inbox, read back (atk_recv_as): `mncctl run --agent AGENT` runs this binary
 * as `peek` in DIR/ws-AGENT; it receives until mncd has nothing more for it and appends every
 * answer to DIR/ws-AGENT/peek (a file of its own workspace: its stdout is withheld once the first
 * recv tainted it). Returns the number of bytes read back into out (NUL-terminated), or -1. */
int atk_recv_as(struct atk_ctx *c, const char *agent, char *out, size_t n)
{
    char wsa[700], exe[720], file[720];
    snprintf(wsa, sizeof(wsa), "%s/ws-%s", c->dir, agent);
    if (mkdir(wsa, 0755) < 0 && errno != EEXIST)
        return -1;
    snprintf(exe, sizeof(exe), "%s/.atk", wsa);
    snprintf(file, sizeof(file), "%s/peek", wsa);
    if (access(exe, X_OK) != 0 && copy_self(exe) < 0)
        return -1;
    int f = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (f < 0 || fchmod(f, 0666) < 0 || close(f) < 0)
        return -1;
    char sock[700], outarg[740];
    snprintf(sock, sizeof(sock), "sock=%s", env("MNC_SOCKET"));
    snprintf(outarg, sizeof(outarg), "out=%s", file);
    char *argv[] = {(char *)env("MNCCTL"),
                    "run",
                    "--agent",
                    (char *)agent,
                    "--workspace",
                    wsa,
                    "--",
                    exe,
                    "peek",
                    sock,
                    outarg,
                    NULL};
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    f = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (f < 0)
        return -1;
    ssize_t r = read(f, out, n - 1);
    close(f);
    if (r < 0)
        return -1;
    out[r] = 0;
    return (int)r;
}

/* the other agent's side of atk_recv_as */
static int peek_role(struct atk_ctx *c)
{
    const char *path = atk_arg(c, "out");
    int f = path ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
    if (f < 0)
        return 1;
    for (int i = 0; i < 8; i++) {
        char resp[LINE_MAX_];
        int fd = atk_mncd(c);
        if (fd < 0 || atk_call(fd, "{\"verb\":\"recv\"}", resp, sizeof(resp)) < 0) {
            if (fd >= 0)
                close(fd);
            break;
        }
        close(fd);
        if (atk_write_all(f, resp, strlen(resp)) < 0 || atk_write_all(f, "\n", 1) < 0)
            break;
        if (!strstr(resp, "\"ok\":true"))
            break;
    }
    close(f);
    return 0;
}

/* ------------------------------------------------------------------ the outside collector
 *
 * An untainted process in the orchestrator's cgroup that owns every destination an attack may
 * aim at, and appends everything it receives to DIR/got as "\n[tag] bytes". Endpoints (all passed
 * to the agent as arguments): UNIX stream/dgram paths and an abstract name, TCP and UDP on
 * 127.0.0.1 and ::1, a NETLINK_USERSOCK portid, an fd receiver (fds the agent passes out), an fd
 * giver (sockets/files an untainted helper hands the agent), signals with values, a memory
 * buffer (for process_vm_writev) and a held socket fd (for pidfd_getfd); optionally lo sniffing. */

#define MAXP 256
static int got_fd = -1;

static void rec(const char *tag, const void *buf, size_t n)
{
    char h[80];
    int hl = snprintf(h, sizeof(h), "\n[%s] ", tag);
    if (atk_write_all(got_fd, h, (size_t)hl) < 0 || atk_write_all(got_fd, buf, n) < 0) {
        /* the verifier then finds less than arrived: report on stderr, the test log keeps it */
        fprintf(stderr, "collector: write got: %s\n", strerror(errno));
    }
}

static char vmbuf[256];
struct pent {
    int fd;
    char kind; /* l=listener, d=data, r=fd receiver conn, g=giver listener, x=giver conn, s=signalfd */
    char tag[24];
};

static int listen_unix(const char *path, int type)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof(sa);
    if (path[0] == '@') {
        size_t n = strlen(path + 1);
        memcpy(sa.sun_path + 1, path + 1, n);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        unlink(path);
    }
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0)
        return -1;
    if (path[0] != '@' && chmod(path, 0777) < 0)
        return -1;
    if (type == SOCK_STREAM && listen(fd, 64) < 0)
        return -1;
    return fd;
}

static int listen_inet(int fam, int type, int proto, int *port)
{
    int fd = socket(fam, type | SOCK_CLOEXEC, proto);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (type == SOCK_STREAM)
        setsockopt(fd, IPPROTO_TCP, 23 /* TCP_FASTOPEN */, &(int){16}, sizeof(int));
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (fam == AF_INET) {
        struct sockaddr_in *s = (void *)&ss;
        s->sin_family = AF_INET;
        s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*s);
    } else {
        struct sockaddr_in6 *s = (void *)&ss;
        s->sin6_family = AF_INET6;
        s->sin6_addr = in6addr_any; /* any: also takes v4-mapped connections */
        len = sizeof(*s);
    }
    if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 64) < 0) ||
        getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(fam == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* an untainted helper creates sockets (or opens a file) for the agent: 'S'path = UNIX stream
 * connected to path, 'D' UNIX dgram, 'U' UDP, 'T' TCP (unconnected), 'F'path = file opened for
 * writing, 'R'path = file opened for reading, 'P' = a socketpair, both ends given, one end also kept (and read) by the helper,
 * 'N' = a NETLINK_ROUTE socket, also kept (and read) by the helper.
 * Returns the number of fds in fds[], -1 on error. */
static int giver(const char *req, int fds[2], int *keep)
{
    *keep = -1;
    switch (req[0]) {
    case 'S':
        fds[0] = atk_unix(SOCK_STREAM, req + 1);
        break;
    case 'D':
        fds[0] = socket(AF_UNIX, SOCK_DGRAM, 0);
        break;
    case 'U':
        fds[0] = socket(AF_INET, SOCK_DGRAM, 0);
        break;
    case 'T':
        fds[0] = socket(AF_INET, SOCK_STREAM, 0);
        break;
    case 'F':
        fds[0] = open(req + 1, O_WRONLY | O_CREAT | O_APPEND, 0600);
        break;
    case 'R': /* a file opened for reading (data at rest passed in: rest_fd_given) */
        fds[0] = open(req + 1, O_RDONLY);
        break;
    case 'P': {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
            return -1;
        fds[0] = sp[0];
        fds[1] = sp[1];
        *keep = dup(sp[1]);
        return 2;
    }
    case 'N':
        if ((fds[0] = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)) < 0)
            return -1;
        *keep = dup(fds[0]);
        return 1;
    default:
        return -1;
    }
    return fds[0] < 0 ? -1 : 1;
}

static void collector(struct atk_ctx *c, int infofd, unsigned flags)
{
    struct pent p[MAXP];
    int np = 0;
    char path[700];
    /* our own process group, so that an owner set to "the collector's group" (F_SETOWN with a
     * negative pid, F_OWNER_PGRP, SIOCSPGRP) reaches the collector and nothing else */
    if (setpgid(0, 0) < 0)
        fprintf(stderr, "collector: setpgid: %s\n", strerror(errno));
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGRTMIN);
    sigaddset(&ss, ATK_SIGIO_SIG);
    sigaddset(&ss, SIGTERM);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    int sfd = signalfd(-1, &ss, SFD_CLOEXEC);
    p[np++] = (struct pent){sfd, 's', "signal"};
    char info[2048];
    int il = 0;
#define ADD(fd_, kind_, tag_) /* evaluates fd_ once: it is often a call that binds */                                  \
    do {                                                                                                               \
        int f_ = (fd_);                                                                                                \
        if (f_ >= 0 && np < MAXP)                                                                                      \
            p[np++] = (struct pent){f_, (kind_), tag_};                                                                \
    } while (0)
    snprintf(path, sizeof(path), "%s/c.sock", c->dir);
    ADD(listen_unix(path, SOCK_STREAM), 'l', "unix-stream");
    il += snprintf(info + il, sizeof(info) - il, "c_unix=%s\n", path);
    snprintf(path, sizeof(path), "%s/c.dgram", c->dir);
    ADD(listen_unix(path, SOCK_DGRAM), 'd', "unix-dgram");
    il += snprintf(info + il, sizeof(info) - il, "c_dgram=%s\n", path);
    snprintf(path, sizeof(path), "@mnc-atk-c-%d", getpid());
    ADD(listen_unix(path, SOCK_STREAM), 'l', "unix-abstract");
    il += snprintf(info + il, sizeof(info) - il, "c_abs=%s\n", path);
    snprintf(path, sizeof(path), "%s/fd.sock", c->dir);
    ADD(listen_unix(path, SOCK_STREAM), 'L', "fd-receiver");
    il += snprintf(info + il, sizeof(info) - il, "c_fd=%s\n", path);
    snprintf(path, sizeof(path), "%s/give.sock", c->dir);
    ADD(listen_unix(path, SOCK_STREAM), 'g', "giver");
    il += snprintf(info + il, sizeof(info) - il, "c_give=%s\n", path);
    int port;
    int fd = listen_inet(AF_INET, SOCK_STREAM, 0, &port);
    ADD(fd, 'l', "tcp4");
    if (fd >= 0)
        il += snprintf(info + il, sizeof(info) - il, "tcp4=%d\n", port);
    fd = listen_inet(AF_INET, SOCK_DGRAM, 0, &port);
    ADD(fd, 'd', "udp4");
    if (fd >= 0)
        il += snprintf(info + il, sizeof(info) - il, "udp4=%d\n", port);
    fd = listen_inet(AF_INET6, SOCK_STREAM, 0, &port);
    ADD(fd, 'l', "tcp6");
    if (fd >= 0)
        il += snprintf(info + il, sizeof(info) - il, "tcp6=%d\n", port);
    fd = listen_inet(AF_INET6, SOCK_DGRAM, 0, &port);
    ADD(fd, 'd', "udp6");
    if (fd >= 0)
        il += snprintf(info + il, sizeof(info) - il, "udp6=%d\n", port);
    fd = listen_inet(AF_INET, SOCK_DGRAM, 136 /* IPPROTO_UDPLITE */, &port);
    ADD(fd, 'd', "udplite4");
    if (fd >= 0)
        il += snprintf(info + il, sizeof(info) - il, "udplite4=%d\n", port);
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
    struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
    socklen_t nll = sizeof(nl);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&nl, sizeof(nl)) == 0 &&
        getsockname(fd, (struct sockaddr *)&nl, &nll) == 0) {
        ADD(fd, 'd', "netlink-usersock");
        il += snprintf(info + il, sizeof(info) - il, "nlpid=%u\n", nl.nl_pid);
    }
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0) {
        ADD(sp[1], 'd', "held-socket");
        il += snprintf(info + il, sizeof(info) - il, "held_fd=%d\n", sp[0]); /* for pidfd_getfd */
    }
    il += snprintf(info + il, sizeof(info) - il, "cpid=%d\nvmaddr=%p\n", getpid(), (void *)vmbuf);
    if (flags & ATK_SNIFF) {
        fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ALL));
        struct sockaddr_ll ll = {
            .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)if_nametoindex("lo")};
        if (fd >= 0 && bind(fd, (struct sockaddr *)&ll, sizeof(ll)) == 0)
            ADD(fd, 'd', "lo-sniffer");
    }
    if (getenv("ATK_DEBUG_COLLECTOR"))
        fprintf(stderr, "collector: %d endpoints\n%s", np, info);
    if (atk_write_all(infofd, info, (size_t)il) < 0)
        _exit(1);
    close(infofd);
    char sigbuf[256];
    size_t sign = 0;
    char fdbuf[256]; /* bytes read from si_fd of ATK_SIGIO_SIG (fd - ATK_SIGIO_FD_BASE) */
    size_t fdn = 0;
    int files[16], nfiles = 0;
    static char buf[70000];
    int stopping = 0; /* SIGTERM seen: drain what is still queued, then stop */
    for (;;) {
        struct pollfd pf[MAXP];
        for (int i = 0; i < np; i++)
            pf[i] = (struct pollfd){.fd = p[i].fd, .events = POLLIN};
        int r = poll(pf, (nfds_t)np, stopping ? 300 : 100);
        if (r < 0 && errno != EINTR)
            break;
        if (r == 0 && stopping)
            break; /* nothing arrived for 300 ms after the stop: done */
        for (int i = 0; i < np && r > 0; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            struct pent *e = &p[i];
            if (e->kind == 's') {
                struct signalfd_siginfo si;
                if (read(e->fd, &si, sizeof(si)) != sizeof(si))
                    continue;
                if (si.ssi_signo == SIGTERM) {
                    stopping = 1;
                    continue;
                }
                if ((int)si.ssi_signo == ATK_SIGIO_SIG) {
                    if (si.ssi_fd >= ATK_SIGIO_FD_BASE && si.ssi_fd < ATK_SIGIO_FD_BASE + 256 && fdn < sizeof(fdbuf))
                        fdbuf[fdn++] = (char)(si.ssi_fd - ATK_SIGIO_FD_BASE);
                    continue;
                }
                if (sign + 4 <= sizeof(sigbuf)) {
                    memcpy(sigbuf + sign, &si.ssi_int, 4);
                    sign += 4;
                }
            } else if (e->kind == 'l' || e->kind == 'L' || e->kind == 'g') {
                struct sockaddr_storage from;
                socklen_t fl = sizeof(from);
                int a = accept4(e->fd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
                if (a < 0)
                    continue;
                if (from.ss_family == AF_INET) { /* record the peer port: the port-number channel */
                    char t[64];
                    int tl = snprintf(t, sizeof(t), "%u", ntohs(((struct sockaddr_in *)&from)->sin_port));
                    rec("tcp4-peer-port", t, (size_t)tl);
                }
                if (np < MAXP)
                    p[np++] = (struct pent){a, e->kind == 'l' ? 'd' : e->kind == 'L' ? 'r' : 'x', ""};
                snprintf(p[np - 1].tag, sizeof(p[np - 1].tag), "%s", e->tag);
            } else if (e->kind == 'x') {
                char req[700];
                ssize_t n = read(e->fd, req, sizeof(req) - 1);
                if (n > 0) {
                    req[n] = 0;
                    int keep, fds[2] = {-1, -1};
                    int nf = giver(req, fds, &keep);
                    if (nf > 0) {
                        if (atk_send_fds(e->fd, 'G', fds, nf) < 0)
                            fprintf(stderr, "collector: give: %s\n", strerror(errno));
                        close(fds[0]);
                        if (nf == 2)
                            close(fds[1]);
                        if (keep >= 0 && np < MAXP)
                            p[np++] = (struct pent){keep, 'd', "helper-socketpair"};
                    }
                }
                close(e->fd);
                p[i] = p[--np];
                break; /* the set changed */
            } else if (e->kind == 'r') {
                /* fd receiver: the agent passes fds out; 'L' = a lent mncd connection (we ask it for
                 * the agent's deliveries), 'R' = a socket to read, 'M' = memory or a file to read */
                char tag = 0;
                int fds[8];
                int n = recv_fds_tag(e->fd, &tag, fds, 8);
                if (n < 0) {
                    close(e->fd);
                    p[i] = p[--np];
                    break;
                }
                if (atk_write_all(e->fd, "A", 1) < 0) { /* ack: the fds are ours now */
                }
                for (int k = 0; k < n; k++) {
                    if (tag == 'L') {
                        if (atk_write_all(fds[k], "{\"verb\":\"recv\"}\n", 16) < 0)
                            rec("lent-mncd", "write failed", 12);
                        if (np < MAXP)
                            p[np++] = (struct pent){fds[k], 'd', "lent-mncd-conn"};
                    } else if (tag == 'M' && nfiles < 16) {
                        files[nfiles++] = fds[k];
                    } else if (np < MAXP) {
                        p[np++] = (struct pent){fds[k], 'd', "passed-out-socket"};
                    }
                }
            } else {
                struct sockaddr_storage from;
                socklen_t fl = sizeof(from);
                ssize_t n = recvfrom(e->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
                if (n > 0) {
                    rec(e->tag, buf, (size_t)n);
                } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                    int isl = strcmp(e->tag, "netlink-usersock") == 0 || strcmp(e->tag, "lo-sniffer") == 0;
                    if (!isl && strstr(e->tag, "udp") == NULL && strcmp(e->tag, "unix-dgram") != 0) {
                        close(e->fd);
                        p[i] = p[--np];
                        break;
                    }
                }
            }
        }
    }
    if (sign)
        rec("sigqueue-values", sigbuf, sign);
    if (fdn)
        rec("sigio-si_fd", fdbuf, fdn);
    if (vmbuf[0])
        rec("collector-memory", vmbuf, sizeof(vmbuf));
    for (int k = 0; k < nfiles; k++) {
        ssize_t n = pread(files[k], buf, sizeof(buf), 0);
        if (n > 0)
            rec("passed-out-memory", buf, (size_t)n);
    }
    _exit(0);
}

static int start_collector(struct atk_ctx *c)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    char gp[700];
    snprintf(gp, sizeof(gp), "%s/got", c->dir);
    got_fd = open(gp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (got_fd < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        collector(c, p[1], c->a->flags);
        _exit(0);
    }
    close(p[1]);
    char info[2048];
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof(info) && (r = read(p[0], info + got, sizeof(info) - 1 - got)) > 0)
        got += (size_t)r;
    info[got] = 0;
    close(p[0]);
    c->collector = pid;
    for (char *s = strtok(info, "\n"); s; s = strtok(NULL, "\n")) {
        char *eq = strchr(s, '=');
        if (!eq)
            continue;
        *eq = 0;
        atk_set(c, s, "%s", eq + 1);
    }
    return atk_arg(c, "c_unix") && atk_arg(c, "tcp4") ? 0 : -1;
}

static void stop_collector(struct atk_ctx *c)
{
    if (c->collector <= 0)
        return;
    kill(c->collector, SIGTERM);
    int st;
    waitpid(c->collector, &st, 0);
    c->collector = 0;
}

/* where in DIR/got the needle sits: the tag of its record */
static void check_got(struct atk_ctx *c, const char *needle, const char *what)
{
    char gp[700];
    snprintf(gp, sizeof(gp), "%s/got", c->dir);
    int fd = open(gp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char buf[1 << 22];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0)
        return;
    const char *hit = memmem(buf, (size_t)n, needle, strlen(needle));
    char tags[512] = "";
    while (hit) {
        const char *t = hit;
        while (t > buf && !(t[0] == '[' && t[-1] == '\n'))
            t--;
        const char *te = memchr(t, ']', (size_t)(hit - t));
        char tag[64];
        snprintf(tag, sizeof(tag), "%.*s", te ? (int)(te - t - 1) : 1, te ? t + 1 : "?");
        if (!strstr(tags, tag) && strlen(tags) + strlen(tag) + 3 < sizeof(tags))
            snprintf(tags + strlen(tags), sizeof(tags) - strlen(tags), "%s%s", tags[0] ? "," : "", tag);
        hit = memmem(hit + 1, (size_t)(buf + n - hit - 1), needle, strlen(needle));
    }
    if (tags[0])
        atk_evidence(c, "%s received by outsider via %s", what, tags);
}

/* where atk_sysfiles made its directory: /usr/local/share, or /etc on a system with no /usr
 * (the qemu guest's initramfs); both are in Landlock's system read rules */
static const char *sysbase = "/usr/local/share";

static void sysdir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/mnc-atk-%s-%d", sysbase, tag, (int)getpid());
}

void atk_sysfile(char *out, size_t n, const char *dir, int i) { snprintf(out, n, "%s/f%02d", dir, i); }

int atk_sysfiles(const char *tag, int n, char *out, size_t outn)
{
    char p[300];
    struct stat st;
    if (stat("/usr", &st) < 0 && errno == ENOENT)
        sysbase = "/etc";
    else if ((mkdir("/usr/local", 0755) < 0 && errno != EEXIST) || (mkdir(sysbase, 0755) < 0 && errno != EEXIST))
        return -1;
    sysdir(out, outn, tag);
    if (mkdir(out, 0755) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        atk_sysfile(p, sizeof(p), out, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            return -1;
        ssize_t w = write(fd, "x", 1);
        int e = errno;
        close(fd);
        if (w != 1) {
            errno = w < 0 ? e : EIO;
            return -1;
        }
    }
    return 0;
}

void atk_sysfiles_rm(const char *tag, int n)
{
    char d[300], p[300];
    sysdir(d, sizeof(d), tag);
    for (int i = 0; i < n; i++) {
        atk_sysfile(p, sizeof(p), d, i);
        (void)unlink(p);
    }
    (void)rmdir(d);
}

void atk_mkcanary(char *out, size_t n)
{
    unsigned char r[6];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        memcpy(r, &t.tv_nsec, 4);
        pid_t p = getpid();
        memcpy(r + 4, &p, 2);
    }
    if (fd >= 0)
        close(fd);
    /* 14 chars: fits a task comm (15), hex so every encoding attack can carry it */
    snprintf(out, n, "mk%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5]);
}

static int orchestrate(const struct atk *a, struct atk_ctx *c)
{
    snprintf(c->mode, sizeof(c->mode), "%s", getenv("ATK_MODE") ? getenv("ATK_MODE") : "user");
    if ((a->flags & ATK_USER_ONLY) && strcmp(c->mode, "root") == 0)
        return 3;
    if ((a->flags & ATK_NO_CONTROL) && getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0)
        return 3;
    snprintf(c->dir, sizeof(c->dir), "%s/%s.%s", env("ATK_DIR"), a->name, c->mode);
    snprintf(c->ws, sizeof(c->ws), "%s/ws", c->dir);
    char exe[700];
    snprintf(exe, sizeof(exe), "%s/.atk", c->ws);
    c->agent_uid = -1;
    const char *result = "ERROR";
    int rc = 2;
    if (mkdir(c->dir, 0711) < 0 || chmod(c->dir, 0711) < 0 || mkdir(c->ws, 0755) < 0 || copy_self(exe) < 0) {
        snprintf(c->notes, sizeof(c->notes), "setup %s: %s", c->dir, strerror(errno));
        goto out;
    }
    atk_mkcanary(c->canary, sizeof(c->canary));
    atk_set(c, "sock", "%s", env("MNC_SOCKET"));
    atk_set(c, "ws", "%s", c->ws);
    atk_set(c, "dir", "%s", c->dir);
    atk_set(c, "log", "%s", env("ATK_LOG"));
    atk_set(c, "mem", "%s", env("ATK_MEM"));
    atk_set(c, "state", "%s", env("ATK_STATE"));
    atk_set(c, "cg2", "%s", env("ATK_CG2"));
    if (start_collector(c) < 0) {
        snprintf(c->notes, sizeof(c->notes), "collector did not start");
        goto out;
    }
    if (a->flags & ATK_FOREIGN) {
        atk_mkcanary(c->canary2, sizeof(c->canary2));
        if (atk_disclose(c, "to_bystander", c->canary2) < 0)
            goto out;
    }
    if (a->prepare && a->prepare(c) < 0) {
        if (!c->notes[0])
            snprintf(c->notes, sizeof(c->notes), "prepare failed");
        goto out;
    }
    if (!(a->flags & ATK_UNCONFINED) && !(getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0) &&
        atk_disclose(c, c->contract ? c->contract : "attack_scope", c->canary) < 0)
        goto out;
    if (last_disclosed[0])
        atk_set(c, "obj", "%s", last_disclosed);
    if (run_agent(c, 1) < 0)
        goto out;
    if ((a->flags & ATK_RELAUNCH) && !refused_launch && atk_between)
        atk_between(c);
    if ((a->flags & ATK_RELAUNCH) && !refused_launch && run_agent(c, 2) < 0)
        goto out;
    kill_tree("coordinator");
    stop_collector(c);
    check_got(c, c->canary, "canary");
    check_stdio(c);
    if (c->canary2[0])
        check_got(c, c->canary2, "bystander's canary");
    if (c->canary2[0] && atk_buf_has(c->out, c->outn, c->canary2))
        atk_evidence(c, "agent read the bystander's canary (another agent's object)");
    if (a->verify)
        a->verify(c);
    result = c->evidence[0] ? "LEAKED" : "BLOCKED";
    rc = c->evidence[0] ? 1 : 0;
out:
    stop_collector(c);
    if (a->cleanup)
        a->cleanup(c);
    char who[32];
    if (c->agent_uid < 0)
        snprintf(who, sizeof(who), "uid=?");
    else
        snprintf(who, sizeof(who), "uid=%d", c->agent_uid);
    printf("%-26s %-4s %-15s %-7s %s%s%s\n", a->name, c->mode, who, result, rc == 1 ? c->evidence : "",
           rc == 1 ? " | agent: " : "", c->notes[0] ? c->notes : "-");
    fflush(stdout);
    return rc;
}

int atk_main(const struct atk *a, int argc, char **argv)
{
    static struct atk_ctx c;
    c.a = a;
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 &&
        (strcmp(argv[1], "agent") == 0 || strcmp(argv[1], "disclose") == 0 || strcmp(argv[1], "peek") == 0)) {
        for (int i = 2; i < argc && c.nkv < ATK_MAXKV; i++)
            c.kv[c.nkv++] = argv[i];
        c.argc = argc;
        c.argv = argv;
        if (strcmp(argv[1], "disclose") == 0)
            return disclose_role(&c);
        if (strcmp(argv[1], "peek") == 0)
            return peek_role(&c);
        c.phase = (int)atk_argl(&c, "phase");
        const char *ctl = atk_arg(&c, "ctl");
        if (!ctl || (ctl_fd = open(ctl, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0) {
            fprintf(stderr, "atk agent: control file %s: %s\n", ctl ? ctl : "(none)", strerror(errno));
            return 5;
        }
        atk_say(&c, "uid %d", (int)geteuid());
        if (!(a->flags & ATK_NO_RECV) && c.phase != 2)
            atk_recv(&c);
        int r = a->agent(&c);
        fflush(stdout);
        return r;
    }
    if (argc >= 2 && strcmp(argv[1], "--describe") == 0) {
        printf("%s: %s%s%s%s%s%s%s\n", a->name, a->channel, (a->flags & ATK_COVERT) ? " [covert]" : "",
               (a->flags & ATK_LIMIT_CGROUP) ? " [limit:cgroup]" : "", (a->flags & ATK_LIMIT_LSM) ? " [limit:lsm]" : "",
               (a->flags & ATK_OPEN) ? " [open]" : "", (a->flags & ATK_NETNS) ? " [netns]" : "",
               (a->flags & ATK_HIDEPID) ? " [netns+hidepid]" : "");
        return 0;
    }
    return orchestrate(a, &c);
}

int atk_copy_self(const char *path) { return copy_self(path); }

void (*atk_between)(struct atk_ctx *c);
