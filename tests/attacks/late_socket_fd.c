// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* late_socket_fd - a connected socket that reaches the agent AFTER the taint. The agent binds an
 * abstract datagram socket (its inbound mailbox), does its recv, and then an outsider sends
 * it, over that mailbox, a UNIX stream socket it connected to the collector. The agent writes
 * the canary on it. foreign_unix_stream hands the socket over before the recv, where mncd's
 * sweep at the delivery shuts it; here no delivery follows. A connected stream send passes no
 * cgroup connect/sendmsg hook (docs/threat-model.md, "Also outside the promise": a socket that
 * arrives after the last delivery is judged by the kernel programs only).
 * Verifier: the collector's UNIX stream listener (DIR/got).
 * Blocks it: lsm backend: socket_sendmsg by the calling task's taint; cgroup backend: refusing
 * fds into a tainted agent (security_file_receive, an lsm hook) or a continuous sweep. */
#include "atk_variants.h"

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_late_on_sync(c, 'S');
}

static const struct atk A = {"late_socket_fd",
                             "a connected socket sent to the agent's abstract mailbox after the taint",
                             ATK_NO_RECV,
                             atkv_late_prepare,
                             atkv_late_agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
