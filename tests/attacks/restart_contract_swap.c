// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_contract_swap - threat model (docs/threat-model.md, "Principals keep their names"):
 * the policy has two contracts from the worker to the coordinator: `wide` (sink partner, the
 * collector) first in the file, then `cal_scope` (sink calendar, harmless). The coordinator
 * holds only a cal_scope object. mncd is restarted, while the agent runs tainted, on the same
 * policy with the two contracts swapped: by position, the object's contract number now means
 * `wide`. The agent then connects to partner's socket and sends the canary (and TCP, stdout).
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: objects, flow records and taint name their contract and sinks (the journal stores
 * names; the pinned sink bits are translated by name at the start): the object stays cal_scope,
 * partner stays refused. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    return atkv_restart_start(
        c, atkv_restart_policy_wide(ATKV_RESTART_AGENTS, ATKV_RESTART_SINKS, "calendar", "coordinator", "partner", 1));
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    atkv_daemon_restart(
        c, atkv_restart_policy_wide(ATKV_RESTART_AGENTS, ATKV_RESTART_SINKS, "calendar", "coordinator", "partner", 0),
        0);
}

static const struct atk A = {"restart_contract_swap",
                             "mncd restarted on a policy with two contracts swapped under a tainted agent",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
