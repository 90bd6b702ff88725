// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* preconnect_unix_backlog - preconnect_unix with the connection left in the outsider's
 * backlog: the agent connects to an outsider's listener (DIR/lc.sock) before its recv, and the
 * outsider does not accept. After the recv the agent writes the canary on the connection; the
 * outsider accepts only then and reads it. Until accept() the server's end of the connection
 * has no inode, so sock_diag names no peer for the agent's socket: it looks unconnected.
 * Verifier: the outsider (orchestrator) accepts at the sync and reads what is queued.
 * Blocks it: cgroup backend: mncd's sweep judges a connected socket without a peer inode by
 * the name getpeername gives (the listener's) and shuts it. lsm backend: socket_sendmsg
 * judges the write by the tainted sender. */
#include <poll.h>

#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int s = atkv_backlog_agent(c);
    if (s < 0)
        return 0;
    atk_try(c, "write the canary on the connection", write(s, c->secret, strlen(c->secret)));
    atk_sync(c, "written");
    close(s);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "written") != 0)
        return;
    int a = accept4(c->fdslot[ATKV_BACKLOG_SLOT], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (a < 0) {
        atk_note(c, "accept: %s", atk_errname(errno));
        return;
    }
    char buf[512];
    struct pollfd pf = {.fd = a, .events = POLLIN};
    ssize_t r = poll(&pf, 1, 500) == 1 ? read(a, buf, sizeof(buf)) : -1;
    if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary))
        atk_evidence(c, "the outsider accepted after the taint and read the canary");
    close(a);
}

static const struct atk A = {"preconnect_unix_backlog",
                             "UNIX connection made before the taint, accepted by the outsider after it",
                             ATK_NO_RECV,
                             atkv_backlog_prepare,
                             agent,
                             on_sync,
                             NULL,
                             atkv_backlog_cleanup};
ATK_MAIN(A)
