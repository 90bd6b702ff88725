// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_hardlink - threat model (docs/threat-model.md, "Data at rest"): while the tainted
 * instance still runs, an outsider (root, e.g. a backup or dedup tool) hard-links the file it
 * wrote into another directory DIR/grant; another agent is launched with a read grant on
 * DIR/grant only - nothing on its path is a workspace - reads the link and sends it out.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: the label is the inode's (trusted.mnc.label, sealed at the exit and before every
 * launch), so the link carries it; mncd walks the grant at launch: refused. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk_variants.h"

static char grant[700], link_[760];

static int prepare(struct atk_ctx *c)
{
    if (atkv_rest_dir(c, "grant", grant, sizeof(grant)) < 0)
        return -1;
    snprintf(link_, sizeof(link_), "%s/n.txt", grant);
    return atkv_rest_grant(c, "bystander", link_, grant);
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char src[760];
    snprintf(src, sizeof(src), "%s/notes.txt", c->ws);
    if (strcmp(tag, "written") == 0 && link(src, link_) < 0)
        atk_note(c, "[orchestrator: link failed: %s]", strerror(errno));
}

static const struct atk A = {"rest_hardlink",
                             "a hard link of a tainted file in another agent's read grant",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
