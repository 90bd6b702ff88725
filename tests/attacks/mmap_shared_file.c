// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mmap_shared_file - a writable shared mapping of an outsider's file on disk kept across the
 * delivery. Before its recv the agent (untainted: it may talk to anyone) connects to an
 * outsider (uid 65534, DIR/mg.sock), which hands it an fd open O_RDWR on its own file
 * DIR/mm.out (0644, one page) and closes its own copy. The agent maps it MAP_SHARED,
 * PROT_READ | PROT_WRITE, and closes the fd and the connection: at the recv it holds no fd,
 * only an "rw-s" mapping. mncd's fd scan refuses a writable fd on a file outside the workspace
 * (foreign_file), but a writable shared mapping is judged like a memfd: refused only while an
 * outside process holds the same inode (fd or mapping). A file on disk needs no holder: the
 * outsider opens it again by name after the agent wrote. After the taint the agent stores the
 * canary in the page (no syscall; the lsm backend's file_permission hook does not see it).
 * Verifier: the outsider, asked after the agent exited, reads DIR/mm.out.
 * Blocks it: mncd's fd scan judges a shared mapping of a file outside the workspace that is
 * writable (or may become so) like a writable fd on it: foreign_file, the delivery is refused,
 * whoever holds the file (fdscan.c agent_maps). lsm: an mmap_file hook would also block it. */

#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_mmap_agent(c, 0); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider's file DIR/mm.out (written through a shared mapping made before the taint)");
}

static const struct atk A = {
    "mmap_shared_file",
    "outsider's O_RDWR file mapped shared writable before the taint, written through the mapping after",
    ATK_NO_RECV,
    atkv_mmap_prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
