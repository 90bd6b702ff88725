// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_fd_keep - threat model (docs/threat-model.md, "Data at rest"): another agent is launched
 * with an fd on the tainted instance's file passed in (`mncctl run --keep-fd 9`, the file opened
 * by whoever starts the agent), reads it and sends it out. No path of the file is granted.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: the launcher names the fds the agent inherits at agent.register; mncd reads the
 * label of what each one refers to (/proc/<launcher>/fd/N, by inode): refused. */
#include "atk_variants.h"

static char path[760];

static int prepare(struct atk_ctx *c)
{
    snprintf(path, sizeof(path), "%s/notes.txt", c->ws);
    if (atkv_rest_prepare(c, "bystander", NULL) < 0)
        return -1;
    c->launch2_keep_path = path;
    atk_set(c, "rest_fd", "1");
    return 0;
}

static const struct atk A = {"rest_fd_keep",
                             "a tainted file passed to another agent as an inherited fd",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
