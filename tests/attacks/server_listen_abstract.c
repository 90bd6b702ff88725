// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* server_listen_abstract - a SERVER agent (`mncctl run --server`: listen allowed, as the policy's
 * "server": true) opens a UNIX listener on an abstract name AFTER its recv and serves the
 * canary to whoever connects. listen_unix_abstract tries the same as a non-server agent, where
 * the seccomp filter refuses listen(). mncd's sweep shuts a tainted agent's listeners at each
 * delivery; this one is made after the last delivery. Landlock's abstract-socket scope stops
 * the agent connecting out, not an outsider connecting in; and an accepted UNIX stream
 * connection's writes pass no cgroup hook.
 * Verifier: an outsider (the orchestrator) connects to the name while the agent waits and reads.
 * Blocks it: `mncctl run` asks the launcher about a server's bind/listen/autobind (seccomp user
 * notification, run_gate.h), which refuses them once the agent is tainted; on the lsm backend
 * socket_sendmsg also judges the write on an accepted connection by the tainted sender. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_listen_agent(c, 'a'); }

static const struct atk A = {"server_listen_abstract",
                             "a server agent's abstract UNIX listener opened after the taint",
                             ATK_SERVER,
                             NULL,
                             agent,
                             atkv_listen_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
