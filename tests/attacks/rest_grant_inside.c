// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_grant_inside - threat model (docs/threat-model.md, "Data at rest"): another agent gets a
 * read grant on a SUBDIRECTORY the tainted instance made inside its workspace (OLD/sub), reads
 * OLD/sub/deep.txt and sends it out: the workspace record sits on OLD, above the grant.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: mncd reads the labels of a grant's ancestors and of every inode in it (OLD's
 * record, the labels sealed on sub and deep.txt at the exit): refused. */
#include "atk_variants.h"

static char sub[760];

static int prepare(struct atk_ctx *c)
{
    char p[780];
    snprintf(sub, sizeof(sub), "%s/sub", c->ws);
    snprintf(p, sizeof(p), "%s/deep.txt", sub);
    return atkv_rest_grant(c, "bystander", p, sub);
}

static const struct atk A = {"rest_grant_inside",
                             "another agent granted a directory inside a tainted workspace",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
