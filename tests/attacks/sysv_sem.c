// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysv_sem - threat model (docs/threat-model.md): storage any process can read. The agent creates a SysV semaphore set (mode 0666) and stores the
 * canary's bytes as semaphore values; any process can read them (GETVAL).
 * Verifier: uid 65534 reads the values after the agent exited.
 * Blocks it: seccomp denies semget/semctl/semop (all SysV IPC); an IPC namespace. */
#include <sys/ipc.h>
#include <sys/sem.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    c->slot[0] = 0x6d6b0000 | (getpid() & 0xffff);
    atk_set(c, "key", "%ld", c->slot[0]);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    size_t n = strlen(c->secret);
    int id = (int)atk_try(c, "semget(IPC_CREAT, 0666)", semget((key_t)atk_argl(c, "key"), (int)n, IPC_CREAT | 0666));
    if (id < 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (semctl(id, (int)i, SETVAL, (int)(unsigned char)c->secret[i]) < 0) {
            atk_try(c, "semctl SETVAL", -1);
            return 0;
        }
    atk_note(c, "semctl SETVAL x%zu: OK", n);
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    int id = semget((key_t)c->slot[0], 0, 0);
    if (id < 0)
        return 0;
    char s[64] = "";
    for (int i = 0; i < 14; i++) {
        int v = semctl(id, i, GETVAL);
        if (v < 0)
            return 0;
        s[i] = (char)v;
    }
    if (strcmp(s, c->canary) == 0) {
        snprintf(out, n, "uid 65534 read the canary from SysV semaphore values (key 0x%lx)", c->slot[0]);
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static void cleanup(struct atk_ctx *c)
{
    int id = semget((key_t)c->slot[0], 0, 0);
    if (id >= 0)
        semctl(id, 0, IPC_RMID);
}

static const struct atk A = {"sysv_sem", "SysV semaphore values", 0, prepare, agent, NULL, verify, cleanup};
ATK_MAIN(A)
