// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_bind_mount - a workspace subdirectory bind-mounted, before the launch, in an
 * outsider's private mount namespace. uid 65534 made WS/shared (its own directory, 0777), then
 * in a user and mount namespace of its own (unprivileged: unshare(CLONE_NEWUSER | CLONE_NEWNS))
 * bind-mounted it on DIR (the attack's directory, in its namespace only), chdir'ed to / and
 * kept no fd on the workspace. `mncctl run` closes
 * the workspace's top directory, but the mount's root is WS/shared itself: DIR/out.txt there never
 * passes the top. The agent writes the canary into WS/shared/out.txt (0644).
 * mncd's sweep (fdscan's host pass) reads outside processes' fd links and maps by path; it
 * reads neither their cwd nor their mounts (/proc/PID/mountinfo), so the same outsider as
 * workspace_outsider_cwd with its reference moved into a mount is not found by a cwd check.
 * Verifier: the outsider, asked after the agent exited, reads DIR/out.txt in its namespace
 * and hands the bytes over a pipe.
 * Would block it: a workspace no other uid could reach before the launch (the launcher
 * refusing directories other uids own or can write, or making the workspace itself); a sweep
 * over cwd, root and every mount namespace's mountinfo covers the references it can name. */
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"

static void outsider(const char *dir, const char *target, int cmd, int ans)
{
    if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
        _exit(1);
    /* the uid change from root left the process undumpable: its /proc/self files root's */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        _exit(2);
    char m[64];
    int f = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
    if (f < 0 || write(f, "deny", 4) != 4 || close(f) < 0)
        _exit(3);
    snprintf(m, sizeof(m), "0 %d 1", ATK_NOBODY);
    f = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    if (f < 0 || write(f, m, strlen(m)) != (ssize_t)strlen(m) || close(f) < 0)
        _exit(4);
    f = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
    if (f < 0 || write(f, m, strlen(m)) != (ssize_t)strlen(m) || close(f) < 0)
        _exit(5);
    /* the target is DIR (exists on every host; /mnt may not): in this namespace DIR is now
     * WS/shared. Making the tree private first is not needed for a bind mount (the copy of the
     * namespace is already the outsider's own), so a rootfs that refuses it does not matter. */
    (void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    if (mount(dir, target, NULL, MS_BIND, NULL) < 0 || chdir("/") < 0)
        _exit(6);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    char buf[256];
    char p[700];
    snprintf(p, sizeof(p), "%s/out.txt", target);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
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
        outsider(d, c->dir, cmd[0], ans[1]);
    }
    close(cmd[0]);
    close(ans[1]);
    char x;
    if (read(ans[0], &x, 1) != 1) {
        int st = 0;
        waitpid(pid, &st, 0);
        snprintf(c->notes, sizeof(c->notes), "the outsider did not start (status %d: 2 unshare, 6 mount)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
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
    /* the directory the outsider bind-mounted: opened again to others if the agent owns it */
    snprintf(p, sizeof(p), "%s/shared", atk_arg(c, "ws"));
    atk_try(c, "chmod ws/shared 0777", chmod(p, 0777));
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
        atk_evidence(c, "uid 65534 read the canary through its bind mount of a workspace directory");
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

static const struct atk A = {"workspace_bind_mount",
                             "an outsider's bind mount (own user+mount namespace) of a workspace subdirectory",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
