// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_path_name - threat model (docs/threat-model.md): storage any process can read. The agent binds a UNIX socket bound at WS/<canary> (the path shows in /proc/net/unix even if the workspace is 0700).
 * Verifier: uid 65534 reads /proc/net/unix while the agent waits.
 * Blocks it: a network namespace per agent (/proc/net/unix is per netns); hidepid does not cover /proc/net.
 * Status: a documented remaining covert channel (/proc/net/unix names; docs/threat-model.md gives its bandwidth
 * and what would close it): runs only with MNC_ATTACKS_COVERT=1. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_bound_name_agent(c, 0); }

static const struct atk A = {
    "unix_path_name",
    "a UNIX socket bound at WS/<canary> (the path shows in /proc/net/unix even if the workspace is 0700)",
    ATK_COVERT,
    NULL,
    agent,
    atkv_bound_name_on_sync,
    NULL,
    NULL};
ATK_MAIN(A)
