// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_procs_move - threat model (docs/threat-model.md): leaving the cgroup (second form). The agent forks a child and writes the
 * child's pid into the cgroup.procs of the cgroup2 root (outside the agent's tree); the moved
 * child is untainted and sends the canary out.
 * Verifier: the collector's unix-stream listener.
 * Blocks it: Landlock (no writes outside the workspace), the agent's cgroup namespace, and the
 * file's owner/mode for an unprivileged agent. */
#include <fcntl.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int go[2];
    if (pipe(go) < 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        close(go[1]);
        if (read(go[0], &b, 1) != 1)
            _exit(0);
        int fd = (int)atk_try(c, "moved child connect", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
        if (fd >= 0)
            atk_try(c, "moved child write", write(fd, c->secret, strlen(c->secret)));
        _exit(0);
    }
    close(go[0]);
    char p[600], s[32];
    snprintf(p, sizeof(p), "%s/cgroup.procs", atk_arg(c, "cg2"));
    int fd = (int)atk_try(c, "open root cgroup.procs for writing", open(p, O_WRONLY | O_CLOEXEC));
    if (fd >= 0) {
        int n = snprintf(s, sizeof(s), "%d\n", pid);
        atk_try(c, "write child pid to root cgroup.procs", write(fd, s, (size_t)n));
        close(fd);
    }
    if (write(go[1], "g", 1) != 1)
        atk_note(c, "child gone");
    waitpid(pid, NULL, 0);
    return 0;
}

static const struct atk A = {
    "cgroup_procs_move", "write a child's pid into an outside cgroup.procs", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
