// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_tcp - threat model (docs/threat-model.md): sockets the agent did not create. Before the taint, an untainted helper (the collector's
 * giver) hands the agent a socket it created: unconnected TCP socket (connect 127.0.0.1 + send).
 * After the taint the agent sends the canary on it. The cgroup hooks judge a socket by the cgroup
 * that created it, so the helper's socket escapes them.
 * Verifier: the collector's listeners record what arrives.
 * Blocks it: at delivery, sockets the agent did not create in its own cgroup are shut (or the
 * delivery is refused); egress judged by the sending task, not the socket's creator. */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/un.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char req[700];
    snprintf(req, sizeof(req), "T%s", "T"[0] == 'S' ? atk_arg(c, "c_unix") : "");
    int fd = -1;
    if (atk_try(c, "take helper's socket", atk_take(c, req, &fd, 1)) < 1)
        return 0;
    atk_recv(c); /* now tainted */
    const char code = 'T';
    if (code == 'S') {
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    } else if (code == 'D') {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", atk_arg(c, "c_dgram"));
        atk_try(c, "sendto", sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&sa, sizeof(sa)));
    } else {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        sa.sin_port = htons((uint16_t)atk_argl(c, code == 'U' ? "udp4" : "tcp4"));
        if (code == 'U')
            atk_try(c, "sendto", sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&sa, sizeof(sa)));
        else if (atk_try(c, "connect", connect(fd, (struct sockaddr *)&sa, sizeof(sa))) == 0)
            atk_try(c, "send", send(fd, c->secret, strlen(c->secret), MSG_NOSIGNAL));
    }
    usleep(100000);
    return 0;
}

static const struct atk A = {"foreign_tcp", "helper-created unconnected TCP socket (connect 127.0.0.1 + send)",
                             ATK_NO_RECV,   NULL,
                             agent,         NULL,
                             NULL,          NULL};
ATK_MAIN(A)
