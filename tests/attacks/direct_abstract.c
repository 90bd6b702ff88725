// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_abstract - connect() to an outsider's abstract UNIX socket and write.
 * Verifier: the collector's abstract listener. Blocks it: the cgroup connect hook; Landlock's
 * abstract-socket scope (the listener is outside the agent's Landlock domain). */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "connect abstract", atk_unix(SOCK_STREAM, atk_arg(c, "c_abs")));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {
    "direct_abstract", "connect() an outsider's abstract UNIX socket", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
