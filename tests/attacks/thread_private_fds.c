// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* thread_private_fds - a pre-taint UNIX connection to an outsider held only in the fd table of
 * a THREAD that does not share its process's fd table. clone(CLONE_VM | CLONE_THREAD ...)
 * without CLONE_FILES gives the thread a private copy of the table (kernel/fork.c, copy_files);
 * the thread connects to the collector before the taint (atk_private_thread). cgroup.procs
 * lists thread group ids and /proc/TGID/fd is the group leader's table: a sweep that reads only
 * those never sees the thread's socket (it is in /proc/TGID/task/TID/fd). After the delivery the
 * leader hands the canary to the thread through their shared memory, and the thread writes it
 * to the connection (a send on a connected socket: no cgroup hook).
 * Verifier: the collector's unix-stream listener.
 * Blocks it: mncd's sweep at delivery, if it finds every socket of every thread (each task's fd
 * table, /proc/PID/task/TID/fd), shuts the pre-taint connection to the outsider. */
#include "atk.h"

static int open_conn(struct atk_ctx *c) { return atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")); }

static int agent(struct atk_ctx *c)
{
    int fd =
        (int)atk_try(c, "a thread with its own fd table connects before the taint", atk_private_thread(c, open_conn));
    atk_recv(c);
    if (fd >= 0)
        atk_try(c, "the thread's write after the taint", atk_private_thread_write(c->secret));
    return 0;
}

static const struct atk A = {"thread_private_fds",
                             "a pre-taint UNIX connection held only by a thread with its own fd table",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
