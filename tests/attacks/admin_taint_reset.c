// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* admin_taint_reset - the agent (root in root mode) asks mncd to clear its own taint (admin verb
 * taint.reset), then sends the canary out (held for a process in the cgroup: docs/threat-model.md).
 * Verifier: the collector's unix-stream and tcp4 listeners.
 * Blocks it: admin verbs need the admin uid AND a connection that is not in an agent's cgroup. */
#include <netinet/in.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char resp[4096];
    int m = atk_mncd(c);
    if (m >= 0 && atk_call(m, "{\"verb\":\"taint.reset\",\"agent\":\"coordinator\"}", resp, sizeof(resp)) == 0)
        atk_note(c, "taint.reset: %s", strstr(resp, "\"ok\":true") ? "ALLOWED" : "denied");
    int fd = (int)atk_try(c, "connect", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    atk_inet(c, "tcp4", AF_INET, SOCK_STREAM, 0, "127.0.0.1", (int)atk_argl(c, "tcp4"), 0);
    return 0;
}

static const struct atk A = {
    "admin_taint_reset", "taint.reset on itself through mncd, then send", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
