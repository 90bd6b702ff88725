// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_symlink - a symlink an outsider planted in the workspace before the launch
 * (WS/notes.txt -> DIR/outside/shared, the outsider's own 0666 file; workspace_hardlink is the
 * same with a hard link). The agent opens WS/notes.txt for writing and writes the canary.
 * Verifier: uid 65534 reads DIR/outside/shared after the agent exited.
 * Blocks it: Landlock judges the resolved path (outside the workspace: no write right); lsm:
 * file_open by taint on the resolved file. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

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

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "open ws/notes.txt (symlink) O_WRONLY", open(p, O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (fd < 0)
        return 0;
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char f[720];
    snprintf(f, sizeof(f), "%s/outside/shared", c->dir);
    atk_nobody_reads(c, f);
}

static const struct atk A = {"workspace_symlink",
                             "a workspace symlink to an outsider's file, planted before the launch",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
