// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ws_taint_note_name - the launcher's "starts tainted" note as the way out. mncd writes the
 * workspace taint record (trusted.mnc.taint) on every workspace of every live instance of the
 * agent; the record moves with its directory on rename. Before its recv the agent makes WS/sub
 * and waits (sync "b"): the orchestrator launches a second instance of the same agent with
 * `--workspace WS/sub` that sleeps. The agent receives (mncd records the taint on WS and on
 * WS/sub) and renames WS/sub to WS/<canary>: the record goes along. The next launch on WS finds
 * the record in its walk (cmd_workspace.c tainted_dir: the entry's real path into tainted_dirs),
 * mncd answers agent.register with inherits_taint_from: [that path], and cmd_run.c prints it
 * raw ("note: agent ... starts tainted: its workspace WS/<canary> carries the taint ...") on
 * the launcher's stderr, which the stdio relay does not govern. shown() (inode, never the name)
 * covers only the walk's own refusals.
 * Verifier: after the agent exited and the second instance ended, the orchestrator runs
 * `mncctl run --agent coordinator --workspace WS -- /bin/true` in the attack's mode and searches
 * its stderr (DIR/relaunch.err) for the canary.
 * What would block it: the note naming a tainted directory below the workspace by inode (as
 * shown() does), or no path at all. The positive control (root, unconfined, untainted: mncd
 * records nothing) writes the record on WS/sub itself before the rename. */
#include <fcntl.h>
#include "atk_variants.h"

static void verify(struct atk_ctx *c)
{
    atkv_taint_rename_wait(c);
    char err[700];
    snprintf(err, sizeof(err), "%s/relaunch.err", c->dir);
    static const char *const cmd[] = {"/bin/true", NULL};
    atkv_mncctl_wait(atkv_mncctl_run(c, c->ws, err, cmd));
    if (atk_file_has(err, c->canary) == 1)
        atk_evidence(c, "the next launch's stderr named WS/<canary> in its \"starts tainted\" note (%s)", err);
}

static const struct atk A = {"ws_taint_note_name",
                             "a tainted directory's name in the next launch's \"starts tainted\" note",
                             ATK_NO_RECV,
                             NULL,
                             atkv_taint_rename_agent,
                             atkv_taint_rename_on_sync,
                             verify,
                             atkv_taint_rename_cleanup};
ATK_MAIN(A)
