// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_thread_count - the agent's own cgroup directory as a reading window for any
 * user. `mncctl run` makes the agent's cgroup 0755 (cmd_run.c), so cgroupfs lists its
 * cgroup.threads and cgroup.procs (and cpu.stat, *.pressure) to every uid, outside /proc:
 * hidepid=invisible, the fix docs/threat-model.md gives for the /proc/PID rows, does not cover
 * it, nor would a PID namespace (an outsider reads the count without naming a task). The agent modulates how many threads it has (clone(CLONE_THREAD|CLONE_FILES)
 * is allowed): one hex digit of the canary per step, as the number of threads it adds.
 * Verifier: at each sync uid 65534 counts the lines of cgroup.threads under every coordinator
 * cgroup of the run's tree and decodes the increments; after the last digit, compares with the
 * canary.
 * Blocked by: `mncctl run` makes the agent's cgroup directory 0700 (root only; cgroupfs honours
 * the directory mode, and mncd and the launcher read it as root): uid 65534 cannot open it.
 * Bandwidth: a thread create/exit takes ~20-50 us; 4 bits per step as done here (up to 15
 * threads), ~10^3-10^4 bits/s with a cleverer code (estimate, not measured). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

#define DIGITS 12

static int agent(struct atk_ctx *c) { return atkv_thread_digits(c, DIGITS); }

/* the positive control's agent runs in the orchestrator's own cgroup (ours): its v2 path */
static int own_cgroup(const char *cg2, char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[500];
    int ok = -1;
    while (f && ok < 0 && fgets(line, sizeof(line), f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, n, "%s%s", cg2, line + 3);
            ok = 0;
        }
    if (f)
        fclose(f);
    return ok;
}

/* uid 65534: the number of lines of cgroup.threads of every coordinator* cgroup of the tree
 * (the control: of the cgroup it shares with the unconfined agent) */
static int count_threads(struct atk_ctx *c, char *out, size_t n)
{
    const char *cg2 = atk_arg(c, "cg2"), *tree = getenv("ATK_TREE");
    char top[600];
    if (getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0) {
        char p[800];
        long l = -1;
        if (own_cgroup(cg2 ? cg2 : "", top, sizeof(top)) == 0) {
            snprintf(p, sizeof(p), "%s/cgroup.threads", top);
            l = atkv_lines_of(p);
        }
        snprintf(out, n, "%ld", l);
        return 0;
    }
    snprintf(top, sizeof(top), "%s/%s", cg2 ? cg2 : "", tree ? tree : "");
    DIR *d = opendir(top);
    struct dirent *e;
    long lines = 0;
    int seen = 0;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "coordinator", 11) != 0)
            continue;
        char p[900];
        snprintf(p, sizeof(p), "%s/%s/cgroup.threads", top, e->d_name);
        long l = atkv_lines_of(p);
        if (l < 0)
            continue;
        seen++;
        lines += l;
    }
    if (d)
        closedir(d);
    snprintf(out, n, "%ld", seen ? lines : -1L);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[64];
    if (atk_as_uid(c, ATK_NOBODY, count_threads, out, sizeof(out)) < 0)
        return;
    atkv_counter_digits(c, tag, out, DIGITS,
                        "uid 65534 decoded the canary from the line counts of the agent's cgroup.threads");
}

static const struct atk A = {"cgroup_thread_count",
                             "thread count in the agent's own cgroup.threads (cgroupfs, world-readable)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
