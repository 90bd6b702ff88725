// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* memfd_shared - shared memory set up before the taint (our addition). The agent creates a memfd,
 * passes it to an outsider (SCM_RIGHTS) while untainted, receives, then writes the canary into it:
 * no syscall after the taint names anything outside.
 * Verifier: the collector reads the memfd it holds ("passed-out-memory").
 * Blocks it: refusing delivery while an fd the agent holds is shared with a process outside its
 * cgroups (memfd, file, socket), or while fds were passed out. */
#include <sys/mman.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int m = (int)atk_try(c, "memfd_create", memfd_create("atk", MFD_CLOEXEC));
    if (m < 0 || ftruncate(m, 4096) < 0)
        return 0;
    int s = (int)atk_try(c, "connect outsider", atk_unix(SOCK_STREAM, atk_arg(c, "c_fd")));
    if (s < 0)
        return 0;
    char ack;
    if (atk_try(c, "pass memfd out", atk_send_fds(s, 'M', &m, 1)) < 0 || read(s, &ack, 1) != 1) /* refused: no ack */
        atk_note(c, "no ack");
    close(s);
    atk_recv(c);
    atk_try(c, "pwrite memfd", pwrite(m, c->secret, strlen(c->secret), 0));
    return 0;
}

static const struct atk A = {
    "memfd_shared", "memfd passed out before the taint, written after", ATK_NO_RECV, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
