// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_bindmount - threat model (docs/threat-model.md, "Data at rest"): an outsider (root)
 * bind-mounts the directory the tainted instance made in its workspace (OLD/sub) at
 * DIR/grant/m; another agent is launched with a read grant on DIR/grant, reads m/deep.txt and
 * sends it out. By path nothing in the grant is, or lies in, a workspace.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: labels are on the inodes the mount shows, and mncd also reads a place's ancestors
 * inside its filesystem (/proc/self/mountinfo): refused at launch. */
#include <sys/mount.h>
#include <sys/stat.h>

#include "atk_variants.h"

static char grant[700], mnt[760];

static void between(struct atk_ctx *c);

static int prepare(struct atk_ctx *c)
{
    atk_between = between;
    char p[780];
    if (atkv_rest_dir(c, "grant", grant, sizeof(grant)) < 0)
        return -1;
    snprintf(mnt, sizeof(mnt), "%s/m", grant);
    if (mkdir(mnt, 0755) < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/deep.txt", mnt);
    return atkv_rest_grant(c, "bystander", p, grant);
}

static void between(struct atk_ctx *c)
{
    char src[760];
    snprintf(src, sizeof(src), "%s/sub", c->ws);
    if (mount(src, mnt, NULL, MS_BIND, NULL) < 0)
        atk_note(c, "[orchestrator: bind mount failed: %s]", strerror(errno));
}

static void cleanup(struct atk_ctx *c)
{
    (void)c;
    umount2(mnt, MNT_DETACH);
}

static const struct atk A = {"rest_bindmount",
                             "a bind mount of a tainted workspace's directory in another agent's grant",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             cleanup};
ATK_MAIN(A)
