// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ws_register_race_name - mncd's agent.register refusal, printed raw by the launcher. The
 * launcher's walk sends the raw paths of tainted directories inside the workspace to mncd
 * (agent.register "tainted_dirs"); when one no longer resolves, mncd refuses with the path in
 * its error ("tainted_dirs entry WS/<name>: No such file or directory (it changed during the
 * registration: retry)", kern_verbs.c ws_inherit), and cmd_run.c prints that error unchanged
 * on the launcher's stderr ("run refused: mncd did not register the cgroup: ..."). The
 * "starts tainted" note names such a directory by inode (mncctl_ws_shown); this path does not.
 * Set-up as ws_taint_note_name: before its recv the agent makes WS/sub, the orchestrator runs
 * a second instance on WS/sub (sync "b"), so mncd writes the taint record on WS/sub at the
 * recv; the tainted agent then keeps renaming that directory between WS/<canary>.0 and
 * WS/<canary>.1 (the record moves with it) in a child, and waits at sync "churn" while the
 * operator starts another instance of the same agent on WS (allowed while one runs).
 * Verifier: at sync "churn" the orchestrator runs `mncctl run --agent coordinator --workspace
 * WS -- /bin/true` in the attack's mode up to 100 times and searches its stderr
 * (DIR/relaunch.err) for the canary.
 * What would block it: the launcher printing mncd's refusal without paths from the workspace
 * (or mncd's refusal naming the entry by its index or inode), as the note already does. The
 * positive control (root, unconfined, untainted) writes the record on WS/sub itself. */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    char sub[700], p0[700], p1[700];
    snprintf(sub, sizeof(sub), "%s/sub", atk_arg(c, "ws"));
    if (atk_try(c, "mkdir WS/sub", mkdir(sub, 0700)) < 0)
        return 0;
    atk_sync(c, "b"); /* a second instance runs on WS/sub */
    atk_recv(c);
    if (getenv("ATK_CONTROL_SECRET")) { /* positive control: the record mncd would have written */
        static const char rec[] = "{\"v\":1,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,"
                                  "\"may_forward\":false,\"may_external\":false}";
        atk_try(c, "control: setxattr trusted.mnc.taint on WS/sub",
                setxattr(sub, "trusted.mnc.taint", rec, strlen(rec), 0));
    }
    snprintf(p0, sizeof(p0), "%s/%s.0", atk_arg(c, "ws"), c->secret);
    snprintf(p1, sizeof(p1), "%s/%s.1", atk_arg(c, "ws"), c->secret);
    if (atk_try(c, "rename WS/sub to WS/<canary>.0", rename(sub, p0)) < 0)
        return 0;
    pid_t ch = fork();
    if (ch == 0) {
        for (;;) {
            (void)rename(p0, p1);
            (void)rename(p1, p0);
        }
    }
    atk_try(c, "fork the renamer", ch);
    atk_sync(c, "churn");
    if (ch > 0) {
        kill(ch, SIGKILL);
        waitpid(ch, NULL, 0);
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "b") == 0) {
        atkv_taint_rename_on_sync(c, tag);
        return;
    }
    if (strcmp(tag, "churn") != 0)
        return;
    char out[700];
    snprintf(out, sizeof(out), "%s/relaunch.err", c->dir);
    static const char *const cmd[] = {"/bin/true", NULL};
    for (int tries = 0; tries < 100; tries++) {
        atkv_mncctl_wait(atkv_mncctl_run(c, c->ws, out, cmd));
        if (atk_file_has(out, c->canary) == 1) {
            atk_evidence(c, "the launcher (try %d) printed mncd's agent.register refusal naming WS/<canary>.N (%s)",
                         tries + 1, out);
            return;
        }
    }
}

static const struct atk A = {"ws_register_race_name",
                             "a renamed tainted directory's path in mncd's agent.register refusal, printed by the "
                             "launcher",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             atkv_taint_rename_cleanup,
                             atkv_taint_rename_cleanup};
ATK_MAIN(A)
