// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_outsider_cwd - an outside process whose working directory is inside the workspace.
 * Before the launch (while the workspace was still reachable) an outsider (uid 65534) made
 * WS/shared (its own directory, 0777) and chdir'ed into it; it holds no fd on the workspace.
 * `mncctl run` closes the workspace's top directory (root:agent 0770), but a lookup relative
 * to a working directory never passes the top again. The agent writes the canary into
 * WS/shared/out.txt (0644); the outsider opens "out.txt" relative to its cwd. mncd's sweep
 * (fdscan's host pass) reads every outside process's /proc/PID/fd and /proc/PID/maps for
 * workspace paths, not /proc/PID/cwd (nor /proc/PID/root).
 * Verifier: the outsider, asked after the agent exited, reads ./out.txt and hands the bytes to
 * the orchestrator over a pipe.
 * Would block it: the sweep also judging each outside process's cwd and root (a path in a
 * workspace = held_outside, as for an fd), and the launcher refusing workspace directories
 * other uids own or can write. */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *dir, int cmd, int ans)
{
    (void)c;
    if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0 || chdir(dir) < 0)
        _exit(1);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    char buf[256];
    int fd = open("out.txt", O_RDONLY | O_CLOEXEC);
    ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    if (r > 0 && write(ans, buf, (size_t)r) != r)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char d[700];
    return atkv_shared_dir(c, d, sizeof(d)) ? -1 : atkv_keeper_start(c, d, outsider, NULL);
}

static int agent(struct atk_ctx *c) { return atkv_shared_out_agent(c, 0); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary through its working directory inside the workspace");
}

static const struct atk A = {"workspace_outsider_cwd",
                             "an outside process whose cwd is a workspace subdirectory it made before the launch",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
