// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_cwd_handed - workspace_outsider_cwd after the launch: an outsider's working directory
 * inside the workspace, from a directory fd the agent hands it. After the launch and before its
 * recv the agent (untainted) makes WS/shared with mode 0777 (umask 0: no chmod needed, so also
 * --as-root), passes an fd on it to an outsider (uid 65534, DIR/wc.sock), and closes its copy;
 * the outsider fchdir()s into it and closes the fd before it acknowledges. At the delivery no
 * process outside holds a workspace fd or mapping: mncd's host scan (fdscan.c outsider) reads
 * /proc/PID/fd and /proc/PID/maps, not /proc/PID/cwd or /proc/PID/root; the launcher's fresh
 * directory inodes (what closed workspace_outsider_cwd) were made at the launch, before this
 * directory existed. After the taint the agent writes the canary into WS/shared/out.txt (0644);
 * the outsider opens "out.txt" relative to its cwd, never passing the closed top directory.
 * Verifier: the outsider reads ./out.txt after the agent exited and hands the bytes over.
 * What would block it: the host scan judging each outside process's cwd and root like its fds
 * (a workspace path, or an inode on a workspace's filesystem it cannot place, is held_outside),
 * or a Landlock/seccomp rule keeping agents from making directories others can search. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    int d = -1;
    if (s < 0 || atk_recv_fds(s, &d, 1) != 1 || fchdir(d) < 0)
        _exit(3);
    close(d); /* only the cwd is left */
    close(l);
    if (write(s, "A", 1) != 1)
        _exit(3);
    close(s);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    int f = open("out.txt", O_RDONLY | O_CLOEXEC);
    if (f < 0)
        _exit(0);
    atkv_keeper_hand_file(f, ans);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/wc.sock", c->dir);
    atk_set(c, "wc", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the fd / fchdir");
}

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/shared", atk_arg(c, "ws"));
    umask(0);
    if (atk_try(c, "mkdir WS/shared 0777 (umask 0)", mkdir(p, 0777)) < 0)
        return 0;
    int d = (int)atk_try(c, "open WS/shared", open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    int s = (int)atk_try(c, "connect the outsider (untainted)", atk_unix(SOCK_STREAM, atk_arg(c, "wc")));
    if (d < 0 || s < 0 || atk_try(c, "hand the dir fd out", atk_send_fds(s, 'D', &d, 1)) < 0)
        return 0;
    char x;
    atk_try(c, "outsider's ack (it fchdir'ed, closed the fd)", read(s, &x, 1) == 1 ? 0 : -1);
    close(d);
    close(s);
    atk_recv(c); /* tainted now */
    snprintf(p, sizeof(p), "%s/shared/out.txt", atk_arg(c, "ws"));
    int f = (int)atk_try(c, "create WS/shared/out.txt 0644", open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (f >= 0) {
        atk_try(c, "write the canary", write(f, c->secret, strlen(c->secret)));
        close(f);
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider read WS/shared/out.txt relative to the cwd the agent handed it");
}

static void cleanup(struct atk_ctx *c) { atkv_keeper_cleanup(c); }

static const struct atk A = {"workspace_cwd_handed",
                             "an outsider's cwd in a workspace dir the agent handed it after the launch",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
