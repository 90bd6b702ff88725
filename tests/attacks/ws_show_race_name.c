// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ws_show_race_name - `mncctl workspace show WS` (the operator's look at a workspace's taint,
 * which the launcher's "starts tainted" note recommends) walks WS with nftw for tainted
 * directories (cmd_workspace.c mncctl_ws_tainted_dirs) and, when an entry vanishes between the
 * directory read and its stat (FTW_NS) or its lgetxattr (ENOENT), fails with the entry's raw
 * path on stderr ("workspace WS: taint scan failed: WS/<name>: cannot be read"). The tainted
 * agent, still running, makes and removes directories named WS/<canary>.<i> in a loop (a child
 * process) while the operator looks.
 * Verifier: while the agent waits (sync "churn"), the orchestrator runs `mncctl workspace show
 * WS` up to 200 times and searches its stdout and stderr (DIR/show.out) for the canary.
 * What would block it: the walk's error messages naming the entry by inode (as shown() does in
 * the launcher's walk), or skipping entries that vanished. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"

#define CHURN_N 64

static int agent(struct atk_ctx *c)
{
    pid_t ch = fork();
    if (ch == 0) {
        char p[CHURN_N][700];
        for (int i = 0; i < CHURN_N; i++)
            snprintf(p[i], sizeof(p[i]), "%s/%s.%d", atk_arg(c, "ws"), c->secret, i);
        for (;;) {
            for (int i = 0; i < CHURN_N; i++)
                (void)mkdir(p[i], 0700);
            for (int i = 0; i < CHURN_N; i++)
                (void)rmdir(p[i]);
        }
    }
    atk_try(c, "fork the churner", ch);
    atk_sync(c, "churn");
    if (ch > 0) {
        kill(ch, SIGKILL);
        waitpid(ch, NULL, 0);
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "churn") != 0)
        return;
    const char *ctl = getenv("MNCCTL");
    if (!ctl || !*ctl)
        return;
    char out[700];
    snprintf(out, sizeof(out), "%s/show.out", c->dir);
    int tries = 0;
    for (; tries < 200; tries++) {
        pid_t pid = fork();
        if (pid == 0) {
            int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
            if (o < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
                _exit(127);
            execl(ctl, ctl, "workspace", "show", c->ws, (char *)NULL);
            _exit(127);
        }
        if (pid > 0)
            waitpid(pid, NULL, 0);
        if (atk_file_has(out, c->canary) == 1) {
            atk_evidence(c, "`mncctl workspace show WS` (try %d) named WS/<canary>.N in its error (%s)", tries + 1,
                         out);
            return;
        }
    }
}

static const struct atk A = {"ws_show_race_name",
                             "a vanishing entry's name in `mncctl workspace show`'s error",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
