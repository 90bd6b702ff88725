// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_read_grant - threat model (docs/threat-model.md, "Data at rest"): run 1 (the tainted
 * coordinator) writes the canary into its workspace OLD and exits; run 2 of the SAME agent is
 * launched on a fresh workspace with a read grant on OLD (`mncctl run --workspace NEW --read
 * OLD`): it receives nothing, reads the file and sends it out (issue 36's first case).
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: mncd decides the label of every read place at launch: run 2 starts with OLD's
 * (tainted, no sinks), its connects get EPERM and its stdout is withheld. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char p[760];
    snprintf(p, sizeof(p), "%s/notes.txt", c->ws);
    return atkv_rest_grant(c, NULL, p, c->ws);
}

static const struct atk A = {"rest_read_grant",
                             "the same agent relaunched with a read grant on its tainted workspace",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
