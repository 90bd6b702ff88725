// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pidfd_getfd - steal a socket from an outsider: pidfd_open(collector) + pidfd_getfd(its fd
 * held_fd, one end of a socketpair the collector reads) and write the canary on it. The stolen
 * socket was created outside the agent's cgroup (our addition).
 * Verifier: the collector reads the other end ("held-socket").
 * Blocks it: pidfd_getfd needs PTRACE_MODE_ATTACH_REALCREDS on the target. */
#include <sys/syscall.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int pfd = (int)atk_try(c, "pidfd_open(outsider)", syscall(SYS_pidfd_open, (pid_t)atk_argl(c, "cpid"), 0));
    if (pfd < 0)
        return 0;
    int fd = (int)atk_try(c, "pidfd_getfd", syscall(SYS_pidfd_getfd, pfd, (int)atk_argl(c, "held_fd"), 0));
    if (fd >= 0)
        atk_try(c, "write stolen socket", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {"pidfd_getfd", "steal an outsider's socket with pidfd_getfd", 0, NULL, agent, NULL, NULL,
                             NULL};
ATK_MAIN(A)
