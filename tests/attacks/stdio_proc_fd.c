// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_proc_fd - stdio (docs/kernel.md, "Stdio"): the agent reopens its stdio by path - /proc/self/fd/1, /proc/self/fd/2,
 * /dev/stdout, /dev/stderr - and writes the canary to each new open file description (in case the
 * relay or the kernel judged the inherited description only).
 * Verifier: the launcher's stdout and stderr (atk.c, check_stdio).
 * Blocks it: fds 1 and 2 are the write ends of the relay's pipes: reopening them by path gives the
 * same pipes, read by the same relay, which withholds a tainted agent's chunks whatever fd they
 * were written through. */
#include <fcntl.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    static const char *paths[] = {"/proc/self/fd/1", "/proc/self/fd/2", "/dev/stdout", "/dev/stderr"};
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char w[64];
        snprintf(w, sizeof(w), "open %s", paths[i]);
        int fd = (int)atk_try(c, w, open(paths[i], O_WRONLY | O_CLOEXEC));
        if (fd < 0)
            continue;
        snprintf(w, sizeof(w), "write %s", paths[i]);
        atk_try(c, w, write(fd, line, (size_t)n));
        close(fd);
    }
    return 0;
}

static const struct atk A = {"stdio_proc_fd",
                             "stdout/stderr reopened through /proc/self/fd/N and /dev/stdout",
                             0,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
