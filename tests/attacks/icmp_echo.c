// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* icmp_echo - the canary as the payload of an ICMP echo request to 127.0.0.1 (raw socket as
 * root; an unprivileged ping socket if ping_group_range allows) (our addition).
 * Verifier: the collector's lo sniffer.
 * Blocks it: cgroup_skb/egress (per packet); no CAP_NET_RAW. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
    if (atk_try(c, "socket(SOCK_RAW, ICMP)", fd) < 0)
        fd = (int)atk_try(c, "socket(SOCK_DGRAM, ICMP) ping socket", socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
    if (fd < 0)
        return 0;
    char pkt[128] = {0};
    struct icmphdr *h = (struct icmphdr *)pkt;
    size_t n = strlen(c->secret);
    h->type = ICMP_ECHO;
    memcpy(pkt + sizeof(*h), c->secret, n);
    unsigned long sum = 0;
    for (size_t i = 0; i < sizeof(*h) + n + 1; i += 2)
        sum += (unsigned char)pkt[i] | ((unsigned char)pkt[i + 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    h->checksum = (uint16_t)~sum;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    atk_try(c, "sendto 127.0.0.1", sendto(fd, pkt, sizeof(*h) + n, 0, (struct sockaddr *)&sa, sizeof(sa)));
    usleep(200000);
    return 0;
}

static const struct atk A = {"icmp_echo", "ICMP echo payload to 127.0.0.1", ATK_SNIFF, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
