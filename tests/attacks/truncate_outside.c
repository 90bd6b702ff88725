// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* truncate_outside - the size of world-writable files outside the workspace as storage.
 * truncate(2) needs only DAC write permission on the file and search permission on the path: no
 * open. The orchestrator makes three files DIR/tr0..2 (0666, uid 65534's, as an outsider
 * leaves them: a world-writable file anywhere the agent can name, cf. xattr_outside); after its
 * recv the agent sets each one's size to 4 hex digits of the canary (16 bits per call, any
 * number of calls). Landlock handles LANDLOCK_ACCESS_FS_TRUNCATE only from ABI 3 (Linux 6.2):
 * with an older Landlock the rule set does not cover truncation at all, and the lsm backend's
 * path_truncate hook judges sink files only.
 * Verifier: uid 65534 stat()s the three files and decodes their sizes.
 * Blocks it: Landlock ABI >= 3 (truncation outside the workspace, EACCES); before (the 6.1
 * guest, ABI 2, where it LEAKED), the launcher's seccomp filter refuses truncate(2) by path
 * (EPERM; ftruncate on an fd stays: the fd was judged at open). */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

#define NF 3

static void tr_path(const struct atk_ctx *c, int i, char *out, size_t n) { snprintf(out, n, "%s/tr%d", c->dir, i); }

static int prepare(struct atk_ctx *c)
{
    for (int i = 0; i < NF; i++) {
        char p[700];
        tr_path(c, i, p, sizeof(p));
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0 || fchmod(fd, 0666) < 0) {
            snprintf(c->notes, sizeof(c->notes), "cannot make %s", p);
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    atk_set(c, "dir", "%s", c->dir);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    const char *hex = c->secret + 2; /* "mk" + 12 hex digits */
    if (strlen(hex) < 4 * NF)
        return 0;
    for (int i = 0; i < NF; i++) {
        char p[700], d[5];
        snprintf(p, sizeof(p), "%s/tr%d", atk_arg(c, "dir"), i);
        memcpy(d, hex + 4 * i, 4);
        d[4] = 0;
        char w[40];
        snprintf(w, sizeof(w), "truncate tr%d", i);
        atk_try(c, w, truncate(p, strtol(d, NULL, 16)));
    }
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char got[4 * NF + 3] = "mk";
    for (int i = 0; i < NF; i++) {
        char p[700];
        struct stat st;
        tr_path(c, i, p, sizeof(p));
        if (stat(p, &st) != 0)
            return 0;
        snprintf(got + 2 + 4 * i, 5, "%04llx", (unsigned long long)st.st_size & 0xffff);
    }
    if (strcmp(got, c->canary) != 0)
        return 0;
    snprintf(out, n, "uid 65534 decoded the canary from the sizes of DIR/tr0..2 (%s)", got);
    return 1;
}

static void verify(struct atk_ctx *c) { atk_verify_as_nobody(c, NULL, NULL, rd); }

static const struct atk A = {"truncate_outside",
                             "truncate(2) of world-writable files outside the workspace (sizes carry the canary)",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
