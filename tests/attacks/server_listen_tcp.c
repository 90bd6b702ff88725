// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* server_listen_tcp - a SERVER agent (`mncctl run --server`) opens a TCP listener on 127.0.0.1
 * AFTER its recv and serves the canary to whoever connects (listen_tcp tries it as a
 * non-server agent, where listen() is refused).
 * Verifier: an outsider (the orchestrator) connects while the agent waits and reads.
 * Blocks it: the cgroup_skb/egress program judges every packet of the accepted socket (created
 * in the agent's cgroup) by the agent's taint; lsm: socket_sendmsg. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_listen_agent(c, 't'); }

static const struct atk A = {"server_listen_tcp",
                             "a server agent's TCP listener opened after the taint",
                             ATK_SERVER,
                             NULL,
                             agent,
                             atkv_listen_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
