// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_sink_reload - threat model (docs/threat-model.md, "Principals keep their names"):
 * as restart_sink_swap, but mncd reloads with SIGHUP (a validated restart in place, same pid)
 * instead of a stop and start.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: the reload binds the pinned numbers by name exactly as a start does. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c) { return atkv_restart_start(c, NULL); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    atkv_daemon_restart(
        c,
        atkv_restart_policy(ATKV_RESTART_AGENTS, "partner:external:OUT,calendar:tool:CAL", "calendar", "coordinator"),
        1);
}

static const struct atk A = {"restart_sink_reload",
                             "SIGHUP (reload) on a policy with two sinks swapped under a tainted agent",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
