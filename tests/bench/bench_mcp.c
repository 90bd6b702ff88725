// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_mcp.c - what mnc-mcp adds to a tool call: the `tools/call` round trip for mnc_receive
 * through mnc-mcp, next to the same verb (`recv`) sent straight to mncd, in the same run
 * (target: mnc-mcp's overhead <= 20 us at p50, docs/mcp.md "Performance").
 *
 * One real mncd (kernel layer off: this measures mnc-mcp, not the kernel layer) on a temp
 * socket, with the scheduling policy and the coordinator mapped by uid. After the daemon is up
 * the measuring process drops to the coordinator's uid, so its own mncd connection and every
 * child it starts are identified as the coordinator. Each sample is one request line written
 * and one response line read by this process (C, no client-side parsing). Paths, each a
 * persistent connection:
 *   direct  {"verb":"recv"} on mncd's socket
 *   echo    a forked child that writes back every line it reads, over the same pipe pair mnc-mcp
 *           gets: the bare cost of the pipe round trip into another process and back
 *   relay   a forked child that passes each stdin line to mncd unchanged and mncd's answer back
 *           to stdout: the least any stdio server that talks to mncd adds (the hop floor)
 *   mnc-mcp tools/call mnc_receive on $BUILD/mnc-mcp's stdin (mnc-mcp then does the same recv)
 *   old     (--compare OLD_MNC_MCP) the same through another mnc-mcp binary: before/after
 * The inbox stays empty, so every mncd path does identical work in mncd. The paths run
 * interleaved in short blocks, the order rotating per round, so drift (other jobs on the 2-core host)
 * hits all of them. Printed: p50/p99 per path, mnc-mcp - direct (the overhead the target is
 * about) with the ratio, relay - direct (the hop floor: what a zero-cost server would still
 * add), and mnc-mcp - relay (what mnc-mcp's own work costs).
 *
 * usage: bench_mcp [--quick] [--compare OLD_MNC_MCP]   (run from the repo root; $BUILD, $MNC_BENCH_DIR)
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UID_C 61002 /* the coordinator */
#define TARGET_US 20.0

enum { P_DIRECT, P_ECHO, P_RELAY, P_MCP, P_OLD, NPATH };
static const char *const PNAME[NPATH] = {"recv straight to mncd", "echo child (pipe only)",
                                         "relay child -> mncd", "mnc_receive via mnc-mcp",
                                         "mnc_receive via old mnc-mcp"};

static char sock_path[108];

static const char DIRECT_REQ[] = "{\"verb\":\"recv\"}\n";
static const char MCP_REQ[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                              "{\"name\":\"mnc_receive\",\"arguments\":{}}}\n";
static const char MCP_INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One line-oriented connection: writes go to wfd, responses are read from rfd. */
typedef struct conn {
    int wfd, rfd;
    pid_t child; /* -1 for the direct socket */
    char buf[1 << 16];
    size_t len;
} conn;

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one line (with its newline) into out[0..outlen) NUL-terminated, the newline dropped. A
 * line longer than the buffer is an error. Returns its length or -1. */
static ssize_t read_line(conn *c, char *out, size_t outlen)
{
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            if (out) {
                size_t k = n < outlen ? n : outlen - 1;
                memcpy(out, c->buf, k);
                out[k] = '\0';
            }
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            return (ssize_t)n;
        }
        if (c->len == sizeof(c->buf))
            return -1;
        ssize_t r = read(c->rfd, c->buf + c->len, sizeof(c->buf) - c->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
}

static int call(conn *c, const char *req, size_t reqlen, char *out, size_t outlen)
{
    if (out && outlen)
        snprintf(out, outlen, "(no answer: %s)", "the connection closed or failed");
    return write_all(c->wfd, req, reqlen) == 0 && read_line(c, out, outlen) >= 0 ? 0 : -1;
}

static int connect_mncd(void)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, sock_path, sizeof(sock_path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The echo and relay children: one line in, one line out, until EOF on stdin. */
static void echo_main(void)
{
    static conn in;
    static char line[1 << 16];
    in.rfd = 0;
    ssize_t n;
    while ((n = read_line(&in, line, sizeof(line) - 1)) >= 0) {
        line[n] = '\n';
        if (write_all(1, line, (size_t)n + 1) != 0)
            _exit(1);
    }
    _exit(0);
}

static void relay_main(void)
{
    static conn in, up;
    static char line[1 << 16];
    in.rfd = 0;
    up.wfd = up.rfd = connect_mncd();
    if (up.rfd < 0)
        _exit(1);
    ssize_t n;
    while ((n = read_line(&in, line, sizeof(line) - 1)) >= 0) {
        line[n] = '\n';
        if (write_all(up.wfd, line, (size_t)n + 1) != 0 || (n = read_line(&up, line, sizeof(line) - 1)) < 0)
            _exit(1);
        line[n] = '\n';
        if (write_all(1, line, (size_t)n + 1) != 0)
            _exit(1);
    }
    _exit(0);
}

/* Starts a child on a pipe pair: exe (exec'd with --socket) or, if exe is NULL, fn (forked). */
static int spawn(conn *c, const char *exe, void (*fn)(void))
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* a forked child must not keep the other ends (or other children's pipes) open, or
         * nobody sees EOF */
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || close_range(3, ~0u, 0) != 0)
            _exit(127);
        if (!exe)
            fn();
        execl(exe, exe, "--socket", sock_path, (char *)NULL);
        perror(exe);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->wfd = in[1];
    c->rfd = out[0];
    c->child = pid;
    c->len = 0;
    return 0;
}

static void conn_close(conn *c)
{
    if (c->wfd >= 0)
        close(c->wfd);
    if (c->rfd >= 0 && c->rfd != c->wfd)
        close(c->rfd);
    if (c->child > 0)
        waitpid(c->child, NULL, 0);
    c->wfd = c->rfd = -1;
    c->child = -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *xs, size_t n, double p)
{
    size_t i = (size_t)(p * (double)n);
    return xs[i < n ? i : n - 1];
}

/* Checks the answer of one call on each path: same identity, empty inbox, no error. */
static int check(conn *cs, const char *old, char *resp, size_t rl)
{
    for (int p = 0; p < NPATH; p++) {
        if (p == P_OLD && !old)
            continue;
        if (p == P_MCP || p == P_OLD) {
            /* the MCP paths: initialize first; the notification has no answer */
            if (call(&cs[p], MCP_INIT, sizeof(MCP_INIT) - 1, resp, rl) != 0 ||
                !strstr(resp, "\"protocolVersion\":\"2025-06-18\"")) {
                fprintf(stderr, "bench_mcp: %s: initialize failed: %s\n", PNAME[p], resp);
                return -1;
            }
            static const char st[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                                     "\"params\":{\"name\":\"mnc_status\"}}\n";
            if (call(&cs[p], st, sizeof(st) - 1, resp, rl) != 0 ||
                !strstr(resp, "\"agent\":\"coordinator\"")) {
                fprintf(stderr, "bench_mcp: %s: not the coordinator: %s\n", PNAME[p], resp);
                return -1;
            }
            if (call(&cs[p], MCP_REQ, sizeof(MCP_REQ) - 1, resp, rl) != 0 ||
                !strstr(resp, "\"isError\":false") || !strstr(resp, "\"messages\":[]")) {
                fprintf(stderr, "bench_mcp: %s: unexpected answer: %s\n", PNAME[p], resp);
                return -1;
            }
        } else if (p == P_ECHO) {
            if (call(&cs[p], MCP_REQ, sizeof(MCP_REQ) - 1, resp, rl) != 0 ||
                strncmp(resp, MCP_REQ, sizeof(MCP_REQ) - 2) != 0) {
                fprintf(stderr, "bench_mcp: echo child: wrong answer: %s\n", resp);
                return -1;
            }
        } else {
            static const char who[] = "{\"verb\":\"whoami\"}\n";
            if (call(&cs[p], who, sizeof(who) - 1, resp, rl) != 0 ||
                !strstr(resp, "\"agent\":\"coordinator\"")) {
                fprintf(stderr, "bench_mcp: %s: not the coordinator: %s\n", PNAME[p], resp);
                return -1;
            }
            if (call(&cs[p], DIRECT_REQ, sizeof(DIRECT_REQ) - 1, resp, rl) != 0 ||
                !strstr(resp, "\"ok\":true") || !strstr(resp, "\"messages\":[]")) {
                fprintf(stderr, "bench_mcp: %s: unexpected answer: %s\n", PNAME[p], resp);
                return -1;
            }
        }
    }
    return 0;
}

/* The measuring process (already the coordinator's uid). */
static int measure(const char *mcp, const char *old, int quick)
{
    /* short blocks, many rounds: a burst of load from other jobs lands on every path alike */
    int block = quick ? 100 : 200, rounds = quick ? 12 : 50;
    static conn cs[NPATH];
    static char resp[1 << 16];
    for (int p = 0; p < NPATH; p++)
        cs[p].wfd = cs[p].rfd = cs[p].child = -1;
    int rc = 1;
    double *lat[NPATH] = {0};
    cs[P_DIRECT].wfd = cs[P_DIRECT].rfd = connect_mncd();
    if (cs[P_DIRECT].wfd < 0 || spawn(&cs[P_ECHO], NULL, echo_main) != 0 ||
        spawn(&cs[P_RELAY], NULL, relay_main) != 0 || spawn(&cs[P_MCP], mcp, NULL) != 0 ||
        (old && spawn(&cs[P_OLD], old, NULL) != 0)) {
        perror("bench_mcp: connect/spawn");
        goto out;
    }
    if (check(cs, old, resp, sizeof(resp)) != 0)
        goto out;
    int np = old ? NPATH : P_OLD;
    size_t n = (size_t)block * (size_t)rounds;
    for (int p = 0; p < np; p++)
        if (!(lat[p] = calloc(n, sizeof(double))))
            goto out;
    static const struct {
        const char *s;
        size_t n;
    } req[NPATH] = {{DIRECT_REQ, sizeof(DIRECT_REQ) - 1}, {MCP_REQ, sizeof(MCP_REQ) - 1},
                    {DIRECT_REQ, sizeof(DIRECT_REQ) - 1}, {MCP_REQ, sizeof(MCP_REQ) - 1},
                    {MCP_REQ, sizeof(MCP_REQ) - 1}};
    for (int p = 0; p < np; p++) /* warm-up */
        for (int i = 0; i < block / 4; i++)
            if (call(&cs[p], req[p].s, req[p].n, NULL, 0) != 0)
                goto fail;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < np; k++) {
            int p = (k + r) % np;
            double *l = lat[p] + (size_t)r * (size_t)block;
            for (int i = 0; i < block; i++) {
                double t0 = now_us();
                if (call(&cs[p], req[p].s, req[p].n, NULL, 0) != 0)
                    goto fail;
                l[i] = now_us() - t0;
            }
        }
    double p50[NPATH], p99[NPATH];
    for (int p = 0; p < np; p++) {
        qsort(lat[p], n, sizeof(double), cmp_d);
        p50[p] = pct(lat[p], n, 0.5);
        p99[p] = pct(lat[p], n, 0.99);
        printf("  %-28s p50 %7.1f us  p99 %7.1f us  (%zu samples)\n", PNAME[p], p50[p], p99[p], n);
    }
    double over = p50[P_MCP] - p50[P_DIRECT], hop = p50[P_RELAY] - p50[P_DIRECT];
    printf("  mnc-mcp overhead at p50 (mnc-mcp - direct): %.1f us, x%.2f of direct (target <= %.0f us): %s\n",
           over, p50[P_MCP] / p50[P_DIRECT], TARGET_US, over <= TARGET_US ? "met" : "NOT met");
    printf("  hop floor at p50 (relay - direct): %.1f us, x%.2f of direct%s\n", hop,
           p50[P_RELAY] / p50[P_DIRECT],
           hop > TARGET_US ? " - the extra process alone exceeds the target on this host" : "");
    printf("  mnc-mcp's own work at p50 (mnc-mcp - relay): %.1f us; bare pipe round trip (echo) "
           "p50 %.1f us\n", p50[P_MCP] - p50[P_RELAY], p50[P_ECHO]);
    if (old)
        printf("  old mnc-mcp overhead at p50: %.1f us; new/old round trip x%.2f, overhead "
               "x%.2f\n", p50[P_OLD] - p50[P_DIRECT], p50[P_MCP] / p50[P_OLD],
               over / (p50[P_OLD] - p50[P_DIRECT]));
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "bench_mcp: a call failed\n");
out:
    for (int p = 0; p < NPATH; p++) {
        conn_close(&cs[p]);
        free(lat[p]);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int quick = getenv("MNC_BENCH_QUICK") && !strcmp(getenv("MNC_BENCH_QUICK"), "1");
    const char *old_arg = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--compare") && i + 1 < argc) {
            old_arg = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_mcp [--quick] [--compare OLD_MNC_MCP]\n");
            return 2;
        }
    }
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    const char *base = getenv("MNC_BENCH_DIR") ? getenv("MNC_BENCH_DIR") : "/tmp";
    char mcp[PATH_MAX], old[PATH_MAX], mncd[PATH_MAX], rel[PATH_MAX];
    snprintf(rel, sizeof(rel), "%s/mnc-mcp", build);
    if (!realpath(rel, mcp) || (old_arg && !realpath(old_arg, old))) {
        fprintf(stderr, "bench_mcp: %s: %s\n", old_arg && realpath(rel, mcp) ? old_arg : rel,
                strerror(errno));
        return 1;
    }
    snprintf(mncd, sizeof(mncd), "%s/mncd", build);
    if (geteuid() != 0) {
        fprintf(stderr, "bench_mcp: needs root (runs mncd and switches to the agent's uid)\n");
        return 1;
    }

    char dir[256], cfg[300], state[300];
    snprintf(dir, sizeof(dir), "%.200s/bench_mcp.XXXXXX", base);
    if (!mkdtemp(dir) || chmod(dir, 0755) != 0) {
        perror("bench_mcp: mkdtemp");
        return 1;
    }
    snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
    snprintf(state, sizeof(state), "%s/state", dir);
    snprintf(sock_path, sizeof(sock_path), "%.90s/mncd.sock", dir);
    int status = 1;
    pid_t dpid = -1;
    FILE *f = fopen(cfg, "w");
    if (!f || fprintf(f, "{\"kernel\": \"off\", \"agents\": {\"coordinator\": {\"uid\": %d}}}\n",
                      UID_C) < 0 || fclose(f) != 0) {
        perror("bench_mcp: config");
        goto out;
    }
    if ((dpid = fork()) == 0) {
        execl(mncd, mncd, "--config", cfg, "--socket", sock_path, "--state-dir", state,
              "--policy", "policies/scheduling.json", (char *)NULL);
        perror(mncd);
        _exit(127);
    }
    int fd = -1;
    for (int i = 0; i < 500 && fd < 0 && dpid > 0; i++) {
        fd = connect_mncd();
        if (fd < 0)
            usleep(10000);
    }
    if (fd < 0) {
        fprintf(stderr, "bench_mcp: %s did not start\n", mncd);
        goto out;
    }
    close(fd);
    printf("tools/call mnc_receive through %s next to recv straight to mncd (kernel layer off; "
           "p50/p99 of one request/response line each)\n", rel);
    fflush(stdout);
    pid_t m = fork();
    if (m == 0) {
        /* become the coordinator for good: every connection and child of this process is it */
        if (setgroups(0, NULL) != 0 || setresgid(UID_C, UID_C, UID_C) != 0 ||
            setresuid(UID_C, UID_C, UID_C) != 0) {
            perror("bench_mcp: drop to the coordinator's uid");
            _exit(1);
        }
        int r = measure(mcp, old_arg ? old : NULL, quick);
        fflush(stdout);
        _exit(r);
    }
    int ws = 0;
    if (m > 0 && waitpid(m, &ws, 0) == m && WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
        status = 0;
out:
    if (dpid > 0) {
        kill(dpid, SIGTERM);
        waitpid(dpid, NULL, 0);
    }
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_mcp: could not remove %s\n", dir);
    return status;
}
