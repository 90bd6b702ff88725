// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_comm - threat model (docs/threat-model.md): storage any process can read. prctl(PR_SET_NAME) sets the agent's task name to the canary;
 * every process can read /proc/PID/comm.
 * Verifier: uid 65534 scans /proc/N/comm while the agent waits.
 * Blocks it: hidepid=2 on the /proc other users see, or seccomp on prctl(PR_SET_NAME). */
#include <sys/prctl.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    atk_try(c, "prctl(PR_SET_NAME)", prctl(PR_SET_NAME, c->secret, 0, 0, 0));
    atk_sync(c, "named");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n) { return atk_scan_proc("comm", c->canary, out, n); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[256];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "uid 65534 read the canary in %s", out);
}

static const struct atk A = {"proc_comm", "process name (PR_SET_NAME) read from /proc", 0, NULL, agent, on_sync, NULL,
                             NULL};
ATK_MAIN(A)
