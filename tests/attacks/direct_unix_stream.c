// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_unix_stream - the plainest way out: connect() to an outsider's UNIX stream socket (a
 * path the collector listens on) and write the canary.
 * Verifier: the collector's unix-stream listener records what it reads.
 * Blocks it: the cgroup connect hook (tainted agent -> external UNIX peer: EPERM). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "connect", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {
    "direct_unix_stream", "connect()+write to an outsider's UNIX path socket", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
