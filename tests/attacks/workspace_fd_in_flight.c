// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_fd_in_flight - an outsider's open file on a workspace file, parked in flight in a
 * socket queue of its own. Before the launch (the workspace still readable) uid 65534 opened
 * WS/notes.txt (a 0666 file the agent is meant to edit) O_RDONLY, sent that fd over an
 * AF_UNIX socketpair of its own (SCM_RIGHTS) and closed it: the open file is in no process's
 * fd table and in no mapping. The agent writes the canary into notes.txt after its recv; the
 * outsider then receives the fd back and reads it (read permission was checked at the open).
 * mncd's fdscan refuses a delivery while an outside process holds a workspace file on an fd or
 * a mapping (held_outside) and peeks into the agent's own socket queues, not into outsiders'.
 * Verifier: the outsider, asked after the agent exited, recvmsg()s the fd, preads it and hands
 * the bytes over a pipe.
 * Would block it: files in flight in outside sockets are beyond a /proc walk (the kernel's
 * unix_gc knows them); the launcher giving the agent a workspace (inode set) no other uid
 * could open before the launch - fresh files, or a copy - closes every reference of this
 * kind (fds, in-flight fds, io_uring fixed files, cwd, mounts, inotify marks, hard links). */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"

static void outsider(const char *file, int cmd, int ans)
{
    if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
        _exit(1);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        _exit(2);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || atk_send_fds(sv[0], 'F', &fd, 1) < 0 || close(fd) < 0)
        _exit(3);
    if (write(ans, "r", 1) != 1)
        _exit(1);
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
    char f[700];
    snprintf(f, sizeof(f), "%s/notes.txt", c->ws);
    int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || fchmod(fd, 0666) < 0 || close(fd) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", f, strerror(errno));
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
        for (int i = 3; i < 1024; i++)
            if (i != cmd[0] && i != ans[1])
                close(i);
        outsider(f, cmd[0], ans[1]);
    }
    close(cmd[0]);
    close(ans[1]);
    char x;
    if (read(ans[0], &x, 1) != 1) {
        int st = 0;
        waitpid(pid, &st, 0);
        snprintf(c->notes, sizeof(c->notes), "the outsider did not start (status %d)",
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
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "open ws/notes.txt O_WRONLY", open(p, O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (fd < 0)
        return 0;
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
        atk_evidence(c, "uid 65534 read the canary through a workspace file it kept in flight in its own socket");
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

static const struct atk A = {"workspace_fd_in_flight",
                             "an outsider's fd on a workspace file, parked in flight in its own socketpair",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
