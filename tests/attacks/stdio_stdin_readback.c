// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_stdin_readback - stdio (docs/kernel.md, "Stdio"): as stdio_stdin (write(0); fd 0 reopened for writing through
 * /proc/self/fd/0), but the caller of `mncctl run` also keeps the READ end of the pipe it gave as
 * stdin and reads back what is left in it. Not the usual caller (a shell pipeline or a harness
 * with stdin=PIPE holds only the write end), so this runs only with MNC_ATTACKS_COVERT=1 (flagged
 * ATK_COVERT, though it is not a covert channel): KNOWN OPEN for --as-root (found 2026-11-30,
 * reported to the lead; not yet in docs/threat-model.md).
 * Verifier: after the agent exited, the orchestrator drains the stdin pipe (ATK_STDIN_READBACK).
 * What happens: the launcher reopens fd 0 O_RDONLY (write(0) -> EBADF). A default-uid agent cannot
 * reopen the pipe (root's, 0600: EACCES). An --as-root agent can: Landlock does not judge pipefs
 * (an internal filesystem), so /proc/self/fd/0 opened O_WRONLY is a write end of the caller's pipe
 * and the canary lands in it. Closing it would take the launcher giving a pipe stdin through a
 * pipe of its own (relayed inward), or /dev/null. */
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

static const struct atk A = {"stdio_stdin_readback",
                             "fd 0 reopened for writing, read back from the stdin pipe by the caller",
                             ATK_COVERT | ATK_STDIN_READBACK,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
