// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* inherited_fd - threat model (docs/threat-model.md): sockets the agent did not create (inherited). Whoever calls `mncctl run` leaves fd 50 open for
 * writing on a file outside the workspace (DIR/inherited.out); the agent writes the canary to it.
 * Verifier: reads DIR/inherited.out.
 * Blocks it: the launcher closes every inherited fd but 0/1/2 (close_range) unless --keep-fd. */
#include <fcntl.h>

#include "atk.h"

#define FD 50

static int prepare(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/inherited.out", c->dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0600); /* no O_CLOEXEC: inherited on purpose */
    if (fd < 0 || dup2(fd, FD) < 0)
        return -1;
    close(fd);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    atk_try(c, "write inherited fd 50", write(FD, c->secret, strlen(c->secret)));
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/inherited.out", c->dir);
    if (atk_file_has(p, c->canary) == 1)
        atk_evidence(c, "canary in %s (inherited fd)", p);
}

static void cleanup(struct atk_ctx *c)
{
    (void)c;
    close(FD);
}

static const struct atk A = {
    "inherited_fd", "write an fd inherited from the caller of mncctl run", 0, prepare, agent, NULL, verify, cleanup};
ATK_MAIN(A)
