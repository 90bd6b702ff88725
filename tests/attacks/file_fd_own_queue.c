// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* file_fd_own_queue - foreign_file_fd with the file parked in the agent's own socket queue
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
 * also in the queues of sockets found in flight; the lsm backend's file_permission hook. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    char req[700];
    snprintf(req, sizeof(req), "F%s/given.out", atk_arg(c, "dir"));
    int fd = -1, sv[2], iv[2] = {-1, -1};
    if (atk_try(c, "take helper's file fd", atk_take(c, req, &fd, 1)) < 1)
        return 0;
    if (atk_try(c, "socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) < 0)
        return 0;
    int nested = atk_argl(c, "nested") == 1;
    if (nested) {
        if (atk_try(c, "inner socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, iv)) < 0 ||
            atk_try(c, "park the file in the inner queue", atk_send_fds(iv[0], 'F', &fd, 1)) < 0 ||
            atk_try(c, "park the inner socket in the outer queue", atk_send_fds(sv[0], 'S', &iv[1], 1)) < 0)
            return 0;
        close(iv[0]);
        close(iv[1]);
    } else if (atk_try(c, "park the file in our own queue", atk_send_fds(sv[0], 'F', &fd, 1)) < 0)
        return 0;
    close(fd);
    close(sv[0]);
    atk_recv(c);
    int got = -1;
    if (atk_try(c, "take it back", atk_recv_fds(sv[1], &got, 1)) < 1)
        return 0;
    if (nested) {
        int inner = got;
        got = -1;
        if (atk_try(c, "take the file from the inner socket", atk_recv_fds(inner, &got, 1)) < 1)
            return 0;
    }
    atk_try(c, "write", write(got, c->secret, strlen(c->secret)));
    return 0;
}

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "nested", "%d", 0);
    return 0;
}

static const struct atk A = {"file_fd_own_queue",
                             "helper-opened writable file fd parked in the agent's own socket queue across the recv",
                             ATK_NO_RECV | ATK_LIMIT_LSM,
                             prepare,
                             agent,
                             NULL,
                             atkv_given_file_verify,
                             NULL};
ATK_MAIN(A)
