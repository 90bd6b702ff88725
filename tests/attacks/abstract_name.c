// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* abstract_name - threat model (docs/threat-model.md): storage any process can read. The agent binds an abstract UNIX socket NAMED after the canary (bind only, no connect).
 * Verifier: uid 65534 reads /proc/net/unix while the agent waits.
 * Blocks it: Landlock scope does not cover bind; seccomp or a network namespace per agent.
 * Status: a documented remaining covert channel (/proc/net/unix names; docs/threat-model.md gives its bandwidth
 * and what would close it): runs only with MNC_ATTACKS_COVERT=1. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_bound_name_agent(c, 1); }

static const struct atk A = {"abstract_name",
                             "an abstract UNIX socket NAMED after the canary (bind only, no connect)",
                             ATK_COVERT,
                             NULL,
                             agent,
                             atkv_bound_name_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
