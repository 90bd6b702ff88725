// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_dirfd_in_flight - an outsider's open directory fd on the workspace, parked in
 * flight in a socket queue of its own. Before the launch (WS still 0755) uid 65534 opened WS
 * O_RDONLY | O_DIRECTORY, sent that fd over an AF_UNIX socketpair of its own (SCM_RIGHTS) and
 * closed it: the open directory is in no process's fd table, so the launcher's walk of
 * /proc/PID/fd for outsiders' directory fds on the workspace does not see it, and the write
 * lease test is for regular files only. `mncctl run` then makes WS root:agentgid 0770, but
 * getdents() on an open directory is not checked against the mode again. The agent creates
 * WS/<canary> after its recv; the outsider receives the fd back and lists the directory.
 * Verifier: the outsider, asked after the agent exited, recvmsg()s the fd, rewinds it, reads
 * every name with getdents64 and hands them over a pipe.
 * Would block it: a workspace whose directory inodes no other uid could open before the launch
 * (fresh directories made by the launcher, the content moved in), or the kernel's view of fds
 * in flight (unix_gc) in the launch check. Documented as open (docs/threat-model.md, "the
 * workspace"): this attack confirms it. */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *ws, int cmd, int ans)
{
    (void)c;
    atkv_keeper_nobody();
    int got = atkv_keeper_park(open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC), cmd, ans);
    if (lseek(got, 0, SEEK_SET) < 0)
        _exit(5);
    char buf[8192] __attribute__((aligned(8)));
    long r;
    while ((r = syscall(SYS_getdents64, got, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < r;) {
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof(reclen));
            const char *name = buf + off + 19;
            size_t l = strnlen(name, (size_t)(reclen - 19));
            if (write(ans, name, l) != (ssize_t)l || write(ans, "\n", 1) != 1)
                _exit(1);
            off += reclen;
        }
    }
    _exit(r < 0 ? 6 : 0);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start(c, c->ws, outsider, "2 socketpair, 3 open/send WS, 4 recv, 5 lseek, 6 getdents");
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 listed the workspace (a file named after the canary) through a directory fd "
                          "it kept in flight in its own socket");
}

static const struct atk A = {"workspace_dirfd_in_flight",
                             "an outsider's directory fd on the workspace, parked in flight in its own socketpair",
                             0,
                             prepare,
                             atkv_canary_name_agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
