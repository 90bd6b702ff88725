// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_v1_move_back - cgroup_v1_tasks after the agent tries to move itself back into its
 * launcher's v1 cgroup (red team, stop 33): the agent writes its pid into the `cgroup.procs`
 * and `tasks` of the launcher's cgroup in every v1 hierarchy (the orchestrator passes their
 * paths: the agent's cgroup namespace hides them from /proc/self/cgroup, not from the mount),
 * then counts out the canary in threads as cgroup_v1_tasks does.
 * Verifier: as cgroup_v1_tasks (uid 65534 counts the launcher's v1 memory `tasks`).
 * Blocks it: DAC (root's 0644 files) for an own-uid agent; Landlock (no writes outside the
 * workspace) for an --as-root one. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

#define DIGITS 12

static int agent(struct atk_ctx *c)
{
    for (int i = 0; i < 4; i++) {
        char k[16];
        snprintf(k, sizeof(k), "p%d", i);
        const char *p = atk_arg(c, k);
        if (!p)
            continue;
        const char *leafs[2] = {"cgroup.procs", "tasks"};
        for (int j = 0; j < 2; j++) {
            char f[700];
            snprintf(f, sizeof(f), "%s/%s", p, leafs[j]);
            int fd = open(f, O_WRONLY | O_CLOEXEC);
            char what[760];
            snprintf(what, sizeof(what), "open %s", f);
            if (atk_try(c, what, fd) >= 0) {
                char pid[32];
                int n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
                snprintf(what, sizeof(what), "write %s", f);
                atk_try(c, what, write(fd, pid, (size_t)n));
                close(fd);
            }
        }
    }
    return atkv_thread_digits(c, DIGITS);
}

static char tasks_path[600];

static int prepare(struct atk_ctx *c)
{
    if (atkv_v1_tasks(tasks_path, sizeof(tasks_path)) < 0)
        return 0;
    char d[600];
    snprintf(d, sizeof(d), "%s", tasks_path);
    *strrchr(d, '/') = 0;
    atk_set(c, "p0", "%s", d);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atkv_v1_tasks_sync(c, tag, DIGITS); }

static const struct atk A = {"cgroup_v1_move_back",
                             "the agent writes itself back into its launcher's v1 cgroups, then counts threads there",
                             0,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
