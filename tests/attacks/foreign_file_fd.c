// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_file_fd - threat model (docs/threat-model.md): sockets the agent did not create (files). Before the taint an untainted helper hands the
 * agent an fd open for writing on a file outside the workspace (DIR/given.out, root-owned 0600).
 * After the taint the agent writes the canary through it: Landlock checks paths at open time only.
 * Verifier: reads DIR/given.out.
 * Blocks it: refusing delivery (or revoking) while the agent holds writable fds it did not open
 * inside its workspace; fds in flight before the taint. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    char req[700];
    snprintf(req, sizeof(req), "F%s/given.out", atk_arg(c, "dir"));
    int fd = -1;
    if (atk_try(c, "take helper's file fd", atk_take(c, req, &fd, 1)) < 1)
        return 0;
    atk_recv(c);
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {"foreign_file_fd",
                             "helper-opened writable file fd, written after the taint",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             atkv_given_file_verify,
                             NULL};
ATK_MAIN(A)
