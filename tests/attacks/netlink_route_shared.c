// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* netlink_route_shared - the agent's own NETLINK_ROUTE socket, also held by an outsider, with
 * the kernel as the reflector. NETLINK_ROUTE is the one netlink family the launcher's seccomp
 * allows and mncd's sweep keeps whoever holds it ("what the agent may open itself"). Before its
 * recv the agent (untainted: it may talk to anyone) opens a NETLINK_ROUTE socket and hands a
 * copy to an outsider (uid 65534, DIR/nl.sock), which keeps reading it. After the taint the
 * agent sends the kernel an RTM_NEWLINK request whose payload carries the canary: refused for
 * want of CAP_NET_ADMIN, and the kernel's NLMSG_ERROR answer quotes the whole request (no
 * NETLINK_CAP_ACK) into the socket's receive queue, which the outsider reads. No address,
 * no cgroup hook: netlink to the kernel is not a destination any hook judges.
 * Verifier: the outsider, asked after the agent exited, hands over what it read after "mk".
 * Blocks it: since stop 33 the launcher's seccomp refuses the agent every netlink socket
 * (netlink_rmem), so it cannot open one; before, mncd's fd scan found the shared NETLINK_ROUTE
 * socket held_outside (it looks for every socket of the agent, any family, by its sockfs inode,
 * among the fds of processes outside the agent) and refused the delivery. The variant with the
 * socket made outside: netlink_route_given. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int m = atkv_keeper_take_as_nobody(path, ans);
    static char buf[1 << 17];
    size_t n = atkv_keeper_read_until_asked(m, cmd, buf, sizeof(buf));
    /* the answers are binary: hand over the first "mk" onwards (the canary's prefix) */
    for (size_t i = 0; i + 14 <= n; i++)
        if (buf[i] == 'm' && buf[i + 1] == 'k') {
            if (write(ans, buf + i, 14) < 0)
                _exit(1);
            break;
        }
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "nl", outsider, "1 drop to 65534, 2 listen, 3 take the socket");
}

static int agent(struct atk_ctx *c)
{
    if (getenv("ATK_CONTROL_SECRET")) /* positive control: the value goes on the outsider's copy */
        return atkv_control_pair_agent(c, "nl", "", "");
    int nl = (int)atk_try(c, "socket NETLINK_ROUTE", socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (atkv_hand_to_keeper(c, "nl", nl, 'L', "hand a copy of the netlink socket to the outsider",
                            "outsider holds it") < 0)
        return 0;
    atk_recv(c);
    atkv_nl_newlink_canary(c, nl);
    sleep(1); /* the outsider reads the kernel's error answer */
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(
        c,
        "the kernel's NLMSG_ERROR quoting the request, read by an outsider holding the agent's NETLINK_ROUTE socket");
}

static const struct atk A = {
    "netlink_route_shared",
    "the agent's NETLINK_ROUTE socket shared with an outsider; the kernel quotes the request back",
    ATK_NO_RECV,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
