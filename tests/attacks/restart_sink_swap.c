// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_sink_swap - threat model (docs/threat-model.md, "Principals keep their names"): the
 * coordinator holds an object whose scope allows the tool `calendar` (a harmless listener) and
 * not the external `partner` (the collector). mncd is restarted, while the agent runs tainted,
 * on the same policy with the two sinks swapped in the file. The agent then connects to
 * partner's socket and sends the canary (and to TCP, and stdout).
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: the pinned numbers are bound to names (the principals map); the restart translates
 * the taint's bits by name before anything uses the new numbers: calendar's bit follows
 * calendar, partner stays refused. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c) { return atkv_restart_start(c, NULL); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    atkv_daemon_restart(
        c,
        atkv_restart_policy(ATKV_RESTART_AGENTS, "partner:external:OUT,calendar:tool:CAL", "calendar", "coordinator"),
        0);
}

static const struct atk A = {"restart_sink_swap",
                             "mncd restarted on a policy with two sinks swapped under a tainted agent",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
