// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ws_taint_show_name - ws_taint_note_name's agent (a second instance's workspace WS/sub carries
 * the taint record mncd wrote at the recv; the tainted agent renames it to WS/<canary>, the
 * record moves with it), read through the operator's tool instead of the launcher's note:
 * `mncctl workspace show WS` (the command the "starts tainted" note tells the operator to run)
 * walks WS for tainted directories (cmd_workspace.c mncctl_ws_tainted_dirs) and prints each one
 * raw ("  inside: WS/<canary>: taint record ...") on its stdout.
 * Verifier: after the agent exited and the second instance ended, the orchestrator runs
 * `mncctl workspace show WS` and searches its stdout and stderr (DIR/show.out) for the canary.
 * What would block it: `workspace show` naming a tainted directory below the workspace by
 * inode (as shown() does in the launcher's walk), or only the workspace's own record. The
 * positive control (root, unconfined, untainted: mncd records nothing) writes the record on
 * WS/sub itself before the rename. */
#include "atk_variants.h"

static void verify(struct atk_ctx *c)
{
    atkv_taint_rename_wait(c);
    char out[700];
    snprintf(out, sizeof(out), "%s/show.out", c->dir);
    const char *const args[] = {"workspace", "show", c->ws, NULL};
    atkv_mncctl_wait(atkv_mncctl(c, args, out, 1));
    if (atk_file_has(out, c->canary) == 1)
        atk_evidence(c, "`mncctl workspace show WS` printed WS/<canary> as a tainted directory inside (%s)", out);
}

static const struct atk A = {"ws_taint_show_name",
                             "a tainted directory's name in `mncctl workspace show`",
                             ATK_NO_RECV,
                             NULL,
                             atkv_taint_rename_agent,
                             atkv_taint_rename_on_sync,
                             verify,
                             atkv_taint_rename_cleanup};
ATK_MAIN(A)
