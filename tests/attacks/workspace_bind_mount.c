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

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *dir, int cmd, int ans)
{
    atkv_keeper_nobody();
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
    const char *target = c->dir;
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
    return atkv_shared_dir(c, d, sizeof(d)) ? -1 : atkv_keeper_start(c, d, outsider, "2 unshare, 6 mount");
}

/* the agent also tries to open the bind-mounted directory to others again (as its owner could) */
static int agent(struct atk_ctx *c) { return atkv_shared_out_agent(c, 1); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary through its bind mount of a workspace directory");
}

static const struct atk A = {"workspace_bind_mount",
                             "an outsider's bind mount (own user+mount namespace) of a workspace subdirectory",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
