// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_unix_dgram - sendto() an outsider's UNIX datagram socket (by path).
 * Verifier: the collector's unix-dgram socket. Blocks it: the cgroup sendmsg hook for UNIX peers. */
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", atk_arg(c, "c_dgram"));
    int fd = (int)atk_try(c, "socket", socket(AF_UNIX, SOCK_DGRAM, 0));
    if (fd >= 0)
        atk_try(c, "sendto", sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&sa, sizeof(sa)));
    return 0;
}

static const struct atk A = {
    "direct_unix_dgram", "sendto() an outsider's UNIX dgram path", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
