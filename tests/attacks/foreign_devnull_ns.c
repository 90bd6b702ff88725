// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_devnull_ns - a writable fd on an outsider's file whose /proc name is "/dev/null".
 * mncd's fd scan refuses a delivery while the agent holds a writable fd on a file outside its
 * workspace (foreign_file), except /dev/null, /dev/zero and /dev/full, which it recognises by
 * the readlink() of /proc/PID/fd/N alone. A path is printed relative to the root of the mount
 * namespace the file's mount belongs to, so an outsider (uid 65534, an unprivileged user and
 * mount namespace of its own, a tmpfs on its /dev) makes a regular file /dev/null there, opens
 * it O_RDWR and hands the fd to the agent before its recv (DIR/dn.sock; the agent is untainted
 * and may talk to anyone). At the delivery the fd reads as "/dev/null" and is skipped. After
 * the taint the agent writes the canary through it; the outsider keeps its own fd and reads it.
 * Verifier: the outsider, asked after the agent exited, preads its file.
 * Blocks it: mncd's fd scan tells /dev/null|zero|full by identity (S_ISCHR, st_rdev 1:3, 1:5,
 * 1:7), never by the link text: the outsider's regular file is a foreign_file and the delivery
 * is refused (fdscan.c dev_allowed). lsm: a file_permission check of writes outside the
 * workspace would also block it. */
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static int put(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, s, strlen(s));
    close(fd);
    return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) /* the uid change cleared it: /proc/self is root's */
        _exit(5);
    /* an unprivileged user namespace and a mount namespace of its own: nothing of the host changes */
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        _exit(4);
    if (put("/proc/self/setgroups", "deny") < 0 || put("/proc/self/uid_map", "0 65534 1\n") < 0 ||
        put("/proc/self/gid_map", "0 65534 1\n") < 0)
        _exit(5);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount("atk", "/dev", "tmpfs", 0, "mode=0755") < 0)
        _exit(6);
    int fd = open("/dev/null", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644); /* a regular file */
    if (fd < 0)
        _exit(7);
    atkv_keeper_give_one(l, fd, 1, ans); /* the outsider keeps its fd too */
    atkv_keeper_wait_asked(cmd);
    atkv_keeper_hand_file(fd, ans);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "dn", outsider,
                                "1 drop to 65534, 2 listen, 3 give the fd, 4 unshare, 5 id maps, 6 mount, 7 create");
}

static int agent(struct atk_ctx *c)
{
    int fd = atkv_take_keeper_fd(c, "dn", "take its fd");
    if (fd < 0)
        return 0;
    char p[64], link[256];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(p, link, sizeof(link) - 1);
    link[n > 0 ? n : 0] = 0;
    struct stat st;
    atk_note(c, "the fd reads as %s (%s)", link,
             fstat(fd, &st) == 0 ? (S_ISREG(st.st_mode) ? "a regular file" : "not a regular file") : "fstat failed");
    atk_recv(c);
    atk_try(c, "write the canary", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider's file named /dev/null in its own mount namespace");
}

static const struct atk A = {"foreign_devnull_ns",
                             "writable fd on an outsider's regular file that /proc names /dev/null",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
