// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_reply_rqlen - mncd's own replies as the carrier: the receive queue of the tainted agent's
 * connections TO MNCD (a peer every agent may always reach), read through unix sock_diag
 * (UNIX_DIAG_RQLEN of a stream socket: the bytes queued). After its recv the agent pins itself
 * to CPU 0 (so that inode numbers follow creation order) and opens MR_CONNS connections to mncd:
 * on the first it sends one whoami request, on connection i >= 1 as many whoami requests as
 * canary byte i - 1 (one write each), and it never reads the answers. mncd answers every one;
 * the answers stay queued on the agent's end. uid 65534 dumps the established UNIX streams of
 * the agent's uid that are new since the "pre" sync and carry a queue, orders them by inode:
 * the first queue length is one answer's length L, each other divided by L is a byte.
 * Verifier: the bytes reassembled, compared with the canary.
 * Nothing here is sent to an outsider: the agent talks only to mncd, as allowed; what leaks is
 * how much of mncd's answers it left unread (same class as unix_pair_rqlen, with mncd as the
 * peer; a network namespace per agent would not hide it if mncd's socket is in the host's).
 * Result: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Not run on the lsm backend (the guest); every agent may reach mncd there too.
 * Bandwidth: log2(queue capacity / L) ~ 11 bits per connection, up to max_clients_per_agent
 * (64) connections, re-readable, refillable at will.
 * Fix idea: mncd must not let an agent park its answers: e.g. close a tainted agent's connection
 * that has more than one answer unread (SIOCOUTQ on mncd's end) instead of answering on. Merely
 * not reading further requests would move the same count to mncd's end (the agent's unread
 * requests, visible the same way).
 * Status: open ([open]). */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sched.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk_variants.h"

#define MR_CONNS 15 /* one to measure, then one per canary byte */

static int agent(struct atk_ctx *c)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    atk_try(c, "sched_setaffinity CPU 0", sched_setaffinity(0, sizeof(set), &set));
    atk_sync(c, "pre");
    static const char req[] = "{\"verb\":\"whoami\"}\n";
    size_t n = strlen(c->secret);
    int ok = 0, fd[MR_CONNS];
    for (int i = 0; i < MR_CONNS; i++) {
        fd[i] = atk_mncd(c);
        if (i == 0)
            atk_try(c, "connect mncd", fd[i]);
    }
    for (int i = 0; i < MR_CONNS; i++) {
        if (fd[i] < 0 || (i > 0 && (size_t)(i - 1) >= n))
            continue;
        unsigned v = i == 0 ? 1 : (unsigned char)c->secret[i - 1];
        unsigned k = 0;
        for (; k < v; k++)
            if (atk_write_all(fd[i], req, sizeof(req) - 1) != 0)
                break;
        ok += k == v;
    }
    atk_note(c, "sent its requests on %d of %d connections", ok, MR_CONNS);
    usleep(500000);     /* mncd answers */
    atk_sync(c, "set"); /* the connections stay open, unread, until the agent exits */
    return 0;
}

static struct atkv_unix_snap snap;

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_diag q[64];
    int nq = atkv_unix_new(SOCK_STREAM, &snap, (uint32_t)c->agent_uid, ATKV_QUEUED, q, 64);
    char msg[MR_CONNS + 1] = {0};
    unsigned unit = nq > 0 ? q[0].rq : 0;
    for (int i = 1; unit && i < nq && i <= MR_CONNS - 1 && i - 1 < (int)sizeof(msg) - 1; i++)
        if (q[i].rq % unit == 0 && q[i].rq / unit < 256)
            msg[i - 1] = (char)(q[i].rq / unit);
    snprintf(out, n, "%s", msg);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_unix_snap_take(SOCK_STREAM, &snap);
        return;
    }
    if (strcmp(tag, "set") != 0)
        return;
    char got[64] = {0};
    int r = atk_as_uid(c, ATK_NOBODY, nobody_reads, got, sizeof(got));
    fprintf(stderr, "mncd_reply_rqlen: uid 65534 decoded \"%s\"\n", got);
    if (r >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from how many of mncd's answers the agent left unread on its "
                        "connections to mncd (NETLINK_SOCK_DIAG UNIX_DIAG_RQLEN, ordered by inode)");
}

static const struct atk A = {"mncd_reply_rqlen",
                             "mncd's unread answers queued on the agent's connections to mncd, read through unix_diag "
                             "RQLEN",
                             ATK_OPEN | ATK_NETNS,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
