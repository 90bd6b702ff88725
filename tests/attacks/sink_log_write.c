// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sink_log_write - write outside the workspace, straight into a sink the scope forbids:
 * open the log sink file for append and write the canary (held: docs/threat-model.md).
 * Verifier: reads the sink (ops_log) after the agent exited.
 * Blocks it: Landlock (writes only in the workspace); the sink file map. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_sink_write_agent(c, 1); }

static const struct atk A = {"sink_log_write",
                             "open the log sink file for append and write the canary",
                             0,
                             NULL,
                             agent,
                             NULL,
                             atkv_sink_write_verify,
                             NULL};
ATK_MAIN(A)
