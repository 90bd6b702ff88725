// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sendfile_ws_page_out - splice_ws_page_out through sendfile(2): since Linux 5.12 sendfile to a
 * pipe splices the file's page-cache pages into it by reference, as splice does.
 * Verifier: the outsider, asked after the agent exited, reads its pipe.
 * Blocked by: `mncctl run`'s seccomp filter, which refuses vmsplice, splice, tee and sendfile
 * (ENOSYS). */
#include "atk_variants.h"

ATKV_PAGE_ATTACK("sendfile_ws_page_out",
                 "a workspace file's page sent into an outsider's pipe by sendfile before the taint", 0, 0, 'f',
                 "uid 65534 read the canary from its pipe, which held a reference to a page-cache page "
                 "of WS/notes.txt put there by sendfile before the taint")
