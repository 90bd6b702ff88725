// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unix_stream_pretaint_rqlen - the receive queue of UNIX stream connections the agent opened to
 * an outsider BEFORE the taint, filled by the outsider AFTER it, read through unix sock_diag
 * (UNIX_DIAG_RQLEN for a stream socket: the bytes queued). Before its recv the agent connects
 * US_SOCKS streams to a listener of an unprivileged helper (uid 65534, outside the agent's
 * cgroup) and writes its index i on each (allowed: untainted). After the taint the helper writes
 * 16 * (i + 1) bytes on connection i; the agent reads nibble i of the canary's worth of them;
 * uid 65534 dumps the established UNIX streams of the agent's uid that are new since the "pre"
 * sync: rq = 16 * i + 16 - nibble gives both i and the nibble. Verifier: the nibbles reassembled.
 * What should block it: mncd's pre-taint sweep shuts such a connection both ways (SHUT_RDWR) and
 * drains what is queued to the agent, so the helper's later writes fail (EPIPE) and nothing is
 * queued.
 * Result: host (cgroup backend, 6.18): BLOCKED in user and root mode (the helper's writes fail
 * with EPIPE on every connection; the agent reads nothing); positive control verified.
 * Guest (lsm backend, 6.1): counted BLOCKED while the guest had no unix_diag module (a blind
 * verifier); with the module loaded it LEAKED in both modes: the lsm backend judged the
 * agent's sends on those connections but nothing the outsider wrote INTO them. mncd's sweep now
 * runs on the lsm backend too, for what can reach the agent (sockscan.h), and shuts them there
 * as on the cgroup backend.
 * Bandwidth if open: ~17 bits per connection (a stream's receive buffer), refillable. */
#include <fcntl.h>
#include <grp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "atk_variants.h"

#define US_SOCKS 28 /* one per nibble of the 14-character canary */

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "pre");
    static int s[US_SOCKS];
    int conn = 0;
    for (int i = 0; i < US_SOCKS; i++) {
        s[i] = atk_unix(SOCK_STREAM, atk_arg(c, "rt_srv"));
        unsigned char j = (unsigned char)i;
        long w = s[i] < 0 ? -1 : write(s[i], &j, 1);
        if (i == 0) {
            atk_try(c, "connect the helper's listener (untainted)", s[i]);
            atk_try(c, "write index (untainted)", w);
        }
        conn += w == 1;
    }
    atk_note(c, "connected %d", conn);
    atk_recv(c);
    atk_sync(c, "bound"); /* the helper writes 16 * (i + 1) bytes on connection i */
    size_t n = strlen(c->secret);
    int got = 0, first_err = 0;
    static char buf[512];
    for (int i = 0; i < US_SOCKS && (size_t)i / 2 < n; i++) {
        unsigned v = (unsigned char)c->secret[i / 2];
        unsigned nib = i % 2 ? v & 15 : v >> 4;
        ssize_t r = nib ? recv(s[i], buf, nib, MSG_DONTWAIT) : 0;
        if (r == (ssize_t)nib)
            got++;
        else if (!first_err)
            first_err = r < 0 ? errno : -1;
    }
    atk_note(c, "read its nibble from %d of %d connections (first failure: %s)", got, US_SOCKS,
             first_err == -1 ? "short read/EOF" : atk_errname(first_err));
    atk_sync(c, "read");
    return 0;
}

/* ---- unix sock_diag: atkv_unix_dump (atkv_diag.c) */
static struct atkv_unix_snap snap;

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    static struct atkv_unix_diag q[8192];
    int k = atkv_unix_new(SOCK_STREAM, &snap, (uint32_t)c->agent_uid, ATKV_QUEUED, q, 8192);
    char msg[US_SOCKS / 2 + 1] = {0};
    for (int i = 0; i < k; i++) {
        unsigned idx = (q[i].rq - 1) / 16, nib = 16 * idx + 16 - q[i].rq;
        if (idx < US_SOCKS && nib < 16)
            msg[idx / 2] = (char)((unsigned char)msg[idx / 2] | (idx % 2 ? nib : nib << 4));
    }
    snprintf(out, n, "%s", msg);
    return 0;
}

/* the helper: uid 65534; accepts US_SOCKS connections (each says its index), and on "g" from
 * the orchestrator writes 16 * (i + 1) bytes on connection i; reports "<written>/<errno>" */
static int go[2], done[2];

static int prepare(struct atk_ctx *c)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/rtsrv.sock", c->dir);
    struct sockaddr_un su = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(su.sun_path))
        return -1;
    memcpy(su.sun_path, path, strlen(path) + 1);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&su, sizeof(su)) != 0 || chmod(path, 0666) != 0 || listen(l, 64) != 0 ||
        pipe2(go, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0)
        return -1;
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
            _exit(100);
        int conn[US_SOCKS];
        for (int i = 0; i < US_SOCKS; i++)
            conn[i] = -1;
        for (int k = 0; k < US_SOCKS; k++) {
            int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
            unsigned char j;
            if (a < 0)
                _exit(101);
            if (read(a, &j, 1) != 1 || j >= US_SOCKS) {
                close(a);
                continue;
            }
            conn[j] = a;
        }
        char g;
        if (read(go[0], &g, 1) != 1)
            _exit(102);
        static char fill[16 * US_SOCKS];
        int ok = 0, err = 0;
        for (int i = 0; i < US_SOCKS; i++) {
            if (conn[i] < 0)
                continue;
            size_t want = 16 * ((size_t)i + 1);
            if (send(conn[i], fill, want, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)want)
                ok++;
            else if (!err)
                err = errno;
        }
        char rep[64];
        int rl = snprintf(rep, sizeof(rep), "%d written, first error %s", ok, atk_errname(err));
        if (write(done[1], rep, (size_t)rl) < 0)
            _exit(103);
        for (;;)
            pause();
    }
    close(l);
    close(go[0]);
    close(done[1]);
    c->slot[0] = p;
    atk_set(c, "rt_srv", "%s", path);
    return 0;
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
    }
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_unix_snap_take(SOCK_STREAM, &snap);
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        char rep[128] = "";
        struct pollfd pf = {.fd = done[0], .events = POLLIN};
        if (write(go[1], "g", 1) == 1 && poll(&pf, 1, 5000) == 1) {
            ssize_t r = read(done[0], rep, sizeof(rep) - 1);
            rep[r > 0 ? r : 0] = 0;
        }
        fprintf(stderr, "%s: helper: %s\n", c->a->name, rep);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 wrote on the agent's pre-taint UNIX stream connections after the taint and read the "
                        "canary from what the agent left queued (NETLINK_SOCK_DIAG UNIX_DIAG_RQLEN)");
}

static const struct atk A = {"unix_stream_pretaint_rqlen",
                             "UNIX stream connections to an outsider opened before the taint, filled after it: how "
                             "many bytes the agent reads, as unix_diag RQLEN shows",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
