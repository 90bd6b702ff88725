/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_confine.h - what `mncctl run` does to the agent's process between fork and exec.
 *
 * Every step fails closed: if one cannot be applied, the agent is not executed (the child
 * reports why through `why` and exits). The order matters and is fixed by run_confine_apply:
 *   1. enter the agent's cgroup (and its own v1 ones on a hybrid host: run_cgv1.h), then a new
 *      cgroup namespace rooted there (the agent sees "/"
 *      as its cgroup and cannot name any cgroup outside its subtree); with --netns also a new
 *      network namespace with only its loopback up (no sock_diag dump outside shows its
 *      sockets; run_confine.c, enter_netns); then a mount namespace with the agent's passwd and
 *      group entry and its own /dev/shm (run_mntns.h), and HOME, USER and LOGNAME set to match;
 *   2. close every inherited fd but 0, 1, 2 and the operator's --keep-fd ones (close_range);
 *   3. drop privileges: the dedicated uid/gid with no supplementary groups and no capabilities
 *      (or, --as-root, uid 0 with the reduced set RUN_ROOT_CAPS), no_new_privs;
 *   4. Landlock: reads and execution only under the system directories, the workspaces and the
 *      --read grants; writes only in the workspaces and /dev/null|zero|full; abstract UNIX
 *      sockets and signals scoped to the agent's own domain; denials logged to the kernel's
 *      audit (ABI >= 7);
 *   5. seccomp: an allowlist of syscalls by class (run_filter.c lists each class and why;
 *      compiled at build time, run_filter.h);
 *      everything else fails with ENOSYS, the classes that carry data past the kernel's other
 *      checks (SysV/POSIX IPC, keyrings, namespaces, io_uring, ptrace...) with EPERM.
 * See docs/kernel.md, "What mncctl run does to the agent". */
#ifndef MNCCTL_RUN_CONFINE_H
#define MNCCTL_RUN_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mnc/policy.h"
#include "run_cgv1.h"
#include "run_mntns.h"
#include "run_tty.h"

#define RUN_MAX_READ 32
#define RUN_MAX_KEEP 16
/* The default uid of an agent: RUN_UID_BASE + its principal id ("mn" in ASCII). Inside
 * systemd's container range, away from login users and from DynamicUser's 61184..65519. */
#define RUN_UID_BASE 0x6D6E0000u

typedef struct run_confine {
    const char *cgroup;   /* absolute cgroup v2 directory to enter */
    const run_cgv1 *cgv1; /* and these v1 ones (run_cgv1.h; NULL or none on a pure v2 host) */
    uid_t uid;            /* uid and gid the agent runs as (0 with as_root) */
    bool as_root;
    bool server;     /* may bind() and listen() while untainted (run_gate.h) */
    bool netns;      /* --netns: a network namespace of its own (only lo) */
    char *const *ws; /* workspaces (realpaths) */
    int n_ws;
    char *const *read; /* --read grants (realpaths) */
    int n_read;
    const int *keep; /* --keep-fd */
    int n_keep;
    int report_fd;          /* the launcher's error pipe: kept open (CLOEXEC) */
    const run_mntns *mntns; /* the agent's mount namespace (run_mntns.h); required */
    const run_tty *tty;     /* which of stdout/stderr become private terminals (run_tty.h), or NULL */
    int gate_sock;          /* where the seccomp notification fd goes (run_gate.h): locks, and a server's
                    * bind/listen; required */
} run_confine;

/* Applies steps 1-5 to the calling (child) process. Returns 0, or -1 with a one-line reason
 * in why. Never returns 0 with a step skipped. */
int run_confine_apply(const run_confine *c, char *why, size_t whylen);

/* The Landlock ABI of the running kernel (< 1: none). */
int run_landlock_abi(void);

#endif
