// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fd_pingpong_race - file_fd_own_queue against the timing of mncd's two looks. Before the
 * taint an untainted helper hands the agent an fd open for writing on a file outside the
 * workspace (DIR/given.out). A second thread of the agent keeps moving it between its fd table
 * and its own socket queue (sendmsg, close, recvmsg, ...) while the main thread asks for the
 * object, again and again if a delivery is refused. mncd's sweep peeks the queues while the
 * agent is frozen; if its fd scan (which reads /proc/PID/fd) ran after the thaw, an fd that was
 * in the table during the peek and in flight during the scan was seen by neither.
 * Verifier: reads DIR/given.out.
 * Blocks it: cgroup backend: the queue peek and the fd scan in one freeze. lsm backend:
 * file_receive refuses the fd once the agent is tainted. */
#include <pthread.h>
#include <stdatomic.h>

#include "atk_variants.h"

static atomic_int stop_flag;
static int sp[2], held = -1;

static void *pingpong(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_flag)) {
        if (atk_send_fds(sp[0], 'P', &held, 1) < 0)
            break;
        close(held);
        held = -1;
        if (atk_recv_fds(sp[1], &held, 1) != 1)
            break;
    }
    return NULL;
}

static int agent(struct atk_ctx *c)
{
    char req[800];
    snprintf(req, sizeof(req), "F%s/given.out", atk_arg(c, "dir"));
    if (atk_try(c, "take helper's file fd", atk_take(c, req, &held, 1) == 1 ? 0 : -1) < 0)
        return 0;
    if (atk_try(c, "socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp)) < 0)
        return 0;
    pthread_t t;
    if (atk_try(c, "start the ping-pong thread", -pthread_create(&t, NULL, pingpong, NULL)) < 0)
        return 0;
    char why[300] = "";
    int tries = 0, got = -2;
    c->retry_refused = 1;
    for (; tries < 40 && got == -2; tries++)
        got = atk_recv_soft(c, why, sizeof(why));
    atomic_store(&stop_flag, 1);
    pthread_join(t, NULL);
    atk_note(c, "deliveries asked: %d, last refusal: %s", tries, got < 0 ? why : "(delivered)");
    if (got < 0)
        return 0;
    if (held < 0)
        atk_try(c, "take the fd back from the queue", atk_recv_fds(sp[1], &held, 1) == 1 ? 0 : -1);
    if (held >= 0)
        atk_try(c, "write the canary through it", write(held, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {"fd_pingpong_race",
                             "a writable file fd moved between the fd table and the agent's own queue during delivery",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             atkv_given_file_verify,
                             NULL};
ATK_MAIN(A)
