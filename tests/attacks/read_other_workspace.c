// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* read_other_workspace - threat model (docs/threat-model.md): other agents' workspaces (reads confined). Another agent's workspace (0700, owned
 * by that agent's uid 64999, as the launcher makes it) holds a secret file; the attacker reads it.
 * Verifier: that secret in anything the agent could print.
 * Blocks it: Landlock read rules; DAC for an unprivileged agent. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    char d[700], f[720];
    snprintf(c->canary2, sizeof(c->canary2), "mk%c%s", c->canary[13] == 'a' ? 'b' : 'a', c->canary + 3);
    snprintf(d, sizeof(d), "%s/ws-other", c->dir);
    snprintf(f, sizeof(f), "%s/secret.txt", d);
    if (mkdir(d, 0700) < 0)
        return -1;
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || atk_write_all(fd, c->canary2, strlen(c->canary2)) < 0 || close(fd) < 0)
        return -1;
    if (chown(f, 64999, 64999) < 0 || chown(d, 64999, 64999) < 0)
        return -1;
    atk_set(c, "other", "%s", f);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "open other agent's workspace file", open(atk_arg(c, "other"), O_RDONLY));
    char buf[128];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (n > 0) {
        buf[n] = 0;
        atk_say(c, "dump %s", buf);
    }
    return 0;
}

static const struct atk A = {
    "read_other_workspace", "read another agent's workspace", 0, prepare, agent, NULL, NULL, NULL};
ATK_MAIN(A)
