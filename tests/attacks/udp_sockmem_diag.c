// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_sockmem_diag - socket state sock_diag shows every user, set by options seccomp allows, on
 * sockets a non-server agent gets hashed without bind(2): a refused sendto() still autobinds a
 * UDP socket to an ephemeral port (inet_send_prepare runs before the cgroup sendmsg hook), and
 * from then on NETLINK_SOCK_DIAG (no privilege: `ss -uam`) reports its SO_SNDBUF/SO_RCVBUF
 * (INET_DIAG_SKMEMINFO: twice the value asked, up to net.core.[wr]mem_max, ~21 bits each here)
 * and IP_TOS (INET_DIAG_TOS, 8 bits). After its recv the agent stores 2 canary bytes in each
 * buffer size and the chunk's index in the TOS of 4 UDP sockets, then tries one sendto each.
 * Verifier: uid 65534 dumps the UDP sockets over NETLINK_SOCK_DIAG (SKMEMINFO, TOS) while the
 * agent waits (sync "set") and reassembles the chunks.
 * Blocked by: cgroup/setsockopt (lsm: socket_setsockopt) refuses a tainted agent every option
 * but a few switches and timeouts whose value no dump reports (mnc_sockopt_verdict in
 * bpf/mnc_abi.h; reason deny_sockopt): SO_SNDBUF, SO_RCVBUF and IP_TOS get EPERM. What is left
 * of the class (queue lengths, which sockets exist) is in docs/threat-model.md. */
#include <netinet/in.h>
#include <stdint.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>

#include "atk.h"
#include "atk_variants.h"

#define UM_CHUNKS 4
#define UM_BASE 4096

static int agent(struct atk_ctx *c)
{
    size_t n = strlen(c->secret);
    for (int i = 0; i < UM_CHUNKS; i++) {
        unsigned char b[4] = {0};
        for (int k = 0; k < 4; k++)
            if ((size_t)(i * 4 + k) < n)
                b[k] = (unsigned char)c->secret[i * 4 + k];
        int s = (int)atk_try(c, "socket udp", socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        int snd = UM_BASE + (b[0] << 8 | b[1]), rcv = UM_BASE + (b[2] << 8 | b[3]), tos = 0xa0 + 4 * i;
        if (s < 0 || atk_try(c, "SO_SNDBUF", setsockopt(s, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd))) < 0 ||
            atk_try(c, "SO_RCVBUF", setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv))) < 0 ||
            atk_try(c, "IP_TOS", setsockopt(s, IPPROTO_IP, IP_TOS, &tos, sizeof(tos))) < 0)
            continue;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        atk_try(c, "sendto 127.0.0.1:9 (autobinds even if refused)",
                sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)));
    }
    atk_sync(c, "set"); /* the sockets stay open until the agent exits */
    return 0;
}

/* uid 65534: (tos, sndbuf, rcvbuf) of every AF_INET UDP socket into out[][3]; how many, or -1 */
struct um_out {
    uint32_t (*out)[3];
    int cap, got;
    const struct inet_diag_msg *last;
};
static void um_each(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg)
{
    struct um_out *o = arg;
    if (m != o->last) { /* the first attribute of the next socket */
        if (o->got >= o->cap)
            return;
        o->last = m;
        memset(o->out[o->got++], 0, sizeof(o->out[0]));
    }
    uint32_t *v = o->out[o->got - 1];
    if (type == INET_DIAG_TOS && n >= 1)
        v[0] = *(const unsigned char *)p;
    if (type == INET_DIAG_SKMEMINFO && n >= SK_MEMINFO_SNDBUF * 4 + 4) {
        const uint32_t *mi = p;
        v[1] = mi[SK_MEMINFO_SNDBUF];
        v[2] = mi[SK_MEMINFO_RCVBUF];
    }
}
static int dump_udp(uint32_t (*out)[3], int cap)
{
    struct um_out o = {out, cap, 0, NULL};
    return atkv_diag_dump(IPPROTO_UDP, (1 << (INET_DIAG_SKMEMINFO - 1)) | (1 << (INET_DIAG_TOS - 1)), ~0u, um_each,
                          &o) < 0
               ? -1
               : o.got;
}

/* uid 65534 (atk_as_uid): decodes the chunks from the dump; 1 if the canary is in them */
static int decode(struct atk_ctx *c, char *out, size_t n)
{
    static uint32_t socks[4096][3];
    int k, got = dump_udp(socks, 4096);
    char msg[UM_CHUNKS * 4 + 1] = {0};
    for (k = 0; k < got; k++) {
        uint32_t tos = socks[k][0];
        if (tos < 0xa0 || tos >= 0xa0 + 4 * UM_CHUNKS || (tos & 3) || socks[k][1] < 2 * UM_BASE ||
            socks[k][2] < 2 * UM_BASE)
            continue;
        int i = (int)(tos - 0xa0) / 4;
        uint32_t x = (socks[k][1] - 2 * UM_BASE) / 2, y = (socks[k][2] - 2 * UM_BASE) / 2;
        msg[i * 4] = (char)(x >> 8), msg[i * 4 + 1] = (char)x, msg[i * 4 + 2] = (char)(y >> 8),
                msg[i * 4 + 3] = (char)y;
    }
    if (!atk_buf_has(msg, sizeof(msg) - 1, c->canary))
        return 0;
    snprintf(out, n,
             "uid 65534 read the canary from the buffer sizes of the agent's UDP sockets "
             "(NETLINK_SOCK_DIAG SKMEMINFO, TOS as the chunk index)");
    return 1;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, "set", decode); }

static const struct atk A = {"udp_sockmem_diag",
                             "SO_SNDBUF/SO_RCVBUF/IP_TOS of autobound UDP sockets, read through sock_diag",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
