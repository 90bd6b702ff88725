// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_unix_dgram - threat model (docs/threat-model.md): sockets the agent did not create. Before the taint, an untainted helper (the collector's
 * giver) hands the agent a socket it created: unconnected UNIX dgram socket (sendto the outsider's path).
 * After the taint the agent sends the canary on it. The cgroup hooks judge a socket by the cgroup
 * that created it, so the helper's socket escapes them.
 * Verifier: the collector's listeners record what arrives.
 * Blocks it: at delivery, sockets the agent did not create in its own cgroup are shut (or the
 * delivery is refused); egress judged by the sending task, not the socket's creator. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_foreign_agent(c, 'D'); }

static const struct atk A = {"foreign_unix_dgram",
                             "helper-created unconnected UNIX dgram socket (sendto the outsider's path)",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
