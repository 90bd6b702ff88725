// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_moved - threat model (docs/threat-model.md, "Data at rest"): after the tainted instance
 * exited, an outsider (root) moves the directory it made (OLD/sub) out of the workspace into
 * DIR/grant; another agent is launched with a read grant on DIR/grant, reads sub/deep.txt and
 * sends it out. The workspace record stays on OLD; nothing of OLD is granted.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: the labels are the inodes' (sealed at the exit), and a rename keeps them: refused
 * at launch. (Moving files out of a LIVE tainted workspace before mncd labelled them is root's
 * own copy: docs/threat-model.md, limits.) */
#include <stdio.h>

#include "atk_variants.h"

static char grant[700];

static void between(struct atk_ctx *c);

static int prepare(struct atk_ctx *c)
{
    atk_between = between;
    char p[780];
    if (atkv_rest_dir(c, "grant", grant, sizeof(grant)) < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/sub/deep.txt", grant);
    return atkv_rest_grant(c, "bystander", p, grant);
}

static void between(struct atk_ctx *c)
{
    char src[760], dst[760];
    snprintf(src, sizeof(src), "%s/sub", c->ws);
    snprintf(dst, sizeof(dst), "%s/sub", grant);
    if (atkv_rest_wait_label(src) < 0)
        atk_note(c, "[orchestrator: ws/sub never labelled]");
    if (rename(src, dst) < 0)
        atk_note(c, "[orchestrator: rename failed: %s]", strerror(errno));
}

static const struct atk A = {"rest_moved",
                             "a tainted workspace's directory moved into another agent's grant",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
