/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lsm_abi.h - what the BPF-LSM backend adds to the kernel/user ABI of mnc_abi.h.
 *
 * Included (after mnc_abi.h) by the lsm_*.bpf.c programs and by loader/lsm_backend.c. The
 * LSM programs reuse every map of mnc_maps.bpf.h (agents, taint, sock_unix, sock_inet,
 * file_sinks, names, settings, counters, events) and the pure decision mnc_decide(); the only
 * new map is ipc_sinks, for SysV message queues and shared memory segments, which have no
 * inode to key on.
 */
#ifndef MNC_LSM_ABI_H
#define MNC_LSM_ABI_H

#include "mnc_abi.h"

/* ---- ipc_sinks: SysV IPC objects registered as sinks. An IPC id is only unique inside one
 * IPC namespace, so the key carries the namespace's inode number (st_ino of
 * /proc/<pid>/ns/ipc from user space; ipc_ns->ns.inum in the kernel). */
#define MNC_IPC_MSG 1u /* message queue (msgget) */
#define MNC_IPC_SHM 2u /* shared memory segment (shmget) */
#define MNC_MAX_IPC_SINKS 4096

struct mnc_ipc_key {
    __u32 kind;   /* MNC_IPC_* */
    __u32 id;     /* the id msgget/shmget returned */
    __u64 ns_ino; /* IPC namespace inode number */
};
/* value: struct mnc_sink (mnc_abi.h) */

/* ---- lsm_tree (array, one entry, key 0): where the mnc tree is, in the form the hot path
 * wants. LSM programs run for every task on the host; with the tree's level a task that is
 * not inside the tree is recognised with one helper call (its ancestor cgroup at that level
 * is not the tree) before any hash lookup. Written by mnc_lsm_attach. tree_level 0 = not
 * written: the programs fall back to the agents lookup plus an ancestor search. */
struct mnc_lsm_tree {
    __u64 tree_cgroup_id; /* == mnc_config.tree_cgroup_id */
    __u32 tree_level;     /* depth of the tree below the cgroup2 root (root = 0) */
    __u32 pad;
};

/* ---- hooks of the lsm backend, numbered after the cgroup backend's enum mnc_hook so that
 * one event stream can carry both. */
enum mnc_lsm_hook {
    MNC_HOOK_LSM_FILE_OPEN = 32,
    MNC_HOOK_LSM_FILE_PERMISSION = 33,
    MNC_HOOK_LSM_PATH_MKNOD = 34,
    MNC_HOOK_LSM_PATH_MKDIR = 35,
    MNC_HOOK_LSM_PATH_LINK = 36,
    MNC_HOOK_LSM_PATH_RENAME = 37,
    MNC_HOOK_LSM_PATH_SYMLINK = 38,
    MNC_HOOK_LSM_PATH_TRUNCATE = 39,
    MNC_HOOK_LSM_INODE_CREATE = 40,
    MNC_HOOK_LSM_SOCKET_CREATE = 41,
    MNC_HOOK_LSM_SOCKET_CONNECT = 42,
    MNC_HOOK_LSM_SOCKET_SENDMSG = 43,
    MNC_HOOK_LSM_UNIX_STREAM_CONNECT = 44,
    MNC_HOOK_LSM_UNIX_MAY_SEND = 45,
    MNC_HOOK_LSM_MSGSND = 46,
    MNC_HOOK_LSM_SHMAT = 47,
    MNC_HOOK_LSM_TASK_KILL = 48,           /* events: port = signal, protocol = the target's tgid */
    MNC_HOOK_LSM_FILE_SEND_SIGIOTASK = 49, /* events: port = signal (SIGIO, SIGURG or the F_SETSIG
                                              one), protocol = the target's tgid, no pid/comm */
    MNC_HOOK_LSM_FILE_RECEIVE = 50,        /* events: port = the file type (st_mode >> 12),
                                              protocol = 1 if open for writing; file key in addr */
    MNC_HOOK_LSM_SOCKET_SETSOCKOPT = 51,   /* events: protocol = level, port = optname */
    MNC_HOOK_LSM_FILE_LOCK = 52,           /* events: port = the lock type (F_RDLCK 0, F_WRLCK 1,
                                              F_UNLCK 2) */
};

/* sigio_owners: files whose owner (the SIGIO/SIGURG target) an agent set, keyed by the kernel
 * address of the struct file, value the setting agent's cgroup id. An entry lives as long as
 * the file; one per file an agent ever gave an owner, so this bounds how many such files can be
 * open at once over all agents (F_SETOWN beyond it fails with ENOSPC). */
#define MNC_MAX_SIGIO_OWNERS 65536

/* How far file hooks walk up from a file to find a sink directory above it. A file nested
 * deeper than this below the filesystem root cannot be proven outside every sink directory,
 * so a registered agent's write to it is denied (fail closed) with MNC_K_DENY_WALK_DEPTH. */
#define MNC_LSM_WALK_MAX 32
/* How many cgroup levels are searched for the mnc tree (unknown cgroups inside it). */
#define MNC_LSM_CG_LEVELS 16

/* File deny events (struct mnc_event) carry the file key in addr[]: dev in addr[0..7], ino in
 * addr[8..15] (host byte order), and the dentry's last name component in path[]. IPC events
 * carry the IPC id in port/protocol: port = kind, protocol = id. */

#endif
