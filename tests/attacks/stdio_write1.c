/* stdio_write1 - issue 15: a raw write(1, canary) as the first output right after the receive
 * (the ordering guarantee: bytes written after mncd delivered a tainting object never pass).
 * Verifier: everything that reached `mncctl run`'s stdout and stderr (what a log collector reading
 * the launcher would get), searched for the canary in every attack (atk.c, check_stdio).
 * Blocks it: the launcher's stdio relay (user/mncctl/run_relay.c) reads the agent's stdout pipe and
 * withholds every chunk once the taint map says the agent holds an object whose scope has no
 * `stdout` sink; the chunk goes to mncd's root-only quarantine. */
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write(1)", write(1, line, (size_t)n));
    return 0;
}

static const struct atk A = {"stdio_write1", "raw write(1) of the canary right after the receive", 0, NULL, agent,
                             NULL, NULL, NULL};
ATK_MAIN(A)
