// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_chmod - threat model (docs/threat-model.md): our variant of storage any process can read. A 0700 workspace owned by the agent's uid
 * does not help if the agent can chmod it: the agent opens its workspace (chmod 0755) and writes a
 * 0644 file. Landlock does not govern chmod.
 * Verifier: uid 65534 reads WS/out.txt after the agent exited.
 * Blocks it: a workspace the agent does not own (or seccomp on chmod/fchmod(at) of directories),
 * or workspace taint that outlives the run so an outside read is a read of tainted data. */
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
    atk_try(c, "chmod ws 0755", chmod(atk_arg(c, "ws"), 0755));
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

static const struct atk A = {
    "workspace_chmod", "agent chmods its workspace 0755, writes a 0644 file", 0, NULL, agent, NULL, verify, NULL};
ATK_MAIN(A)
