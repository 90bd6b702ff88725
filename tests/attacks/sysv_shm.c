// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysv_shm - threat model (docs/threat-model.md): storage any process can read. A SysV shared memory segment (0666) holding the canary.
 * Verifier: uid 65534 attaches it read-only after the agent exited.
 * Blocks it: seccomp (SysV shm*). */
#include <sys/ipc.h>
#include <sys/shm.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    c->slot[0] = 0x6d6d0000 | (getpid() & 0xffff);
    atk_set(c, "key", "%ld", c->slot[0]);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    int id = (int)atk_try(c, "shmget(IPC_CREAT, 0666)", shmget((key_t)atk_argl(c, "key"), 4096, IPC_CREAT | 0666));
    if (id < 0)
        return 0;
    char *p = shmat(id, NULL, 0);
    if (atk_try(c, "shmat", p == (void *)-1 ? -1 : 0) == 0) {
        snprintf(p, 4096, "%s", c->secret);
        shmdt(p);
    }
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    int id = shmget((key_t)c->slot[0], 0, 0);
    if (id < 0)
        return 0;
    char *p = shmat(id, NULL, SHM_RDONLY);
    if (p == (void *)-1)
        return 0;
    int found = atk_buf_has(p, 4096, c->canary);
    shmdt(p);
    if (found)
        snprintf(out, n, "uid 65534 read the canary from SysV shm (key 0x%lx)", c->slot[0]);
    return found;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static void cleanup(struct atk_ctx *c)
{
    int id = shmget((key_t)c->slot[0], 0, 0);
    if (id >= 0)
        shmctl(id, IPC_RMID, NULL);
}

static const struct atk A = {"sysv_shm", "SysV shared memory", 0, prepare, agent, NULL, verify, cleanup};
ATK_MAIN(A)
