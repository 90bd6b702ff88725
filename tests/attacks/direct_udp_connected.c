// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_udp_connected - UDP connect()+send (not sendto) to 127.0.0.1.
 * Verifier: the collector's udp4 socket (an untainted outsider) records what arrives.
 * Blocks it: the cgroup sock_addr hooks (connect/sendmsg) and the egress program: a tainted agent
 * may not reach an external address. */
#include <netinet/in.h>
#include <sys/socket.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    atk_inet(c, "udp_connected", AF_INET, SOCK_DGRAM, 0, "127.0.0.1", (int)atk_argl(c, "udp4"), 2);
    return 0;
}

static const struct atk A = {
    "direct_udp_connected", "UDP connect()+send (not sendto) to 127.0.0.1", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
