/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_tty.h - the agent's stdout and stderr as terminals of its own, when the caller's are.
 *
 * Programs decide colours, line buffering, progress bars and widths by isatty(1). Under the stdio
 * relay (run_relay.h) the agent writes into pipes, so it never saw a terminal. When the caller's
 * stdout (stderr) is a terminal, the agent now gets a pseudo-terminal instead of that pipe,
 * relayed the same way: the launcher reads the master side and decides each chunk by the taint.
 *
 * The pty is nobody else's: it is made between fork and exec, in the agent's mount namespace
 * (run_mntns.h), by a devpts instance of its own mounted on the namespace's /dev/pts
 * (newinstance, mode 0600, ptmxmode 0600, max = the number of streams). The host's /dev/pts
 * never lists it, so no outsider can open it, read what the agent writes before the relay decides,
 * or watch its inode's times; only root reaches it, through the agent's /proc entries, as it
 * reaches the pipes. The agent cannot make another one (the instance is full, and Landlock denies
 * /dev/pts and /dev/ptmx), nor change the terminal's settings or size (the seccomp filter refuses
 * those ioctls, run_filter.c), nor make it a controlling terminal (TIOCSCTTY refused; it has
 * none: a session of its own). Output processing is off (no "\n" -> "\r\n"): the relay passes the
 * agent's bytes unchanged, as with a pipe; the window size is the caller's at the launch.
 * Any failure keeps the pipe: the agent starts without a terminal, never not at all. */
#ifndef MNCCTL_RUN_TTY_H
#define MNCCTL_RUN_TTY_H

#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>

typedef struct run_tty {
    bool want[2];          /* stdout, stderr: the caller's fd 1 / 2 is a terminal (and the relay is on) */
    struct winsize wsz[2]; /* its size */
} run_tty;

/* In the launcher, before fork: which streams get a pty (relay on, caller's fd a terminal). */
void run_tty_plan(run_tty *t, bool relay_active);

/* In the child, in its own mount namespace and still privileged, after fds 1 and 2 are the relay's
 * pipes: for each wanted stream makes a pty in a private devpts instance on /dev/pts, puts its
 * slave on fd 1 / 2 (write-only) and hands the master to the launcher over sock, in stream order.
 * A stream whose pty cannot be made keeps its pipe and hands over "none". Returns 0, or -1 with
 * why if the launcher could not be told (the launch fails then). */
int run_tty_child(const run_tty *t, int sock, char *why, size_t whylen);

/* In the launcher, after fork, before the seccomp listener (run_gate_recv_fd): the masters the
 * child handed over, -1 where it kept the pipe (or failed). */
void run_tty_receive(const run_tty *t, int sock, pid_t child, int master[2]);

#endif
