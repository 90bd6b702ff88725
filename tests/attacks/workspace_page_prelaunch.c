// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_page_prelaunch - a page-cache page of a workspace file, referenced from an outsider's
 * pipe since before the launch. While the workspace is still open to it, uid 65534 opens
 * WS/notes.txt, splice()s its first page into a pipe of its own and closes the file. At the
 * launch no process holds the file (the launcher's write-lease test passes) and at the delivery
 * the outsider holds only its own pipe. After the recv the agent pwrite()s the canary into that
 * page (same offset, no truncation).
 * Verifier: the outsider, asked after the agent exited, reads its pipe.
 * Blocked by: the launcher's workspace walk (user/mncctl/cmd_workspace.c, pages_maybe_shared):
 * with the write lease held it drops each file's page cache; a page that stays resident is held
 * by someone's buffer, and the file gets a fresh inode (a copy renamed over it), so the agent
 * writes pages no outsider references. On tmpfs, whose pages cannot be dropped, every non-empty
 * file gets a fresh inode. */
#include "atk_variants.h"

ATKV_PAGE_ATTACK("workspace_page_prelaunch",
                 "a workspace file's page spliced into an outsider's pipe before the launch", 0, 1, 'p',
                 "uid 65534 read the canary from its pipe, which held a reference to a page-cache page "
                 "of WS/notes.txt spliced before the launch")
