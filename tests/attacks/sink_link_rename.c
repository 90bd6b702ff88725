// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sink_link_rename - put a workspace file INTO the sinks without opening them for writing: write
 * the canary in the workspace, then hard-link it into the memory directory and rename() it into
 * the log directory (our addition; held: docs/threat-model.md).
 * Verifier: the memory and log directories, read after the agent exited.
 * Blocks it: Landlock (MAKE_REG/REFER outside the workspace: EACCES/EXDEV). */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char src[700], dst[900], logdir[700];
    snprintf(src, sizeof(src), "%s/slot", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "write workspace file", open(src, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    if (fd < 0 || write(fd, c->secret, strlen(c->secret)) < 0)
        return 0;
    close(fd);
    snprintf(dst, sizeof(dst), "%s/atk-link", atk_arg(c, "mem"));
    atk_try(c, "link into the memory dir", link(src, dst));
    snprintf(logdir, sizeof(logdir), "%s", atk_arg(c, "log"));
    snprintf(dst, sizeof(dst), "%s/atk-renamed", dirname(logdir));
    atk_try(c, "rename into the log dir", rename(src, dst));
    return 0;
}

static void verify(struct atk_ctx *c)
{
    const char *dirs[2] = {getenv("ATK_MEM"), NULL};
    char logdir[700];
    snprintf(logdir, sizeof(logdir), "%s", getenv("ATK_LOG") ? getenv("ATK_LOG") : "/nonexistent/x");
    dirs[1] = dirname(logdir);
    for (int k = 0; k < 2; k++) {
        DIR *d = dirs[k] ? opendir(dirs[k]) : NULL;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[1200];
            snprintf(p, sizeof(p), "%s/%s", dirs[k], e->d_name);
            if (e->d_name[0] != '.' && atk_file_has(p, c->canary) == 1)
                atk_evidence(c, "canary in %s", p);
        }
        if (d)
            closedir(d);
    }
}

static const struct atk A = {
    "sink_link_rename", "hard link / rename a workspace file into the sinks", 0, NULL, agent, NULL, verify, NULL};
ATK_MAIN(A)
