// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_longpath_fd - a writable fd on an outsider's file whose path is longer than a page.
 * mncd's fd scan names each fd of the agent with readlink() of /proc/PID/fd/N and skips the fd
 * when that fails; the kernel builds the name in one page, so for a file whose path is longer
 * than 4096 bytes readlink() fails (ENAMETOOLONG) and the fd is neither a foreign_file nor an
 * object to look for outside. The outsider (uid 65534) makes DIR/lp/ + 24 nested directories
 * of 200 characters (relative mkdirat/openat: no syscall needs the long path), opens the file
 * at the bottom for writing and hands the fd to the agent before its recv (DIR/lq.sock; the
 * agent is untainted and may talk to anyone). After the taint the agent writes the canary.
 * Verifier: the outsider reads the file through a read-only fd it kept.
 * Blocks it: mncd's fd scan judges an fd whose link cannot be read (ENAMETOOLONG) as unnamed,
 * fail closed: a writable one is a foreign_file (never inside a workspace, never exempt by a
 * name), so the delivery is refused (fdscan.c agent_fds). */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

#define DEPTH 24

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    char top[700];
    snprintf(top, sizeof(top), "%s/lp", c->dir);
    int l = atkv_keeper_listen(path);
    if (mkdir(top, 0755) < 0 || chown(top, ATK_NOBODY, ATK_NOBODY) < 0)
        _exit(4);
    atkv_keeper_nobody();
    char name[201];
    memset(name, 'd', 200);
    name[200] = 0;
    int d = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; d >= 0 && i < DEPTH; i++) {
        if (mkdirat(d, name, 0755) < 0)
            _exit(4);
        int nd = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(d);
        d = nd;
    }
    if (d < 0)
        _exit(4);
    int fd = openat(d, "file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int ro = openat(d, "file", O_RDONLY | O_CLOEXEC);
    close(d);
    if (fd < 0 || ro < 0)
        _exit(4);
    atkv_keeper_give_one(l, fd, 0, ans); /* the outsider keeps its read-only fd */
    atkv_keeper_wait_asked(cmd);
    atkv_keeper_hand_file(ro, ans);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "lq", outsider, "1 drop to 65534, 2 listen, 3 give the fd, 4 make the file");
}

static int agent(struct atk_ctx *c)
{
    int fd = atkv_take_keeper_fd(c, "lq", "take its fd");
    if (fd < 0)
        return 0;
    char p[64], link[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    atk_try(c, "readlink of the fd (ENAMETOOLONG expected)", readlink(p, link, sizeof(link)));
    atk_recv(c);
    atk_try(c, "write the canary", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c) { atkv_keeper_verify(c, "the outsider's file at a path longer than a page"); }

/* rm -rf of DIR/lp without a long path (busybox rm cannot stat it): down by openat, up by
 * unlinkat */
static void cleanup(struct atk_ctx *c)
{
    atkv_keeper_cleanup(c);
    char top[700], name[201];
    snprintf(top, sizeof(top), "%s/lp", c->dir);
    memset(name, 'd', 200);
    name[200] = 0;
    int d[DEPTH + 1];
    int n = 0;
    d[0] = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d[0] < 0)
        return;
    while (n < DEPTH && (d[n + 1] = openat(d[n], name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
        n++;
    if (n == DEPTH)
        unlinkat(d[n], "file", 0);
    for (int i = n; i > 0; i--) {
        close(d[i]);
        unlinkat(d[i - 1], name, AT_REMOVEDIR);
    }
    close(d[0]);
    rmdir(top);
}

static const struct atk A = {"foreign_longpath_fd",
                             "writable fd on an outsider's file whose path is longer than a page (readlink fails)",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
