// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_read_grant_other - threat model (docs/threat-model.md, "Data at rest"): run 1 (the
 * tainted coordinator) writes the canary into its workspace OLD and exits; ANOTHER agent (the
 * bystander; in mode root `--as-root`) is launched with a read grant on OLD, reads the file and
 * sends it out (issue 36's second case).
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: a read grant over another agent's labelled data is refused at launch unless the
 * reader's policy names the flow ("reads_from"): the bystander never runs. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char p[760];
    snprintf(p, sizeof(p), "%s/notes.txt", c->ws);
    return atkv_rest_grant(c, "bystander", p, c->ws);
}

static const struct atk A = {"rest_read_grant_other",
                             "another agent launched with a read grant on a tainted workspace",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
