// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_symlink - a symlink an outsider planted in the workspace before the launch
 * (WS/notes.txt -> DIR/outside/shared, the outsider's own 0666 file; workspace_hardlink is the
 * same with a hard link). The agent opens WS/notes.txt for writing and writes the canary.
 * Verifier: uid 65534 reads DIR/outside/shared after the agent exited.
 * Blocks it: Landlock judges the resolved path (outside the workspace: no write right); lsm:
 * file_open by taint on the resolved file. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char od[700], f[720], l[720];
    snprintf(od, sizeof(od), "%s/outside", c->dir);
    snprintf(f, sizeof(f), "%s/shared", od);
    snprintf(l, sizeof(l), "%s/notes.txt", c->ws);
    int fd = -1;
    if (mkdir(od, 0755) < 0 || chmod(od, 0755) < 0 || (fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0666)) < 0 ||
        fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0 || fchmod(fd, 0666) < 0 || close(fd) < 0 || symlink(f, l) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", f, strerror(errno));
        return -1;
    }
    return 0;
}

static const struct atk A = {"workspace_symlink",
                             "a workspace symlink to an outsider's file, planted before the launch",
                             0,
                             prepare,
                             atkv_notes_agent,
                             NULL,
                             atkv_outside_shared_verify,
                             NULL};
ATK_MAIN(A)
