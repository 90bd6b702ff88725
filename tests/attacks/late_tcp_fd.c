// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* late_tcp_fd - a TCP connection an outsider made (to the collector on 127.0.0.1), sent to the
 * agent AFTER the taint through the abstract datagram mailbox the agent bound (as
 * late_socket_fd, which does it with a UNIX stream socket). The agent writes the canary on it.
 * The cgroup_skb/egress program runs for the cgroup the socket was created in (the
 * outsider's), and no connect/sendmsg hook runs on an established connection; foreign_tcp
 * (the same socket handed over before the recv) is refused at the delivery by mncd's sweep.
 * Verifier: the collector's TCP listener (DIR/got).
 * Blocks it: lsm backend: socket_sendmsg by the calling task's taint; cgroup backend: refusing
 * fds into a tainted agent (security_file_receive, an lsm hook) or a continuous sweep. */
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
