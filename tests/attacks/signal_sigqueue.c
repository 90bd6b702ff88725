// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* signal_sigqueue - signals carry data: sigqueue() sends an int with each realtime signal. The
 * agent sends the canary, 4 bytes per signal, to an outsider (the collector) (held: docs/threat-model.md).
 * Verifier: the collector's signalfd records the values.
 * Blocks it: Landlock's signal scope (no signals outside the agent's domain); DAC for another uid. */
#include <signal.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    pid_t pid = (pid_t)atk_argl(c, "cpid");
    char buf[64] = {0};
    size_t n = strlen(c->secret);
    memcpy(buf, c->secret, n);
    for (size_t i = 0; i < n; i += 4) {
        union sigval v;
        memcpy(&v.sival_int, buf + i, 4);
        if (atk_try(c, "sigqueue", sigqueue(pid, SIGRTMIN, v)) < 0)
            break;
    }
    return 0;
}

static const struct atk A = {"signal_sigqueue", "sigqueue() values to an outsider", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
