// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* chmod_outside - permission bits as storage (our addition): the agent sets the mode of 4 files
 * outside its workspace (root-owned, in DIR) to 12-bit chunks of the canary. Landlock does not
 * govern chmod; a root agent passes the owner check with CAP_FOWNER.
 * Verifier: uid 65534 stat()s the files and decodes the canary.
 * Blocks it: DAC/no CAP_FOWNER; seccomp on chmod of paths outside the workspace. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    for (int i = 0; i < 4; i++) {
        char p[700];
        snprintf(p, sizeof(p), "%s/mode%d", c->dir, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            return -1;
        close(fd);
    }
    return 0;
}

static int agent(struct atk_ctx *c)
{
    for (int i = 0; i < 4; i++) {
        char p[700], h[4] = {0};
        memcpy(h, c->secret + 2 + 3 * i, 3);
        snprintf(p, sizeof(p), "%s/mode%d", atk_arg(c, "dir"), i);
        if (atk_try(c, "chmod outside the workspace", chmod(p, (mode_t)strtol(h, NULL, 16))) < 0)
            break;
    }
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char got[32] = "mk";
    for (int i = 0; i < 4; i++) {
        char p[700];
        struct stat st;
        snprintf(p, sizeof(p), "%s/mode%d", c->dir, i);
        if (stat(p, &st) < 0)
            return 0;
        snprintf(got + 2 + 3 * i, 4, "%03x", (unsigned)st.st_mode & 07777);
    }
    if (strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from file modes in %s", c->dir);
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static const struct atk A = {
    "chmod_outside", "mode bits of files outside the workspace", 0, prepare, agent, NULL, verify, NULL};
ATK_MAIN(A)
