/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_gate.h - a server agent's new ways in, asked of the launcher while the agent runs.
 *
 * Why: an agent declared a server may bind() and listen(), and may set the socket options that
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

/* Launcher: takes one notification from nfd and answers it for agent agent_id. Returns 0, or
 * -errno when nfd failed (the caller stops polling it; pending calls then fail in the agent).
 * *denied counts the refusals. */
int run_gate_answer(int nfd, mnc_kern *k, uint32_t agent_id, unsigned long *denied);

#endif
