// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_late_link - threat model (docs/threat-model.md, "Data at rest"): another agent is
 * launched with a read grant on an EMPTY directory (nothing labelled at launch: it starts
 * untainted, rightly); then an outsider (root) hard-links the tainted instance's file into it,
 * and the agent reads the link and sends it out.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it (lsm backend): file_open refuses a labelled file the agent's taint does not imply
 * (deny_label; the label is the inode's, file_labels). The cgroup backend decides labels at
 * launch only: a known limit (ATK_LIMIT_CGROUP). */
#include <unistd.h>

#include "atk_variants.h"

static char grant[700], link_[760];

static int prepare(struct atk_ctx *c)
{
    if (atkv_rest_dir(c, "grant", grant, sizeof(grant)) < 0)
        return -1;
    snprintf(link_, sizeof(link_), "%s/n.txt", grant);
    if (atkv_rest_grant(c, "bystander", link_, grant) < 0)
        return -1;
    atk_set(c, "rest_sync2", "1");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char src[760];
    snprintf(src, sizeof(src), "%s/notes.txt", c->ws);
    if (strcmp(tag, "ready") != 0)
        return;
    if (atkv_rest_wait_label(src) < 0)
        atk_note(c, "[orchestrator: notes.txt never labelled]");
    if (link(src, link_) < 0)
        atk_note(c, "[orchestrator: link failed: %s]", strerror(errno));
}

static const struct atk A = {"rest_late_link",
                             "a tainted file hard-linked into another agent's grant after its launch",
                             ATK_RELAUNCH | ATK_NO_CONTROL | ATK_LIMIT_CGROUP,
                             prepare,
                             atkv_rest_agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
