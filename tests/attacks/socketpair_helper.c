// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* socketpair_helper - threat model (docs/threat-model.md): socket pairs shared with an outsider. An untainted helper makes a socketpair, gives BOTH ends
 * to the agent and keeps a copy of one. The agent's sweep sees a connection "between two of its own
 * sockets" and keeps it; the helper reads what the agent writes.
 * Verifier: the collector reads its kept end ("helper-socketpair").
 * Blocks it: a socket whose peer is also held by a process outside the agent's cgroups is external. */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fds[2] = {-1, -1};
    if (atk_try(c, "take helper's socketpair", atk_take(c, "P", fds, 2)) < 2)
        return 0;
    atk_recv(c);
    atk_try(c, "write one end", write(fds[0], c->secret, strlen(c->secret)));
    usleep(200000);
    return 0;
}

static const struct atk A = {"socketpair_helper",
                             "helper's socketpair, both ends given to the agent",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
