// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_child - stdio (docs/kernel.md, "Stdio"): a child process inheriting the agent's stdio prints the canary: an
 * exec'd /bin/cat copies it from a pipe to the inherited stdout, and a forked child (no exec)
 * writes it to the inherited stderr and exits before the agent does.
 * Verifier: the launcher's stdout and stderr (atk.c, check_stdio).
 * Blocks it: the relay decides per chunk on the agent's taint entry (one per agent, shared by
 * every process of its cgroup), not per writer: a child's bytes are withheld like the parent's. */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int p[2];
    if (atk_try(c, "pipe", pipe2(p, O_CLOEXEC)) < 0)
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        atk_try(c, "fork cat", -1);
        return 0;
    }
    if (pid == 0) {
        if (dup2(p[0], 0) < 0)
            _exit(120);
        execl("/bin/cat", "cat", (char *)NULL);
        _exit(121);
    }
    close(p[0]);
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write to cat", write(p[1], line, (size_t)n));
    close(p[1]);
    int st = 0;
    waitpid(pid, &st, 0);
    atk_note(c, "cat exit status %d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    pid = fork();
    if (pid < 0) {
        atk_try(c, "fork writer", -1);
        return 0;
    }
    if (pid == 0)
        _exit(write(2, line, (size_t)n) == n ? 0 : 1);
    waitpid(pid, &st, 0);
    atk_note(c, "forked write(2) %s", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "OK" : "failed");
    return 0;
}

static const struct atk A = {
    "stdio_child", "a child inheriting stdio (exec'd cat, forked writer) prints the canary", 0, NULL, agent, NULL, NULL,
    NULL};
ATK_MAIN(A)
