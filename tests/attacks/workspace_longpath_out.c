// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_longpath_out - a workspace file handed to an outsider, which keeps it in its fd table
 * (not in flight), under a path longer than a page. After the launch and before its recv the
 * agent (untainted: it may talk to anyone) makes WS/ + 24 nested directories of 200 characters
 * (relative mkdirat/openat: no syscall needs the long path; Landlock allows it all in the
 * workspace), opens the file at the bottom O_RDWR, hands the fd to an outsider (uid 65534,
 * DIR/wl.sock) and closes every fd of its own. mncd's host scan (held_outside, fdscan.c
 * outsider_fds) recognises an outsider's workspace file by the text of readlink() of
 * /proc/PID/fd/N under a workspace path; for a path over 4096 bytes readlink() fails
 * (ENAMETOOLONG), the fd is then only compared with the objects the agent holds (none), and the
 * delivery goes ahead. After the taint the agent opens the file again by the same relative walk
 * and writes the canary; the outsider reads it through the fd it kept.
 * (foreign_longpath_fd is the other direction, an outsider's long-path file held by the agent:
 * closed by judging an unnamed fd of the agent fail-closed; the outsider's side is not.)
 * Verifier: the outsider preads its fd after the agent exited and hands the bytes over a pipe.
 * What would block it: the host scan failing closed on an outsider fd it cannot name (compare
 * its (dev, ino) with the workspaces' filesystems, or refuse), or a workspace walk at each
 * delivery that refuses paths deeper than a page. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

#define DEPTH 24

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    atkv_keeper_hand_file(atkv_keeper_take_asked(path, cmd, ans), ans);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/wl.sock", c->dir);
    atk_set(c, "wl", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the fd");
}

/* WS/d.../d.../file through relative opens; create: make the directories. The fd, or -1. */
static int deep_file(struct atk_ctx *c, int create)
{
    int d = atkv_deep_dir(c, DEPTH, create);
    if (d < 0)
        return -1;
    int fd = openat(d, "file", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    close(d);
    return fd;
}

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "make WS/<24 x 200>/file, open O_RDWR", deep_file(c, 1));
    if (fd < 0)
        return 0;
    int s = (int)atk_try(c, "connect the outsider (untainted)", atk_unix(SOCK_STREAM, atk_arg(c, "wl")));
    if (s < 0)
        return 0;
    if (atk_try(c, "pass the fd out (SCM_RIGHTS)", atk_send_fds(s, 'F', &fd, 1)) < 0)
        return 0;
    char x;
    atk_try(c, "outsider's ack", read(s, &x, 1) == 1 ? 0 : -1);
    close(fd);
    close(s);
    atk_recv(c); /* tainted now; no fd of ours leads to the file */
    fd = (int)atk_try(c, "reopen the deep file", deep_file(c, 0));
    if (fd < 0)
        return 0;
    atk_try(c, "write the canary", pwrite(fd, c->secret, strlen(c->secret), 0));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider read the canary through its fd on the long-path workspace file");
}

static void cleanup(struct atk_ctx *c) { atkv_deep_cleanup(c, DEPTH); }

static const struct atk A = {"workspace_longpath_out",
                             "a long-path workspace file's fd kept by an outsider (readlink ENAMETOOLONG)",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
