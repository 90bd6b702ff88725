// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_agent_insert - threat model (docs/threat-model.md, "Principals keep their names"):
 * mncd is restarted, while the coordinator runs tainted, on the policy with one more agent
 * first in the file: by position the coordinator's pinned number is now the worker's. The
 * edited policy also lets the worker issue `relay` (to the bystander): mncd taking the
 * coordinator's instance for the worker, whose flow record is empty, would let it disclose the
 * canary (issue 36's case). The agent connects to the collector, writes to stdout, and
 * discloses the canary to the bystander through mncd (contract relay).
 * Verifier: the collector's listeners, the launcher's stdout, the bystander's inbox.
 * Blocks it: its cgroup is adopted by name (the registration record and the principal
 * binding), keeping its taint; mncd's flow record is rebuilt by name from the journal. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "restart_disclose", "1");
    return atkv_restart_start(c, NULL);
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    atkv_daemon_restart(c,
                        atkv_restart_policy("auditor,worker,coordinator,bystander", ATKV_RESTART_SINKS, "calendar",
                                            "coordinator,worker"),
                        0);
}

static void verify(struct atk_ctx *c)
{
    static char out[1 << 16];
    int n = atk_recv_as(c, "bystander", out, sizeof(out));
    if (n > 0 && atk_buf_has(out, (size_t)n, c->canary))
        atk_evidence(c, "canary in the bystander's inbox (disclosed through mncd after the restart)");
}

static const struct atk A = {"restart_agent_insert",
                             "mncd restarted on a policy with an agent inserted before the tainted one",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             verify,
                             atkv_daemon_stop};
ATK_MAIN(A)
