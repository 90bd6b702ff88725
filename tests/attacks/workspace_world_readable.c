// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_world_readable - threat model (docs/threat-model.md): storage any process can read. The agent writes the canary into a file in its
 * workspace with mode 0644 (it leaves the workspace's mode as the launcher set it); any local user
 * reads it.
 * Verifier: uid 65534 reads WS/out.txt after the agent exited.
 * Blocks it: the launcher makes the workspace 0700 and owned by the agent's uid. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/out.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "create ws/out.txt", open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    if (fd < 0)
        return 0;
    atk_try(c, "fchmod 0644", fchmod(fd, 0644));
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/out.txt", c->ws);
    if (atk_file_has(p, c->canary) == 1) {
        snprintf(out, n, "uid 65534 read the canary from %s", p);
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static const struct atk A = {"workspace_world_readable",
                             "a 0644 file in the workspace, read by another uid",
                             0,
                             NULL,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
