// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* late_file_fd - a writable file fd that reaches the agent AFTER the taint. The agent binds an
 * abstract datagram socket (its inbound mailbox; binding and receiving are not sending), does
 * its recv, and then an outsider sends it, over that mailbox, an fd open for writing on a file
 * outside the workspace (DIR/late.out, 0644). The agent writes the canary through it.
 * foreign_file_fd hands the fd over before the recv, where mncd's fd scan at the delivery
 * finds it; here no delivery follows the fd's arrival. Landlock judges opens, not writes on
 * received fds.
 * Verifier: uid 65534 reads DIR/late.out after the agent exited.
 * Blocked by: `mncctl run`'s seccomp filter, which gives bind() and the autobinding socket
 * options only to agents declared servers, so the agent has no mailbox anyone can send to. */
#include "atk_variants.h"

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_late_on_sync(c, 'F');
}

static const struct atk A = {
    "late_file_fd",        "a writable file fd sent to the agent's abstract mailbox after the taint",
    ATK_NO_RECV,           atkv_late_prepare,
    atkv_late_agent,       on_sync,
    atkv_late_file_verify, NULL};
ATK_MAIN(A)
