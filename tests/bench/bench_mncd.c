// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_mncd.c - mncd over its socket against the disk's floor, and its cost as state grows.
 *
 * Starts $BUILD/mncd on a temp socket/state dir with the bundled scheduling policy. Each client
 * pair is one thread with two connections: a "worker" connection (connected with euid 61001)
 * and a "coordinator" one (euid 61002); the config maps those uids to the agents. (The euid is
 * switched per thread with the raw setresuid syscall, which - unlike glibc's wrapper - affects
 * only the calling thread; the kernel records it at connect() for SO_PEERCRED.)
 *
 * 1. The floor, measured in the same run on the state dir's filesystem (its type is printed),
 *    first and again around the levels it is compared with: the p50 of one small overwrite +
 *    fdatasync back to back (as the journal does it, over preallocated zeros); the p50 of a
 *    trivial round trip of two requests over a UNIX socket each answered after such a sync
 *    (floor_echo); and the throughput of a trivial group-commit writer - 64 threads appending
 *    to one mnc_journal, whose leader writes and syncs everything queued at once.
 * 2. Round trips: worker `send` of a share_availability object to the coordinator +
 *    coordinator `recv` (max 1), for 1, 16 and 64 pairs: p50/p99 latency and operations per
 *    second, counting only operations that did work (every send; a recv only if it returned a
 *    message - with a shared coordinator inbox a pair may find it empty). Printed as ratios to
 *    the floor: 1-pair p50 / the trivial round trip's p50, target <= 1.2 (a round trip is two
 *    requests, each acknowledged only after its iteration's commit); 64-pair ops/s / the group-commit
 *    writer's records/s, target >= 0.5. mncd's CPU per operation (its threads' run time,
 *    /proc/PID/task/TID/schedstat, around each phase), target <= 10 us.
 * 3. Scaling: pipelined discloses (4 connections, 250 in flight each; every disclose creates a
 *    live object and charges the ledger subject "alice", so live objects = releases of that
 *    subject) fill the daemon to 10^3, 10^4, 10^5 (and 10^6 in the full run) objects; at each
 *    level three windows of discloses are timed (the 10^6 row's end at 10^6: every disclose
 *    also queues its object in the recipient's inbox, bounded at 10^6). Then, on a fresh
 *    daemon, 10^5 discloses with distinct subjects make 10^5 subjects and windows cycling
 *    through them are timed. Each row prints its
 *    throughput and CPU per disclose and the throughput ratio to the 10^3 row, target: within
 *    1.3x (ratio >= 0.77).
 * At the end mncd is stopped and getrusage(RUSAGE_CHILDREN) gives its CPU over the whole run
 * per operation that did work.
 *
 * --quick: fewer iterations, scaling up to 10^5 (10^6 takes ~0.6 GB of mncd memory and ~70 s
 *   of fill on the 2-core VM: full mode only; the full run takes ~2 min). The state dir is on
 *   $MNC_BENCH_DIR (default /tmp, the VM's disk).
 * --blocking-read: the clients wait for each answer in read(), not in poll() as libmnc's client
 *   does (for the A/B in docs/mncd.md, "Clients wait in poll()").
 * --compare OLD_BUILD_DIR: before/after in one session: the round-trip levels for
 *   OLD_BUILD_DIR/mncd and $BUILD/mncd, interleaved (3 rounds, alternating order, a fresh daemon
 *   and state dir each), medians side by side. Run from the repo root.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mnc/journal.h"
#include "../unit/pagecount.h" /* cached_mib */

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

/* --blocking-read: clients wait for answers in read() instead of poll() (the A/B of docs/mncd.md,
 * "Clients wait in poll()"; libmnc's client waits in poll()) */
static bool blocking_read;

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
        /* as libmnc's client: sleep in poll(), which only POLLIN wakes (mncd taking in a request
         * wakes a reader blocked in read() for nothing, at mncd's cost) */
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (!blocking_read && poll(&pf, 1, -1) < 0 && errno != EINTR)
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
    int empty;   /* recvs that found no message (shared coordinator inbox): no work done */
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
    int n = snprintf(send_req, sizeof(send_req), "{\"verb\":\"send\",\"object\":\"%s\",\"to\":\"coordinator\"}\n", oid);
    static const char recv_req[] = "{\"verb\":\"recv\",\"max\":1}\n";
    pthread_barrier_wait(j->bar);
    for (int i = 0; i < j->iters; i++) {
        double t0 = now_us();
        if (call(w, send_req, (size_t)n, resp, sizeof(resp)) != 0 || !strstr(resp, "\"ok\":true") ||
            call(c, recv_req, sizeof(recv_req) - 1, resp, sizeof(resp)) != 0 || !strstr(resp, "\"ok\":true")) {
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

/* mncd's CPU time so far, in microseconds: the scheduler's run time of all its threads
 * (/proc/PID/task/TID/schedstat, nanoseconds), the figure getrusage's utime + stime are cut
 * from. Its clock-tick utime/stime (/proc/PID/stat) would quantize a window of a few thousand
 * requests to ~1 us per request. A thread that has exited is not counted. */
static double cpu_us(pid_t pid)
{
    char p[96];
    snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(p);
    if (!dir)
        return -1;
    double us = 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "/proc/%d/task/%.20s/schedstat", (int)pid, e->d_name);
        FILE *f = fopen(p, "r");
        unsigned long long ns = 0;
        if (f && fscanf(f, "%llu", &ns) == 1) {
            us += (double)ns / 1e3;
            found++;
        }
        if (f)
            fclose(f);
    }
    closedir(dir);
    return found ? us : -1;
}

/* Runs `clients` pairs for `iters` round trips each. *ops: operations that did work per second
 * (sends, and recvs that returned a message); *work their number. */
static int run_level(int clients, int iters, double *p50, double *p99, double *ops, double *work)
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
    *work = 2.0 * (double)n - empty;
    *ops = *work / (el / 1e6);
    free(all);
    if (empty)
        printf("   (%d of %zu recvs found the shared coordinator inbox empty: not counted)\n", empty, n);
    return 0;
}

/* The number after "key" (e.g. "wchar:") in /proc/PID/file, or -1. */
static double proc_num(pid_t pid, const char *file, const char *key)
{
    char p[64], line[256];
    snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, file);
    FILE *f = fopen(p, "r");
    double v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, key, kl) == 0)
            v = atof(line + kl);
    if (f)
        fclose(f);
    return v;
}

/* Bytes the process has passed to write()-like calls (/proc/PID/io wchar), or -1. */
static double wchar_bytes(pid_t pid) { return proc_num(pid, "io", "wchar:"); }

/* MiB of the regular files in dir that the page cache holds, or -1. */
static double cached_mib(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long pages = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char p[1024];
        struct stat st;
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p) || stat(p, &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        long n = pc_cached_pages(p, 0, (off_t)INT64_MAX);
        pages += n > 0 ? n : 0;
    }
    closedir(d);
    return (double)pages * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static long rss_kb(pid_t pid) { return (long)proc_num(pid, "status", "VmRSS:"); }

/* The process's minor page faults so far (/proc/PID/stat, field 10), or -1. Unlike CPU time,
 * this does not move with the load of other VMs: it counts the heap and page-cache pages the
 * daemon touched for the first time, a cost it pays in CPU (about 1-2 us each in a VM). */
static double minflt(pid_t pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *q = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
    unsigned long v;
    /* after ")": state ppid pgrp session tty_nr tpgid flags minflt */
    if (!q || sscanf(q + 1, " %*c %*d %*d %*d %*d %*d %*u %lu", &v) != 1)
        return -1;
    return (double)v;
}

/* Starts BUILD/mncd on a fresh temp dir under base and creates the long-lived object (oid).
 * Returns the worker connection (fd), or -1 (daemon killed, dir removed by stop_daemon). */
static int start_daemon(const char *build, const char *base, char *dir, size_t dirlen, pid_t *pidp)
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
        execl(mncd, mncd, "--config", cfg, "--socket", sock_path, "--state-dir", state, "--policy",
              "policies/scheduling.json", (char *)NULL);
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
    int n = snprintf(g_req, sizeof(g_req),
                     "{\"verb\":\"disclose\",\"contract\":"
                     "\"share_availability\",\"state\":%s}\n",
                     st);
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
    if (call(c0, g_req, g_reqlen, g_resp, sizeof(g_resp)) != 0 || !(idp = strstr(g_resp, "\"id\":\""))) {
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
    double r[2][LEVELS][4][ROUNDS]; /* [binary][level][p50,p99,ops,mncd CPU per op][round] */
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
                int iters = quick ? (levels[li] == 1 ? 2000 : 200) : (levels[li] == 1 ? 20000 : 2000);
                double work, c0 = cpu_us(pid);
                if (run_level(levels[li], iters, &r[b][li][0][round], &r[b][li][1][round], &r[b][li][2][round],
                              &work) != 0) {
                    fprintf(stderr, "bench_mncd: %s: run with %d clients failed\n", builds[b], levels[li]);
                    stop_daemon(pid, dir, fd);
                    return 1;
                }
                r[b][li][3][round] = work > 0 ? (cpu_us(pid) - c0) / work : 0;
            }
            stop_daemon(pid, dir, fd);
        }
    printf("mncd send+recv round trip, %s/mncd (old) vs %s/mncd (new), state dir on %s, "
           "median of %d interleaved rounds\n",
           old_build, new_build, base, ROUNDS);
    for (int li = 0; li < LEVELS; li++) {
        double m[2][4];
        for (int b = 0; b < 2; b++)
            for (int q = 0; q < 4; q++) {
                qsort(r[b][li][q], ROUNDS, sizeof(double), cmp_d);
                m[b][q] = r[b][li][q][ROUNDS / 2];
            }
        printf("  %2d pair(s): old p50 %7.1f us p99 %7.1f us %7.0f ops/s CPU %5.1f us/op | new p50 %7.1f us "
               "p99 %7.1f us %7.0f ops/s CPU %5.1f us/op | p50 x%.2f, ops/s x%.2f, CPU/op x%.2f\n",
               levels[li], m[0][0], m[0][1], m[0][2], m[0][3], m[1][0], m[1][1], m[1][2], m[1][3], m[1][0] / m[0][0],
               m[1][2] / m[0][2], m[0][3] > 0 ? m[1][3] / m[0][3] : 0);
    }
    return 0;
}

/* ---- the floor ---------------------------------------------------------------------- */

/* The filesystem type of the mount that holds path (the longest matching mount point). */
static void fs_type(const char *path, char *out, size_t n)
{
    char real[4096], dev[512], mnt[4096], type[64];
    snprintf(out, n, "unknown");
    if (!realpath(path, real))
        return;
    FILE *f = fopen("/proc/self/mounts", "r");
    size_t best = 0;
    while (f && fscanf(f, "%511s %4095s %63s %*[^\n]", dev, mnt, type) == 3) {
        size_t ml = strlen(mnt);
        bool under = strncmp(real, mnt, ml) == 0 && (real[ml] == '/' || real[ml] == '\0' || strcmp(mnt, "/") == 0);
        if (under && ml >= best) {
            best = ml;
            snprintf(out, n, "%s", type);
        }
    }
    if (f)
        fclose(f);
}

/* p50 of one 256-byte overwrite + fdatasync over preallocated zeros (the journal's steady
 * state), in us; -1 on error. */
static double floor_fsync(const char *dir, int n)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/floor.bin", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    static char zeros[1 << 20];
    char rec[256];
    memset(rec, 'x', sizeof(rec));
    double *t = calloc((size_t)n, sizeof(double));
    double r = -1;
    if (fd < 0 || !t || pwrite(fd, zeros, sizeof(zeros), 0) != (ssize_t)sizeof(zeros) || fsync(fd) != 0)
        goto out;
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        if (pwrite(fd, rec, sizeof(rec), (off_t)i * (off_t)sizeof(rec)) != (ssize_t)sizeof(rec) || fdatasync(fd) != 0)
            goto out;
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)n, sizeof(double), cmp_d);
    r = t[n / 2];
out:
    if (fd >= 0)
        close(fd);
    unlink(path);
    free(t);
    return r;
}

/* The floor of one send+recv round trip: a trivial server thread that answers each 1-byte
 * request over a UNIX socket after a 256-byte overwrite + fdatasync; a round trip is two such
 * requests, as mncd's is two requests each acknowledged after its commit. p50 in us, or -1.
 * (Back-to-back fdatasyncs are slower on this VM's virtual disk than syncs spaced by a
 * request's turnaround, so the spacing is part of the floor.) */
typedef struct echo_srv {
    int sock, fd;
    int fail;
    long served;   /* requests answered */
    double cpu_us; /* the server thread's CPU over them */
} echo_srv;

static double thread_cpu_us(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *echo_server(void *arg)
{
    echo_srv *e = arg;
    char rec[256], c;
    memset(rec, 'x', sizeof(rec));
    double c0 = thread_cpu_us();
    for (off_t off = 0; read(e->sock, &c, 1) == 1 && c != 'q'; off = (off + 256) % (1 << 20)) {
        if (pwrite(e->fd, rec, sizeof(rec), off) != (ssize_t)sizeof(rec) || fdatasync(e->fd) != 0 ||
            write(e->sock, &c, 1) != 1) {
            e->fail = 1;
            break;
        }
        e->served++;
    }
    e->cpu_us = thread_cpu_us() - c0;
    return NULL;
}

/* cpu_per_req (may be NULL): the trivial server's CPU per request, us */
static double floor_echo(const char *dir, int n, double *cpu_per_req)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/floor_echo.bin", dir);
    static char zeros[1 << 20];
    int sv[2] = {-1, -1};
    echo_srv e = {.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
    double *t = calloc((size_t)n, sizeof(double)), r = -1;
    pthread_t th;
    bool started = false;
    if (e.fd < 0 || !t || pwrite(e.fd, zeros, sizeof(zeros), 0) != (ssize_t)sizeof(zeros) || fsync(e.fd) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        goto out;
    e.sock = sv[1];
    if (pthread_create(&th, NULL, echo_server, &e) != 0)
        goto out;
    started = true;
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        char c = 'r';
        for (int k = 0; k < 2; k++)
            if (write(sv[0], &c, 1) != 1 || read(sv[0], &c, 1) != 1)
                goto out;
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)n, sizeof(double), cmp_d);
    r = t[n / 2];
out:
    if (started) {
        char q = 'q';
        if (write(sv[0], &q, 1) != 1)
            shutdown(sv[0], SHUT_RDWR);
        pthread_join(th, NULL);
        if (e.fail)
            r = -1;
        if (cpu_per_req && e.served > 0)
            *cpu_per_req = e.cpu_us / (double)e.served;
    }
    if (sv[0] >= 0) {
        close(sv[0]);
        close(sv[1]);
    }
    if (e.fd >= 0)
        close(e.fd);
    unlink(path);
    free(t);
    return r;
}

typedef struct gc_job {
    mnc_journal *j;
    double until;
    long n;
    int fail;
} gc_job;

static void *gc_writer(void *arg)
{
    gc_job *g = arg;
    char rec[256];
    memset(rec, 'x', sizeof(rec));
    while (now_us() < g->until) {
        if (mnc_journal_append(g->j, rec, sizeof(rec), NULL) != 0) {
            g->fail = 1;
            break;
        }
        g->n++;
    }
    return NULL;
}

/* Durable records per second that `threads` writers reach through one group-commit journal
 * in `secs` seconds; -1 on error. */
static double floor_group(const char *dir, int threads, double secs, double *cpu_per_rec)
{
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    char path[512], notice[256], err[512];
    snprintf(path, sizeof(path), "%s/floor.journal", dir);
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    if (!j) {
        fprintf(stderr, "bench_mncd: %s\n", err);
        return -1;
    }
    pthread_t th[64];
    gc_job g[64];
    double t0 = now_us();
    for (int i = 0; i < threads; i++) {
        g[i] = (gc_job){.j = j, .until = t0 + secs * 1e6};
        pthread_create(&th[i], NULL, gc_writer, &g[i]);
    }
    long total = 0;
    int fail = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        total += g[i].n;
        fail |= g[i].fail;
    }
    double el = now_us() - t0;
    getrusage(RUSAGE_SELF, &r1);
    if (mnc_journal_close(j) != 0)
        fail = 1;
    unlink(path);
    double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 +
                 (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    *cpu_per_rec = total ? cpu / (double)total : 0;
    return fail ? -1 : (double)total / (el / 1e6);
}

/* ---- pipelined discloses (scaling) --------------------------------------------------- */

#define FILL_THREADS 4
#define FILL_BATCH 250

static char g_pre[1 << 14], g_post[1 << 14]; /* the disclose request around its subject */

typedef struct fill_job {
    long first, n; /* request indexes [first, first + n) */
    long nsubj;    /* 0: subject alice; else subject "s<index % nsubj>" */
    int fail;
} fill_job;

static void *filler(void *arg)
{
    fill_job *f = arg;
    conn *c = calloc(1, sizeof(*c));
    size_t cap = (size_t)FILL_BATCH * (strlen(g_pre) + strlen(g_post) + 32);
    char *buf = malloc(cap), *resp = malloc(1 << 16);
    if (!c || !buf || !resp || (c->fd = connect_as(UID_W)) < 0) {
        f->fail = 1;
        goto out;
    }
    c->euid = UID_W;
    for (long done = 0; done < f->n && !f->fail;) {
        int b = f->n - done < FILL_BATCH ? (int)(f->n - done) : FILL_BATCH;
        size_t len = 0;
        for (int i = 0; i < b; i++) {
            long k = f->first + done + i;
            int w = f->nsubj ? snprintf(buf + len, cap - len, "%s\"s%ld\"%s\n", g_pre, k % f->nsubj, g_post)
                             : snprintf(buf + len, cap - len, "%s\"alice\"%s\n", g_pre, g_post);
            if (w < 0 || (size_t)w >= cap - len) {
                f->fail = 1;
                break;
            }
            len += (size_t)w;
        }
        /* the whole batch in flight at once; responses read after it (call() with no bytes) */
        if (f->fail || call(c, buf, len, resp, 1 << 16) != 0 || !strstr(resp, "\"ok\":true")) {
            fprintf(stderr, "bench_mncd: disclose failed: %.300s\n", resp);
            f->fail = 1;
            break;
        }
        for (int i = 1; i < b; i++)
            if (call(c, "", 0, resp, 1 << 16) != 0 || !strstr(resp, "\"ok\":true")) {
                fprintf(stderr, "bench_mncd: disclose failed: %.300s\n", resp);
                f->fail = 1;
                break;
            }
        done += b;
    }
out:
    if (c && c->fd > 0)
        close(c->fd);
    free(c);
    free(buf);
    free(resp);
    return NULL;
}

/* n pipelined discloses over FILL_THREADS connections, indexes from first. Seconds, or -1. */
static double discloses(long first, long n, long nsubj)
{
    pthread_t th[FILL_THREADS];
    fill_job f[FILL_THREADS];
    double t0 = now_us();
    for (int i = 0; i < FILL_THREADS; i++) {
        long per = n / FILL_THREADS + (i < n % FILL_THREADS);
        f[i] = (fill_job){.first = first, .n = per, .nsubj = nsubj};
        first += per;
        pthread_create(&th[i], NULL, filler, &f[i]);
    }
    int fail = 0;
    for (int i = 0; i < FILL_THREADS; i++) {
        pthread_join(th[i], NULL);
        fail |= f[i].fail;
    }
    return fail ? -1 : (now_us() - t0) / 1e6;
}

static const char *verdict(bool met) { return met ? "met" : "MISSED"; }

int main(int argc, char **argv)
{
    int quick = 0;
    const char *old_build = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc)
            old_build = argv[++i];
        else if (strcmp(argv[i], "--blocking-read") == 0)
            blocking_read = true;
        else {
            fprintf(stderr, "usage: bench_mncd [--quick] [--compare OLD_BUILD_DIR] [--blocking-read]\n");
            return 2;
        }
    }
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    const char *base = getenv("MNC_BENCH_DIR") ? getenv("MNC_BENCH_DIR") : "/tmp";
    if (old_build)
        return compare(old_build, build, base, quick);
    double t_start = now_us();

    /* 1. the floor, on the state dir's filesystem; measured again next to the round trips
     * it is compared with (the VM's disk is shared: its latency drifts within a run) */
    char fdir[256], fst[64];
    snprintf(fdir, sizeof(fdir), "%s/bench_mncd_floor.XXXXXX", base);
    if (!mkdtemp(fdir)) {
        perror("mkdtemp");
        return 1;
    }
    fs_type(fdir, fst, sizeof(fst));
    int nsync = quick ? 300 : 1000;
    double gc_secs = quick ? 2.0 : 4.0, gc_cpu = 0;
    double fsync_p50 = floor_fsync(fdir, nsync);
    double echo_cpu = 0, echo_p50 = floor_echo(fdir, nsync / 2, &echo_cpu);
    double gc_ops = floor_group(fdir, 64, gc_secs, &gc_cpu);
    if (fsync_p50 <= 0 || echo_p50 <= 0 || gc_ops <= 0) {
        fprintf(stderr, "bench_mncd: floor measurement failed\n");
        rmdir(fdir);
        return 1;
    }
    printf("floor: state dir %s on %s; fdatasync p50 %.1f us back to back, trivial two-fdatasync "
           "round trip p50 %.1f us (its server: %.1f us CPU per request); group-commit writer, 64 "
           "clients: %.0f durable records/s (%.1f us CPU per record)\n",
           base, fst, fsync_p50, echo_p50, echo_cpu, gc_ops, gc_cpu);

    char dir[256];
    pid_t pid;
    int fd = start_daemon(build, base, dir, sizeof(dir), &pid);
    if (fd < 0) {
        stop_daemon(pid, dir, -1);
        return 1;
    }
    /* the disclose request around its subject, for the scaling phase */
    char *subj = strstr(g_req, "\"alice\"");
    if (!subj || (size_t)(subj - g_req) >= sizeof(g_pre)) {
        stop_daemon(pid, dir, fd);
        return 1;
    }
    snprintf(g_pre, sizeof(g_pre), "%.*s", (int)(subj - g_req), g_req);
    snprintf(g_post, sizeof(g_post), "%s", subj + 7);
    g_post[strcspn(g_post, "\n")] = '\0';

    /* 2. round trips. The levels compared with the floor run in ROUNDS rounds, each right
     * after a floor measurement of its own; the ratio is the median of the rounds' ratios, so
     * both sides of each ratio saw the same disk (this VM's disk is shared and its latency
     * changes by 10x within a minute). */
    enum { ROUNDS = 5 };
    int status = 0;
    double total_work = 1; /* the disclose of the long-lived object */
    double live_cpu = 0;   /* the daemons' CPU just before each was stopped */
    int levels[] = {1, 16, 64};
    double ratio_1 = 0, ratio_64 = 0;
    printf("mncd send+recv round trip over the UNIX socket (one group commit per event-loop "
           "iteration; ops = operations that did work)\n");
    for (int li = 0; li < 3 && status == 0; li++) {
        int iters = quick ? (levels[li] == 1 ? 200 : 80) : (levels[li] == 1 ? 800 : 200);
        int rounds = levels[li] == 16 ? 1 : ROUNDS;
        if (levels[li] == 16)
            iters *= ROUNDS;
        double p50s[ROUNDS], p99s[ROUNDS], opss[ROUNDS], floors[ROUNDS], ratios[ROUNDS], fcpus[ROUNDS];
        double cpu = 0, work_l = 0;
        for (int r = 0; r < rounds && status == 0; r++) {
            double gcpu = 0, work;
            floors[r] = levels[li] == 1    ? floor_echo(fdir, quick ? 100 : 200, &gcpu)
                        : levels[li] == 64 ? floor_group(fdir, 64, gc_secs / 4, &gcpu)
                                           : 1;
            double c0 = cpu_us(pid);
            if (floors[r] <= 0 || run_level(levels[li], iters, &p50s[r], &p99s[r], &opss[r], &work) != 0) {
                fprintf(stderr, "bench_mncd: run with %d clients failed\n", levels[li]);
                status = 1;
                break;
            }
            cpu += cpu_us(pid) - c0;
            work_l += work;
            fcpus[r] = gcpu;
            ratios[r] = levels[li] == 1 ? p50s[r] / floors[r] : opss[r] / floors[r];
        }
        if (status)
            break;
        total_work += work_l;
        qsort(p50s, (size_t)rounds, sizeof(double), cmp_d);
        qsort(p99s, (size_t)rounds, sizeof(double), cmp_d);
        qsort(opss, (size_t)rounds, sizeof(double), cmp_d);
        qsort(floors, (size_t)rounds, sizeof(double), cmp_d);
        qsort(ratios, (size_t)rounds, sizeof(double), cmp_d);
        qsort(fcpus, (size_t)rounds, sizeof(double), cmp_d);
        printf("  %2d client pair(s): p50 %8.1f us  p99 %8.1f us  %8.0f ops/s  mncd CPU %5.1f "
               "us/op [<= 10 us: %s]%s\n",
               levels[li], p50s[rounds / 2], p99s[rounds / 2], opss[rounds / 2], cpu / work_l,
               verdict(cpu / work_l <= 10), rounds > 1 ? " (medians of 5 rounds)" : "");
        if (levels[li] == 1) {
            ratio_1 = ratios[ROUNDS / 2];
            printf("     vs the floor: trivial two-fdatasync round trip p50 %.1f us (median; "
                   "%.1f..%.1f over the rounds); 1-pair p50 / floor = %.2fx (median of the "
                   "rounds' ratios) [<= 1.2x: %s]; its server's CPU %.1f us per request\n",
                   floors[ROUNDS / 2], floors[0], floors[ROUNDS - 1], ratio_1, verdict(ratio_1 <= 1.2),
                   fcpus[ROUNDS / 2]);
        }
        if (levels[li] == 64) {
            ratio_64 = ratios[ROUNDS / 2];
            printf("     vs the floor: group-commit writer %.0f records/s (median; %.0f..%.0f); "
                   "64-pair ops/s / floor = %.0f%% (median of the rounds' ratios) [>= 50%%: "
                   "%s]; the writer's CPU %.1f us per record\n",
                   floors[ROUNDS / 2], floors[0], floors[ROUNDS - 1], 100 * ratio_64, verdict(ratio_64 >= 0.5),
                   fcpus[ROUNDS / 2]);
        }
    }
    rmdir(fdir);

    /* 3. scaling: live objects = releases of subject alice; then, on a fresh daemon (every
     * disclose also queues its object in the coordinator's inbox, at most MNCD_MAX_INBOX =
     * 10^6), 10^5 subjects */
    static const long lv[] = {1000, 10000, 100000, 1000000};
    int nlv = quick ? 3 : 4;
    /* a row's three windows stay below the next level (10^3: 1000..10000) */
    long window = quick ? 3000 : 5000, have = 1, next = 1 << 20;
    double base_ops = 0;
    if (status == 0)
        printf("scaling: pipelined discloses (%d connections x %d in flight), 3 windows of %ld "
               "timed at each level (median); ratio = throughput / the 10^3 row's [>= 0.77, i.e. "
               "within 1.3x]%s\n",
               FILL_THREADS, FILL_BATCH, window,
               quick ? "; 10^6 only in the full run (~0.6 GB of mncd memory, ~70 s of fill on this VM)" : "");
    for (int i = 0; i <= nlv && status == 0; i++) {
        bool subjects = i == nlv; /* the last row: 10^5 subjects, fresh daemon */
        if (subjects) {
            live_cpu += cpu_us(pid);
            stop_daemon(pid, dir, fd);
            fd = start_daemon(build, base, dir, sizeof(dir), &pid);
            if (fd < 0) {
                status = 1;
                break;
            }
            have = 1;
        }
        long nsubj = subjects ? 100000 : 0;
        /* the windows start at the level; the 10^6 row's end there (the inbox bound, with room
         * for messages the round trips left queued) */
        long start = subjects ? 100000 : lv[i] == 1000000 ? lv[i] - 3 * window - 5000 : lv[i];
        long fill = start > have ? start - have : 0;
        double fc0 = cpu_us(pid), ff0 = minflt(pid);
        double fs = fill > 0 ? discloses(next, fill, nsubj) : 0;
        double fill_cpu = fill > 0 ? (cpu_us(pid) - fc0) / (double)fill : 0;
        double fill_flt = fill > 0 ? (minflt(pid) - ff0) / (double)fill : 0;
        next += fill;
        have += fill;
        long from = have;
        /* three windows, the median throughput (load from other jobs comes in bursts) */
        double c0 = cpu_us(pid), b0 = wchar_bytes(pid), w[3];
        for (int k = 0; k < 3 && status == 0; k++) {
            double secs = fs < 0 ? -1 : discloses(next, window, nsubj);
            next += window;
            have += window;
            if (secs <= 0) {
                fprintf(stderr, "bench_mncd: discloses failed\n");
                status = 1;
            }
            w[k] = (double)window / secs;
        }
        if (status)
            break;
        double cpu = (cpu_us(pid) - c0) / (3.0 * (double)window);
        double wrote = (wchar_bytes(pid) - b0) / (3.0 * (double)window);
        qsort(w, 3, sizeof(double), cmp_d);
        double ops = w[1];
        total_work += (double)(fill + 3 * window);
        if (i == 0)
            base_ops = ops;
        char label[80], state_dir[600];
        snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
        if (subjects)
            snprintf(label, sizeof(label), "10^5 subjects (fresh daemon)");
        else
            snprintf(label, sizeof(label), "10^%d live objects = releases", i + 3);
        printf("  %-30s %8.0f discloses/s  mncd CPU %6.1f us/op  ratio %.2f [%s]  (windows at "
               "%ld..%ld live objects; fill %ld in %.1f s, %.1f us/op, %.2f page faults/op; RSS %ld MiB; "
               "written %.0f B/op; "
               "state dir cached %.0f MiB)\n",
               label, ops, cpu, ops / base_ops, verdict(ops / base_ops >= 1 / 1.3), from, have, fill, fs, fill_cpu,
               fill_flt, rss_kb(pid) / 1024, wrote, cached_mib(state_dir));
    }
    live_cpu += cpu_us(pid);
    double t_stop = now_us();
    stop_daemon(pid, dir, fd);
    t_stop = now_us() - t_stop;
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0 && status == 0) {
        double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
        printf("mncd over the whole run (getrusage): %.1f s CPU for %.0f operations that did "
               "work = %.1f us/op [<= 10 us: %s], %.2f page faults/op; bench took %.0f s\n",
               cpu / 1e6, total_work, cpu / total_work, verdict(cpu / total_work <= 10),
               (double)ru.ru_minflt / total_work, (now_us() - t_start) / 1e6);
        printf("  of which stopping the daemons (SIGTERM to exit, both): %.2f s CPU; the last stop took "
               "%.2f s\n",
               (cpu - live_cpu) / 1e6, t_stop / 1e6);
    }
    return status;
}
