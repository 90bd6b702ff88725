// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_pair_shutdown - shutdown(2) state of the agent's OWN socketpairs, read through sock_diag:
 * after the recv the agent makes one AF_UNIX SOCK_STREAM socketpair per canary bit and shuts
 * its first end SHUT_RD (bit 0: the ends read RCV=1 / SEND=2) or SHUT_RDWR (bit 1: both ends
 * 3). A socketpair is a connected stream socket (getpeername succeeds), so once tainted the
 * launcher's gate does the shutdown itself on its copy (run_gate.c tainted_shutdown): the state
 * is set all the same. NETLINK_SOCK_DIAG (unix_diag: UNIX_DIAG_SHUTDOWN always, UDIAG_SHOW_PEER)
 * dumps every UNIX socket of the network namespace to every user, with its inode, its peer's
 * inode and its sk_shutdown.
 * Verifier: uid 65534 dumps the established UNIX stream sockets at sync "set", keeps the pairs
 * (ino, peer) with a shutdown state, orders them by inode (a socketpair's inodes are allocated
 * in call order) and looks for the canary's bytes at every bit offset.
 * Unlike the known residual (2 bits per connection the scope let the agent make, the peer judged
 * at connect), a socketpair has no peer to judge and costs nothing: the fd limit bounds the pairs
 * held at once (~500), and the agent can close them and make more after each read.
 * Result: host (cgroup backend, 6.18): BLOCKED user and root (shutdown: EPERM): the gate shuts
 * for a tainted agent only a connection whose peer has a name (judged at connect), never a
 * socketpair's end. Before that rule: LEAKED user and root, the gate shut all 112 first ends
 * (112 pairs in 6.8 ms tainted, ~16 kbit/s; 1.0 ms unconfined).
 * Guest (lsm backend, 6.1): not applicable: the guest kernel builds unix_diag as a module
 * (CONFIG_UNIX_DIAG=m) and its initramfs loads none, so no one there can dump UNIX sockets.
 * Control (MNC_ATTACKS_CONTROL=1): verified (host).
 * Threat model: docs/threat-model.md (sock_diag state). */
#include <stdint.h>
#include <time.h>
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
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < n * 8; i++) {
        int bit = ((unsigned char)c->secret[i / 8] >> (7 - i % 8)) & 1;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) != 0) {
            atk_try(c, "socketpair", -1);
            return 0;
        }
        if (shutdown(sv[i][0], bit ? SHUT_RDWR : SHUT_RD) == 0)
            done++;
        else
            bad = errno;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
    atk_say(c, "note shutdown on %d socketpair ends ok in %ld us, last error %d", done, us, bad);
    atk_sync(c, "set"); /* the pairs stay open until the agent exits */
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_sock all[UP_MAX], u[UP_MAX];
    int n_all = atkv_unix_streams(all, UP_MAX), k = 0;
    for (int i = 0; i < n_all; i++) /* the pairs' ends that carry something, in inode order */
        if (all[i].sd != 0 && all[i].peer != 0 && all[i].ino < all[i].peer)
            u[k++] = all[i];
    if (k <= 0)
        return 0;
    size_t cl = strlen(c->canary);
    for (int off = 0; off + (int)cl * 8 <= k; off++) {
        char got[32] = {0};
        for (size_t i = 0; i < cl * 8 && i < 8 * (sizeof(got) - 1); i++)
            if (u[off + (int)i].sd == 3)
                got[i / 8] = (char)((unsigned char)got[i / 8] | (1u << (7 - i % 8)));
        if (strcmp(got, c->canary) == 0) {
            snprintf(out, n,
                     "uid 65534 read the canary from the shutdown state of %zu socketpairs (NETLINK_SOCK_DIAG "
                     "UNIX_DIAG_SHUTDOWN, ordered by inode; %d shut pairs in the dump)",
                     cl * 8, k);
            return 1;
        }
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, "set", rd); }

static const struct atk A = {"unix_pair_shutdown",
                             "shutdown(2) state of the agent's own socketpairs, read through unix sock_diag",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
