// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tcp_pacing_rate_diag - socket state the kernel shows every user, set by an option seccomp
 * allows: setsockopt(SOL_SOCKET, SO_MAX_PACING_RATE) takes any 64-bit value (8 bytes chosen by
 * the agent), and sock_diag (NETLINK_SOCK_DIAG, no privilege: what `ss -ti` reads) reports it
 * as tcp_info.tcpi_max_pacing_rate (and tcpi_pacing_rate) for every TCP socket in the
 * namespace, listeners included. A SERVER agent (`mncctl run --server`, listen allowed) opens
 * two listeners on 127.0.0.1 before its recv (a tainted agent's bind is refused) and after it stores one index byte and 7 canary bytes in
 * each one's max pacing rate; nothing is ever sent.
 * Verifier: uid 65534 dumps the TCP listeners over NETLINK_SOCK_DIAG (INET_DIAG_INFO) while the
 * agent waits (sync "set") and reassembles the chunks.
 * Blocked by: cgroup/setsockopt (lsm: socket_setsockopt) refuses a tainted agent every option
 * but a few switches and timeouts whose value no dump reports (mnc_sockopt_verdict in
 * bpf/mnc_abi.h; reason deny_sockopt): SO_MAX_PACING_RATE gets EPERM. What is left of the class
 * (a server's listen backlog, queue lengths, which sockets exist) is in docs/threat-model.md. */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>

#include "atk.h"
#include "atk_variants.h"

#define PACE_CHUNK 7

static int agent(struct atk_ctx *c)
{
    /* the listeners are made before the recv (a tainted server's bind is refused): two, enough
     * for the 14-byte canary */
    int ls[2] = {-1, -1};
    for (int i = 0; i < 2; i++) {
        int s = (int)atk_try(c, "socket tcp", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (s < 0 || atk_try(c, "bind 127.0.0.1:0 (before the recv)", bind(s, (struct sockaddr *)&a, sizeof(a))) < 0 ||
            atk_try(c, "listen (before the recv)", listen(s, 1)) < 0)
            continue;
        ls[i] = s;
    }
    atk_recv(c);
    size_t n = strlen(c->secret);
    for (size_t off = 0, i = 0; off < n && i < 2; off += PACE_CHUNK, i++) {
        unsigned char b[8] = {(unsigned char)(0xa0 + i)};
        memcpy(b + 1, c->secret + off, n - off < PACE_CHUNK ? n - off : PACE_CHUNK);
        uint64_t v;
        memcpy(&v, b, sizeof(v));
        if (ls[i] >= 0)
            atk_try(c, "setsockopt SO_MAX_PACING_RATE",
                    setsockopt(ls[i], SOL_SOCKET, SO_MAX_PACING_RATE, &v, sizeof(v)));
    }
    atk_sync(c, "set"); /* the sockets stay open until the agent exits */
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atkv_pacing_verify(c, tag, PACE_CHUNK); }

static const struct atk A = {"tcp_pacing_rate_diag",
                             "64-bit SO_MAX_PACING_RATE values of TCP listeners, read through sock_diag",
                             ATK_SERVER | ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
