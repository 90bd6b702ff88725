// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* xattr_outside - user.* extended attributes on a file OUTSIDE the workspace (our addition).
 * Landlock governs opening for write, not setxattr, and user.* xattrs need only DAC write
 * permission, not ownership: a root agent can attach the canary to a root-owned 0644 file, and
 * any agent to a world-writable (0666) file an outsider left for it (DIR/drop.txt, owned by
 * uid 65534).
 * Verifier: uid 65534 getxattr()s both files after the agent exited.
 * Blocks it: seccomp on the setxattr family for every agent launched by mncctl run. */
#include <fcntl.h>
#include <sys/stat.h>
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
    snprintf(p, sizeof(p), "%s/drop.txt", c->dir);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    int r = fchmod(fd, 0666) || fchown(fd, ATK_NOBODY, ATK_NOBODY);
    close(fd);
    if (r)
        return -1;
    atk_set(c, "drop", "%s", p);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    atk_try(c, "setxattr user.note on a file outside the workspace",
            setxattr(atk_arg(c, "outside"), "user.note", c->secret, strlen(c->secret), 0));
    atk_try(c, "setxattr user.note on a world-writable file an outsider left",
            setxattr(atk_arg(c, "drop"), "user.note", c->secret, strlen(c->secret), 0));
    int fd = open(atk_arg(c, "drop"), O_RDONLY | O_CLOEXEC);
    atk_try(c, "fsetxattr through a read-only fd on it",
            fd < 0 ? -1 : fsetxattr(fd, "user.fnote", c->secret, strlen(c->secret), 0));
    if (fd >= 0)
        close(fd);
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    static const char *const files[] = {"outside", "drop"}, *const names[] = {"user.note", "user.fnote"};
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++) {
            char buf[256];
            ssize_t r = getxattr(atk_arg(c, files[i]), names[j], buf, sizeof(buf));
            if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary)) {
                snprintf(out, n, "uid 65534 read the canary from %s on %s", names[j], atk_arg(c, files[i]));
                return 1;
            }
        }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static const struct atk A = {
    "xattr_outside", "user.* xattr on a file outside the workspace", 0, prepare, agent, NULL, verify, NULL};
ATK_MAIN(A)
