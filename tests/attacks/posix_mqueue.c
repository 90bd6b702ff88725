// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* posix_mqueue - threat model (docs/threat-model.md): storage any process can read. A POSIX message queue (/mnc-atk-N, 0666) with the canary.
 * Verifier: uid 65534 mq_receive()s it after the agent exited.
 * Blocks it: seccomp (mq_open and friends). */
#include <fcntl.h>
#include <mqueue.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "mq", "/mnc-atk-%d", getpid());
    return 0;
}

static int agent(struct atk_ctx *c)
{
    struct mq_attr at = {.mq_maxmsg = 4, .mq_msgsize = 128};
    mqd_t q = mq_open(atk_arg(c, "mq"), O_CREAT | O_WRONLY, 0666, &at);
    if (atk_try(c, "mq_open(O_CREAT, 0666)", q == (mqd_t)-1 ? -1 : 0) == 0)
        atk_try(c, "mq_send", mq_send(q, c->secret, strlen(c->secret), 0));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    mqd_t q = mq_open(atk_arg(c, "mq"), O_RDONLY | O_NONBLOCK);
    if (q == (mqd_t)-1)
        return 0;
    char buf[256];
    ssize_t r = mq_receive(q, buf, sizeof(buf), NULL);
    mq_close(q);
    if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary)) {
        snprintf(out, n, "uid 65534 mq_receive'd the canary from %s", atk_arg(c, "mq"));
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static void cleanup(struct atk_ctx *c) { mq_unlink(atk_arg(c, "mq")); }

static const struct atk A = {"posix_mqueue", "POSIX message queue", 0, prepare, agent, NULL, verify, cleanup};
ATK_MAIN(A)
