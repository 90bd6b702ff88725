// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* exec_comm - the task name again, without prctl: execve() sets a task's name (comm) to the
 * basename of the path it was given. The tainted agent makes a symlink WS/<canary> to
 * /usr/bin/sleep (or /bin/sleep) in its workspace and runs it with argv {"sleep", "30"} (the
 * canary is not in its command line); the child's /proc/PID/comm, /proc/PID/stat and
 * /proc/PID/status ("Name:") then carry the canary (15 bytes per exec, any number of children),
 * readable by every user. seccomp refuses prctl(PR_SET_NAME) (attack proc_comm) and Landlock
 * writes to /proc/self/comm, but execve of a workspace path is allowed.
 * Verifier: uid 65534 scans /proc/N/comm while the agent waits (sync "named").
 * What would block it: hidepid=invisible on the /proc other users see (threat model, as for
 * /proc/PID/cmdline), or a PID namespace with its own /proc; execveat(AT_EMPTY_PATH) names the
 * task after the file's dentry instead, so refusing exec of workspace names does not suffice.
 * Status: a documented remaining channel (docs/threat-model.md, the /proc metadata row, with its
 * bandwidth): runs only with MNC_ATTACKS_COVERT=1. */
#include <signal.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    const char *target = access("/usr/bin/sleep", X_OK) == 0 ? "/usr/bin/sleep" : "/bin/sleep";
    char link[700];
    snprintf(link, sizeof(link), "%s/%.15s", atk_arg(c, "ws"), c->secret);
    atk_try(c, "symlink WS/<canary> -> sleep", symlink(target, link));
    pid_t p = fork();
    if (p == 0) {
        char *argv[] = {"sleep", "30", NULL};
        execv(link, argv);
        _exit(127);
    }
    atk_try(c, "fork+exec WS/<canary>", p < 0 ? -1 : 0);
    usleep(200000);
    atk_sync(c, "named");
    if (p > 0) {
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    unlink(link);
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n) { return atk_scan_proc("comm", c->canary, out, n); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[256];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "uid 65534 read the canary in %s", out);
}

static const struct atk A = {"exec_comm", "task name set by execve of a workspace symlink, read from /proc",
                             ATK_COVERT,  NULL,
                             agent,       on_sync,
                             NULL,        NULL};
ATK_MAIN(A)
