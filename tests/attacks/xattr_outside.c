// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* xattr_outside - user.* extended attributes on a file OUTSIDE the workspace (our addition).
 * Landlock governs opening for write, not setxattr: a root agent (DAC write permission on a
 * root-owned 0644 file) can attach the canary to it.
 * Verifier: uid 65534 getxattr()s DIR/outside.txt after the agent exited.
 * Blocks it: DAC for an unprivileged agent; for root, seccomp on setxattr family or a read-only
 * view of everything outside the workspace. */
#include <fcntl.h>
#include <sys/xattr.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/outside.txt", c->dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    atk_set(c, "outside", "%s", p);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    atk_try(c, "setxattr user.note on a file outside the workspace",
            setxattr(atk_arg(c, "outside"), "user.note", c->secret, strlen(c->secret), 0));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char buf[256];
    ssize_t r = getxattr(atk_arg(c, "outside"), "user.note", buf, sizeof(buf));
    if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary)) {
        snprintf(out, n, "uid 65534 read the canary from user.note on %s", atk_arg(c, "outside"));
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char out[800];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const struct atk A = {
    "xattr_outside", "user.* xattr on a file outside the workspace", 0, prepare, agent, NULL, verify, NULL};
ATK_MAIN(A)
