// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* var_tmp_file - a world-readable file in /var/tmp (our addition): shared writable directories any user reads.
 * Verifier: uid 65534 reads /var/tmp/mnc-atk-PID after the agent exited.
 * Blocks it: Landlock (writes only in the workspace). */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "path", "/var/tmp/mnc-atk-%d", getpid());
    return 0;
}

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "create /var/tmp file 0666", open(atk_arg(c, "path"), O_WRONLY | O_CREAT | O_EXCL, 0666));
    if (fd < 0)
        return 0;
    fchmod(fd, 0666);
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    if (atk_file_has(atk_arg(c, "path"), c->canary) == 1) {
        snprintf(out, n, "uid 65534 read the canary from %s", atk_arg(c, "path"));
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char out[300];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static void cleanup(struct atk_ctx *c) { unlink(atk_arg(c, "path")); }

static const struct atk A = {"var_tmp_file", "a world-readable file in /var/tmp", 0, prepare, agent, NULL, verify,
                             cleanup};
ATK_MAIN(A)
