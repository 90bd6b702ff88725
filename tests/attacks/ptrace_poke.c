// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ptrace_poke - the agent attaches to an outsider (the collector) with ptrace and pokes the
 * canary into its memory buffer (held: docs/threat-model.md).
 * Verifier: the collector reports its buffer at the end.
 * Blocks it: Yama/ptrace access mode (no CAP_SYS_PTRACE, another uid), Landlock's domain check
 * (a sandboxed process cannot ptrace outside its domain). */
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    pid_t pid = (pid_t)atk_argl(c, "cpid");
    char *addr = (char *)strtoul(atk_arg(c, "vmaddr"), NULL, 16);
    if (atk_try(c, "PTRACE_SEIZE", ptrace(PTRACE_SEIZE, pid, 0, 0)) < 0)
        return 0;
    atk_try(c, "PTRACE_INTERRUPT", ptrace(PTRACE_INTERRUPT, pid, 0, 0));
    waitpid(pid, NULL, __WALL);
    char buf[16] = {0};
    memcpy(buf, c->secret, strlen(c->secret) < 16 ? strlen(c->secret) : 16);
    for (int i = 0; i < 16; i += (int)sizeof(long)) {
        long w;
        memcpy(&w, buf + i, sizeof(w));
        atk_try(c, "PTRACE_POKEDATA", ptrace(PTRACE_POKEDATA, pid, addr + i, (void *)w));
    }
    ptrace(PTRACE_DETACH, pid, 0, 0);
    return 0;
}

static const struct atk A = {"ptrace_poke", "ptrace POKEDATA into an outsider's memory", 0, NULL, agent, NULL, NULL,
                             NULL};
ATK_MAIN(A)
