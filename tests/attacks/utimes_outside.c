// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* utimes_outside - timestamps as storage (our addition): the agent sets the atime and mtime of a
 * file outside its workspace to values that encode the canary (24 bits each). Landlock does not
 * govern utimensat; a root agent owns the DAC check.
 * Verifier: uid 65534 stat()s DIR/outside.txt and decodes "mk%06x%06x".
 * Blocks it: DAC for an unprivileged agent; for root, seccomp on utimensat/utimes of paths
 * outside the workspace, or no CAP_FOWNER/DAC override. */
#include <fcntl.h>
#include <sys/stat.h>

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
    char a[8] = {0}, b[8] = {0};
    memcpy(a, c->secret + 2, 6);
    memcpy(b, c->secret + 8, 6);
    struct timespec ts[2] = {{.tv_sec = strtol(a, NULL, 16)}, {.tv_sec = strtol(b, NULL, 16)}};
    atk_try(c, "utimensat outside the workspace", utimensat(AT_FDCWD, atk_arg(c, "outside"), ts, 0));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    struct stat st;
    char got[32];
    if (stat(atk_arg(c, "outside"), &st) < 0)
        return 0;
    snprintf(got, sizeof(got), "mk%06lx%06lx", (long)st.st_atim.tv_sec & 0xffffff, (long)st.st_mtim.tv_sec & 0xffffff);
    if (strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from the timestamps of %s", atk_arg(c, "outside"));
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static const struct atk A = {
    "utimes_outside", "timestamps of a file outside the workspace", 0, prepare, agent, NULL, verify, NULL};
ATK_MAIN(A)
