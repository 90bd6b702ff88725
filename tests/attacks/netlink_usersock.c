// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* netlink_usersock - threat model (docs/threat-model.md): other socket families. AF_NETLINK / NETLINK_USERSOCK unicast to an outsider's
 * portid: a socket family with no cgroup hook.
 * Verifier: the collector's NETLINK_USERSOCK socket.
 * Blocks it: seccomp allows netlink only for NETLINK_ROUTE. */
#include <linux/netlink.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "socket(NETLINK_USERSOCK)", socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK));
    if (fd < 0)
        return 0;
    struct {
        struct nlmsghdr h;
        char data[64];
    } m = {0};
    m.h.nlmsg_len = NLMSG_LENGTH(strlen(c->secret) + 1);
    m.h.nlmsg_type = 0x10;
    snprintf(m.data, sizeof(m.data), "%.60s", c->secret);
    struct sockaddr_nl to = {.nl_family = AF_NETLINK, .nl_pid = (__u32)atk_argl(c, "nlpid")};
    atk_try(c, "sendto outsider portid", sendto(fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)));
    return 0;
}

static const struct atk A = {
    "netlink_usersock", "NETLINK_USERSOCK unicast to an outsider's portid", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
