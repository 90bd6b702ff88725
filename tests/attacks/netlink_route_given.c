// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* netlink_route_given - netlink_route_shared turned around: the NETLINK_ROUTE socket comes from
 * outside. The launcher's seccomp now refuses the agent every netlink socket (netlink_rmem), so
 * the agent cannot open one itself; an untainted helper (the collector's giver) opens it before
 * the taint, hands it to the agent and keeps a copy, which it reads. After its recv the agent
 * sends the kernel an RTM_NEWLINK request carrying the canary: refused for want of
 * CAP_NET_ADMIN, and the kernel's NLMSG_ERROR answer quotes the whole request into the shared
 * socket's receive queue, where the helper reads it. (Left unread, the same answers would count
 * out bytes in /proc/net/netlink's Rmem, as in netlink_rmem.)
 * Verifier: the collector's read of its copy ("helper-socketpair" in DIR/got).
 * Blocks it: mncd's fd scan refuses the delivery while the agent holds a socket of a family the
 * sweep cannot shut that was created outside it; netlink is such a family, routing sockets
 * included (until this attack, NETLINK_ROUTE was excepted as "what the agent may open itself"). */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int nl = -1;
    if (atk_try(c, "take the helper's NETLINK_ROUTE socket", atk_take(c, "N", &nl, 1)) < 1)
        return 0;
    atk_recv(c);
    atkv_nl_newlink_canary(c, nl);
    usleep(300000); /* the helper reads the kernel's answer */
    return 0;
}

static const struct atk A = {"netlink_route_given",
                             "a NETLINK_ROUTE socket an outsider hands the agent and keeps a copy of; the "
                             "kernel quotes the request back",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
