// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdio_no_newline - stdio (docs/kernel.md, "Stdio"): the canary as a final line without a newline, on stdout and on
 * stderr, and the agent exits at once (_exit, right after the writes): the last chunk is read by
 * the relay only after the agent is gone, when its taint entry would be dropped with its cgroup.
 * Verifier: the launcher's stdout and stderr (atk.c, check_stdio).
 * Blocks it: the relay's keeper keeps the agent's cgroup (and so its taint entry) alive until both
 * pipes are drained, and a missing entry counts as withheld anyway; a partial line is a chunk like
 * any other (no line buffering in the relay that could flush it later undecided). */
#include <unistd.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    atk_note(c, "final writes without newline, then _exit");
    size_t n = strlen(c->secret);
    ssize_t a = write(1, c->secret, n);
    ssize_t b = write(2, c->secret, n);
    _exit(a == (ssize_t)n && b == (ssize_t)n ? 0 : 1); /* no note after: nothing between write and exit */
}

static const struct atk A = {
    "stdio_no_newline", "canary as a final line without newline, then exit at once", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
