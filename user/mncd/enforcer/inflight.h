/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* inflight.h - file descriptors in flight in SCM_RIGHTS messages, for mncd's sweep.
 *
 * Why: an fd queued in a UNIX socket's receive queue is held by no process, so a /proc scan
 * never sees it. A helper can queue a socket it created (a "foreign" socket: the cgroup hooks
 * judge it by the helper's cgroup) on a socket of the agent before the taint, and the agent
 * receives it after the sweep. mncd closes that gap on the agent's side:
 *   - a socket it shuts is drained: everything queued is received by mncd (on its pidfd_getfd
 *     copy, which shares the socket) and every fd that arrives is closed, so nothing queued
 *     from outside reaches the agent later;
 *   - a socket it keeps is peeked: MSG_PEEK with SO_PEEK_OFF (saved and restored; the agent is
 *     frozen, so the change is invisible to it) walks the whole queue without consuming it; the
 *     kernel installs a duplicate of every queued fd in mncd, which the sweep judges (and shuts
 *     through the duplicate: it is the same open file).
 * Both are bounded; a queue too long to inspect is an error (the caller fails closed).
 */
#ifndef MNCD_INFLIGHT_H
#define MNCD_INFLIGHT_H

#include <stdint.h>

/* fn gets one in-flight fd (owned by the caller of fn: it is closed after fn returns) and
 * returns 0 or non-zero to stop. */
typedef int (*mncd_inflight_fn)(void *ctx, int fd);

/* Walks sock's receive queue without consuming it; fn for every fd queued (possibly more than
 * once for the same file). type is SOCK_STREAM, SOCK_SEQPACKET or SOCK_DGRAM. *nfds counts the
 * fds seen. Returns 0; fn's non-zero value; or -errno: -E2BIG (more than the bound of messages
 * or bytes), -EMSGSIZE (control data truncated: some fds not seen), a recvmsg/setsockopt
 * error. */
int mncd_peek_inflight(int sock, int type, mncd_inflight_fn fn, void *ctx, int *nfds);

/* Receives and discards everything queued on sock (never blocks), closing every fd that
 * arrives. *nfds, *bytes: what was discarded. Returns 0 or -errno (-E2BIG: bound reached). */
int mncd_drain(int sock, int *nfds, long *bytes);

#endif
