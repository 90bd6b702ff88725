// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_deliver.c - how long a delivery stalls a running agent (the pre-taint sweep and the fd
 * scan run while mncd holds the agent's cgroups frozen: docs/kernel.md, "Pre-taint
 * connections"), against floors measured in the same run.
 *
 * The real mncd (kernel layer on, cgroup backend, private pin root and cgroup tree) and the real
 * `mncctl run`. The agent is this binary ("agent" mode), launched as `coordinator`; the worker
 * is a uid-mapped client of this process that discloses share_availability before each recv.
 * Inside the agent a meter thread sleeps 200 us at a time and records the longest gap between
 * two of its wakeups while a request is in flight: what the agent itself loses to the freeze
 * (minus the 200 us it asked to sleep).
 *   heavy  the agent holds 100 fds (pipes, eventfds, timerfds, epoll instances, signalfd,
 *          inotify, memfds, UNIX socketpairs, files of its workspace read-write, system files
 *          read-only, its mncd connection, stdio) and runs 10 threads: the stall of one recv
 *   light  the agent holds its stdio and its mncd connection and runs 1 thread: the same recv
 *   bare   the bench freezes and thaws the heavy agent's cgroup itself (cgroup.freeze, waiting
 *          for cgroup.events to say frozen, as mncd does), in the middle of a window as long as
 *          the heavy recv before it took: the freezer's own cost, plus whatever gap a busy host
 *          gives a thread over such a window anyway
 * Rounds alternate light and heavy launches; each figure is the median (and max) over all
 * deliveries. Target (issue: delivery stall): heavy p50 <= 10 ms. mncd's own breakdown of the
 * last heavy delivery (status: last_sweep, last_fdscan) is printed too.
 * If $BUILD/tools/hostnoise exists it runs for the whole bench (a host with systemd-like fds).
 * Needs root, cgroup2 and the cgroup backend. Run from the repo root.
 *   --quick                 2 rounds of 5 deliveries per agent (else 5 of 10)
 *   --compare OLD_BUILD     before/after in one session: OLD_BUILD/mncd and mncctl against
 *                           $BUILD's, one round of each at a time (order alternating, a fresh
 *                           daemon, pin root and cgroup tree each), medians side by side
 *   MNC_BENCH_KEEP=1        keep each session's state dir (mncd.log, audit.jsonl) */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UID_W 61001
#define METER_SLEEP_US 200

static long mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* ---- the agent (inside mncctl run) */

static atomic_int measuring;
static atomic_long max_gap;

static void *meter(void *arg)
{
    (void)arg;
    long last = mono_us();
    for (;;) {
        struct timespec ts = {0, METER_SLEEP_US * 1000L};
        nanosleep(&ts, NULL);
        long t = mono_us(), gap = t - last;
        last = t;
        if (atomic_load(&measuring) && gap > atomic_load(&max_gap))
            atomic_store(&max_gap, gap);
    }
    return NULL;
}

static void *idle_thread(void *arg)
{
    int fd = *(int *)arg; /* blocks on a pipe nobody writes: a runtime's idle worker */
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int count_fds(void)
{
    int n = 0;
    char p[64];
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        n += access(p, F_OK) == 0;
    }
    return n;
}

/* Opens objects of every kind a language runtime holds until nfds fds are open. */
static int fill_fds(int nfds, const char *ws)
{
    int ep = -1, kind = 0, files = 0, ro = 0;
    static const char *const sys[] = {"/etc/hostname", "/etc/passwd", "/etc/hosts", "/etc/os-release"};
    while (count_fds() < nfds) {
        int fds[2] = {-1, -1}, n = 0;
        switch (kind++ % 10) {
        case 0:
            n = pipe2(fds, O_CLOEXEC) == 0 ? 2 : 0;
            break;
        case 1:
            fds[0] = eventfd(0, EFD_CLOEXEC);
            n = 1;
            break;
        case 2:
            fds[0] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
            n = 1;
            break;
        case 3:
            fds[0] = ep = epoll_create1(EPOLL_CLOEXEC);
            n = 1;
            break;
        case 4:
            n = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0 ? 2 : 0;
            break;
        case 5:
            fds[0] = memfd_create("bench", MFD_CLOEXEC);
            n = 1;
            break;
        case 6: {
            char p[PATH_MAX];
            snprintf(p, sizeof(p), "%s/f%d", ws, files++);
            fds[0] = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
            n = 1;
            break;
        }
        case 7:
            fds[0] = open(sys[ro++ % 4], O_RDONLY | O_CLOEXEC);
            n = 1;
            break;
        case 8:
            fds[0] = inotify_init1(IN_CLOEXEC);
            if (fds[0] >= 0 && inotify_add_watch(fds[0], ws, IN_CREATE) < 0)
                return -1;
            n = 1;
            break;
        case 9: {
            sigset_t ss;
            sigemptyset(&ss);
            sigaddset(&ss, SIGUSR2);
            fds[0] = signalfd(-1, &ss, SFD_CLOEXEC);
            n = 1;
            break;
        }
        }
        for (int i = 0; i < n; i++)
            if (fds[i] < 0)
                return -1;
        if (ep >= 0 && n == 1 && fds[0] != ep) {
            struct epoll_event ev = {.events = EPOLLIN};
            if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) != 0 && errno != EPERM)
                return -1;
        }
    }
    return 0;
}

static int agent_main(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    const char *sock = argv[2], *ws = argv[5];
    int nfds = atoi(argv[3]), nthreads = atoi(argv[4]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    int m = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m < 0 || connect(m, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        printf("err connect mncd: %s\n", strerror(errno));
        return 1;
    }
    if (fill_fds(nfds, ws) != 0) {
        printf("err fill fds: %s\n", strerror(errno));
        return 1;
    }
    int idle[2];
    if (pipe2(idle, O_CLOEXEC) != 0)
        return 1;
    pthread_t t;
    for (int i = 0; i < nthreads - 1; i++)
        if (pthread_create(&t, NULL, idle_thread, &idle[0]) != 0)
            return 1;
    if (pthread_create(&t, NULL, meter, NULL) != 0)
        return 1;
    printf("ready %d %d\n", (int)getpid(), count_fds());
    char line[256];
    static char resp[1 << 16];
    while (fgets(line, sizeof(line), stdin)) {
        if (strncmp(line, "recv", 4) == 0) {
            static const char req[] = "{\"verb\":\"recv\",\"max\":1}\n";
            atomic_store(&max_gap, 0);
            atomic_store(&measuring, 1);
            long t0 = mono_us();
            size_t n = 0;
            if (write(m, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
                return 1;
            while (n < sizeof(resp) - 1) {
                ssize_t r = read(m, resp + n, sizeof(resp) - 1 - n);
                if (r <= 0)
                    return 1;
                n += (size_t)r;
                if (resp[n - 1] == '\n')
                    break;
            }
            resp[n] = 0;
            long lat = mono_us() - t0;
            struct timespec ts = {0, 2 * METER_SLEEP_US * 1000L}; /* the meter's last gap closes */
            nanosleep(&ts, NULL);
            atomic_store(&measuring, 0);
            printf("ok %ld %ld %d\n", atomic_load(&max_gap), lat, strstr(resp, "\"messages\":[{") != NULL);
        } else if (strncmp(line, "measure", 7) == 0) {
            atomic_store(&max_gap, 0);
            atomic_store(&measuring, 1);
            printf("m\n");
        } else if (strncmp(line, "stop", 4) == 0) {
            struct timespec ts = {0, 2 * METER_SLEEP_US * 1000L};
            nanosleep(&ts, NULL);
            atomic_store(&measuring, 0);
            printf("gap %ld\n", atomic_load(&max_gap));
        }
    }
    return 0;
}

/* ---- the orchestrator */

static char dir[64], sock_path[100], pin[96], tree[96], cg2[256], build[256];

static int connect_as(uid_t euid)
{
    if (syscall(SYS_setresuid, -1, euid, -1) != 0)
        return -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", sock_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = fd >= 0 ? connect(fd, (struct sockaddr *)&sa, sizeof(sa)) : -1;
    if (syscall(SYS_setresuid, -1, 0, -1) != 0)
        exit(1);
    if (rc != 0 && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* one request line, written as the worker (mncd takes the credentials of each message), one
 * answer line (NUL-terminated) */
static int call(int fd, const char *req, char *out, size_t n)
{
    size_t len = strlen(req), got = 0;
    /* the kernel attaches the writer's REAL uid to each write; the saved uid stays 0 */
    if (syscall(SYS_setresuid, UID_W, UID_W, -1) != 0)
        return -1;
    ssize_t w = write(fd, req, len);
    if (syscall(SYS_setresuid, 0, 0, -1) != 0)
        exit(1);
    if (w != (ssize_t)len)
        return -1;
    while (got < n - 1) {
        ssize_t r = read(fd, out + got, n - 1 - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
        if (out[got - 1] == '\n')
            break;
    }
    out[got] = 0;
    return 0;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

/* policies/scheduling.json with its sinks' paths moved into dir */
static int write_policy(void)
{
    char *src = read_all("policies/scheduling.json");
    cJSON *p = src ? cJSON_Parse(src) : NULL;
    if (!p)
        return -1;
    char sd[256];
    snprintf(sd, sizeof(sd), "%s/sinks", dir);
    mkdir(sd, 0755);
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(p, "sinks"))
    {
        cJSON *path = cJSON_GetObjectItem(s, "path"), *name = cJSON_GetObjectItem(s, "name");
        if (path && cJSON_IsString(name)) {
            char np[512];
            snprintf(np, sizeof(np), "%s/%s", sd, name->valuestring);
            cJSON_SetValuestring(path, np);
        }
    }
    char *txt = cJSON_Print(p), pp[256];
    snprintf(pp, sizeof(pp), "%s/policy.json", dir);
    int rc = txt ? write_text(pp, txt) : -1;
    free(txt);
    cJSON_Delete(p);
    return rc;
}

static pid_t spawn(char *const argv[], int in, int out, int err)
{
    pid_t pid = fork();
    if (pid == 0) {
        if ((in >= 0 && dup2(in, 0) < 0) || (out >= 0 && dup2(out, 1) < 0) || (err >= 0 && dup2(err, 2) < 0))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

typedef struct agent {
    pid_t launcher, pid;
    FILE *in, *out;
    char cg[PATH_MAX];
    int fds;
} agent;

static int launch(agent *a, bool heavy)
{
    char ws[256], exe[300], bin[256], mncctl[300], nf[16], nt[16];
    snprintf(ws, sizeof(ws), "%s/ws-%s", dir, heavy ? "heavy" : "light");
    mkdir(ws, 0755);
    snprintf(bin, sizeof(bin), "%s/bin", dir); /* the read grant: not dir, which holds the sinks */
    snprintf(exe, sizeof(exe), "%s/agent", bin);
    snprintf(mncctl, sizeof(mncctl), "%s/mncctl", build);
    snprintf(nf, sizeof(nf), "%d", heavy ? 100 : 1);
    snprintf(nt, sizeof(nt), "%d", heavy ? 10 : 1);
    char *argv[] = {mncctl,        "--socket", sock_path, "run", "--agent", "coordinator", "--pin-root", pin,
                    "--workspace", ws,         "--read",  bin,   "--stdio", "passthrough", "--",         exe,
                    "agent",       sock_path,  nf,        nt,    ws,        NULL};
    int pin_[2], pout[2];
    if (pipe2(pin_, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0)
        return -1;
    char ep[300];
    snprintf(ep, sizeof(ep), "%s/agent-%s.err", dir, heavy ? "heavy" : "light");
    int err = open(ep, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    a->launcher = spawn(argv, pin_[0], pout[1], err);
    close(pin_[0]);
    close(pout[1]);
    close(err);
    a->in = fdopen(pin_[1], "w");
    a->out = fdopen(pout[0], "r");
    if (!a->in || !a->out || a->launcher < 0)
        return -1;
    setvbuf(a->in, NULL, _IOLBF, 0);
    char line[256] = "";
    if (!fgets(line, sizeof(line), a->out) || sscanf(line, "ready %d %d", &a->pid, &a->fds) != 2) {
        char *e = read_all(ep);
        fprintf(stderr, "bench_deliver: the agent did not start: %s\n", e ? e : "?");
        return -1;
    }
    char p[64], *c;
    snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)a->pid);
    c = read_all(p);
    if (c && strncmp(c, "0::", 3) != 0 && strstr(c, "\n0::"))
        c = strstr(c, "\n0::") + 1; /* a hybrid layout lists the v1 hierarchies first */
    if (!c || strncmp(c, "0::", 3) != 0) {
        fprintf(stderr, "bench_deliver: the agent's cgroup: %s\n", c ? c : strerror(errno));
        return -1;
    }
    c[strcspn(c, "\n")] = 0;
    snprintf(a->cg, sizeof(a->cg), "%s%.3800s", cg2, c + 3);
    return 0;
}

static void finish(agent *a)
{
    if (a->in)
        fclose(a->in);
    if (a->out)
        fclose(a->out);
    if (a->launcher > 0)
        waitpid(a->launcher, NULL, 0);
    memset(a, 0, sizeof(*a));
}

static char disclose_req[8192];

/* The worker discloses one object to the coordinator; the agent receives it. The agent's
 * longest gap (us), or -1. *got: delivered. */
static long deliver(int worker, agent *a, bool *got, long *latency)
{
    char resp[4096] = "", line[256] = "";
    if (call(worker, disclose_req, resp, sizeof(resp)) != 0 || !strstr(resp, "\"queued_to\"")) {
        fprintf(stderr, "bench_deliver: disclose: %s\n", resp);
        return -1;
    }
    fprintf(a->in, "recv\n");
    long gap, lat;
    int ok;
    if (!fgets(line, sizeof(line), a->out) || sscanf(line, "ok %ld %ld %d", &gap, &lat, &ok) != 3) {
        fprintf(stderr, "bench_deliver: the agent's recv: %s\n", line);
        return -1;
    }
    *got = ok;
    *latency = lat;
    return gap - METER_SLEEP_US;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The bench freezes and thaws the agent's cgroup itself, as mncd does, in the middle of a window
 * as long as the last recv took (window_us): the agent's longest gap in it, so that the
 * scheduling noise a busy host adds over such a window is in this floor too. */
static long bare_freeze(agent *a, long window_us)
{
    char line[64], p[PATH_MAX + 32], ev[256];
    fprintf(a->in, "measure\n");
    if (!fgets(line, sizeof(line), a->out))
        return -1;
    sleep_us(window_us / 2);
    snprintf(p, sizeof(p), "%s/cgroup.freeze", a->cg);
    if (write_text(p, "1") != 0)
        return -1;
    snprintf(p, sizeof(p), "%s/cgroup.events", a->cg);
    for (int i = 0; i < 20000; i++) {
        FILE *f = fopen(p, "r");
        size_t n = f ? fread(ev, 1, sizeof(ev) - 1, f) : 0;
        if (f)
            fclose(f);
        ev[n] = 0;
        if (strstr(ev, "frozen 1"))
            break;
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(p, sizeof(p), "%s/cgroup.freeze", a->cg);
    if (write_text(p, "0") != 0)
        return -1;
    sleep_us(window_us / 2);
    fprintf(a->in, "stop\n");
    long gap;
    if (!fgets(line, sizeof(line), a->out) || sscanf(line, "gap %ld", &gap) != 1)
        return -1;
    return gap - METER_SLEEP_US;
}

static int cmp_l(const void *x, const void *y)
{
    long a = *(const long *)x, b = *(const long *)y;
    return (a > b) - (a < b);
}

static void row(const char *name, long *v, int n, const char *what)
{
    if (n == 0) {
        printf("  %-6s (no sample)\n", name);
        return;
    }
    qsort(v, (size_t)n, sizeof(*v), cmp_l);
    printf("  %-6s stall p50 %7.2f ms  p90 %7.2f ms  max %7.2f ms  (%d samples; %s)\n", name, v[n / 2] / 1000.0,
           v[n * 9 / 10] / 1000.0, v[n - 1] / 1000.0, n, what);
}

static void breakdown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "%s/mncctl --socket %s --json status", build, sock_path);
    FILE *f = popen(cmd, "r");
    static char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        pclose(f);
    buf[n] = 0;
    cJSON *j = cJSON_Parse(buf), *k = cJSON_GetObjectItem(j, "kernel");
    char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(k, "last_sweep"));
    char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(k, "last_fdscan"));
    printf("  mncd, last heavy delivery: sweep %s\n                             fdscan %s\n", s ? s : "?", t ? t : "?");
    free(s);
    free(t);
    cJSON_Delete(j);
}

typedef struct samples {
    long *heavy, *light, *bare;
    int nh, nl, nb, cap, refused, refused_light, heavy_fds;
    char last_refusal[1024];
} samples;

static int samples_init(samples *s, int cap)
{
    memset(s, 0, sizeof(*s));
    s->cap = cap;
    s->heavy = calloc((size_t)cap, sizeof(long));
    s->light = calloc((size_t)cap, sizeof(long));
    s->bare = calloc((size_t)cap, sizeof(long));
    return s->heavy && s->light && s->bare ? 0 : -1;
}

static void samples_free(samples *s)
{
    free(s->heavy);
    free(s->light);
    free(s->bare);
}

static void last_refusal(samples *s)
{
    char ap[300], *log, *last = NULL;
    snprintf(ap, sizeof(ap), "%s/state/audit.jsonl", dir);
    for (char *c = (log = read_all(ap)); c && (c = strstr(c, "refused")); c++)
        last = c;
    while (last && last > log && last[-1] != '\n')
        last--;
    if (last)
        snprintf(s->last_refusal, sizeof(s->last_refusal), "%.*s", (int)strcspn(last, "\n"), last);
}

static void stop_session(pid_t mncd)
{
    if (mncd > 0) {
        kill(mncd, SIGTERM);
        waitpid(mncd, NULL, 0);
    }
    char cmd[2048];
    bool keep = getenv("MNC_BENCH_KEEP") != NULL; /* keep the state dir (mncd.log, audit.jsonl) */
    snprintf(cmd, sizeof(cmd),
             "%s/mncctl kern --pin-root %s detach --purge >/dev/null 2>&1; rmdir %s/%s/* %s/%s 2>/dev/null; %s %s",
             build, pin, cg2, tree, cg2, tree, keep ? "echo kept" : "rm -rf", dir);
    if (system(cmd) != 0) {
        /* best effort */
    }
}

/* One session: a fresh mncd of build b (a state dir, pin root and cgroup tree of its own),
 * `rounds` rounds of a light and a heavy launch (order alternating), `per` deliveries each;
 * samples appended to s. 0, or -1 (said why on stderr). */
static int session(const char *b, int rounds, int per, samples *s, bool show_breakdown)
{
    static int seq;
    snprintf(build, sizeof(build), "%s", b);
    snprintf(dir, sizeof(dir), "/tmp/mnc-bench-deliver.XXXXXX");
    if (!mkdtemp(dir) || chmod(dir, 0755) != 0)
        return -1;
    snprintf(sock_path, sizeof(sock_path), "%s/mncd.sock", dir);
    snprintf(pin, sizeof(pin), "/sys/fs/bpf/mnc-bench-deliver-%d-%d", (int)getpid(), seq);
    snprintf(tree, sizeof(tree), "mnc-bench-deliver-%d-%d", (int)getpid(), seq++);
    char p[600], q[600];
    /* the agent binary: a copy of this one every uid can read (the tree may sit under a 0700 home) */
    snprintf(p, sizeof(p), "mkdir -m 0755 %s/bin && cp /proc/%d/exe %s/bin/agent && chmod 0755 %s/bin/agent", dir,
             (int)getpid(), dir, dir);
    if (system(p) != 0 || write_policy() != 0) {
        fprintf(stderr, "bench_deliver: setup failed\n");
        stop_session(-1);
        return -1;
    }
    snprintf(p, sizeof(p), "%s/config.json", dir);
    snprintf(q, sizeof(q),
             "{\"kernel\": \"cgroup\", \"pin_root\": \"%s\", \"cgroup_tree\": \"%s\", "
             "\"agents\": {\"worker\": {\"uid\": %d}}}\n",
             pin, tree, UID_W);
    if (write_text(p, q) != 0)
        return -1;
    char mncd_bin[300], state[300], pol[300], logp[300];
    snprintf(mncd_bin, sizeof(mncd_bin), "%s/mncd", build);
    snprintf(state, sizeof(state), "%s/state", dir);
    snprintf(pol, sizeof(pol), "%s/policy.json", dir);
    snprintf(logp, sizeof(logp), "%s/mncd.log", dir);
    int logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    char *margv[] = {mncd_bin, "--config", p, "--socket", sock_path, "--state-dir", state, "--policy", pol, NULL};
    pid_t mncd = spawn(margv, -1, logfd, logfd);
    if (logfd >= 0)
        close(logfd);
    int worker = -1;
    for (int i = 0; i < 500 && worker < 0; i++) {
        worker = connect_as(UID_W);
        if (worker < 0)
            usleep(20000);
    }
    if (worker < 0) {
        fprintf(stderr, "bench_deliver: %s did not start\n", mncd_bin);
        stop_session(mncd);
        return -1;
    }
    int rc = 0;
    for (int r = 0; r < rounds && rc == 0; r++) {
        for (int k = 0; k < 2 && rc == 0; k++) {
            bool hv = (r + k) % 2 == 1;
            agent a = {0};
            if (launch(&a, hv) != 0) {
                rc = -1;
                finish(&a);
                break;
            }
            if (hv)
                s->heavy_fds = a.fds;
            for (int i = 0; i < per && rc == 0; i++) {
                bool got = false;
                long lat = 0, g = deliver(worker, &a, &got, &lat);
                if (g < 0 || s->nh >= s->cap || s->nl >= s->cap) {
                    rc = -1;
                    break;
                }
                s->refused += !got;
                s->refused_light += !got && !hv;
                if (hv)
                    s->heavy[s->nh++] = g;
                else
                    s->light[s->nl++] = g;
                if (hv && s->nb < s->cap && (g = bare_freeze(&a, lat)) >= 0)
                    s->bare[s->nb++] = g;
            }
            if (hv && r == rounds - 1 && show_breakdown)
                breakdown();
            finish(&a);
        }
    }
    if (s->refused)
        last_refusal(s);
    close(worker);
    stop_session(mncd);
    return rc;
}

static void report(const char *title, samples *s)
{
    printf("%s\n", title);
    row("heavy", s->heavy, s->nh, "100 fds, 10 threads");
    if (s->heavy_fds)
        printf("         (the heavy agent held %d fds)\n", s->heavy_fds);
    row("light", s->light, s->nl, "stdio + mncd connection, 1 thread");
    row("bare", s->bare, s->nb, "freeze + thaw of the heavy agent's cgroup, nothing else");
    if (s->nh && s->nb && s->nl)
        printf("  heavy - bare: %.2f ms (p50); heavy / light: %.2f; target heavy p50 <= 10 ms: %s\n",
               (s->heavy[s->nh / 2] - s->bare[s->nb / 2]) / 1000.0,
               s->light[s->nl / 2] ? (double)s->heavy[s->nh / 2] / s->light[s->nl / 2] : 0,
               s->heavy[s->nh / 2] <= 10000 ? "met" : "NOT met");
    if (s->refused)
        printf("  %d deliveries were refused (%d of them to the light agent); the last refusal:\n  %s\n", s->refused,
               s->refused_light, s->last_refusal);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "agent") == 0)
        return agent_main(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    bool quick = false;
    const char *old = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc)
            old = argv[++i];
        else {
            fprintf(stderr, "usage: bench_deliver [--quick] [--compare OLD_BUILD_DIR]\n");
            return 2;
        }
    }
    int rounds = quick ? 2 : 5, per = quick ? 5 : 10;
    if (geteuid() != 0) {
        fprintf(stderr, "bench_deliver: needs root (cgroups, BPF)\n");
        return 1;
    }
    char cur[256];
    snprintf(cur, sizeof(cur), "%s", getenv("BUILD") ? getenv("BUILD") : "build");
    FILE *mf = fopen("/proc/mounts", "r");
    char l[1024], mnt[256], fs[64];
    while (mf && fgets(l, sizeof(l), mf))
        if (sscanf(l, "%*s %255s %63s", mnt, fs) == 2 && strcmp(fs, "cgroup2") == 0) {
            snprintf(cg2, sizeof(cg2), "%s", mnt);
            break;
        }
    if (mf)
        fclose(mf);
    if (!cg2[0]) {
        fprintf(stderr, "bench_deliver: no cgroup2 mount\n");
        return 1;
    }
    /* a host that looks like production: root holds epoll, eventfd, timerfd... (hostnoise.c) */
    pid_t noise = -1;
    char nb[300], *st = read_all("policies/examples/scheduling-state.json");
    for (char *c = st; c && *c; c++)
        if (*c == '\n')
            *c = ' ';
    snprintf(disclose_req, sizeof(disclose_req),
             "{\"verb\":\"disclose\",\"contract\":\"share_availability\",\"state\":%.8000s}\n", st ? st : "{}");
    snprintf(nb, sizeof(nb), "%s/tools/hostnoise", cur);
    if (access(nb, X_OK) == 0) {
        int np[2];
        char *nargv[] = {nb, NULL}, rl[64];
        if (pipe2(np, O_CLOEXEC) == 0) {
            noise = spawn(nargv, -1, np[1], -1);
            close(np[1]);
            ssize_t r = read(np[0], rl, sizeof(rl));
            close(np[0]);
            if (r <= 0)
                noise = -1;
        }
    }
    int rc = 0, cap = rounds * per + 1;
    samples sn, so;
    if (samples_init(&sn, cap) != 0 || samples_init(&so, cap) != 0)
        return 1;
    char title[300];
    if (!old) {
        rc = session(cur, rounds, per, &sn, true);
        snprintf(title, sizeof(title),
                 "delivery stall, as the agent sees it (a thread waking every %d us; %d rounds x %d deliveries%s)",
                 METER_SLEEP_US, rounds, per, noise > 0 ? "; hostnoise running" : "");
        report(title, &sn);
    } else {
        /* before/after in one session: one round of each build at a time, the order alternating */
        for (int r = 0; r < rounds && rc == 0; r++)
            for (int k = 0; k < 2 && rc == 0; k++)
                rc = (r + k) % 2 ? session(old, 1, per, &so, false) : session(cur, 1, per, &sn, r == rounds - 1);
        snprintf(title, sizeof(title), "delivery stall, BEFORE: %s/mncd (%d rounds x %d deliveries, interleaved%s)",
                 old, rounds, per, noise > 0 ? "; hostnoise running" : "");
        report(title, &so);
        snprintf(title, sizeof(title), "delivery stall, AFTER: %s/mncd", cur);
        report(title, &sn);
        if (so.nh && sn.nh)
            printf("  heavy p50 after / before: %.2f\n", (double)sn.heavy[sn.nh / 2] / (double)so.heavy[so.nh / 2]);
    }
    if (noise > 0) {
        kill(noise, SIGTERM);
        waitpid(noise, NULL, 0);
    }
    bool none = !sn.nh;
    samples_free(&sn);
    samples_free(&so);
    return rc || none;
}
