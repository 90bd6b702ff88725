// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_v4mapped - TCP over a v6 socket to ::ffff:127.0.0.1 (v4-mapped).
 * Verifier: the collector's tcp6 socket (an untainted outsider) records what arrives.
 * Blocks it: the cgroup sock_addr hooks (connect/sendmsg) and the egress program: a tainted agent
 * may not reach an external address. */
#include <netinet/in.h>
#include <sys/socket.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    atk_inet(c, "v4mapped", AF_INET6, SOCK_STREAM, 0, "::ffff:127.0.0.1", (int)atk_argl(c, "tcp6"), 0);
    return 0;
}

static const struct atk A = {
    "direct_v4mapped", "TCP over a v6 socket to ::ffff:127.0.0.1 (v4-mapped)", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
