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
#include <signal.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char sub[700], to[700];
    snprintf(sub, sizeof(sub), "%s/sub", atk_arg(c, "ws"));
    if (atk_try(c, "mkdir WS/sub", mkdir(sub, 0700)) < 0)
        return 0;
    atk_sync(c, "b"); /* a second instance runs on WS/sub */
    atk_recv(c);
    if (getenv("ATK_CONTROL_SECRET")) { /* positive control (root, unconfined, untainted): the record mncd
                                         * would have written, so the relaunch reports WS/sub */
        static const char rec[] = "{\"v\":1,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,"
                                  "\"may_forward\":false,\"may_external\":false}";
        atk_try(c, "control: setxattr trusted.mnc.taint on WS/sub",
                setxattr(sub, "trusted.mnc.taint", rec, strlen(rec), 0));
    }
    snprintf(to, sizeof(to), "%s/%s", atk_arg(c, "ws"), c->secret);
    atk_try(c, "rename WS/sub to WS/<canary>", rename(sub, to));
    return 0;
}

static pid_t launch(struct atk_ctx *c, const char *ws, const char *errpath, const char *const *cmd)
{
    const char *ctl = getenv("MNCCTL"), *rootflag = getenv("ATK_ROOTFLAG");
    if (!ctl || !*ctl)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (e < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        char *argv[16];
        int n = 0;
        argv[n++] = (char *)ctl;
        argv[n++] = "run";
        argv[n++] = "--agent";
        argv[n++] = "coordinator";
        argv[n++] = "--workspace";
        argv[n++] = (char *)ws;
        if (strcmp(c->mode, "root") == 0 && rootflag && *rootflag)
            argv[n++] = (char *)rootflag;
        argv[n++] = "--";
        for (int i = 0; cmd[i] && n < 15; i++)
            argv[n++] = (char *)cmd[i];
        argv[n] = NULL;
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "b") != 0)
        return;
    char sub[700], err[700];
    snprintf(sub, sizeof(sub), "%s/sub", c->ws);
    snprintf(err, sizeof(err), "%s/second.err", c->dir);
    static const char *const cmd[] = {"/bin/sleep", "6", NULL};
    c->slot[0] = launch(c, sub, err, cmd);
    struct timespec ts = {2, 0}; /* the second instance registers and starts */
    nanosleep(&ts, NULL);
}

static void verify(struct atk_ctx *c)
{
    if (c->slot[0] > 0) { /* the second instance ends by itself (sleep 6) */
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    char err[700];
    snprintf(err, sizeof(err), "%s/relaunch.err", c->dir);
    static const char *const cmd[] = {"/bin/true", NULL};
    pid_t pid = launch(c, c->ws, err, cmd);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    if (atk_file_has(err, c->canary) == 1)
        atk_evidence(c, "the next launch's stderr named WS/<canary> in its \"starts tainted\" note (%s)", err);
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGTERM);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
}

static const struct atk A = {"ws_taint_note_name",
                             "a tainted directory's name in the next launch's \"starts tainted\" note",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             verify,
                             cleanup};
ATK_MAIN(A)
