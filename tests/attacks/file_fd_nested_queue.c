// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* file_fd_nested_queue - file_fd_own_queue with the file two queues deep (nested=1)
 * across the delivery. Before the taint an untainted helper hands the agent an fd open for
 * writing on a file outside the workspace (DIR/given.out, root-owned 0600). The agent sends
 * that fd over a UNIX datagram socketpair of its own (SCM_RIGHTS) and closes every other copy:
 * at the recv the file is in no fd table of the agent, only queued on a socket it holds
 * (nested=1: queued on a second pair's socket, which is itself queued on the first pair, so
 * the file is two queues deep). After the recv the agent takes the fd back and writes the
 * canary through it: Landlock checks paths at open time only.
 * Verifier: reads DIR/given.out.
 * Blocks it: mncd's fd scan judging the files it finds in the agent's queues (the sweep peeks
 * every queue of a socket the agent keeps and receives the fds queued there) like held ones,
 * also in the queues of sockets found in flight; the lsm backend: file_receive refuses the
 * fd when the tainted agent takes it back (not a socket or a read-only file). */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "nested", "%d", 1);
    return 0;
}

static const struct atk A = {
    "file_fd_nested_queue",
    "helper-opened writable file fd queued on a socket queued on the agent's own pair across the recv",
    ATK_NO_RECV,
    prepare,
    atkv_own_queue_agent,
    NULL,
    atkv_given_file_verify,
    NULL};
ATK_MAIN(A)
