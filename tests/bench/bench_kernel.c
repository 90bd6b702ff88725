// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_kernel.c - cost of the cgroup backend on the socket calls it gates, measured in the
 * same run with and without the programs, plus the kernel memory of the maps.
 *
 * Two cgroups: a baseline cgroup outside any mnc tree (no programs run) and an agent cgroup
 * inside a bench-private mnc tree (all seven programs attached, pin root private). The agent
 * is TAINTED with the destination in scope, so every call takes the longest allow path: agent
 * lookup, taint lookup, sink lookup, decision, counter. Rounds alternate between the two
 * cgroups (op 3: within each round); each figure is the median over rounds.
 *   op 1: socket(AF_INET, SOCK_DGRAM) + connect(127.0.0.1:9) + close   (sock_create + connect4)
 *   op 2: connect() + close() of a UNIX stream socket to a listener    (connect_unix)
 *   op 3: sendto() of a UNIX datagram to a bound receiver              (sendmsg_unix); both
 *         sides in one process, batches interleaved (op_unix_sendto_pair)
 *   op 4: send() of 64 bytes on an established loopback TCP connection (TCP_NODELAY) and recv()
 *         of its echo: one round trip, at least one egress run        (egress, per packet)
 *   op 5: op 4 for an UNTAINTED agent (the egress fast path: two lookups, no parsing)
 * For ops 4-5 the echo peer is a process outside every mnc cgroup, so only the agent's packets
 * run the egress program.
 * Target (docs/performance.md): ratio <= 1.10 or <= 300 ns added per call. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "mnc_kern.h"
#include "mnc_util.h"

#define ROUNDS 7
#define BATCH 8

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static char dir[64], spath[100], dpath[100];
static struct sockaddr_in tcp_sink; /* the drain listener, outside every mnc cgroup */

/* Moves the calling process into cgroup cg: 0 or -1. */
static int enter(const char *cg)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
    return mnc_write_file(p, "0") == 0 ? 0 : -1;
}

static double op_udp(long n)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
            return -1;
        close(fd);
    }
    return (now_ns() - t0) / (double)n;
}

static int unix_addr(struct sockaddr_un *a, const char *p)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    snprintf(a->sun_path, sizeof(a->sun_path), "%.100s", p);
    return 0;
}

static double op_unix_connect(long n)
{
    struct sockaddr_un a;
    unix_addr(&a, spath);
    unlink(spath);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 128) != 0)
        return -1;
    double total = 0;
    for (long i = 0; i < n; i += 64) {
        int fds[64];
        double t0 = now_ns();
        for (int j = 0; j < 64; j++) {
            fds[j] = socket(AF_UNIX, SOCK_STREAM, 0);
            if (fds[j] < 0 || connect(fds[j], (struct sockaddr *)&a, sizeof(a)) != 0)
                return -1;
            close(fds[j]);
        }
        total += now_ns() - t0;
        for (int j = 0; j < 64; j++) {
            int c = accept(l, NULL, NULL);
            if (c >= 0)
                close(c);
        }
    }
    close(l);
    unlink(spath);
    return total / (double)((n + 63) / 64 * 64);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return v[n / 2];
}

/* op 3, both sides in one process: a socket created in the baseline cgroup (no program runs
 * for it: the sock_addr hooks run the programs of the cgroup a socket was created in) and one
 * created in the agent cgroup, which the process then stays in (the program looks the agent
 * up by the current task's cgroup). Batches of BATCH sendto() alternate between the two
 * sockets, so both sides see the same load, caches and receiver; the figures are the median
 * batch of each side, per call. A loaded machine moves both alike instead of whichever side
 * a burst of other work happened to hit. */
static int op_unix_sendto_pair(const char *base_cg, const char *agent, long n, double *off, double *on)
{
    struct sockaddr_un a;
    unix_addr(&a, dpath);
    unlink(dpath);
    long nb = (n + BATCH - 1) / BATCH;
    double *t[2] = {calloc((size_t)nb, sizeof(double)), calloc((size_t)nb, sizeof(double))};
    int r = socket(AF_UNIX, SOCK_DGRAM, 0), s[2] = {-1, -1}, rc = -1;
    if (!t[0] || !t[1] || r < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) != 0)
        goto out;
    if (enter(base_cg) != 0 || (s[0] = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 || enter(agent) != 0 ||
        (s[1] = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0)
        goto out;
    char buf[64] = "x";
    for (int pass = 0; pass < 2; pass++) { /* pass 0 warms up */
        long m = pass ? nb : nb / 10 + 1;
        for (long i = 0; i < m; i++) {
            for (int k = 0; k < 2; k++) {
                int side = (int)((i + k) & 1); /* alternate which side goes first */
                double t0 = now_ns();
                for (int j = 0; j < BATCH; j++)
                    if (sendto(s[side], buf, 32, 0, (struct sockaddr *)&a, sizeof(a)) != 32)
                        goto out;
                if (pass)
                    t[side][i] = (now_ns() - t0) / BATCH;
                /* drain before the next batch: the receive queue holds net.unix.max_dgram_qlen
                 * datagrams (10 by default), and a send to a full one blocks */
                for (int j = 0; j < BATCH; j++)
                    if (recv(r, buf, sizeof(buf), 0) < 0)
                        goto out;
            }
        }
    }
    *off = median(t[0], nb);
    *on = median(t[1], nb);
    rc = 0;
out:
    for (int k = 0; k < 2; k++) {
        if (s[k] >= 0)
            close(s[k]);
        free(t[k]);
    }
    if (r >= 0)
        close(r);
    unlink(dpath);
    return rc;
}

static double op_tcp_send(long n)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    /* TCP_NODELAY: one segment (one egress run) per send(), instead of Nagle's coalescing */
    if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0 ||
        connect(fd, (struct sockaddr *)&tcp_sink, sizeof(tcp_sink)) != 0)
        return -1;
    char buf[64];
    memset(buf, 'x', sizeof(buf));
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        /* request/response: the echo makes every send() a segment of its own (no autocorking) */
        if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) != (ssize_t)sizeof(buf) ||
            recv(fd, buf, sizeof(buf), MSG_WAITALL) != (ssize_t)sizeof(buf)) {
            close(fd);
            return -1;
        }
    }
    double v = (now_ns() - t0) / (double)n;
    close(fd);
    return v;
}

/* The echo peer: accepts connections and echoes everything back until killed. Runs outside
 * the tree, so its packets never run the egress program. */
static pid_t drain_start(int lfd)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
            _exit(1);
        pid_t r = fork(); /* one reader per connection: the measuring child closes its socket */
        if (r == 0) {
            char b[65536];
            ssize_t got;
            while ((got = read(c, b, sizeof(b))) > 0)
                if (write(c, b, (size_t)got) != got)
                    break;
            _exit(0);
        }
        close(c);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}

/* runs op in a child inside cgroup cg; returns ns/op or -1 */
/* op 3 in a child: both sides at once (op_unix_sendto_pair); 0 or -1 */
static int measure_pair(const char *base_cg, const char *agent, long n, double *off, double *on)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        double v[2] = {-1, -1};
        if (op_unix_sendto_pair(base_cg, agent, n, &v[0], &v[1]) != 0)
            v[0] = v[1] = -1;
        _exit(write(p[1], v, sizeof(v)) == sizeof(v) ? 0 : 1);
    }
    close(p[1]);
    double v[2] = {-1, -1};
    if (read(p[0], v, sizeof(v)) != sizeof(v))
        v[0] = v[1] = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    *off = v[0];
    *on = v[1];
    return v[0] < 0 || v[1] < 0 ? -1 : 0;
}

static double measure(const char *cg, int op, long n)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        double v = -1;
        if (enter(cg) == 0) {
            /* warm up, then measure */
            if (op == 1)
                op_udp(n / 10), v = op_udp(n);
            else if (op == 2)
                op_unix_connect(n / 10), v = op_unix_connect(n);
            else if (op == 4 || op == 5)
                op_tcp_send(n / 10), v = op_tcp_send(n);
        }
        if (write(p[1], &v, sizeof(v)) != sizeof(v))
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    double v = -1;
    if (read(p[0], &v, sizeof(v)) != sizeof(v))
        v = -1;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return v;
}

/* run_time_ns and run_cnt of the program behind the pinned link `link` (bpf_stats must be on) */
static int prog_stats(const char *link, uint64_t *ns, uint64_t *cnt)
{
    int lfd = bpf_obj_get(link);
    if (lfd < 0)
        return -1;
    struct bpf_link_info li;
    uint32_t ll = sizeof(li);
    memset(&li, 0, sizeof(li));
    int rc = bpf_link_get_info_by_fd(lfd, &li, &ll);
    close(lfd);
    if (rc != 0)
        return -1;
    int pfd = bpf_prog_get_fd_by_id(li.prog_id);
    if (pfd < 0)
        return -1;
    struct bpf_prog_info pi;
    uint32_t pl = sizeof(pi);
    memset(&pi, 0, sizeof(pi));
    rc = bpf_prog_get_info_by_fd(pfd, &pi, &pl);
    close(pfd);
    if (rc != 0)
        return -1;
    *ns = pi.run_time_ns;
    *cnt = pi.run_cnt;
    return 0;
}

static long memlock_of(const char *pin)
{
    int fd = bpf_obj_get(pin);
    if (fd < 0)
        return -1;
    char p[64], line[256];
    snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(p, "r");
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "memlock: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    close(fd);
    return v;
}

/* Removes the bench's private pin root (links and maps) and cgroup tree, which
 * mnc_kern_attach leaves in place when it fails (it rolls the links back, but a pin root's
 * maps may be another attach's state, so it never purges them itself). */
static void drop_private(const char *root, const char *cg2, const char *tree)
{
    char err[256], tp[512];
    mnc_kern_detach(root, true, err, sizeof(err));
    snprintf(tp, sizeof(tp), "%s/%s", cg2, tree);
    rmdir(tp);
}

int main(int argc, char **argv)
{
    long n = 20000;
    if (argc > 1 && strcmp(argv[1], "--quick") == 0)
        n = 4000;
    if (geteuid() != 0) {
        fprintf(stderr, "bench_kernel: needs root (BPF, cgroups)\n");
        return 1;
    }
    char cg2[256], root[128], tree[64], base[512], agent_cg[512], untainted_cg[512], err[512];
    if (mnc_cgroup2_mount(cg2, sizeof(cg2)) != 0) {
        fprintf(stderr, "bench_kernel: no cgroup2 mount\n");
        return 1;
    }
    snprintf(root, sizeof(root), "/sys/fs/bpf/mnc-bench-%d", (int)getpid());
    snprintf(tree, sizeof(tree), "mnc-bench-%d", (int)getpid());
    snprintf(base, sizeof(base), "%s/mnc-bench-base-%d", cg2, (int)getpid());
    snprintf(dir, sizeof(dir), "/tmp/mnc-bench-%d", (int)getpid());
    snprintf(spath, sizeof(spath), "%s/s.sock", dir);
    snprintf(dpath, sizeof(dpath), "%s/d.sock", dir);
    if (mkdir(dir, 0700) != 0 || mkdir(base, 0755) != 0) {
        perror("bench_kernel: mkdir");
        return 1;
    }
    mnc_kern_opts o = {.pin_root = root, .tree = tree};
    mnc_kern *k;
    mnc_selftest st;
    int status = 1;
    if (mnc_kern_attach(&o, &k, &st, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_kernel: attach: %s\n", err);
        drop_private(root, cg2, tree);
        rmdir(base);
        rmdir(dir);
        return 1;
    }
    snprintf(agent_cg, sizeof(agent_cg), "%s/bench", mnc_kern_tree(k));
    snprintf(untainted_cg, sizeof(untainted_cg), "%s/bench-u", mnc_kern_tree(k));
    uint64_t cgid, ucgid;
    pid_t drain = -1;
    char tcp_key[64];
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t sl = sizeof(tcp_sink);
    tcp_sink.sin_family = AF_INET;
    tcp_sink.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&tcp_sink, sizeof(tcp_sink)) != 0 || listen(lfd, 64) != 0 ||
        getsockname(lfd, (struct sockaddr *)&tcp_sink, &sl) != 0 || (drain = drain_start(lfd)) < 0) {
        fprintf(stderr, "bench_kernel: TCP drain: %s\n", strerror(errno));
        goto out;
    }
    snprintf(tcp_key, sizeof(tcp_key), "127.0.0.1:%u", (unsigned)ntohs(tcp_sink.sin_port));
    struct mnc_taint t;
    memset(&t, 0, sizeof(t));
    t.tainted = 1;
    t.sinks[0] = 1u << 1; /* destination id 1 in scope */
    if (mkdir(agent_cg, 0755) != 0 || mnc_cgroup_id(agent_cg, &cgid) != 0 ||
        mnc_kern_register_cgroup(k, cgid, 7, MNC_AGENT_F_LAUNCHED) != 0 || mnc_kern_taint_set(k, 7, &t) != 0 ||
        mnc_kern_sink_unix_add(k, spath, 1, MNC_SINK_AGENT) != 0 ||
        mnc_kern_sink_unix_add(k, dpath, 1, MNC_SINK_AGENT) != 0 ||
        mnc_kern_sink_inet_add(k, "127.0.0.1:9", 1, MNC_SINK_TOOL) != 0 ||
        mnc_kern_sink_inet_add(k, tcp_key, 1, MNC_SINK_TOOL) != 0 || mkdir(untainted_cg, 0755) != 0 ||
        mnc_cgroup_id(untainted_cg, &ucgid) != 0 || mnc_kern_register_cgroup(k, ucgid, 8, MNC_AGENT_F_LAUNCHED) != 0 ||
        mnc_kern_taint_ensure(k, 8) != 0) {
        fprintf(stderr, "bench_kernel: setup: %s\n", strerror(errno));
        goto out;
    }
    uint64_t c0[MNC_K__COUNT];
    if (mnc_kern_counters(k, c0) != 0)
        memset(c0, 0, sizeof(c0));
    printf("kernel enforcement overhead (cgroup backend, tainted agent, destination in scope), %ld calls x %d rounds\n",
           n, ROUNDS);
    printf("%-42s %12s %12s %8s %10s  %s\n", "operation", "off ns/op", "on ns/op", "ratio", "added ns", "target");
    static const char *names[] = {"",
                                  "socket+connect+close (UDP 127.0.0.1)",
                                  "connect+close (UNIX stream)",
                                  "sendto (UNIX datagram)",
                                  "TCP echo 64 B, loopback (egress+ingress)",
                                  "  same, untainted agent (fast path)"};
    status = 0;
    /* the programs each op's line is about (op 1 also runs mnc_sock_create; the echo rows run
     * egress on every packet the agent sends and ingress on every one it receives) */
    static const char *progs[][2] = {{"", ""},
                                     {"mnc_connect4", NULL},
                                     {"mnc_connect_unix", NULL},
                                     {"mnc_sendmsg_unix", NULL},
                                     {"mnc_egress", "mnc_ingress"},
                                     {"mnc_egress", "mnc_ingress"}};
    for (int op = 1; op <= 5; op++) {
        double off[ROUNDS], on[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            if (op == 3) {
                if (measure_pair(base, agent_cg, n, &off[r], &on[r]) != 0)
                    off[r] = on[r] = -1;
            } else {
                off[r] = measure(base, op, n);
                on[r] = measure(op == 5 ? untainted_cg : agent_cg, op, n);
            }
            if (off[r] < 0 || on[r] < 0) {
                fprintf(stderr, "bench_kernel: %s failed (a call was denied or errored)\n", names[op]);
                status = 1;
                goto out;
            }
        }
        double a = median(off, ROUNDS), b = median(on, ROUNDS);
        printf("%-42s %12.0f %12.0f %8.3f %10.0f  %s\n", names[op], a, b, b / a, b - a,
               (b / a <= 1.10 || b - a <= 300) ? "met" : "MISSED");
        /* The program's own cost per run, from bpf_stats, in a separate pass: the stats cost
         * two clock reads per run themselves, so they stay off while the rows above are timed
         * (kernel commit 492ecee892c2, "bpf: enable program stats"). */
        char link[2][256];
        uint64_t ns0[2] = {0}, cnt0[2] = {0}, ns1[2] = {0}, cnt1[2] = {0};
        int np = progs[op][1] ? 2 : 1, ok = 1;
        int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
        for (int i = 0; i < np; i++) {
            snprintf(link[i], sizeof(link[i]), "%s/links/%s", root, progs[op][i]);
            ok = ok && stats_fd >= 0 && prog_stats(link[i], &ns0[i], &cnt0[i]) == 0;
        }
        double x, y;
        ok = ok && (op == 3 ? measure_pair(base, agent_cg, n, &x, &y)
                            : measure(op == 5 ? untainted_cg : agent_cg, op, n)) >= 0;
        for (int i = 0; i < np; i++) {
            if (ok && prog_stats(link[i], &ns1[i], &cnt1[i]) == 0 && cnt1[i] > cnt0[i])
                printf("  %-40s %llu runs, %.0f ns per run (bpf_stats, a pass of its own)\n", progs[op][i],
                       (unsigned long long)(cnt1[i] - cnt0[i]),
                       (double)(ns1[i] - ns0[i]) / (double)(cnt1[i] - cnt0[i]));
            else
                printf("  %-40s no bpf_stats figure (%s)\n", progs[op][i], stats_fd < 0 ? strerror(errno) : "no runs");
        }
        if (stats_fd >= 0)
            close(stats_fd);
    }
    uint64_t c[MNC_K__COUNT];
    if (mnc_kern_counters(k, c) == 0)
        printf("denials during the measurement: %llu (must be 0); allowed by scope: %llu\n",
               (unsigned long long)(c[MNC_K_DENY_EXTERNAL] - c0[MNC_K_DENY_EXTERNAL] + c[MNC_K_DENY_SCOPE] -
                                    c0[MNC_K_DENY_SCOPE] + c[MNC_K_DENY_UNIX_PATH] - c0[MNC_K_DENY_UNIX_PATH]),
               (unsigned long long)(c[MNC_K_ALLOW_SCOPE] - c0[MNC_K_ALLOW_SCOPE]));

    printf("\nmap kernel memory (memlock from /proc/self/fdinfo), sized for %d agent cgroups and %d sinks per map:\n",
           MNC_MAX_CGROUPS, MNC_MAX_SOCK_SINKS);
    static const char *maps[] = {"agents", "taint",    "sock_unix", "sock_inet", "file_sinks",
                                 "names",  "settings", "counters",  "events"};
    long total = 0;
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", root, maps[i]);
        long v = memlock_of(p);
        printf("  %-12s %10ld bytes (%.1f MiB)\n", maps[i], v, (double)v / 1048576.0);
        if (v > 0)
            total += v;
    }
    printf("  %-12s %10ld bytes (%.1f MiB)\n", "total", total, (double)total / 1048576.0);
out:
    if (drain > 0) {
        kill(drain, SIGKILL);
        waitpid(drain, NULL, 0);
    }
    if (lfd >= 0)
        close(lfd);
    rmdir(agent_cg);
    rmdir(untainted_cg);
    mnc_kern_close(k);
    drop_private(root, cg2, tree);
    rmdir(base);
    unlink(spath);
    unlink(dpath);
    rmdir(dir);
    return status;
}
