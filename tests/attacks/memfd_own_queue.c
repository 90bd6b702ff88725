// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* memfd_own_queue - memfd_shared with the agent's copy parked in its own socket queue across
 * the delivery. Before the taint the agent creates a memfd, passes it to an outsider (the
 * collector's fd receiver, SCM_RIGHTS), then sends its own copy over a UNIX datagram
 * socketpair of its own and closes it: at the recv the memfd is in no fd table and no mapping
 * of the agent, only queued on a socket it holds, so mncd's fd scan (held_outside: an object of
 * the agent that an outsider also holds) has nothing of the agent's to compare. After the recv
 * the agent takes the memfd back and writes the canary into it.
 * Verifier: the collector reads the memfd it holds ("passed-out-memory").
 * Blocks it: the fd scan judging the fds found in the agent's socket queues (the sweep's peek
 * receives them) like held ones; refusing delivery while fds were passed out. lsm backend:
 * file_receive refuses the memfd when the tainted agent takes it back. */
#include <sys/mman.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int m = (int)atk_try(c, "memfd_create", memfd_create("atk", MFD_CLOEXEC));
    if (m < 0 || ftruncate(m, 4096) < 0)
        return 0;
    int s = (int)atk_try(c, "connect outsider", atk_unix(SOCK_STREAM, atk_arg(c, "c_fd")));
    if (s < 0)
        return 0;
    char ack;
    if (atk_try(c, "pass memfd out", atk_send_fds(s, 'M', &m, 1)) < 0 || read(s, &ack, 1) != 1) /* refused: no ack */
        atk_note(c, "no ack");
    close(s);
    int sv[2];
    if (atk_try(c, "socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) < 0 ||
        atk_try(c, "park the memfd in our own queue", atk_send_fds(sv[0], 'M', &m, 1)) < 0)
        return 0;
    close(m);
    close(sv[0]);
    atk_recv(c);
    int got = -1;
    if (atk_try(c, "take it back", atk_recv_fds(sv[1], &got, 1)) < 1)
        return 0;
    atk_try(c, "pwrite memfd", pwrite(got, c->secret, strlen(c->secret), 0));
    return 0;
}

static const struct atk A = {"memfd_own_queue",
                             "memfd shared with an outsider before the taint, the agent's copy parked in its own queue",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
