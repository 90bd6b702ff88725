/* hostscan.h - one pass over every process OUTSIDE a tainted agent, for mncd's sweep
 * (sockscan.c; docs/kernel.md "Pre-taint connections").
 *
 * Why: the sweep keeps a UNIX connection whose peer is one of the agent's own sockets, and it
 * keeps the agent's workspace files private by their 0700 directory. Both assumptions break
 * when a process outside the agent holds the same socket (a helper's socketpair with both ends
 * given to the agent, or the agent's own pair with one end also given away) or holds an fd, a
 * mapping or its working directory on a file in the workspace: it reads what the agent sends or
 * writes after the taint, and mncd cannot take an fd away from another process. So, while the
 * agent is frozen, mncd walks /proc once:
 *   - /proc/PID/fd of every process except the agent's (skip list) and mncd itself: socket
 *     inodes that are in the caller's interest set (the agent's sockets and their peers) are
 *     recorded with one holder (pid, fd); any other fd whose path is inside a workspace (path
 *     prefix), or, for an instance with a known unprivileged uid, whose file is owned by that
 *     uid on the workspace's device, is recorded as a workspace file held outside;
 *   - /proc/PID/cwd and /proc/PID/root inside a workspace (relative lookups skip the 0700 dir);
 *   - /proc/PID/maps: file mappings whose path is inside a workspace.
 * Limits (stated in docs/kernel.md): it is a snapshot of unfrozen processes: an outsider that
 * keeps a socket moving between outside processes (or in flight between them in SCM_RIGHTS)
 * while the pass runs can be missed; threads that unshared their fd table (/proc/PID/task/TID)
 * are not listed; mappings are matched by path only (a mapping of a workspace file through a
 * hard link elsewhere is missed). Processes that vanish meanwhile are skipped.
 */
#ifndef MNCD_HOSTSCAN_H
#define MNCD_HOSTSCAN_H

#include <stdint.h>
#include <sys/types.h>

#include "sockscan.h"

/* One outside holder of a socket in the interest set. */
typedef struct mncd_holder {
    uint32_t ino;
    pid_t pid;
    int fd;
} mncd_holder;

/* One workspace file held by a process outside the agent. */
typedef struct mncd_wsheld {
    pid_t pid;
    char what[24];  /* "fd 7", "mapping", "cwd", "root" */
    char path[256]; /* as /proc shows it (truncated) */
} mncd_wsheld;

#define MNCD_WSHELD_MAX 32 /* recorded in full; more are only counted (n_ws_held) */

typedef struct mncd_hostscan {
    mncd_holder *h; /* sorted by ino after the pass; one holder per inode */
    int nh, ch;
    mncd_wsheld ws[MNCD_WSHELD_MAX];
    int nws;       /* recorded in ws[] */
    int n_ws_held; /* all found */
    int pids;      /* processes scanned */
    int fds;       /* fds looked at */
    long us;       /* duration of the pass */
} mncd_hostscan;

/* Walks /proc once (see above). skip[0..nskip) must be sorted (the agent's pids); mncd's own
 * pid is skipped too. interest[0..ninterest) must be sorted (socket inodes to find holders
 * of). The workspaces come from cgs (ws, uid_known, uid, root). Returns 0, or -1 with a reason
 * in err when /proc cannot be read or memory runs out (the caller fails closed). A process that
 * exits meanwhile is not an error. Free with mncd_hostscan_free. */
int mncd_hostscan_run(mncd_hostscan *hs, const uint32_t *skip, int nskip, const uint32_t *interest, int ninterest,
                      const mncd_sweep_cg *cgs, int ncg, char *err, size_t errlen);

/* An outside holder of ino, or NULL when no process outside the agent holds it. */
const mncd_holder *mncd_hostscan_holder(const mncd_hostscan *hs, uint32_t ino);

void mncd_hostscan_free(mncd_hostscan *hs);

#endif
