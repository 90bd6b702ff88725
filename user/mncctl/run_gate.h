/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_gate.h - calls whose answer depends on the taint, asked of the launcher while the agent
 * runs: every agent's locks, and a server agent's new ways in.
 *
 * Locks: a lock's range carries 126 chosen bits that anyone who can open the file reads back
 * (fcntl F_GETLK, /proc/locks), and no cgroup hook sees a lock. So fcntl F_SETLK, F_SETLKW,
 * F_OFD_SETLK, F_OFD_SETLKW and flock(2) stop here too (run_confine.c): untainted, they go on;
 * tainted, EPERM (taking, changing and dropping alike). On the lsm backend lsm/file_lock refuses
 * them in the kernel as well.
 *
 * shutdown(2): untainted, it goes on; tainted, the launcher does it itself on its copy of the
 * agent's socket (pidfd_getfd) when that is a connected stream or seqpacket socket whose peer
 * has a name (TCP, or a UNIX listener: judged at connect), and refuses it (EPERM) on any other,
 * a socketpair's end included: on an unconnected UDP socket the call fails with ENOTCONN but still
 * records the directions, which sock_diag shows to every user (udp_shutdown_diag,
 * udp_shutdown_autobind). Doing it rather than letting it go on: the agent could move another
 * socket onto the fd number between the launcher's look and the kernel's call.
 *
 * Why a pending call cannot slip past a taint: mncd sets the taint, then freezes the agent's
 * cgroup for its sweep before it delivers. The freezer interrupts a call still waiting for the
 * launcher's answer (the kernel withdraws the notification and restarts the call after the thaw,
 * when the launcher reads the new taint); a call the launcher already let go finishes before the
 * agent is frozen, so with bytes it held before the delivery. (The lsm backend does not freeze;
 * its file_lock hook judges each call in the kernel.)
 *
 * Servers: an agent declared a server may bind() and listen(), and may set the socket options that
 * autobind a UNIX socket (SO_PASSCRED, SO_PASSPIDFD). mncd's sweep shuts a tainted agent's
 * listeners and bound sockets at each delivery, but one made after the last delivery stayed
 * open: an outsider connected and read what the agent wrote on the accepted connection (on the
 * cgroup backend no hook sees those writes; attack server_listen_abstract), or sent it a
 * writable fd. So for a server these calls stop in seccomp (SECCOMP_RET_USER_NOTIF) and the
 * launcher, which holds the notification fd, answers from the agent's taint in the pinned taint
 * map: untainted -> the call goes on (SECCOMP_USER_NOTIF_FLAG_CONTINUE: the decision depends on
 * the taint, not on the call's pointer arguments, so the kernel reading them afterwards is
 * fine); tainted, no taint entry, or a map error -> EPERM. A listener made just before the
 * taint is the sweep's, as before: the syscall finishes before the freezer stops the agent.
 * If the launcher is gone, the kernel fails the call (ENOSYS): closed, not open.
 *
 * The child (run_confine.c) loads the filter, tells the launcher the notification fd's number
 * over a socketpair made before fork, waits while the launcher takes it (pidfd_getfd) and closes
 * its copy before exec: an agent that held it could answer its own calls. Not SCM_RIGHTS: the
 * child is in the agent's cgroup by then, and the lsm backend refuses an agent's fds passed to a
 * socket made outside that cgroup (MNC_K_DENY_FDS_OUT). */
#ifndef MNCCTL_RUN_GATE_H
#define MNCCTL_RUN_GATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mnc_kern.h"

/* Child: tells the launcher on sock the number of its fd, and waits until the launcher says it
 * has taken a copy (the caller may close fd then). 0, or -errno (-EPIPE: the launcher could not
 * take it and closed its end). */
int run_gate_send_fd(int sock, int fd);

/* Launcher: takes a copy of the child's notification fd (pidfd_getfd on child, the number read
 * from sock; blocks until the child sent it or closed its end) and tells the child. The fd
 * (close-on-exec), or -1: the child failed before it loaded the filter, or the copy could not
 * be taken; the child then reports why on the error pipe. */
int run_gate_recv_fd(int sock, pid_t child);

/* Launcher: takes one notification from nfd and answers it for agent `agent`, whose id is
 * *agent_id (updated when a restarted mncd renumbered it: mnc_kern_bind_check; unbound, it
 * counts as tainted). Returns 0, or -errno when nfd failed (the caller stops polling it;
 * pending calls then fail in the agent). *denied counts the refusals. */
int run_gate_answer(int nfd, mnc_kern *k, const char *agent, uint32_t *agent_id, unsigned long *denied);

/* The same with the verdict from untainted_fn(arg) (true: the call goes on), asked once per
 * notification; run_gate_answer's is the taint map. For bench_run, which has no pinned maps. */
int run_gate_answer_with(int nfd, bool (*untainted_fn)(void *arg), void *arg, unsigned long *denied);

#endif
