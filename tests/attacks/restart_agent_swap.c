// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_agent_swap - threat model (docs/threat-model.md, "Principals keep their names"):
 * mncd is restarted with the coordinator and the worker swapped in the file: the coordinator's
 * old number is now the untainted worker's. Its launcher (mncctl run) keeps relaying stdout by
 * the number it was given at launch, so after the restart the agent writes the canary to
 * stdout, and to the collector.
 * Verifier: the launcher's stdout, the collector's listeners.
 * Blocks it: the taint moves with the name; the relay and the launcher's gate check their
 * numbers against the binding before each verdict (mnc_kern_bind_check). */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c) { return atkv_restart_start(c, NULL); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    atkv_daemon_restart(
        c, atkv_restart_policy("coordinator,worker,bystander", ATKV_RESTART_SINKS, "calendar", "coordinator"), 0);
}

static const struct atk A = {"restart_agent_swap",
                             "mncd restarted with the tainted agent and an untainted one swapped",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
