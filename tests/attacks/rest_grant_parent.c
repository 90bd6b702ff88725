// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_grant_parent - threat model (docs/threat-model.md, "Data at rest"): another agent gets a
 * read grant on the DIRECTORY ABOVE the tainted workspace (a descendant of the grant carries the
 * label, not the grant itself), reads OLD/notes.txt through it and sends it out.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: mncd walks every inode below a read grant at launch; OLD's record and its files'
 * labels are another agent's: the launch is refused. */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char p[760];
    snprintf(p, sizeof(p), "%s/notes.txt", c->ws);
    return atkv_rest_grant(c, "bystander", p, c->dir);
}

static const struct atk A = {"rest_grant_parent",
                             "another agent granted the directory that contains a tainted workspace",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
