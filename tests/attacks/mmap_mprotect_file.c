// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mmap_mprotect_file - a writable outside file kept as a read-only shared mapping across the
 * delivery. Before its recv the agent (untainted: it may talk to anyone) connects to an
 * outsider (uid 65534, DIR/mg.sock), which hands it an fd open O_RDWR on its own file
 * DIR/mm.out (0644, one page). The agent maps it MAP_SHARED with PROT_READ only and closes the
 * fd and the connection: at the recv it holds no fd, and /proc/PID/maps shows the mapping as
 * "r--s", which mncd's fd scan (agent_maps: shared *writable* mappings) skips. The mapping keeps
 * VM_MAYWRITE (the file was open for writing), so after the taint mprotect(PROT_READ |
 * PROT_WRITE) makes it writable without any open, and the agent stores the canary in the page.
 * No write() syscall: the lsm backend's file_permission hook does not see it either.
 * Verifier: the outsider, asked after the agent exited, reads DIR/mm.out.
 * Blocks it: mncd's fd scan judges a shared mapping of a file outside the workspace that may
 * become writable (VM_MAYWRITE: "mw" in smaps VmFlags) as a foreign_file: the delivery is
 * refused (fdscan.c agent_maps). */

#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_mmap_agent(c, 1); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider's file DIR/mm.out (written through a mapping made writable after the taint)");
}

static const struct atk A = {
    "mmap_mprotect_file",
    "outsider's O_RDWR file mapped read-only shared before the taint, mprotect'ed writable after",
    ATK_NO_RECV,
    atkv_mmap_prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
