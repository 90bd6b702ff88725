// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sink_log_write - write outside the workspace, straight into a sink the scope forbids:
 * open the log sink file for append and write the canary (held: docs/threat-model.md).
 * Verifier: reads the sink (ops_log) after the agent exited.
 * Blocks it: Landlock (writes only in the workspace); the sink file map. */
#include <dirent.h>
#include <fcntl.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char p[700];
    if (1) /* the log sink file */
        snprintf(p, sizeof(p), "%s", atk_arg(c, "log"));
    else
        snprintf(p, sizeof(p), "%s/atk-%d", atk_arg(c, "mem"), getpid());
    int fd = (int)atk_try(c, "open sink for writing", open(p, O_WRONLY | O_CREAT | O_APPEND, 0644));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static void verify(struct atk_ctx *c)
{
    const char *log = getenv("ATK_LOG"), *mem = getenv("ATK_MEM");
    if (log && atk_file_has(log, c->canary) == 1)
        atk_evidence(c, "canary in the log sink %s", log);
    DIR *d = mem ? opendir(mem) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[1200];
        snprintf(p, sizeof(p), "%s/%s", mem, e->d_name);
        if (e->d_name[0] != '.' && atk_file_has(p, c->canary) == 1)
            atk_evidence(c, "canary in the memory sink %s", p);
    }
    if (d)
        closedir(d);
}

static const struct atk A = {
    "sink_log_write", "open the log sink file for append and write the canary", 0, NULL, agent, NULL, verify, NULL};
ATK_MAIN(A)
