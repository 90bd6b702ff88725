/* covert_port_bind - [covert] the canary in LOCAL port numbers the agent binds (no packet sent):
 * /proc/net/tcp lists every listening port to every user. 4 listeners on 10000 + 4096*i + chunk
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
    for (int i = 0; i < 4; i++) {
        char h[4] = {0};
        memcpy(h, c->secret + 2 + 3 * i, 3);
        struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        me.sin_port = htons((uint16_t)(10000 + 4096 * i + strtol(h, NULL, 16)));
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (atk_try(c, "bind", bind(fd, (struct sockaddr *)&me, sizeof(me))) < 0 ||
            atk_try(c, "listen", listen(fd, 1)) < 0)
            break;
    }
    atk_sync(c, "bound");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f)
        return 0;
    char line[512], got[32] = "mk000000000000";
    int seen = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned a, port, st;
        if (sscanf(line, " %*d: %x:%x %*x:%*x %x", &a, &port, &st) != 3 || st != 0x0A)
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
    if (seen == 15 && strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from listening ports in /proc/net/tcp");
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[200];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const struct atk A = {"covert_port_bind", "canary in bound port numbers (/proc/net/tcp)", ATK_COVERT, NULL,
                             agent, on_sync, NULL, NULL};
ATK_MAIN(A)
