// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* splice_ws_page_out - a page-cache page of a workspace file, referenced from an outsider's pipe.
 * Before its taint the agent takes the write end of a pipe from uid 65534 (DIR/kp.sock),
 * splice()s the first page of WS/notes.txt into it and closes the write end: the pipe's buffer
 * points at the file's page-cache page. No outsider holds the file (fd, mapping or fd in
 * flight); the launcher's and mncd's checks look for those. After the recv the agent pwrite()s
 * the canary into that page (same offset, no truncation, so the page stays the same).
 * Verifier: the outsider, asked after the agent exited, reads its pipe.
 * Blocked by: `mncctl run`'s seccomp filter, which refuses vmsplice, splice, tee and sendfile
 * (ENOSYS). */
#include "atk_variants.h"

ATKV_PAGE_ATTACK("splice_ws_page_out", "a workspace file's page spliced into an outsider's pipe before the taint", 0, 0,
                 's',
                 "uid 65534 read the canary from its pipe, which held a reference to a page-cache page "
                 "of WS/notes.txt spliced before the taint")
