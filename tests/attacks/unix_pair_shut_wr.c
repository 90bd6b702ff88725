// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_pair_shut_wr - which of the agent's OWN socketpairs it shut for writing, read through
 * sock_diag. The compatibility corpus needs a tainted agent's shutdown(SHUT_WR) on a socketpair
 * whose ends are all inside it (libuv ends a child's stdin so: Node's execSync, spawnSync): the
 * launcher's gate now does it when the peer end is held by the agent or gone (run_gate.c,
 * peer_inside), and still refuses SHUT_RD/SHUT_RDWR there (unix_pair_shutdown stays blocked).
 * This attack measures what that leaves: after the recv the agent makes one AF_UNIX SOCK_STREAM
 * socketpair per canary bit and shuts the first end SHUT_WR for a 1 (its state reads SEND=2, the
 * peer's RCV=1), leaves it for a 0. unix_diag (UNIX_DIAG_SHUTDOWN, UDIAG_SHOW_PEER) shows every
 * user of the network namespace each end's state with its inode and its peer's.
 * Verifier: uid 65534 dumps the established UNIX stream sockets at sync "set", keeps each pair
 * once (ino < peer), orders them by inode and reads a 1 for a shut pair, at every bit offset.
 * The same state needs no gated call at all: closing one end of a pair sets the survivor's
 * shutdown state to both directions (unix_release_sock), and the agent chooses which ends to
 * close; and the queue length of a pair says more per pair (unix_pair_rqlen, ~17 bits). This is
 * that class, the state of the agent's own socketpairs in sock_diag, at 1 bit per pair.
 * Result: host (cgroup backend, 6.18): LEAKED user and root (not counted: [limit:cgroup], like
 * unix_pair_rqlen); BLOCKED in mode netns (the pairs live in the agent's own namespace). Guest
 * (lsm backend, 6.1): LEAKED user and root (not counted: [limit:lsm]; no LSM hook sees the
 * close of one end, and refusing socket_shutdown would break libuv's children).
 * Control (MNC_ATTACKS_CONTROL=1): verified (host).
 * Fix idea (cgroup backend): a network namespace per agent (`--netns`, "confinement": "netns").
 * Threat model: docs/threat-model.md (sock_diag state; bytes queued in the agent's own pairs). */
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"
#include "atk_variants.h"

#define UP_BITS 112 /* "mk" + 12 hex: 14 bytes */
#define UP_MAX 4096

static int agent(struct atk_ctx *c)
{
    static int sv[UP_BITS][2];
    size_t n = strlen(c->secret);
    if (n * 8 > UP_BITS)
        n = UP_BITS / 8;
    int done = 0, bad = 0;
    for (size_t i = 0; i < n * 8; i++) {
        int bit = ((unsigned char)c->secret[i / 8] >> (7 - i % 8)) & 1;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) != 0) {
            atk_try(c, "socketpair", -1);
            return 0;
        }
        if (!bit)
            continue;
        if (shutdown(sv[i][0], SHUT_WR) == 0)
            done++;
        else
            bad = errno;
    }
    atk_say(c, "note shutdown(SHUT_WR) on %d socketpair ends ok, last error %d", done, bad);
    atk_sync(c, "set"); /* the pairs stay open until the agent exits */
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_sock all[UP_MAX], u[UP_MAX];
    int n_all = atkv_unix_streams(all, UP_MAX), k = 0;
    for (int i = 0; i < n_all; i++) /* every pair once, in inode order */
        if (all[i].peer != 0 && all[i].ino < all[i].peer)
            u[k++] = all[i];
    size_t cl = strlen(c->canary);
    for (int off = 0; off + (int)cl * 8 <= k; off++) {
        char got[32] = {0};
        for (size_t i = 0; i < cl * 8 && i < 8 * (sizeof(got) - 1); i++)
            if (u[off + (int)i].sd != 0)
                got[i / 8] = (char)((unsigned char)got[i / 8] | (1u << (7 - i % 8)));
        if (strcmp(got, c->canary) == 0) {
            snprintf(out, n,
                     "uid 65534 read the canary from which of %zu socketpairs were shut for writing "
                     "(NETLINK_SOCK_DIAG UNIX_DIAG_SHUTDOWN, ordered by inode; %d pairs in the dump)",
                     cl * 8, k);
            return 1;
        }
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, "set", rd); }

static const struct atk A = {"unix_pair_shut_wr",
                             "which of the agent's own socketpairs it shut for writing, read through unix sock_diag",
                             ATK_LIMIT_CGROUP | ATK_LIMIT_LSM | ATK_NETNS,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
