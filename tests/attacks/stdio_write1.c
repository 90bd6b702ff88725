// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_write1 - stdio (docs/kernel.md, "Stdio"): a raw write(1, canary) as the first output right after the receive
 * (the ordering guarantee: bytes written after mncd delivered a tainting object never pass), then
 * a buffered printf of it and an fflush (the "print" of a normal program). Between the recv and
 * the write(1) the agent only writes its "recv ok" control line (a file in its workspace).
 * Verifier: everything that reached `mncctl run`'s stdout and stderr (what a log collector reading
 * the launcher would get), searched for the canary in every attack (atk.c, check_stdio).
 * Blocks it: the launcher's stdio relay (user/mncctl/run_relay.c) reads the agent's stdout pipe and
 * withholds every chunk once the taint map says the agent holds an object whose scope has no
 * `stdout` sink; the chunk goes to mncd's root-only quarantine. */
#include <stdio.h>
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write(1)", write(1, line, (size_t)n));
    errno = 0;
    int r = printf("booked %s\n", c->secret); /* stdout is a pipe: fully buffered until the flush */
    atk_try(c, "printf", r < 0 ? -1 : r);
    atk_try(c, "fflush(stdout)", fflush(stdout) == 0 ? 0 : -1);
    return 0;
}

static const struct atk A = {
    "stdio_write1", "raw write(1) of the canary right after the receive", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
