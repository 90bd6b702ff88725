/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* hostscan.h - one pass over every process OUTSIDE a tainted agent, for mncd's socket sweep
 * (sockscan.c; docs/kernel.md "Pre-taint connections").
 *
 * Why: the sweep keeps a UNIX connection whose peer is one of the agent's own sockets. That
 * breaks when a process outside the agent holds the same socket (a helper's socketpair with
 * both ends given to the agent, or the agent's own pair with one end also given away): it
 * reads what the agent sends after the taint. So, while the agent is frozen, mncd walks
 * /proc/PID/fd once, for every process except the agent's (skip list) and mncd itself, root
 * processes included, and records one holder (pid, fd) for each socket inode in the caller's
 * interest set (the agent's sockets and their peers). Only socket links are looked at.
 * (Non-socket objects and workspace files held outside are fdscan.h's.)
 * Limits (stated in docs/kernel.md): it is a snapshot of unfrozen processes: an outsider that
 * keeps a socket moving between outside processes (or in flight between them in SCM_RIGHTS)
 * while the pass runs can be missed; threads that unshared their fd table (/proc/PID/task/TID)
 * are not listed. Processes that vanish meanwhile are skipped.
 */
#ifndef MNCD_HOSTSCAN_H
#define MNCD_HOSTSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One outside holder of a socket in the interest set. */
typedef struct mncd_holder {
    uint32_t ino;
    pid_t pid;
    int fd;
} mncd_holder;

typedef struct mncd_hostscan {
    mncd_holder *h; /* sorted by ino after the pass; every holder found */
    int nh, ch;
    int pids; /* processes scanned */
    int fds;  /* fds looked at */
    long us;  /* duration of the pass */
} mncd_hostscan;

/* Walks /proc once (see above). skip[0..nskip) must be sorted (the agent's pids); mncd's own
 * pid is skipped too. interest[0..ninterest) must be sorted (socket inodes to find holders
 * of). Returns 0, or -1 with a reason in err when /proc cannot be read or memory runs out (the
 * caller fails closed). A process that exits meanwhile is not an error. Free with
 * mncd_hostscan_free. */
int mncd_hostscan_run(mncd_hostscan *hs, const uint32_t *skip, int nskip, const uint32_t *interest, int ninterest,
                      char *err, size_t errlen);

/* An outside holder of ino, or NULL when no process outside the agent holds it. */
const mncd_holder *mncd_hostscan_holder(const mncd_hostscan *hs, uint32_t ino);

void mncd_hostscan_free(mncd_hostscan *hs);

/* The inode of a /proc/PID/fd link text "socket:[12345]" (12345), or 0 if it is not a socket. */
uint32_t mncd_socket_ino(const char *link);

#endif
