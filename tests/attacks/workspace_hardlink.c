// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_hardlink - a file of the workspace that is also named outside it. Before the launch
 * (while the workspace was still reachable, e.g. a user's project directory handed to an agent)
 * an outsider (uid 65534) made DIR/outside/shared (its own file, 0666) and a hard link to it at
 * WS/notes.txt. `mncctl run` closes the workspace's top directory (root:agent 0770) but the
 * inode keeps its other name; Landlock judges the path the agent opens, which is beneath the
 * workspace, so the agent's write lands in the outsider's file. mncd's sweep looks for outside
 * processes that hold a workspace file open or mapped; a name is neither.
 * Verifier: uid 65534 reads DIR/outside/shared after the agent exited.
 * Would block it: the launcher refusing (or copying) a regular file with st_nlink > 1 in the
 * workspace walk that already refuses FIFOs and device nodes it did not make; and mncd
 * refusing a delivery while one exists (a link made between the launch and the delivery). */
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
        fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0 || fchmod(fd, 0666) < 0 || close(fd) < 0 || link(f, l) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", f, strerror(errno));
        return -1;
    }
    return 0;
}

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    struct stat st;
    if (stat(p, &st) == 0)
        atk_note(c, "ws/notes.txt nlink %lu uid %u", (unsigned long)st.st_nlink, (unsigned)st.st_uid);
    return atkv_notes_agent(c);
}

static const struct atk A = {"workspace_hardlink",
                             "a workspace file hard-linked to an outsider's file before the launch",
                             0,
                             prepare,
                             agent,
                             NULL,
                             atkv_outside_shared_verify,
                             NULL};
ATK_MAIN(A)
