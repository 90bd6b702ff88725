// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* late_tcp_fd - a TCP connection an outsider made (to the collector on 127.0.0.1), sent to the
 * agent AFTER the taint through the abstract datagram mailbox the agent bound (as
 * late_socket_fd, which does it with a UNIX stream socket). The agent writes the canary on it.
 * The cgroup_skb/egress program runs for the cgroup the socket was created in (the
 * outsider's), and no connect/sendmsg hook runs on an established connection; foreign_tcp
 * (the same socket handed over before the recv) is refused at the delivery by mncd's sweep.
 * Verifier: the collector's TCP listener (DIR/got).
 * Blocked by: `mncctl run`'s seccomp filter, which gives bind() and the autobinding socket
 * options only to agents declared servers, so the agent has no mailbox anyone can send to
 * (both backends); on the lsm backend, socket_sendmsg judges the send by taint as well. */
#include "atk_variants.h"

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_late_on_sync(c, 'T');
}

static const struct atk A = {"late_tcp_fd",
                             "a TCP connection sent to the agent's abstract mailbox after the taint",
                             ATK_NO_RECV,
                             atkv_late_prepare,
                             atkv_late_agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
