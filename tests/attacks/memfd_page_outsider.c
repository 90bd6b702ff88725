// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* memfd_page_outsider - memfd_shared, with the outsider keeping only a page reference. Before its
 * taint the agent passes a one-page memfd to uid 65534 (DIR/kp.sock), which splice()s the page
 * into a pipe of its own and closes the memfd: no outsider holds the memfd (fd table, mapping,
 * fd in flight) at the delivery, and the agent's own seccomp filter does not govern the
 * outsider's splice. After the recv the agent pwrite()s the canary into the memfd's page.
 * Verifier: the outsider, asked after the agent exited, reads its pipe.
 * Would block it: refusing fds an agent passes to an outsider (docs/threat-model.md, "Open byte
 * channels", with workspace_fd_passed_out). */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c) { return atkv_page_prepare(c, 2); }
static int agent(struct atk_ctx *c) { return atkv_page_agent(c, 'm'); }
static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary from its pipe, which held a reference to a page of a memfd "
                          "the agent passed out before its taint");
}

static const struct atk A = {"memfd_page_outsider",
                             "a memfd passed out before the taint, kept by the outsider as a page in its pipe",
                             ATK_NO_RECV | ATK_OPEN,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
