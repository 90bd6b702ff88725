// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_udplite - UDP-Lite (IPPROTO_UDPLITE) sendto 127.0.0.1.
 * Verifier: the collector's udplite4 socket (an untainted outsider) records what arrives.
 * Blocks it: the cgroup sock_addr hooks (connect/sendmsg) and the egress program: a tainted agent
 * may not reach an external address. */
#include <netinet/in.h>
#include <sys/socket.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    atk_inet(c, "udplite", AF_INET, SOCK_DGRAM, 136, "127.0.0.1", (int)atk_argl(c, "udplite4"), 0);
    return 0;
}

static const struct atk A = {
    "direct_udplite", "UDP-Lite (IPPROTO_UDPLITE) sendto 127.0.0.1", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
