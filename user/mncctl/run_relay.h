/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_relay.h - `mncctl run` owns the agent's stdout and stderr (docs/kernel.md, "Stdio").
 *
 * An agent's output streams are a log channel: journald, a container runtime or a log shipper
 * collects whatever the launcher's stdout/stderr carry. So the agent does not get the caller's
 * stdout and stderr: it gets the write ends of two pipes, and the launcher (outside the agent,
 * not subject to its taint) relays what it reads:
 *   - one read() of at most RUN_RELAY_CHUNK bytes is one chunk; AFTER the read, the relay looks
 *     up the agent's taint in the pinned taint map (mnc_kern_taint_get) and decides the chunk:
 *       untainted                                     -> forwarded, unchanged, at once;
 *       tainted, and φ of every held disclosure names the stream's sink (mnc_decide(LOG, id))
 *                                                     -> forwarded;
 *       anything else (tainted without the sink, no taint entry, map error) -> withheld.
 *     The stream's sink is the log sink named "console" when the launcher's own stream is a
 *     terminal (the operator), else the one named "stdout" / "stderr" (policy "stream" sinks).
 *   - withheld chunks go to mncd (admin verb quarantine.put), which keeps them in its
 *     root-only quarantine and audits each; if mncd cannot take them they are dropped, counted,
 *     and the loss is reported on the launcher's stderr (never the bytes) and in the next
 *     quarantine.put's "lost".
 * Ordering guarantee: mncd writes the taint entry before it hands an object to the agent, and
 * the taint only grows while an instance of the agent lives. A byte written after that
 * delivery is in the pipe after the taint is in the map, so the read that returns it precedes
 * the lookup that decides it: it is never forwarded under the older, untainted state.
 */
#ifndef MNCCTL_RUN_RELAY_H
#define MNCCTL_RUN_RELAY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mnc_kern.h"

#define RUN_RELAY_CHUNK 65536

typedef struct run_relay {
    int out[2]; /* stdout pipe: [0] read end (launcher), [1] write end (the agent's fd 1) */
    int err[2]; /* stderr pipe */
    bool active;
    pid_t keeper;  /* holds the agent's cgroup populated until the relay has drained (or -1) */
    int keeper_fd; /* its lifeline: the keeper exits when this closes (or -1) */
} run_relay;

/* Creates both pipes (O_CLOEXEC) and the keeper: a process of the launcher (root, no fds, in
 * cgroup cg, blocked on a pipe) that keeps the agent's cgroup populated until the relay has
 * drained. mncd drops an agent's taint entry when its cgroup empties; without the keeper the
 * last chunk an agent wrote just before exiting could be read after that and decided against
 * a missing entry (withheld, fail closed, but a false block for an untainted agent). If the
 * keeper cannot join the cgroup the relay still works (missing entry: withheld). Call after
 * the cgroup is registered, before fork. 0, or -1 after printing why. With passthrough the
 * relay is inactive and nothing is created (the agent gets the caller's stdio: the operator
 * opted out with --stdio passthrough). */
int run_relay_open(run_relay *r, bool passthrough, const char *cg);

/* In the forked child, before confinement: puts the write ends on fds 1 and 2, closes every
 * pipe fd, and makes fd 0 read-only (a writable stdin - a terminal opened read-write, a socket -
 * would be an output channel around the relay: reopened O_RDONLY through /proc/self/fd/0, else
 * replaced by /dev/null with a note). 0, or -1 with a message in why. No-op if inactive. */
int run_relay_child(run_relay *r, char *why, size_t whylen);

/* In the parent after fork: the streams the child put on private terminals (run_tty.h) are read
 * from their masters (master[i] >= 0) instead of their pipes, whose read ends are closed. */
void run_relay_use_tty(run_relay *r, const int master[2]);

/* In the parent after fork: closes the write ends. No-op if inactive. */
void run_relay_parent(run_relay *r);

/* In the parent: relays until the agent process `pid` has exited (waited for: *status gets its
 * wait status) and both pipes are drained (EOF, or nothing left to read once pid is gone: what
 * other processes of the agent still write afterwards dies with its cgroup). Inactive: a
 * waitpid. k: the open pinned maps; agent/agent_id: the agent; sock: mncd's socket path, or
 * NULL (--kernel-only: withheld bytes are dropped and counted); gate: the agent's seccomp
 * notification fd (run_gate.h), answered meanwhile (also when inactive), or -1. Returns 0, or
 * -1 if waitpid failed (*status is then 127 << 8). */
int run_relay_loop(run_relay *r, mnc_kern *k, const char *agent, uint32_t agent_id, const char *sock, pid_t pid,
                   int gate, int *status);

#endif
