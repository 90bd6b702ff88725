/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_filter.h - the agent's seccomp allowlist (step 5 of run_confine.h), by class.
 *
 * run_filter_build adds every rule to a libseccomp context. It runs at BUILD time: the generator
 * user/mncctl/gen/run_filter_gen.c builds each variant, has libseccomp compile it
 * (seccomp_export_bpf) and writes the programs into $(BUILD)/include/run_filters.h, which
 * run_confine.c loads with seccomp(2) between fork and exec. Compiling the filter at each launch
 * cost the agent 15-30 ms of its start on this project's 2-core hosts (libseccomp's binary-tree
 * optimisation over ~260 rules); the program is the same either way, for the architecture the
 * tree is built on (the launcher is too).
 * The variants differ in three bits, fixed per launch: */
#ifndef MNCCTL_RUN_FILTER_H
#define MNCCTL_RUN_FILTER_H

#include <seccomp.h>

#define RUN_FILTER_ROOT 1u     /* --as-root: the inode-metadata syscalls refused (EPERM) */
#define RUN_FILTER_SERVER 2u   /* the policy's server: bind/listen/autobind asked of the launcher */
#define RUN_FILTER_TRUNCATE 4u /* Landlock ABI >= 3 judges truncate(2); EPERM without */
#define RUN_FILTER_VARIANTS 8u

/* Adds the allowlist of `variant` (RUN_FILTER_* bits) to ctx (made with seccomp_init and the
 * default action ENOSYS). Returns 0, or a negative errno with *at naming the rule that failed. */
int run_filter_build(scmp_filter_ctx ctx, unsigned variant, const char **at);

#endif
