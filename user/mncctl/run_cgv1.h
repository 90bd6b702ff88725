/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_cgv1.h - the agent's own cgroup in every mounted cgroup v1 hierarchy (hybrid hosts).
 *
 * Why: a v1 cgroup's `tasks` and `cgroup.procs` list every task in it to every uid, outside
 * /proc (hidepid does not cover them). An agent left in its launcher's v1 cgroups could count
 * out a disclosure in threads there (attack cgroup_v1_tasks), as it could in v2 without its 0700
 * directory (cgroup_thread_count). And a v1 cgroup's memory.stat and usage count its whole
 * subtree, 0444, so no readable cgroup but the root may hold the agent's (cgroup_v1_parent_memstat).
 * So on a host that mounts v1 hierarchies next to the unified one, `mncctl run` gives the agent
 * a 0700 directory of its own in each, under a 0700 twin of the v2 tree at the hierarchy's top
 * (TREE/LEAF), enters it with the v2 one (run_confine.h, step 1), and removes both at the end
 * (the twin when it is empty). A pure v2 host has none, and nothing is done. The agent leaves
 * the launcher's v1 cgroups, as it leaves its v2 one: their limits do not follow it. */
#ifndef MNCCTL_RUN_CGV1_H
#define MNCCTL_RUN_CGV1_H

#include <limits.h>
#include <stddef.h>

#define RUN_CGV1_MAX 16 /* hierarchies; the kernel has 14 v1 controllers, plus named ones */

typedef struct run_cgv1 {
    int n;                               /* directories made */
    char dir[RUN_CGV1_MAX][PATH_MAX];    /* absolute paths, each with a cgroup.procs */
    char parent[RUN_CGV1_MAX][PATH_MAX]; /* their TREE directories */
} run_cgv1;

/* Makes TREE/LEAF (each one path component, mode 0700) at the top of every v1 hierarchy that
 * is mounted (/proc/self/cgroup, /proc/self/mountinfo); an existing TREE is set to 0700. A new
 * cpuset is given its parent's cpus and mems (an empty one takes no task). Returns 0 (v->n may
 * be 0), or -1 with a one-line reason in why and nothing left behind. A hierarchy that is not
 * mounted anywhere is skipped: a reader would have to mount it, which takes CAP_SYS_ADMIN. First
 * removes the empty "mnc-*.PID" directories in TREE of launchers that are gone (killed before
 * their cleanup). */
int run_cgv1_create(run_cgv1 *v, const char *tree, const char *leaf, char *why, size_t whylen);

/* Moves the calling process into every directory of v (cgroup.procs). 0, or -1 with why. */
int run_cgv1_enter(const run_cgv1 *v, char *why, size_t whylen);

/* Removes v's directories (waiting up to 2 s each for their last tasks to be reaped), and their
 * TREE directories when empty; prints a warning for a LEAF it cannot remove. v->n is 0 afterwards. */
void run_cgv1_remove(run_cgv1 *v);

#endif
