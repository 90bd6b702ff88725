// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* vmsplice_page_out - a page of the agent's own memory, referenced from an outsider's pipe.
 * Before its taint the agent takes the write end of a pipe from uid 65534 (DIR/kp.sock),
 * vmsplice()s one page of its memory into it and closes the write end: the pipe's buffer now
 * points at that page, not at a copy. At the delivery the agent holds nothing an outsider holds.
 * After the recv it writes the canary into the page; whoever reads the pipe later reads the page
 * as it is then.
 * Verifier: the outsider, asked after the agent exited, reads its pipe.
 * Blocked by: `mncctl run`'s seccomp filter, which refuses vmsplice, splice, tee and sendfile
 * (ENOSYS): the calls that put references to pages, rather than copies, into a pipe or socket. */
#include "atk_variants.h"

ATKV_PAGE_ATTACK("vmsplice_page_out", "a page of the agent's memory vmspliced into an outsider's pipe before the taint",
                 0, 0, 'v',
                 "uid 65534 read the canary from its pipe, which held a reference to a page of the "
                 "agent's memory vmspliced before the taint")
