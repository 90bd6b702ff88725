// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_tcp_fastopen - TCP Fast Open: sendto(MSG_FASTOPEN) puts the canary in the SYN, so a
 * connect hook that ran after the data was queued would be too late.
 * Verifier: the collector's tcp4 listener (TCP_FASTOPEN enabled) records what arrives.
 * Blocks it: the cgroup connect4 hook runs for the implicit connect of a Fast Open sendto. */
#include <netinet/in.h>
#include <sys/socket.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    atk_inet(c, "tfo", AF_INET, SOCK_STREAM, 0, "127.0.0.1", (int)atk_argl(c, "tcp4"), 1);
    return 0;
}

static const struct atk A = {
    "direct_tcp_fastopen", "TCP Fast Open to 127.0.0.1 (canary in the SYN)", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
