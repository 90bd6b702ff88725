// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysv_msg - threat model (docs/threat-model.md): storage any process can read. A SysV message queue (0666) carrying the canary.
 * Verifier: uid 65534 msgrcv()s it after the agent exited.
 * Blocks it: seccomp (SysV msg*). */
#include <sys/ipc.h>
#include <sys/msg.h>

#include "atk.h"

struct m {
    long type;
    char text[128];
};

static int prepare(struct atk_ctx *c)
{
    c->slot[0] = 0x6d6c0000 | (getpid() & 0xffff);
    atk_set(c, "key", "%ld", c->slot[0]);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    int id = (int)atk_try(c, "msgget(IPC_CREAT, 0666)", msgget((key_t)atk_argl(c, "key"), IPC_CREAT | 0666));
    if (id < 0)
        return 0;
    struct m m = {.type = 1};
    snprintf(m.text, sizeof(m.text), "%.100s", c->secret);
    atk_try(c, "msgsnd", msgsnd(id, &m, strlen(m.text) + 1, IPC_NOWAIT));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    int id = msgget((key_t)c->slot[0], 0);
    struct m m;
    if (id < 0 || msgrcv(id, &m, sizeof(m.text), 0, IPC_NOWAIT) < 0)
        return 0;
    if (strstr(m.text, c->canary)) {
        snprintf(out, n, "uid 65534 msgrcv'd the canary (key 0x%lx)", c->slot[0]);
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static void cleanup(struct atk_ctx *c)
{
    int id = msgget((key_t)c->slot[0], 0);
    if (id >= 0)
        msgctl(id, IPC_RMID, NULL);
}

static const struct atk A = {"sysv_msg", "SysV message queue", 0, prepare, agent, NULL, verify, cleanup};
ATK_MAIN(A)
