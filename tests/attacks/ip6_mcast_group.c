// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ip6_mcast_group - a socket-table entry the agent names without bind(): an IPv6 multicast group
 * membership. The tainted agent makes an unbound UDP socket (AF_INET6 is allowed for clients)
 * and joins the group ff01:<canary> on lo with setsockopt(IPV6_ADD_MEMBERSHIP): 14 of the
 * address's 16 bytes are its own choice, and no packet leaves (interface-local scope: no MLD
 * report). The kernel lists every membership of the network namespace in /proc/net/igmp6
 * (0444, the address as 32 hex digits) for every user. Each socket may hold as many groups as
 * its option memory allows (net.core.optmem_max), so the channel is bytes, not bits:
 * ~14 B per setsockopt.
 * Verifier: uid 65534 reads /proc/net/igmp6 while the agent waits (sync "joined") and looks for
 * the canary's bytes in hex.
 * What would block it: no hook of either backend sees setsockopt at IPPROTO_IPV6/IPPROTO_IP
 * (seccomp allows every level but SOL_SOCKET; no cgroup/setsockopt program; the lsm backend has
 * no socket_setsockopt hook), Landlock does not govern sockets; a network namespace per agent
 * (then only its own memberships are listed), or refusing the multicast join options
 * (IPV6_ADD_MEMBERSHIP/IPV6_JOIN_GROUP, MCAST_JOIN_GROUP, MCAST_JOIN_SOURCE_GROUP,
 * IP_ADD_MEMBERSHIP, IP_ADD_SOURCE_MEMBERSHIP: /proc/net/igmp and mcfilter{,6} too) to a
 * tainted agent would. */
#include <netinet/in.h>
#include <net/if.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "socket(AF_INET6, SOCK_DGRAM)", socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (s < 0)
        return 0;
    struct ipv6_mreq m;
    memset(&m, 0, sizeof(m));
    m.ipv6mr_multiaddr.s6_addr[0] = 0xff;
    m.ipv6mr_multiaddr.s6_addr[1] = 0x01; /* interface-local: never reported on the wire */
    size_t n = strlen(c->secret);
    memcpy(&m.ipv6mr_multiaddr.s6_addr[2], c->secret, n < 14 ? n : 14);
    m.ipv6mr_interface = if_nametoindex("lo");
    atk_try(c, "setsockopt(IPV6_ADD_MEMBERSHIP ff01:<canary> on lo)",
            setsockopt(s, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m, sizeof(m)));
    atk_sync(c, "joined");
    close(s);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_nobody_reads_hex(c, "/proc/net/igmp6");
}

static const struct atk A = {
    "ip6_mcast_group", "IPv6 multicast group address read from /proc/net/igmp6", 0, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
