// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* preconnect_unix - a UNIX stream connection to an outsider opened BEFORE the taint and used
 * after it (held: docs/threat-model.md).
 * Verifier: the collector's unix-stream listener.
 * Blocks it: mncd's sweep at delivery shuts pre-taint connections to disallowed peers. */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "connect before the taint", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    atk_recv(c);
    if (fd >= 0)
        atk_try(c, "write after the taint", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {
    "preconnect_unix", "UNIX connection opened before the taint", ATK_NO_RECV, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
