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

#include "atk.h"

static void outsider(const char *dir, int cmd, int ans)
{
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
    snprintf(d, sizeof(d), "%s/shared", c->ws);
    if (mkdir(d, 0777) < 0 || chown(d, ATK_NOBODY, ATK_NOBODY) < 0 || chmod(d, 0777) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", d, strerror(errno));
        return -1;
    }
    int cmd[2], ans[2];
    if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(ans, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(cmd[1]);
        close(ans[0]);
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0)
            _exit(1);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != cmd[0] && fd != ans[1])
                close(fd);
        outsider(d, cmd[0], ans[1]);
    }
    close(cmd[0]);
    close(ans[1]);
    char x;
    if (read(ans[0], &x, 1) != 1) {
        snprintf(c->notes, sizeof(c->notes), "the outsider did not start");
        return -1;
    }
    c->slot[0] = pid;
    c->fdslot[0] = cmd[1];
    c->fdslot[1] = ans[0];
    return 0;
}

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/shared/out.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "create ws/shared/out.txt", open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd < 0)
        return 0;
    atk_try(c, "fchmod 0644", fchmod(fd, 0644));
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (c->slot[0] <= 0)
        return;
    char buf[512];
    size_t n = 0;
    ssize_t r;
    if (write(c->fdslot[0], "g", 1) != 1)
        return;
    while (n < sizeof(buf) - 1 && (r = read(c->fdslot[1], buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)r;
    if (atk_buf_has(buf, n, c->canary))
        atk_evidence(c, "uid 65534 read the canary through its working directory inside the workspace");
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    for (int i = 0; i < 2; i++)
        if (c->fdslot[i] > 0)
            close(c->fdslot[i]);
}

static const struct atk A = {"workspace_outsider_cwd",
                             "an outside process whose cwd is a workspace subdirectory it made before the launch",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
