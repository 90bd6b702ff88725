// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* memfd_page_outsider - memfd_shared, with the outsider keeping only a page reference. Before its
 * taint the agent passes a one-page memfd to uid 65534 (DIR/kp.sock), which splice()s the page
 * into a pipe of its own and closes the memfd: no outsider holds the memfd (fd table, mapping,
 * fd in flight) at the delivery, and the agent's own seccomp filter does not govern the
 * outsider's splice. After the recv the agent pwrite()s the canary into the memfd's page.
 * Verifier: the outsider, asked after the agent exited, reads its pipe.
 * Blocked by (lsm backend): socket_sendmsg refuses fds an agent, tainted or not, passes to a
 * socket made outside its cgroup (MNC_K_DENY_FDS_OUT). A known limit of the cgroup backend,
 * where no hook sees a message's control data (README, "Known limits"). */
#include "atk_variants.h"

ATKV_PAGE_ATTACK("memfd_page_outsider",
                 "a memfd passed out before the taint, kept by the outsider as a page in its pipe", ATK_LIMIT_CGROUP, 2,
                 'm',
                 "uid 65534 read the canary from its pipe, which held a reference to a page of a memfd "
                 "the agent passed out before its taint")
