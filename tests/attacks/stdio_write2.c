// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_write2 - stdio (docs/kernel.md, "Stdio"): the canary written to stderr, raw write(2) and then fprintf(stderr)
 * (unbuffered stdio), right after the receive.
 * Verifier: the launcher's stdout and stderr (atk.c, check_stdio).
 * Blocks it: the stdio relay withholds the agent's stderr pipe too (sink `stderr`, not in the
 * scope's sinks); the launcher's own stderr carries only its fixed "output withheld" note. */
#include <stdio.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write(2)", write(2, line, (size_t)n));
    errno = 0;
    int r = fprintf(stderr, "error: could not book %s\n", c->secret);
    atk_try(c, "fprintf(stderr)", r < 0 ? -1 : r);
    return 0;
}

static const struct atk A = {
    "stdio_write2", "write(2) and fprintf(stderr) of the canary after the receive", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
