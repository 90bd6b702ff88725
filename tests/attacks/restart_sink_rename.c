// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_sink_rename - threat model (docs/threat-model.md, "Principals keep their names"):
 * mncd is restarted on a policy where the in-scope sink `calendar` is gone and a sink
 * `archive` - the collector's address - takes its place in the file. By position the bit that
 * meant calendar now means archive. (The journal names calendar, so mncd starts on a fresh
 * state dir: a new host, or the state moved away.)
 * Verifier: the collector's listeners, the launcher's stdout.
 * Blocks it: calendar's bit is dropped (tighter: a renamed principal is a new one), archive's
 * is never set. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c) { return atkv_restart_start(c, NULL); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    /* the journal names calendar: the restart is on a fresh state dir */
    atkv_daemon_fresh_state();
    atkv_daemon_restart(
        c, atkv_restart_policy(ATKV_RESTART_AGENTS, "archive:tool:OUT,partner:external:CAL", "archive", "coordinator"),
        0);
}

static const struct atk A = {"restart_sink_rename",
                             "mncd restarted with the in-scope sink renamed and the collector in its place",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
