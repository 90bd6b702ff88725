// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sink_memory_write - write outside the workspace, straight into a sink the scope forbids:
 * create a file in the memory sink directory (held: docs/threat-model.md).
 * Verifier: reads the sink (agent_memory) after the agent exited.
 * Blocks it: Landlock (writes only in the workspace); the sink file map. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_sink_write_agent(c, 0); }

static const struct atk A = {"sink_memory_write",
                             "create a file in the memory sink directory",
                             0,
                             NULL,
                             agent,
                             NULL,
                             atkv_sink_write_verify,
                             NULL};
ATK_MAIN(A)
