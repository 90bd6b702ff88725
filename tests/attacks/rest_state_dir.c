// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_state_dir - threat model (docs/threat-model.md, "Data at rest"): mncd's own data at rest.
 * Another agent is launched with a read grant on mncd's state directory (its journal holds every
 * object's values), reads state.journal and sends the canary out. In mode root (`--as-root`)
 * DAC does not stop it (the journal is root's, 0600).
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: a read place that reaches mncd's state directory, or a log or memory sink, is
 * refused at launch: only mncd hands that data out, by scope. */
#include <stdlib.h>

#include "atk_variants.h"

static char state[700], journal[760];

static int prepare(struct atk_ctx *c)
{
    snprintf(state, sizeof(state), "%s", getenv("ATK_STATE") ? getenv("ATK_STATE") : "/nonexistent");
    snprintf(journal, sizeof(journal), "%s/state.journal", state);
    return atkv_rest_grant(c, "bystander", journal, state);
}

static const struct atk A = {"rest_state_dir",
                             "another agent granted mncd's state directory (the journal)",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
