// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* socketpair_given_away - threat model (docs/threat-model.md): socket pairs shared with an outsider. The agent makes its own socketpair before the taint
 * and passes a copy of one end to an outsider (SCM_RIGHTS), keeping both ends itself; after the
 * taint it writes on the other end.
 * Verifier: the collector's fd receiver reads the end it was given ("passed-out-socket").
 * Blocks it: a socket whose peer end is held outside the agent's cgroups is external: shut at
 * delivery or delivery refused. */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int sp[2];
    if (atk_try(c, "socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sp)) < 0)
        return 0;
    int s = (int)atk_try(c, "connect outsider", atk_unix(SOCK_STREAM, atk_arg(c, "c_fd")));
    if (s < 0)
        return 0;
    atk_try(c, "give one end away", atk_send_fds(s, 'R', &sp[1], 1));
    /* keep sp[1] too: the sweep then sees a pair "between two of the agent's own sockets" */
    char ack;
    if (read(s, &ack, 1) != 1) /* the outsider acknowledges: it holds the end now */
        atk_note(c, "no ack from the outsider");
    close(s);
    atk_recv(c);
    atk_try(c, "write own end", write(sp[0], c->secret, strlen(c->secret)));
    usleep(200000);
    return 0;
}

static const struct atk A = {"socketpair_given_away",
                             "own socketpair, one end given to an outsider before the taint",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
