// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* late_pipe_fd - the write end of an outsider's pipe, reaching the agent AFTER the taint
 * through the abstract datagram mailbox the agent bound (as late_file_fd). The outsider keeps
 * the read end. A pipe has no path: neither Landlock nor the lsm backend's path and sink-file
 * rules name it, and agents need pipes of their own, so a write on one is hard to refuse by
 * kind; mncd's fd scan finds outsiders' pipes only at a delivery.
 * Verifier: the outsider (orchestrator) reads the pipe after the agent exited.
 * Would block it: refusing fds into a tainted agent (security_file_receive) or judging a
 * pipe write by whether an outside process holds the other end. */
#include "atk_variants.h"

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_late_on_sync(c, 'P');
}

static const struct atk A = {
    "late_pipe_fd",        "the write end of an outsider's pipe sent to the agent's abstract mailbox after the taint",
    ATK_NO_RECV,           atkv_late_prepare,
    atkv_late_agent,       on_sync,
    atkv_late_pipe_verify, NULL};
ATK_MAIN(A)
