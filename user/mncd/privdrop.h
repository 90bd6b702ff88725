/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* privdrop.h - what each half of mncd keeps of root's privileges (docs/privsep.md, "The
 * enforcer's capabilities").
 *
 * The monitor drops everything before it reads a byte: psp_drop_to_user leaves it a plain
 * process of the user mncd with empty capability sets (the bounding set included), no
 * supplementary groups, no_new_privs, not dumpable, and killed when the enforcer dies. The
 * enforcer keeps uid 0 and limits itself twice with psp_caps_limit: PSP_CAPS_START until the
 * kernel layer is attached and the monitor is configured, PSP_CAPS_RUN afterwards. Each
 * function checks its own result with capget/getresuid (a drop that did not happen is an
 * error, never a silent continue).
 */
#ifndef MNCD_PRIVDROP_H
#define MNCD_PRIVDROP_H

#include <linux/capability.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PSP_CAP(c) (1ull << (c))

/* The enforcer from fork to the end of start-up: program load and attach (BPF, PERFMON,
 * NET_ADMIN, SYS_ADMIN), the mnc cgroup tree created in the cgroup2 root (a 0555 directory:
 * DAC_OVERRIDE), the state dir handed to the monitor (CHOWN), the audit socket (AUDIT_READ,
 * AUDIT_CONTROL), its own later drops (SETPCAP), and what it keeps (below). */
#define PSP_CAPS_START                                                                                                 \
    (PSP_CAP(CAP_BPF) | PSP_CAP(CAP_PERFMON) | PSP_CAP(CAP_NET_ADMIN) | PSP_CAP(CAP_SYS_ADMIN) |                       \
     PSP_CAP(CAP_SYS_PTRACE) | PSP_CAP(CAP_DAC_READ_SEARCH) | PSP_CAP(CAP_AUDIT_CONTROL) | PSP_CAP(CAP_AUDIT_READ) |   \
     PSP_CAP(CAP_CHOWN) | PSP_CAP(CAP_SETPCAP) | PSP_CAP(CAP_DAC_OVERRIDE))

/* The enforcer while it serves: map updates on Linux < 6.4 (BPF), SOCK_DESTROY (NET_ADMIN),
 * trusted.* xattrs (SYS_ADMIN), other processes' /proc fds and pidfd_getfd (SYS_PTRACE),
 * agent-owned directories below a workspace (DAC_READ_SEARCH), the live audit status
 * (AUDIT_CONTROL). */
#define PSP_CAPS_RUN                                                                                                   \
    (PSP_CAP(CAP_BPF) | PSP_CAP(CAP_NET_ADMIN) | PSP_CAP(CAP_SYS_ADMIN) | PSP_CAP(CAP_SYS_PTRACE) |                    \
     PSP_CAP(CAP_DAC_READ_SEARCH) | PSP_CAP(CAP_AUDIT_CONTROL))

/* The unit's CapabilityBoundingSet: the start set and what the monitor child needs to leave
 * root (SETUID, SETGID; SETPCAP is in the start set). */
#define PSP_CAPS_UNIT (PSP_CAPS_START | PSP_CAP(CAP_SETUID) | PSP_CAP(CAP_SETGID))

/* The uid and gid of user `name` ("mncd" by default). 0, or -1 with why (no such user, or it
 * is root). */
int psp_user(const char *name, uid_t *uid, gid_t *gid, char *why, size_t n);

/* The monitor's drop (called as root, in the child, first thing): bounding and ambient sets
 * emptied, setgroups(0), setresgid/setresuid to (uid, gid), then checked: every capability set
 * empty and uid 0 not regainable; then no_new_privs, not dumpable, and SIGKILL when the parent
 * (the enforcer, parent_pid) dies. 0, or -1 with why (the caller must exit: fail closed). */
int psp_drop_to_user(uid_t uid, gid_t gid, pid_t parent_pid, char *why, size_t n);

/* The enforcer's drop: every capability not in keep leaves the bounding set, then the
 * effective and permitted sets become keep (inheritable and ambient empty), then checked with
 * capget. keep must be a subset of the current permitted set. 0, or -1 with why. */
int psp_caps_limit(uint64_t keep, char *why, size_t n);

/* A process's capability sets and no_new_privs as /proc/PID/status shows them (pid 0: self).
 * 0, or -errno. */
typedef struct psp_caps {
    uint64_t inh, prm, eff, bnd, amb;
    int no_new_privs;
    uid_t uid, euid;
} psp_caps;
int psp_caps_of(pid_t pid, psp_caps *c);

#endif
