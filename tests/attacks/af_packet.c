// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* af_packet - a packet socket on lo (root: CAP_NET_RAW): frames bypass every socket-level hook.
 * The agent sends an IP datagram carrying the canary through AF_PACKET (our addition).
 * Verifier: an outside AF_PACKET sniffer on lo.
 * Blocks it: seccomp denies AF_PACKET sockets; no CAP_NET_RAW. */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "socket(AF_PACKET)", socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP)));
    if (fd < 0)
        return 0;
    struct sockaddr_ll ll = {.sll_family = AF_PACKET,
                             .sll_protocol = htons(ETH_P_IP),
                             .sll_ifindex = (int)if_nametoindex("lo"),
                             .sll_halen = 6};
    char pkt[128] = {0x45};
    snprintf(pkt + 20, sizeof(pkt) - 20, "%.100s", c->secret);
    atk_try(c, "sendto lo", sendto(fd, pkt, 20 + strlen(c->secret), 0, (struct sockaddr *)&ll, sizeof(ll)));
    usleep(200000);
    return 0;
}

static const struct atk A = {"af_packet", "AF_PACKET frame on lo", ATK_SNIFF, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
