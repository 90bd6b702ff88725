// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_diag - how much of its receive queue a tainted agent reads, which /proc/net/udp
 * (and sock_diag) shows every user as rx_queue. No socket option is set: what is left after
 * setsockopt is gated by taint (mnc_sockopt_verdict) is the state the agent changes by reading.
 * After its recv the agent makes RQ_SOCKS UDP sockets and has each autobound by a refused
 * sendto (the ports are the kernel's choice). An outsider finds them in /proc/net/udp (the
 * agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the
 * socket's index: nothing stops a datagram coming in. The agent reads the first (the index j)
 * and then as many more as nibble j of the canary says; uid 65534 reads every socket's
 * rx_queue and divides by the size one such datagram takes (measured on a socket of its own).
 * Verifier: the nibbles reassembled, compared with the canary.
 * What would close it: a network namespace per agent (/proc/net and sock_diag are per
 * namespace, and an outsider could not send to the agent's sockets at all). Bandwidth: 4 bits
 * per socket here (log2 of the datagrams a receive buffer holds: ~8 bits), re-read at will.
 * Status: open ([open]; docs/threat-model.md, "Open byte channels", socket state). */
#include <netinet/in.h>
#include <stdint.h>

#include "atk.h"

#define RQ_SOCKS 28 /* one per nibble of the 14-character canary */
#define RQ_N 16

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    int s[RQ_SOCKS];
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < RQ_SOCKS; i++) { /* the first of each noted */
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, 0, (struct sockaddr *)&nine, sizeof(nine));
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, "sendto 127.0.0.1:9 (autobinds even if refused)", r);
        }
    }
    atk_sync(c, "bound"); /* the outsider has sent RQ_N + 1 datagrams to each */
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < RQ_SOCKS; i++) {
        unsigned char j;
        if (s[i] < 0 || recv(s[i], &j, 1, MSG_DONTWAIT) != 1 || j >= RQ_SOCKS || (size_t)j / 2 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 2];
        unsigned nib = j % 2 ? v & 15 : v >> 4;
        for (unsigned k = 0; k < nib; k++)
            if (recv(s[i], &j, 1, MSG_DONTWAIT) != 1)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, RQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

/* UDP sockets in /proc/net/udp: (inode, uid, local port, rx_queue) into out; how many, or -1 */
struct rq_sock {
    unsigned long ino;
    unsigned uid, port, rx;
};
static int list_udp(struct rq_sock *out, int cap)
{
    FILE *f = fopen("/proc/net/udp", "re");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof(line), f)) { /* the header */
        fclose(f);
        return -1;
    }
    while (n < cap && fgets(line, sizeof(line), f)) {
        unsigned port, tx, rx, uid;
        unsigned long ino;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %*x %x:%x %*x:%*x %*x %u %*d %lu", &port, &tx, &rx, &uid, &ino) == 5)
            out[n++] = (struct rq_sock){ino, uid, port, rx};
    }
    fclose(f);
    return n;
}

static struct rq_sock before[4096];
static int nbefore;
static unsigned ports[RQ_SOCKS];
static int nports;

static int was_there(unsigned long ino)
{
    for (int i = 0; i < nbefore; i++)
        if (before[i].ino == ino)
            return 1;
    return 0;
}

/* the outsider sends RQ_N + 1 one-byte datagrams carrying j to each new socket of the agent */
static void send_indexes(struct atk_ctx *c)
{
    static struct rq_sock now[4096];
    int n = list_udp(now, 4096);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (int i = 0; s >= 0 && i < n && nports < RQ_SOCKS; i++) {
        if (now[i].uid != (unsigned)c->agent_uid || was_there(now[i].ino))
            continue;
        unsigned char j = (unsigned char)nports;
        struct sockaddr_in to = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)now[i].port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        for (int k = 0; k <= RQ_N; k++)
            if (sendto(s, &j, 1, 0, (struct sockaddr *)&to, sizeof(to)) != 1)
                break;
        ports[nports++] = now[i].port;
    }
    if (s >= 0)
        close(s);
}

/* uid 65534: the rx_queue of each port, in units of one datagram measured on its own socket;
 * the nibbles go to msg */
static void read_queues(char *msg, size_t cap)
{
    int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), w = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (r < 0 || w < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(r, (struct sockaddr *)&a, &al) != 0 || sendto(w, "j", 1, 0, (struct sockaddr *)&a, al) != 1)
        return;
    usleep(20000);
    static struct rq_sock now[4096];
    int n = list_udp(now, 4096);
    unsigned unit = 0;
    for (int i = 0; i < n; i++)
        if (now[i].port == ntohs(a.sin_port))
            unit = now[i].rx;
    if (!unit)
        return;
    for (int j = 0; j < nports && (size_t)j / 2 + 1 < cap; j++)
        for (int i = 0; i < n; i++)
            if (now[i].port == ports[j] && now[i].rx % unit == 0 && now[i].rx / unit <= RQ_N) {
                unsigned nib = RQ_N - now[i].rx / unit;
                msg[j / 2] = (char)(j % 2 ? (msg[j / 2] | (char)nib) : (char)(nib << 4));
            }
}

static int nobody_reads_queues(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    char msg[RQ_SOCKS / 2 + 1] = {0};
    read_queues(msg, sizeof(msg));
    snprintf(out, n, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        nbefore = list_udp(before, 4096);
        nports = 0;
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        send_indexes(c);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[RQ_SOCKS / 2 + 2] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads_queues, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the receive queues of the agent's UDP sockets (/proc/net/udp "
                        "rx_queue: how many datagrams it read)");
}

static const struct atk A = {"udp_recvq_diag",
                             "how many datagrams a tainted agent reads, as /proc/net/udp rx_queue shows",
                             ATK_OPEN,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
