// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* listen_unix_abstract - threat model (docs/threat-model.md): listeners created after the taint (and our TCP variant). After the taint the agent creates
 * an abstract UNIX stream listener; an outsider connects and reads: the kernel never judges sends on an accepted socket.
 * Verifier: an untainted root process outside the agent connects while the agent waits and reads.
 * Blocks it: seccomp denies listen() for agents that are not declared servers; a listener rule that
 * holds after the taint. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_listen_agent(c, 'a'); }

static const struct atk A = {"listen_unix_abstract",
                             "an abstract UNIX stream listener created after the taint",
                             0,
                             NULL,
                             agent,
                             atkv_listen_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
