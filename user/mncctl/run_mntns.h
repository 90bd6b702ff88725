/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_mntns.h - the agent's own view of a few files, in a mount namespace of its own.
 *
 * Runtimes ask who they run as and where shared memory lives; an agent's dedicated uid has no
 * passwd entry on the host, and /dev/shm is not the agent's to write. `mncctl run` therefore
 * gives each agent, between fork and exec (run_confine.h, step 1), a mount namespace of its own
 * (propagation from the host kept one way: MS_SLAVE) in which
 *   - /etc/passwd and /etc/group are the host's files plus one entry for the agent's uid and gid
 *     (name: the agent's name when it is a portable user name no host entry has, else
 *     "mnc-agent-ID"; home: its first workspace; shell /bin/sh), bound read-only from a tmpfs
 *     only this namespace reaches. Every way of asking works: glibc's NSS "files", static
 *     binaries that read /etc/passwd themselves (Go without cgo, musl). Nothing on the host
 *     changes, and the entry exists only while the agent runs. A uid the host's /etc/passwd
 *     already lists (--uid of an existing user, root) keeps its own entry;
 *   - /dev/shm is the directory .mnc-shm at the top of its first workspace, bound there (POSIX
 *     semaphores and shm_open: Python's multiprocessing, sem_open). It is workspace data like any
 *     other: given, scanned and taint-labelled with the workspace (docs/kernel.md), and it
 *     persists as the host's /dev/shm does. Without a workspace, /dev/shm stays the host's and the
 *     agent cannot write it.
 * The agent cannot undo either: mount, umount and unshare are refused by its seccomp filter and
 * it holds no capability. And HOME, USER and LOGNAME name that identity (run_mntns_env). */
#ifndef MNCCTL_RUN_MNTNS_H
#define MNCCTL_RUN_MNTNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RUN_SHM_DIR ".mnc-shm" /* at the top of the first workspace */

typedef struct run_mntns {
    const char *agent; /* the agent's name (mncd's) */
    uint32_t agent_id;
    uid_t uid;           /* its uid and gid (0 with --as-root: no entry is added) */
    const char *home;    /* its first workspace, or NULL (then "/nonexistent") */
    const char *shm_src; /* WS/.mnc-shm made by run_mntns_prepare_shm, or NULL */
} run_mntns;

/* Launcher, before fork: makes WS/.mnc-shm (owner uid, mode 0700; --as-root 0700 root) unless
 * it exists as a directory of that owner; a symlink or anything else there refuses. Writes the
 * path into out. 0, or -1 with why. */
int run_mntns_prepare_shm(const char *ws, uid_t uid, char *out, size_t outlen, char *why, size_t whylen);

/* Child, as root, after the cgroup step and before privileges are dropped: the mount namespace
 * above. 0, or -1 with a one-line reason in why (the agent is then not started). */
int run_mntns_apply(const run_mntns *m, char *why, size_t whylen);

/* Child: sets HOME, USER and LOGNAME to the agent's (the names run_mntns_apply chose; HOME
 * "/nonexistent" without a workspace). 0, or -1 with why. */
int run_mntns_env(const run_mntns *m, char *why, size_t whylen);

/* The user name for the agent's uid given the host's passwd text (NUL-terminated): the agent's
 * name when it is a portable user name (letters, digits, '_', '.', '-'; not starting with '-';
 * at most 32 bytes) that no entry of passwd has, else "mnc-agent-ID". Pure. */
void run_mntns_user_name(const char *agent, uint32_t agent_id, const char *passwd, char *out, size_t outlen);

#endif
