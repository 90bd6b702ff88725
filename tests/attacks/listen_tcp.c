// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* listen_tcp - threat model (docs/threat-model.md): listeners created after the taint (and our TCP variant). After the taint the agent creates
 * a TCP listener on 127.0.0.1; an outsider connects and reads: the kernel never judges sends on an accepted socket.
 * Verifier: an untainted root process outside the agent connects while the agent waits and reads.
 * Blocks it: seccomp denies listen() for agents that are not declared servers; a listener rule that
 * holds after the taint. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_listen_agent(c, 't'); }

static const struct atk A = {
    "listen_tcp", "a TCP listener on 127.0.0.1 created after the taint", 0, NULL, agent, atkv_listen_on_sync, NULL,
    NULL};
ATK_MAIN(A)
