/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* fdscan.h - the agent's non-socket objects that lead outside, judged before each delivery.
 *
 * Why: before it is tainted an agent may talk to anyone, so it can obtain an fd that leads out
 * (an outsider passes it a file it can write, over SCM_RIGHTS) or hand one of its own in-memory
 * objects to an outsider (a pipe end, a memfd, an eventfd). After the taint, what it writes
 * there reaches the outsider without any syscall the kernel layer judges: write(2) on a held fd.
 * mncd cannot take an fd away from another process, so when either is found the delivery is
 * REFUSED (fail closed, audited with what and who):
 *   - foreign_file: a writable fd on a file, FIFO or device outside the agent's workspaces that
 *     is not /dev/null|zero|full (told by identity, char 1:3/5/7, never by the /proc name), a
 *     root-owned terminal the operator could own (/dev/pts/N, /dev/tty, /dev/console; never a
 *     pty master, 5:2), or the launcher's own stdout/stderr inherited on fd 1/2 (docs/kernel.md,
 *     stdio); an fd whose name cannot be read (ENAMETOOLONG) is judged unnamed (fail closed);
 *     and a shared mapping of such a file that is writable or may become so (VM_MAYWRITE);
 *     inside a workspace means equal to it or below it ('/'), never a string prefix;
 *   - held_outside: a pipe, FIFO, memfd (nlink 0), anonymous-inode object or socket (any family,
 *     by its sockfs inode) the agent holds, or any file inside the agent's workspaces (held by
 *     the agent or not: it can reopen it), that another process outside the agent's cgroups
 *     also holds (an fd or a mapping), root included: a helper the agent talked to before its
 *     taint may run as anyone. Not counted: the agent's launcher (`mncctl run`, which relays its
 *     stdio) and the objects the launcher holds on its own fds 0-2 (the operator's stdio, e.g. a
 *     harness's pipes; issue of the stdio relay). mncd itself holds only its own end of an
 *     agent's connection (another inode).
 * Where a socket leads is the socket sweep's (sockscan.h); who else holds it is judged here. The
 * host scan reads /proc/<pid>/{fd,maps} of every other process when the agent has a workspace or
 * holds such an object (smaps of the agent only for shared mappings not writable now). */
#ifndef MNCD_FDSCAN_H
#define MNCD_FDSCAN_H

#include <stddef.h>
#include <sys/types.h>

#include "sockscan.h"

typedef struct mncd_fdscan_hit {
    const char *kind; /* "foreign_file" | "held_outside" */
    pid_t pid;        /* agent process and fd (-1: a mapping) */
    int fd;
    char what[300]; /* path as the kernel names it ("pipe:[123]", "/memfd:x (deleted)", a path) */
    pid_t holder;   /* held_outside: the outside process and its uid */
    uid_t holder_uid;
} mncd_fdscan_hit;

typedef struct mncd_fdscan_stats {
    int fds;       /* non-socket fds of the agent judged */
    int shared;    /* objects looked for outside */
    int host_pids; /* processes scanned outside the agent (0: no host scan needed) */
    long total_us;
} mncd_fdscan_stats;

/* Calls fn(arg, id, err, errlen) for each id listed in `file` ("cgroup.procs": processes,
 * "cgroup.threads": threads) of each cgroup of cgs, in order; a cgroup gone (ENOENT) is skipped,
 * and ids outside 1..INT_MAX are ignored. fn returns 0 to go on, anything else to stop: that
 * value is returned. -1 with err filled when a file cannot be opened or read. */
int mncd_cg_each_id(const mncd_sweep_cg *cgs, int ncg, const char *file,
                    int (*fn)(void *arg, pid_t id, char *err, size_t errlen), void *arg, char *err, size_t errlen);

/* Scans the processes in cgs[0..ncg) (one agent's registered cgroups). Returns 0 when nothing
 * leads outside, 1 with the first finding in *hit, -1 with a reason in err if the scan itself
 * failed (the caller refuses the delivery in both non-zero cases). Needs root. */
int mncd_fdscan(const mncd_sweep_cg *cgs, int ncg, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err,
                size_t errlen);

#endif
