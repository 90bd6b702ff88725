// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_run.c - what the hardened launcher costs the agent: the same workloads in a plain child
 * and in a child confined exactly as `mncctl run` confines an agent (run_confine_apply: own uid,
 * no capabilities, cgroup namespace, Landlock reads/writes, the seccomp allowlist), in the same
 * run, rounds alternating between the two. Each figure is the median over rounds; the ratio is
 * what holds on a noisy 2-core VM.
 *   getppid     one syscall through the seccomp filter (the allowlist's per-syscall cost)
 *   open+close  open(O_RDONLY) + read(1) + close of a file in the workspace (Landlock's path walk)
 *   stat        stat() of /usr/bin/env (a path beneath a read-only rule)
 *   fork        fork + _exit + waitpid (process creation under both)
 *   fcntl/ioctl fcntl(F_GETFL) and ioctl(FIONREAD) on a held fd: the two syscalls whose
 *               command the filter inspects (inode-metadata commands refused, the rest allowed
 *               through masked-prefix rules)
 *   flock       flock(LOCK_EX) + flock(LOCK_UN) on a held fd: confined, each call stops in seccomp
 *               and the launcher answers from the taint (run_gate.h); here the parent answers as
 *               the launcher does, its verdict one lookup in a BPF hash map standing for the taint
 *               map (bench_run attaches no programs and pins nothing)
 * Both children run in their own empty cgroup v2 child (no BPF programs: the socket hooks are
 * bench_kernel's). Needs root. --quick: fewer iterations. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mnc_kern.h"
#include "mnc_util.h"
#include "run_confine.h"
#include "run_gate.h"

#include <bpf/bpf.h>

#define ROUNDS 7
#define NOPS 7

static const char *const op_names[NOPS] = {"getppid",       "open+read+close", "stat",        "fork+exit+wait",
                                           "fcntl F_GETFL", "ioctl FIONREAD",  "flock+unlock"};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run_op(int op, long n, const char *file)
{
    double t0 = now_ns();
    char b;
    struct stat st;
    for (long i = 0; i < n; i++) {
        switch (op) {
        case 0:
            syscall(SYS_getppid);
            break;
        case 1: {
            int fd = open(file, O_RDONLY | O_CLOEXEC);
            if (fd < 0 || read(fd, &b, 1) != 1)
                return -1;
            close(fd);
            break;
        }
        case 2:
            if (stat("/usr/bin/env", &st) != 0)
                return -1;
            break;
        case 4:
        case 5: {
            static int held = -1; /* one fd for the whole loop: the syscall alone is timed */
            int v;
            if (held < 0 && (held = open(file, O_RDONLY | O_CLOEXEC)) < 0)
                return -1;
            if ((op == 4 ? fcntl(held, F_GETFL) : ioctl(held, FIONREAD, &v)) < 0)
                return -1;
            break;
        }
        case 6: {
            static int lk = -1;
            if (lk < 0 && (lk = open(file, O_RDONLY | O_CLOEXEC)) < 0)
                return -1;
            if (flock(lk, LOCK_EX) != 0 || flock(lk, LOCK_UN) != 0)
                return -1;
            break;
        }
        case 3: {
            pid_t p = fork();
            if (p < 0)
                return -1;
            if (p == 0)
                _exit(0);
            int s;
            waitpid(p, &s, 0);
            break;
        }
        }
    }
    return (now_ns() - t0) / (double)n;
}

/* One child: confine (or not), run every op, write NOPS doubles to fd. */
static int child(bool confine, const char *cg, const char *ws, const long *iters, int out, int gate_sock, char *why,
                 size_t n)
{
    char file[PATH_MAX];
    snprintf(file, sizeof(file), "%s/data", ws);
    if (confine) {
        char *wsv[1] = {(char *)ws};
        run_mntns m = {.agent = "bench", .agent_id = 4000, .uid = RUN_UID_BASE + 4000, .home = ws};
        run_confine c = {.cgroup = cg,
                         .uid = RUN_UID_BASE + 4000,
                         .ws = wsv,
                         .n_ws = 1,
                         .report_fd = out,
                         .gate_sock = gate_sock,
                         .mntns = &m};
        if (run_confine_apply(&c, why, n) != 0)
            return -1;
    } else {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
        int e = mnc_write_file(p, "0");
        if (e) {
            snprintf(why, n, "enter %s: %s", cg, strerror(-e));
            return -1;
        }
    }
    double r[NOPS];
    for (int op = 0; op < NOPS; op++)
        if ((r[op] = run_op(op, iters[op], file)) < 0) {
            snprintf(why, n, "%s failed: %s", op_names[op], strerror(errno));
            return -1;
        }
    return write(out, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : -1;
}

/* The launcher's verdict, as run_gate_answer takes it: one taint lookup (arg: a BPF hash map's
 * fd, key 1 absent = no entry = EPERM, so the bench stores an untainted entry). */
static bool map_untainted(void *arg)
{
    uint32_t key = 1;
    uint64_t v = 1;
    return bpf_map_lookup_elem(*(int *)arg, &key, &v) == 0 && v == 0;
}

static int measure(bool confine, const char *cg, const char *ws, const long *iters, int taint_map, double r[NOPS])
{
    int pp[2], sp[2] = {-1, -1};
    if (pipe(pp) != 0)
        return -1;
    if (confine && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0)
        return -1;
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        close(pp[0]);
        if (sp[0] >= 0)
            close(sp[0]);
        char why[512] = "";
        if (child(confine, cg, ws, iters, pp[1], sp[1], why, sizeof(why)) != 0) {
            fprintf(stderr, "bench_run: %s child: %s\n", confine ? "confined" : "plain", why);
            _exit(1);
        }
        _exit(0);
    }
    close(pp[1]);
    int gate = -1;
    if (confine) {
        close(sp[1]);
        gate = run_gate_recv_fd(sp[0], p);
        close(sp[0]);
    }
    /* answer the gate as the launcher does until the results arrive */
    unsigned long denied = 0;
    while (gate >= 0) {
        struct pollfd pf[2] = {{.fd = pp[0], .events = POLLIN}, {.fd = gate, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        if ((pf[1].revents & POLLIN) && run_gate_answer_with(gate, map_untainted, &taint_map, &denied) != 0)
            break;
    }
    if (gate >= 0)
        close(gate);
    ssize_t got = read(pp[0], r, sizeof(double) * NOPS);
    close(pp[0]);
    int s;
    waitpid(p, &s, 0);
    return got == (ssize_t)(sizeof(double) * NOPS) && WIFEXITED(s) && WEXITSTATUS(s) == 0 ? 0 : -1;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (getuid() != 0) {
        fprintf(stderr, "bench_run: needs root (cgroups, uid change)\n");
        return 1;
    }
    char cg2[256];
    if (mnc_cgroup2_mount(cg2, sizeof(cg2)) != 0) {
        fprintf(stderr, "bench_run: no cgroup2 mount\n");
        return 1;
    }
    char tmp[] = "/tmp/mnc-bench-run.XXXXXX";
    if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0) {
        fprintf(stderr, "bench_run: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    char ws[PATH_MAX], data[PATH_MAX + 8], cga[PATH_MAX], cgb[PATH_MAX];
    snprintf(ws, sizeof(ws), "%s/ws", tmp);
    snprintf(data, sizeof(data), "%s/data", ws);
    snprintf(cga, sizeof(cga), "%s/mnc-bench-run-plain-%d", cg2, (int)getpid());
    snprintf(cgb, sizeof(cgb), "%s/mnc-bench-run-conf-%d", cg2, (int)getpid());
    int fd = -1, taint_map = -1;
    int rc = 1;
    if (mkdir(ws, 0755) != 0 || (fd = open(data, O_WRONLY | O_CREAT, 0644)) < 0 || write(fd, "x", 1) != 1 ||
        chown(ws, RUN_UID_BASE + 4000, RUN_UID_BASE + 4000) != 0 || chmod(ws, 0700) != 0 || mkdir(cga, 0755) != 0 ||
        mkdir(cgb, 0755) != 0) {
        fprintf(stderr, "bench_run: setup: %s\n", strerror(errno));
        goto out;
    }
    long iters[NOPS] = {200000, 50000, 100000, 500, 200000, 200000, 20000};
    uint32_t key = 1;
    uint64_t untainted = 0;
    taint_map = bpf_map_create(BPF_MAP_TYPE_HASH, "bench_taint", sizeof(key), sizeof(untainted), 16, NULL);
    if (taint_map < 0 || bpf_map_update_elem(taint_map, &key, &untainted, BPF_ANY) != 0) {
        fprintf(stderr, "bench_run: BPF hash map: %s\n", strerror(errno));
        goto out;
    }
    if (quick)
        for (int i = 0; i < NOPS; i++)
            iters[i] /= 10;
    double plain[ROUNDS][NOPS], conf[ROUNDS][NOPS];
    for (int r = 0; r < ROUNDS; r++)
        if (measure(false, cga, ws, iters, taint_map, plain[r]) != 0 ||
            measure(true, cgb, ws, iters, taint_map, conf[r]) != 0) {
            fprintf(stderr, "bench_run: round %d failed\n", r);
            goto out;
        }
    printf("hardened launcher: the agent's own cost, plain child vs confined as by mncctl run "
           "(median of %d rounds%s)\n",
           ROUNDS, quick ? ", quick" : "");
    printf("  %-18s %12s %12s %8s %10s\n", "op", "plain ns", "confined ns", "ratio", "added ns");
    for (int op = 0; op < NOPS; op++) {
        double a[ROUNDS], b[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            a[r] = plain[r][op];
            b[r] = conf[r][op];
        }
        qsort(a, ROUNDS, sizeof(double), cmp);
        qsort(b, ROUNDS, sizeof(double), cmp);
        double pa = a[ROUNDS / 2], pb = b[ROUNDS / 2];
        printf("  %-18s %12.0f %12.0f %8.2f %10.0f\n", op_names[op], pa, pb, pb / pa, pb - pa);
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (taint_map >= 0)
        close(taint_map);
    rmdir(cga);
    rmdir(cgb);
    unlink(data);
    rmdir(ws);
    rmdir(tmp);
    return rc;
}
