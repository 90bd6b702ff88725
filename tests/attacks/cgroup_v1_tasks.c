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

static int agent(struct atk_ctx *c) { return atkv_thread_digits(c, DIGITS); }

static void on_sync(struct atk_ctx *c, const char *tag) { atkv_v1_tasks_sync(c, tag, DIGITS); }

static const struct atk A = {"cgroup_v1_tasks",
                             "thread count in the launcher's cgroup v1 tasks files (hybrid hosts; world-readable)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
