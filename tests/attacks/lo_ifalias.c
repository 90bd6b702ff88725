// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lo_ifalias - an interface alias as storage (our addition): RTM_SETLINK IFLA_IFALIAS on lo over
 * NETLINK_ROUTE (the netlink protocol seccomp allows for name resolution), root with
 * CAP_NET_ADMIN; /sys/class/net/lo/ifalias is world-readable. The orchestrator clears it after.
 * Verifier: uid 65534 reads /sys/class/net/lo/ifalias while the agent waits.
 * Blocks it: no netlink socket at all since stop 33 (seccomp, netlink_rmem); before, no
 * CAP_NET_ADMIN, seccomp on NETLINK_ROUTE writes (RTM_SETLINK and friends), a netns. */
#include <fcntl.h>
#include <stdint.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "socket(NETLINK_ROUTE)", socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
    if (fd < 0)
        return 0;
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
        char attrs[128];
    } m = {0};
    size_t n = strlen(c->secret);
    m.h.nlmsg_type = RTM_SETLINK;
    m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    m.i.ifi_family = AF_UNSPEC;
    m.i.ifi_index = (int)if_nametoindex("lo");
    struct rtattr *a = (struct rtattr *)m.attrs;
    a->rta_type = IFLA_IFALIAS;
    a->rta_len = (unsigned short)RTA_LENGTH(n);
    memcpy(RTA_DATA(a), c->secret, n);
    m.h.nlmsg_len = (uint32_t)(NLMSG_LENGTH(sizeof(m.i)) + RTA_ALIGN(a->rta_len));
    struct sockaddr_nl k = {.nl_family = AF_NETLINK};
    if (atk_try(c, "RTM_SETLINK send", sendto(fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k))) >= 0) {
        char buf[512];
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        struct nlmsgerr *e = (struct nlmsgerr *)NLMSG_DATA((struct nlmsghdr *)buf);
        if (r > 0) {
            errno = -e->error;
            atk_try(c, "RTM_SETLINK IFLA_IFALIAS", e->error ? -1 : 0);
        }
    }
    atk_sync(c, "set");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atk_nobody_reads(c, "/sys/class/net/lo/ifalias");
}

static void cleanup(struct atk_ctx *c)
{
    if (atk_file_has("/sys/class/net/lo/ifalias", c->canary) != 1)
        return;
    int fd = open("/sys/class/net/lo/ifalias", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "\n", 1) < 0)
        fprintf(stderr, "lo_ifalias: could not clear the alias\n");
    if (fd >= 0)
        close(fd);
}

static const struct atk A = {"lo_ifalias", "lo's interface alias over NETLINK_ROUTE", 0, NULL, agent, on_sync, NULL,
                             cleanup};
ATK_MAIN(A)
