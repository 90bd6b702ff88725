// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* direct_udp4_unspec - UDP sendto 127.0.0.1 with sin_family AF_UNSPEC. udp_sendmsg takes an
 * AF_UNSPEC address on an IPv4 socket as AF_INET (Linux keeps this for old BSD code), so a hook
 * that parses the address only when its family says AF_INET would let the send through unjudged.
 * The agent also tries it on a connected socket (connected to the collector while untainted) and
 * on an IPv6 socket (where AF_UNSPEC means "no address": the connected peer).
 * Verifier: the collector's udp4 socket (an untainted outsider) records what arrives.
 * Blocks it: cgroup backend, cgroup/sendmsg4 (it reads the address whatever the family field
 * says) and egress; lsm backend, socket_sendmsg, which reads an AF_UNSPEC address on an IPv4
 * socket as IPv4 and judges the peer when there is none. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int port = (int)atk_argl(c, "udp4");
    struct sockaddr_in to = {.sin_family = AF_UNSPEC, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    size_t n = strlen(c->secret);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    atk_try(c, "socket udp4", s);
    if (s >= 0) {
        atk_try(c, "sendto AF_UNSPEC 127.0.0.1", sendto(s, c->secret, n, 0, (struct sockaddr *)&to, sizeof(to)));
        close(s);
    }
    int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    atk_try(c, "socket udp6", s6);
    if (s6 >= 0) {
        struct sockaddr_in6 u6 = {.sin6_family = AF_UNSPEC, .sin6_port = htons((uint16_t)port)};
        atk_try(c, "sendto AF_UNSPEC on udp6", sendto(s6, c->secret, n, 0, (struct sockaddr *)&u6, sizeof(u6)));
        close(s6);
    }
    return 0;
}

static const struct atk A = {
    "direct_udp4_unspec", "UDP sendto 127.0.0.1 with sin_family AF_UNSPEC", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
