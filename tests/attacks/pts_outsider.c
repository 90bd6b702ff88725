// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pts_outsider - threat model (docs/threat-model.md): terminals. The agent opens an outsider's terminal /dev/pts/N (made by
 * the orchestrator with the default mode a login terminal has) and writes the canary to it.
 * Verifier: the outsider reads the pty master.
 * Blocks it: Landlock (terminals are not writable, except the agent's own stdio); DAC for an
 * unprivileged agent. */
#include <fcntl.h>
#include <poll.h>

#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
        return -1;
    c->fdslot[0] = m;
    atk_set(c, "pts", "%s", ptsname(m));
    /* the terminal must be open on the slave side too, as a login session's is */
    c->fdslot[1] = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "open outsider's pts", open(atk_arg(c, "pts"), O_WRONLY | O_NOCTTY));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char buf[512];
    struct pollfd pf = {.fd = c->fdslot[0], .events = POLLIN};
    if (poll(&pf, 1, 300) == 1) {
        ssize_t n = read(c->fdslot[0], buf, sizeof(buf));
        if (n > 0 && atk_buf_has(buf, (size_t)n, c->canary))
            atk_evidence(c, "canary on the outsider's terminal %s", atk_arg(c, "pts"));
    }
}

static void cleanup(struct atk_ctx *c)
{
    if (c->fdslot[0] > 0)
        close(c->fdslot[0]);
    if (c->fdslot[1] > 0)
        close(c->fdslot[1]);
}

static const struct atk A = {"pts_outsider", "write to an outsider's /dev/pts/N", 0, prepare, agent, NULL, verify,
                             cleanup};
ATK_MAIN(A)
