// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_fd_passed_out - after the launch and before its taint, the agent hands an outsider
 * an fd on a workspace file, and the outsider parks it in flight. uid 65534 listens on
 * DIR/kp.sock; the agent (untainted: it may talk to anyone) opens WS/notes.txt O_RDWR, sends
 * the fd there (SCM_RIGHTS) and closes its copy; the outsider sends it over an AF_UNIX
 * socketpair of its own and closes it, so at the recv no process outside has it in an fd table
 * or a mapping. The launcher's write-lease test (which does see fds in flight) ran at the
 * launch, before the fd existed; mncd's fd scan at the delivery (held_outside: a workspace file
 * an outsider holds) walks /proc/PID/{fd,maps} only. After the recv the agent writes the canary
 * into notes.txt; the outsider takes the fd back and reads it.
 * Verifier: the outsider, asked after the agent exited, recvmsg()s the fd, preads it and hands
 * the bytes over a pipe.
 * Blocked by (lsm backend): socket_sendmsg refuses fds an agent, tainted or not, passes to a
 * socket made outside its cgroup (MNC_K_DENY_FDS_OUT). A known limit of the cgroup backend,
 * where no hook sees a message's control data (README, "Known limits"). */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        _exit(2);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    int fd = -1;
    if (s < 0 || atk_recv_fds(s, &fd, 1) != 1 || atk_send_fds(sv[0], 'F', &fd, 1) < 0 || close(fd) < 0)
        _exit(3);
    if (write(s, "A", 1) != 1) /* parked: the agent may go on */
        _exit(3);
    close(s);
    close(l);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    int got = -1;
    if (atk_recv_fds(sv[1], &got, 1) != 1)
        _exit(4);
    char buf[256];
    ssize_t r = pread(got, buf, sizeof(buf), 0);
    if (r > 0 && write(ans, buf, (size_t)r) != r)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char f[700], k[700];
    if (atkv_notes_file(c, f, sizeof(f)) != 0)
        return -1;
    snprintf(k, sizeof(k), "%s/kp.sock", c->dir);
    atk_set(c, "kp", "%s", k);
    return atkv_keeper_start(c, k, outsider, "2 listen, 3 take/park the fd, 4 take it back");
}

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "open ws/notes.txt O_RDWR", open(p, O_RDWR | O_CLOEXEC));
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "kp")));
    if (fd < 0 || s < 0)
        return 0;
    char ack;
    if (atk_try(c, "pass the fd out", atk_send_fds(s, 'F', &fd, 1)) >= 0) /* refused: no ack will come */
        atk_try(c, "outsider parked it", read(s, &ack, 1));
    close(s);
    close(fd);
    atk_recv(c);
    return atkv_notes_agent(c);
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary through a workspace file fd the agent passed out before its "
                          "taint, kept in flight in the outsider's own socket");
}

static const struct atk A = {
    "workspace_fd_passed_out",
    "a workspace file fd the agent passed out after the launch, parked in flight by the outsider",
    ATK_NO_RECV | ATK_LIMIT_CGROUP,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
