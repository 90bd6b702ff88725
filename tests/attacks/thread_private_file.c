// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* thread_private_file - foreign_file_fd through a thread with its own fd table. Before the
 * taint a thread cloned without CLONE_FILES (atk_private_thread) takes from an untainted helper
 * an fd open for writing on a file outside the workspace (DIR/given.out, root-owned 0600); only
 * the thread's table holds it. mncd's fd scan refuses a delivery while the agent holds such an
 * fd, but it reads /proc/PID/fd of the processes in cgroup.procs: the group leader's table.
 * After the delivery the thread writes the canary through the fd (Landlock checks paths at
 * open time only).
 * Verifier: reads DIR/given.out.
 * Blocks it: an fd scan of every task's fd table (/proc/PID/task/TID/fd). */
#include "atk_variants.h"

static int take_file(struct atk_ctx *c)
{
    char req[700];
    snprintf(req, sizeof(req), "F%s/given.out", atk_arg(c, "dir"));
    int fd = -1;
    if (atk_take(c, req, &fd, 1) < 1) {
        errno = errno ? errno : EIO;
        return -1;
    }
    return fd;
}

static int agent(struct atk_ctx *c)
{
    int fd =
        (int)atk_try(c, "a thread with its own fd table takes the helper's file fd", atk_private_thread(c, take_file));
    atk_recv(c);
    if (fd >= 0)
        atk_try(c, "the thread's write after the taint", atk_private_thread_write(c->secret));
    return 0;
}

static const struct atk A = {"thread_private_file",
                             "helper-opened writable file fd held only by a thread with its own fd table",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             atkv_given_file_verify,
                             NULL};
ATK_MAIN(A)
