// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_mncd.c - mncd over its socket: send+recv round trips and daemon RSS.
 *
 * Starts $BUILD/mncd on a temp socket/state dir with the bundled scheduling policy. Each client
 * pair is one thread with two connections: a "worker" connection (connected with euid 61001)
 * and a "coordinator" one (euid 61002); the config maps those uids to the agents. (The euid is
 * switched per thread with the raw setresuid syscall, which - unlike glibc's wrapper - affects
 * only the calling thread; the kernel records it at connect() for SO_PEERCRED.)
 *
 * A round trip = worker `send` of a share_availability object to the coordinator + coordinator
 * `recv` (max 1). Reported: p50/p99 round-trip latency and aggregate operations per second
 * (2 per round trip) for 1, 16 and 64 concurrent pairs; then daemon RSS with 1e5 live objects.
 * Every request goes through the monitor, is audited and made durable (fdatasync) before its
 * response, so the figures include the group commit (one fdatasync per event-loop iteration:
 * the journal record carries the iteration's audit lines; docs/mncd.md). The state dir is on $MNC_BENCH_DIR (default
 * /tmp, the VM's disk).
 *
 * Targets (README.md, "Measured performance"): p50 <= 50 us for one client; >= 50k ops/s aggregate.
 * --quick: fewer iterations and 2e4 objects for the RSS figure (CI).
 * --compare OLD_BUILD_DIR: before/after in one session: the round-trip levels for
 *   OLD_BUILD_DIR/mncd and $BUILD/mncd, interleaved (3 rounds, alternating order, a fresh daemon
 *   and state dir each), medians side by side. Run from the repo root.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UID_W 61001
#define UID_C 61002

static char sock_path[100];
static char oid[40];
static char g_req[1 << 14], g_resp[1 << 16]; /* the disclose request, a response buffer */
static size_t g_reqlen;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int connect_as(uid_t euid)
{
    if (syscall(SYS_setresuid, -1, euid, -1) != 0)
        return -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, sock_path, sizeof(sock_path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = fd >= 0 ? connect(fd, (struct sockaddr *)&sa, sizeof(sa)) : -1;
    if (syscall(SYS_setresuid, -1, 0, -1) != 0) {
        perror("restore euid");
        exit(1);
    }
    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

typedef struct conn {
    int fd;
    uid_t euid; /* mncd identifies every request by the credentials of its bytes */
    char buf[1 << 16];
    size_t len;
} conn;

/* Sends a request line and reads one response line into out (NUL-terminated). */
static int call(conn *c, const char *req, size_t reqlen, char *out, size_t outlen)
{
    size_t off = 0;
    /* the kernel attaches the writer's credentials (its REAL uid) to each write: write as the
     * conn's uid; the saved uid stays 0 so the thread can switch back */
    if (c->euid && syscall(SYS_setresuid, c->euid, c->euid, -1) != 0)
        return -1;
    while (off < reqlen) {
        ssize_t w = write(c->fd, req + off, reqlen - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (c->euid && syscall(SYS_setresuid, 0, 0, -1) != 0) {
        perror("restore uid");
        exit(1);
    }
    if (off < reqlen)
        return -1;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            if (n >= outlen)
                n = outlen - 1;
            memcpy(out, c->buf, n);
            out[n] = '\0';
            size_t used = (size_t)(nl - c->buf) + 1;
            memmove(c->buf, nl + 1, c->len - used);
            c->len -= used;
            return 0;
        }
        if (c->len == sizeof(c->buf))
            return -1;
        ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
}

typedef struct job {
    int iters;
    double *lat; /* per round trip, us */
    int empty;   /* recvs that found no message (shared coordinator inbox) */
    int fail;
    pthread_barrier_t *bar;
} job;

static void *pair(void *arg)
{
    job *j = arg;
    conn *w = calloc(1, sizeof(*w)), *c = calloc(1, sizeof(*c));
    if (w)
        w->euid = UID_W;
    if (c)
        c->euid = UID_C;
    if (!w || !c || (w->fd = connect_as(UID_W)) < 0 || (c->fd = connect_as(UID_C)) < 0) {
        j->fail = 1;
        pthread_barrier_wait(j->bar);
        free(w);
        free(c);
        return NULL;
    }
    char send_req[256], resp[1 << 16];
    int n = snprintf(send_req, sizeof(send_req),
                     "{\"verb\":\"send\",\"object\":\"%s\",\"to\":\"coordinator\"}\n", oid);
    static const char recv_req[] = "{\"verb\":\"recv\",\"max\":1}\n";
    pthread_barrier_wait(j->bar);
    for (int i = 0; i < j->iters; i++) {
        double t0 = now_us();
        if (call(w, send_req, (size_t)n, resp, sizeof(resp)) != 0 || !strstr(resp, "\"ok\":true") ||
            call(c, recv_req, sizeof(recv_req) - 1, resp, sizeof(resp)) != 0 ||
            !strstr(resp, "\"ok\":true")) {
            j->fail = 1;
            break;
        }
        j->lat[i] = now_us() - t0;
        if (strstr(resp, "\"messages\":[]"))
            j->empty++;
    }
    close(w->fd);
    close(c->fd);
    free(w);
    free(c);
    return NULL;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_level(int clients, int iters, double *p50, double *p99, double *ops)
{
    pthread_t th[64];
    job jobs[64];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)clients + 1);
    double *all = calloc((size_t)clients * (size_t)iters, sizeof(double));
    if (!all)
        return -1;
    for (int i = 0; i < clients; i++) {
        jobs[i] = (job){.iters = iters, .lat = all + (size_t)i * (size_t)iters, .bar = &bar};
        pthread_create(&th[i], NULL, pair, &jobs[i]);
    }
    pthread_barrier_wait(&bar);
    double t0 = now_us();
    for (int i = 0; i < clients; i++)
        pthread_join(th[i], NULL);
    double el = now_us() - t0;
    pthread_barrier_destroy(&bar);
    int fail = 0, empty = 0;
    for (int i = 0; i < clients; i++) {
        fail |= jobs[i].fail;
        empty += jobs[i].empty;
    }
    if (fail) {
        free(all);
        return -1;
    }
    size_t n = (size_t)clients * (size_t)iters;
    qsort(all, n, sizeof(double), cmp_d);
    *p50 = all[n / 2];
    *p99 = all[(size_t)((double)n * 0.99)];
    *ops = 2.0 * (double)n / (el / 1e6);
    free(all);
    if (empty)
        printf("   (%d of %zu recvs found the shared coordinator inbox empty)\n", empty, n);
    return 0;
}

static long rss_kb(pid_t pid)
{
    char p[64], line[256];
    snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

/* Starts BUILD/mncd on a fresh temp dir under base and creates the long-lived object (oid).
 * Returns the worker connection (fd), or -1 (daemon killed, dir removed by stop_daemon). */
static int start_daemon(const char *build, const char *base, char *dir, size_t dirlen,
                        pid_t *pidp)
{
    char mncd[512], cfg[512], state[512];
    snprintf(dir, dirlen, "%s/bench_mncd.XXXXXX", base);
    *pidp = -1;
    if (!mkdtemp(dir) || chmod(dir, 0755) != 0) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(mncd, sizeof(mncd), "%s/mncd", build);
    snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
    snprintf(state, sizeof(state), "%s/state", dir);
    if ((size_t)snprintf(sock_path, sizeof(sock_path), "%.80s/mncd.sock", dir) >= sizeof(sock_path))
        return -1;
    FILE *f = fopen(cfg, "w");
    if (!f)
        return -1;
    /* kernel layer off: this bench measures the userspace monitor (bench_kernel the programs) */
    fprintf(f, "{\"kernel\": \"off\", \"agents\": {\"worker\": {\"uid\": %d}, \"coordinator\": {\"uid\": %d}}}\n",
            UID_W, UID_C);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        execl(mncd, mncd, "--config", cfg, "--socket", sock_path, "--state-dir", state,
              "--policy", "policies/scheduling.json", (char *)NULL);
        perror(mncd);
        _exit(127);
    }
    *pidp = pid;
    int fd = -1;
    for (int i = 0; i < 500 && fd < 0; i++) {
        fd = connect_as(UID_W);
        if (fd < 0)
            usleep(10000);
    }
    if (fd < 0) {
        fprintf(stderr, "bench_mncd: %s did not start\n", mncd);
        return -1;
    }
    /* One long-lived object: share_availability (3600 s, no turn bound). */
    f = fopen("policies/examples/scheduling-state.json", "r");
    char st[4096];
    size_t stn = f ? fread(st, 1, sizeof(st) - 1, f) : 0;
    if (f)
        fclose(f);
    st[stn] = '\0';
    for (char *p = st; *p; p++)
        if (*p == '\n')
            *p = ' ';
    int n = snprintf(g_req, sizeof(g_req), "{\"verb\":\"disclose\",\"contract\":"
                     "\"share_availability\",\"state\":%s}\n", st);
    g_reqlen = n > 0 && (size_t)n < sizeof(g_req) ? (size_t)n : 0;
    conn *c0 = calloc(1, sizeof(*c0));
    char *idp;
    if (!c0 || !g_reqlen) {
        free(c0);
        close(fd);
        return -1;
    }
    c0->fd = fd;
    c0->euid = UID_W;
    if (call(c0, g_req, g_reqlen, g_resp, sizeof(g_resp)) != 0 ||
        !(idp = strstr(g_resp, "\"id\":\""))) {
        fprintf(stderr, "bench_mncd: disclose failed: %s\n", g_resp);
        free(c0);
        close(fd);
        return -1;
    }
    memcpy(oid, idp + 6, 32);
    oid[32] = '\0';
    free(c0);
    return fd;
}

static void stop_daemon(pid_t pid, const char *dir, int fd)
{
    if (fd >= 0)
        close(fd);
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_mncd: could not remove %s\n", dir);
}

/* --compare OLD_BUILD: the round-trip levels for OLD_BUILD/mncd and $BUILD/mncd, interleaved
 * (3 rounds, the order alternating per round, a fresh daemon each time), medians printed side
 * by side - before/after figures from the same session on the same disk. */
static int compare(const char *old_build, const char *new_build, const char *base, int quick)
{
    enum { ROUNDS = 3, LEVELS = 3 };
    static const int levels[LEVELS] = {1, 16, 64};
    double r[2][LEVELS][3][ROUNDS]; /* [binary][level][p50,p99,ops][round] */
    const char *builds[2] = {old_build, new_build};
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < 2; k++) {
            int b = round % 2 ? 1 - k : k;
            char dir[256];
            pid_t pid;
            int fd = start_daemon(builds[b], base, dir, sizeof(dir), &pid);
            if (fd < 0) {
                stop_daemon(pid, dir, -1);
                return 1;
            }
            for (int li = 0; li < LEVELS; li++) {
                int iters = quick ? (levels[li] == 1 ? 2000 : 200)
                                  : (levels[li] == 1 ? 20000 : 2000);
                if (run_level(levels[li], iters, &r[b][li][0][round], &r[b][li][1][round],
                              &r[b][li][2][round]) != 0) {
                    fprintf(stderr, "bench_mncd: %s: run with %d clients failed\n", builds[b],
                            levels[li]);
                    stop_daemon(pid, dir, fd);
                    return 1;
                }
            }
            stop_daemon(pid, dir, fd);
        }
    printf("mncd send+recv round trip, %s/mncd (old) vs %s/mncd (new), state dir on %s, "
           "median of %d interleaved rounds\n", old_build, new_build, base, ROUNDS);
    for (int li = 0; li < LEVELS; li++) {
        double m[2][3];
        for (int b = 0; b < 2; b++)
            for (int q = 0; q < 3; q++) {
                qsort(r[b][li][q], ROUNDS, sizeof(double), cmp_d);
                m[b][q] = r[b][li][q][ROUNDS / 2];
            }
        printf("  %2d pair(s): old p50 %7.1f us p99 %7.1f us %7.0f ops/s | new p50 %7.1f us "
               "p99 %7.1f us %7.0f ops/s | p50 x%.2f, ops/s x%.2f\n", levels[li], m[0][0],
               m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[1][0] / m[0][0],
               m[1][2] / m[0][2]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *old_build = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc)
            old_build = argv[++i];
        else {
            fprintf(stderr, "usage: bench_mncd [--quick] [--compare OLD_BUILD_DIR]\n");
            return 2;
        }
    }
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    const char *base = getenv("MNC_BENCH_DIR") ? getenv("MNC_BENCH_DIR") : "/tmp";
    if (old_build)
        return compare(old_build, build, base, quick);
    char dir[256];
    pid_t pid;
    int fd = start_daemon(build, base, dir, sizeof(dir), &pid);
    if (fd < 0) {
        stop_daemon(pid, dir, -1);
        return 1;
    }
    char *req = g_req, *resp = g_resp;
    int n = (int)g_reqlen;
    conn *c0 = calloc(1, sizeof(*c0));
    if (!c0) {
        stop_daemon(pid, dir, fd);
        return 1;
    }
    c0->fd = fd;
    c0->euid = UID_W;

    int status = 0;
    int levels[] = {1, 16, 64};
    printf("mncd send+recv round trip over the UNIX socket (state dir on %s; one journal "
           "fdatasync per event-loop iteration, carrying the audit records)\n", base);
    for (int li = 0; li < 3; li++) {
        int iters = quick ? (levels[li] == 1 ? 2000 : 200) : (levels[li] == 1 ? 20000 : 2000);
        double p50, p99, ops;
        if (run_level(levels[li], iters, &p50, &p99, &ops) != 0) {
            fprintf(stderr, "bench_mncd: run with %d clients failed\n", levels[li]);
            status = 1;
            break;
        }
        printf("  %2d client pair(s): p50 %8.1f us  p99 %8.1f us  aggregate %9.0f ops/s%s\n",
               levels[li], p50, p99, ops,
               levels[li] == 1 ? (p50 <= 50 ? "  [p50 target 50 us: met]"
                                            : "  [p50 target 50 us: NOT met]")
                               : (ops >= 50000 ? "  [50k ops/s target: met]"
                                               : "  [50k ops/s target: NOT met]"));
    }

    /* RSS with N live objects: pipelined discloses, 200 per batch. */
    int nobj = quick ? 20000 : 100000;
    long rss0 = rss_kb(pid);
    double t0 = now_us();
    for (int done = 0; done < nobj && status == 0;) {
        int b = nobj - done < 200 ? nobj - done : 200;
        if (syscall(SYS_setresuid, UID_W, UID_W, -1) != 0) { /* written as the worker (real uid) */
            status = 1;
            break;
        }
        for (int i = 0; i < b; i++) {
            size_t off = 0;
            while (off < (size_t)n) {
                ssize_t w = write(fd, req + off, (size_t)n - off);
                if (w <= 0) {
                    status = 1;
                    break;
                }
                off += (size_t)w;
            }
        }
        if (syscall(SYS_setresuid, 0, 0, -1) != 0) {
            perror("restore uid");
            exit(1);
        }
        for (int i = 0; i < b && status == 0; i++)
            if (call(c0, "", 0, resp, sizeof(g_resp)) != 0 || !strstr(resp, "\"ok\":true")) {
                fprintf(stderr, "bench_mncd: disclose %d failed: %.300s\n", done + i, resp);
                status = 1;
            }
        done += b;
    }
    double el = now_us() - t0;
    long rss1 = rss_kb(pid);
    if (status == 0)
        printf("  daemon RSS: %ld KiB at start of this phase, %ld KiB with %d more live objects "
               "(%.0f B/object incl. inbox entry); %d discloses in %.1f s (%.0f/s)\n",
               rss0, rss1, nobj, (double)(rss1 - rss0) * 1024.0 / nobj, nobj, el / 1e6,
               nobj / (el / 1e6));
    free(c0);
    stop_daemon(pid, dir, fd);
    return status;
}
