// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_v1_tasks - the thread count of cgroup_thread_count, read where the 0700 agent cgroup
 * does not reach (red team addition): on a host that still mounts cgroup v1 hierarchies next to
 * the unified one (hybrid mode: here memory, pids, cpu, cpuset, blkio, freezer, devices, and
 * name=systemd), `mncctl run` moves the agent only in the unified (v2) tree, so in every v1
 * hierarchy the agent's tasks stay in its launcher's cgroup, whose `tasks` and `cgroup.procs`
 * files are 0644 and list every task (tid) in it to every uid, outside /proc: hidepid does not
 * cover them, and the agent's own v2 directory being 0700 does not either. The agent is the
 * same as cgroup_thread_count's: one hex digit of the canary per step, as the number of threads
 * it adds (parked on a pipe until it exits).
 * Verifier: at each sync uid 65534 counts the lines of `tasks` of the orchestrator's own cgroup in
 * the v1 hierarchy where that cgroup is deepest (the agent's launcher inherits it: here
 * memory:/process_api/<id>) and decodes the increments; after the last digit, compares with the
 * canary. On a pure cgroup v2 host there is no such file (the attack then reads nothing).
 * Blocks it: the launcher also moves the agent into a 0700 cgroup of its own under its own in
 * every mounted v1 hierarchy (user/mncctl/run_cgv1.h), so the launcher's `tasks` no longer list
 * the agent's threads and uid 65534 cannot search the agent's directory; hidepid does not help.
 * Bandwidth: as cgroup_thread_count (a thread create/exit takes ~20-50 us). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

#define DIGITS 12

static int park[2] = {-1, -1}; /* every added thread blocks reading this pipe until the agent exits */

static void *parked(void *arg)
{
    (void)arg;
    char b;
    while (read(park[0], &b, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int agent(struct atk_ctx *c)
{
    if (pipe(park) < 0) {
        atk_try(c, "pipe", -1);
        return 0;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 64 * 1024);
    atk_sync(c, "base");
    int made = 0, failed = 0;
    for (int i = 0; i < DIGITS; i++) {
        char h[2] = {c->secret[2 + i], 0};
        int d = (int)strtol(h, NULL, 16);
        for (int k = 0; k < d; k++) {
            pthread_t t;
            int e = pthread_create(&t, &at, parked, NULL);
            if (e == 0)
                made++;
            else if (failed++ == 0) {
                errno = e;
                atk_try(c, "pthread_create", -1);
            }
        }
        char tag[16];
        snprintf(tag, sizeof(tag), "d%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "threads added: %d", made);
    close(park[1]); /* the threads read EOF and end */
    return 0;
}

/* the deepest v1 cgroup this process is in (hierarchy id != 0): its tasks file */
static int v1_tasks(char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[600], best[600] = "";
    size_t bestlen = 0;
    while (f && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!a || !b || strncmp(line, "0:", 2) == 0 || a + 1 == b)
            continue;
        *b = 0;
        char ctl[100];
        snprintf(ctl, sizeof(ctl), "%s", a + 1);
        char *comma = strchr(ctl, ',');
        if (comma)
            *comma = 0;
        const char *name = strncmp(ctl, "name=", 5) == 0 ? ctl + 5 : ctl;
        char p[600];
        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s%s/tasks", name, b + 1);
        if (access(p, R_OK) == 0 && strlen(b + 1) >= bestlen) {
            snprintf(best, sizeof(best), "%s", p);
            bestlen = strlen(b + 1);
        }
    }
    if (f)
        fclose(f);
    if (!best[0])
        return -1;
    snprintf(out, n, "%s", best);
    return 0;
}

static long lines_of(const char *p)
{
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    long lines = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    return lines;
}

static char tasks_path[600];

static int count_threads(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    snprintf(out, n, "%ld", tasks_path[0] ? lines_of(tasks_path) : -1L);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[64];
    if (!tasks_path[0] && v1_tasks(tasks_path, sizeof(tasks_path)) < 0)
        atk_note(c, "no cgroup v1 hierarchy on this host");
    if (atk_as_uid(c, ATK_NOBODY, count_threads, out, sizeof(out)) < 0)
        return;
    char ev[800];
    snprintf(ev, sizeof(ev), "uid 65534 decoded the canary from the line counts of %s (cgroup v1 tasks)", tasks_path);
    atkv_counter_digits(c, tag, out, DIGITS, ev);
}

static const struct atk A = {"cgroup_v1_tasks",
                             "thread count in the launcher's cgroup v1 tasks files (hybrid hosts; world-readable)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
