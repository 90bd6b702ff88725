// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_stdin - stdio (docs/kernel.md, "Stdio"): the agent writes the canary to its stdin: write(0), and fd 0 reopened
 * for writing through /proc/self/fd/0 (O_WRONLY and O_RDWR); stdin is the orchestrator's pipe.
 * Verifier: the launcher's stdout and stderr (atk.c, check_stdio): nothing written to fd 0 may come
 * out there. (Whether the bytes land in the stdin pipe itself is stdio_stdin_readback's question.)
 * Blocks it: the launcher reopens fd 0 O_RDONLY before confinement (write(0) -> EBADF); the pipe
 * is not the launcher's stdout or stderr, so nothing written into it is relayed. */
#include <fcntl.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write(0)", write(0, line, (size_t)n));
    static const int modes[] = {O_WRONLY, O_RDWR};
    for (int i = 0; i < 2; i++) {
        char w[64];
        snprintf(w, sizeof(w), "open /proc/self/fd/0 %s", i ? "O_RDWR" : "O_WRONLY");
        int fd = (int)atk_try(c, w, open("/proc/self/fd/0", modes[i] | O_CLOEXEC | O_NONBLOCK));
        if (fd < 0)
            continue;
        snprintf(w, sizeof(w), "write reopened fd 0 (%s)", i ? "O_RDWR" : "O_WRONLY");
        atk_try(c, w, write(fd, line, (size_t)n));
        close(fd);
    }
    return 0;
}

static const struct atk A = {
    "stdio_stdin", "write(0) and fd 0 reopened for writing via /proc/self/fd/0", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
