// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* abstract_name - threat model (docs/threat-model.md): storage any process can read. The agent binds an abstract UNIX socket NAMED after the canary (bind only, no connect).
 * Verifier: uid 65534 reads /proc/net/unix while the agent waits.
 * Blocks it: Landlock scope does not cover bind; seccomp or a network namespace per agent.
 * Status: a documented remaining covert channel (/proc/net/unix names; docs/threat-model.md gives its bandwidth
 * and what would close it): runs only with MNC_ATTACKS_COVERT=1. */
#include <fcntl.h>
#include <sys/un.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof(sa);
    if ('@' == '@') {
        snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%.90s", c->secret);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
    } else {
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/%.40s", atk_arg(c, "ws"), c->secret);
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    atk_try(c, "bind", fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, len));
    atk_sync(c, "bound");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    if (atk_file_has("/proc/net/unix", c->canary) == 1) {
        snprintf(out, n, "uid 65534 read the canary in /proc/net/unix");
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[256];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const struct atk A = {"abstract_name",
                             "an abstract UNIX socket NAMED after the canary (bind only, no connect)",
                             ATK_COVERT,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
