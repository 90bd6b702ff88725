/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* workspace.h - the launcher's side of the workspace taint (cmd_workspace.c; docs/kernel.md
 * "Workspace taint"). */
#ifndef MNCCTL_WORKSPACE_H
#define MNCCTL_WORKSPACE_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "mnc_kern.h"

#define MNCCTL_WS_MAX_TAINTED_DIRS 1024 /* == mncd's MNCD_WS_MAX_TAINTED_DIRS */

/* Appends to arr (a cJSON array) the path of every directory strictly inside ws (a realpath)
 * that carries a trusted.mnc.taint record (`mncctl workspace show`; `mncctl run` collects the same
 * list in mncctl_ws_give's walk for agent.register's "tainted_dirs": mncd re-reads each
 * itself). Walks without following symlinks, across mounts. Needs CAP_SYS_ADMIN (without it
 * the records are invisible). 0, or -1 after printing why (a directory that cannot be read,
 * more than MNCCTL_WS_MAX_TAINTED_DIRS records): the launch must then be refused. */
int mncctl_ws_tainted_dirs(const char *ws, cJSON *arr);

/* Gives the workspaces (realpaths) to the agent `agent` running as uid (0 --as-root; its gid
 * has the same number), before any of its processes runs, and refuses the launch (-1, after
 * printing "run refused: workspace DIR: ...") when something reached them before the launch.
 * One walk, directory before its entries, fd-relative and never following a symlink:
 *   - every entry: no device node, no FIFO the agent did not create, no registered log or
 *     memory sink (by (dev, ino): hard links too), at most 200000 entries;
 *   - every entry becomes root's, group the agent's gid, mode without bits for others (the
 *     owner's bits also for the group; no setuid, setgid, sticky), POSIX ACLs removed; the top
 *     directory root:gid 0770 (--as-root root:root 0700). An outsider's earlier reference (bind
 *     mount, directory fd, cwd, hard link, O_PATH fd) then meets DAC on every inode, and the
 *     agent, not the owner, cannot chmod it open again. Except what the agent made itself (its
 *     uid owns it): a FIFO, a directory and a single-linked regular file stay its own (git, chmod,
 *     touch -d, cp -p on a workspace reused across launches), and each such directory and file
 *     gets a fresh inode (a copy renamed over it), so an earlier reference reaches only the
 *     old, unlinked one;
 *   - every regular file: refused if open elsewhere (a write lease is refused while another
 *     open file description exists: fds, mappings, fds in flight). Not checked while another
 *     instance of the same agent runs (its own opens count) on a workspace already given;
 *   - then every inotify/fanotify mark (/proc/PID/fdinfo) and every open directory fd of a
 *     process outside the agent's cgroups on an inode of the workspaces: refused, naming the
 *     pid (getdents on a directory fd opened before lists what the agent creates).
 * tainted (a cJSON array, or NULL): gets what mncctl_ws_tainted_dirs would append, from the
 * same walk. A refused launch leaves what was already normalised as it is (closed to others). */
int mncctl_ws_give(mnc_kern *k, const char *agent, char *const *ws, int n_ws, uid_t uid, cJSON *tainted);

#endif
