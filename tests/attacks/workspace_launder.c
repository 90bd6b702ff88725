// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_launder - threat model (docs/threat-model.md): laundering through the workspace. Run 1 (tainted) writes the canary into its workspace and
 * exits; mncd clears the agent's taint when its cgroup empties. Run 2 of the same agent on the same
 * workspace starts untainted (it receives nothing), reads the file and sends it out.
 * Verifier: the collector's unix-stream and tcp4 listeners.
 * Blocks it: workspace taint (run 2 starts with run 1's taint) or a per-instance wiped workspace. */
#include <fcntl.h>
#include <netinet/in.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    if (c->phase != 2) {
        int fd = (int)atk_try(c, "run1 write workspace file", open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (fd >= 0 && write(fd, c->secret, strlen(c->secret)) < 0)
            atk_note(c, "write failed");
        return 0;
    }
    int fd = (int)atk_try(c, "run2 read workspace file", open(p, O_RDONLY | O_CLOEXEC));
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, c->secret, sizeof(c->secret) - 1);
    c->secret[n > 0 ? n : 0] = 0;
    int s = (int)atk_try(c, "run2 connect", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (s >= 0)
        atk_try(c, "run2 write", write(s, c->secret, strlen(c->secret)));
    atk_inet(c, "run2 tcp4", AF_INET, SOCK_STREAM, 0, "127.0.0.1", (int)atk_argl(c, "tcp4"), 0);
    return 0;
}

static const struct atk A = {"workspace_launder",
                             "canary laundered through the workspace across two runs",
                             ATK_RELAUNCH,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
