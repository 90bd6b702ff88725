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
 *   - held_outside: an object the agent holds (a pipe, FIFO, memfd (nlink 0), socket of any
 *     family, anonymous-inode object (eventfd, epoll, timerfd, signalfd, inotify, ...), pidfd),
 *     or any file inside the agent's workspaces (held by the agent or not: it can reopen it),
 *     that a process outside the agent's cgroups also holds, root included (a helper the agent
 *     talked to before its taint may run as anyone): as an fd (in any thread's table), a
 *     mapping, a working or root directory, a watch of its epoll instance, an inotify or
 *     fanotify mark, or a registered file of its io_uring. Identity is the kernel's, never a
 *     name or a convenient key: where the inode is the object (pipe, FIFO, memfd, socket,
 *     file) by (device, inode); where it is not - every anonymous-inode file on the host shares
 *     one inode, every pidfd of a process its pidfs inode - by the open file description
 *     (kcmp KCMP_FILE, KCMP_EPOLL_TFD against mncd's own copy of the agent's file), so an
 *     eventfd systemd holds is not the agent's. Where the kernel gives no exact way (an
 *     outside mapping of an anonymous-inode file, an io_uring's registered anonymous-inode
 *     file, a mark on the shared anonymous inode, a ring whose registered files cannot be
 *     read), an object of the same kind counts (fail closed). Not counted: the agent's launcher
 *     (`mncctl run`, which relays its stdio) and the objects the launcher holds on its own fds
 *     0-2 (the operator's stdio, e.g. a harness's pipes). mncd itself holds only its own end of
 *     an agent's connection (another inode) and its copies.
 * Where a socket leads is the socket sweep's (sockscan.h); who else holds it is judged here.
 *
 * Two phases, so the agent is stopped only for its own part: mncd_fdscan_agent reads the
 * agent's /proc/PID/{fd,fdinfo,maps} (smaps only for shared mappings not writable now) and must
 * run while the agent's cgroups are frozen (with the socket sweep: an fd it moves between its
 * table and its own socket queue is seen once); mncd_fdscan_host then reads
 * /proc/PID/{fd,task,cwd,root,maps} and the fdinfo of epoll, inotify, fanotify and io_uring fds
 * of every other process, and may run after the thaw. Why that is as sound as a frozen pass:
 * outsiders are never frozen, so any pass sees what they hold while it reads them, and an
 * outsider that lets go of a reference meanwhile (parks it in flight in a socket queue of its
 * own, or closes it once it has served) is not seen either way (docs/kernel.md); by the thaw
 * the agent is tainted (no new connection out), the sweep has shut what leads out, and the
 * comparison is against mncd's copies, not the agent's fd numbers, which may move. */
#ifndef MNCD_FDSCAN_H
#define MNCD_FDSCAN_H

#include <stddef.h>
#include <sys/types.h>

#include "sockscan.h"

typedef struct mncd_fdscan_hit {
    const char *kind; /* "foreign_file" | "held_outside" */
    pid_t pid;        /* agent process and fd (-1: a mapping) */
    int fd;
    char what[300]; /* path as the kernel names it ("pipe:[123]", "anon_inode:[eventfd]", a path) */
    pid_t holder;   /* held_outside: the outside process and its uid */
    uid_t holder_uid;
    int holder_fd;   /* held_outside: the holder's fd (-1: a mapping, a directory) */
    const char *via; /* held_outside: how ("an fd", "a mapping", "a watch of its epoll instance",
                        "an inotify or fanotify mark", "a registered file of its io_uring", ...) */
} mncd_fdscan_hit;

typedef struct mncd_fdscan_stats {
    int fds;       /* non-socket fds of the agent judged */
    int shared;    /* objects looked for outside */
    int host_pids; /* processes scanned outside the agent (0: no host scan needed) */
    int host_fds;  /* their fds looked at */
    int kcmp;      /* open file descriptions compared (kcmp) */
    long agent_us; /* the agent's side (while it is frozen) */
    long host_us;  /* the host pass */
    long total_us;
} mncd_fdscan_stats;

typedef struct mncd_fdscan_state mncd_fdscan_state;

/* Calls fn(arg, id, err, errlen) for each id listed in `file` ("cgroup.procs": processes,
 * "cgroup.threads": threads) of each cgroup of cgs, in order; a cgroup gone (ENOENT) is skipped,
 * and ids outside 1..INT_MAX are ignored. fn returns 0 to go on, anything else to stop: that
 * value is returned. -1 with err filled when a file cannot be opened or read. */
int mncd_cg_each_id(const mncd_sweep_cg *cgs, int ncg, const char *file,
                    int (*fn)(void *arg, pid_t id, char *err, size_t errlen), void *arg, char *err, size_t errlen);

/* Phase 1, with cgs[0..ncg) (one agent's registered cgroups) frozen: judges the agent's fds and
 * mappings and keeps what to look for outside in *fs (free it with mncd_fdscan_free in every
 * case; cgs must stay valid until then). Returns 0 when nothing leads outside so far, 1 with
 * the first finding in *hit, -1 with a reason in err if the scan itself failed (the caller
 * refuses the delivery in both non-zero cases). Needs root. st may be NULL. */
int mncd_fdscan_agent(mncd_fdscan_state **fs, const mncd_sweep_cg *cgs, int ncg, mncd_fdscan_hit *hit,
                      mncd_fdscan_stats *st, char *err, size_t errlen);
/* Phase 2, the agent may run: does a process outside hold what phase 1 found? Same returns. */
int mncd_fdscan_host(mncd_fdscan_state *fs, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err, size_t errlen);
/* Closes mncd's copies and frees fs (NULL is fine). */
void mncd_fdscan_free(mncd_fdscan_state *fs);

/* Both phases in one call (the caller keeps cgs frozen throughout, or accepts that it is not). */
int mncd_fdscan(const mncd_sweep_cg *cgs, int ncg, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err,
                size_t errlen);

#endif
