// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockstat_count - how many sockets the tainted agent holds, read from "sockets: used" in
 * /proc/net/sockstat (the host's namespace) and /proc/PID/net/sockstat of one of the agent's
 * processes (the namespace it runs in; proc does not check who reads it). The count is per
 * network namespace: with `mncctl run --netns` it counts the agent's sockets alone. Per byte v of
 * the canary's 6 the agent holds v + 1 more UNIX datagram sockets than at sync "s" (no address,
 * no peer: nothing any hook judges), then waits at sync "bN" while uid 65534 reads both files.
 * Verifier: a delta of v + 1 sockets in one of the two files for all six bytes.
 * Open (docs/threat-model.md, the sock_diag row: "how many sockets it holds"): ~8 bits per
 * reading as written, log2 of the fd limit in general, re-read at will; on a busy host the
 * host's count is noisy, the namespace's (--netns) is exact. Closed by --netns together with
 * hidepid=invisible on the host's /proc ([netns+hidepid]: run-attacks' mode netns-hidepid, where
 * the reader cannot open /proc/PID of the agent and the host's count no longer includes its
 * sockets); an fd limit only narrows it. */
#include <sys/socket.h>

#include "atk_variants.h"

#define SC_MAX 300

static int agent(struct atk_ctx *c)
{
    static int fds[SC_MAX];
    int have = 0;
    atk_sync(c, "s");
    for (int i = 0; i < 6; i++) {
        unsigned v;
        if (sscanf(c->secret + 2 + 2 * i, "%2x", &v) != 1)
            return 0;
        while (have < (int)v + 1) {
            fds[have] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fds[have] < 0) {
                atk_note(c, "socket: %s", atk_errname(errno));
                return 0;
            }
            have++;
        }
        while (have > (int)v + 1)
            close(fds[--have]);
        char tag[8];
        snprintf(tag, sizeof(tag), "b%d", i);
        atk_sync(c, tag);
        while (have > 0)
            close(fds[--have]); /* back to the baseline for the next byte */
    }
    atk_note(c, "held 1..256 sockets per byte");
    return 0;
}

/* "HOST AGENTNS" socket counts (-1 where not found) */
static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char p[300];
    long a = atkv_agent_proc_path(c, "net/sockstat", p, sizeof(p)) == 0 ? atkv_file_long(p, "sockets: used %ld") : -1;
    snprintf(out, n, "%ld %ld", atkv_file_long("/proc/self/net/sockstat", "sockets: used %ld"), a);
    return 1;
}

/* slot[0..1]: the baseline counts at "s"; slot[2], slot[3]: the bytes read (host, agent's ns) */
static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[64];
    long s[2];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) != 1 || sscanf(out, "%ld %ld", &s[0], &s[1]) != 2)
        return;
    if (strcmp(tag, "s") == 0) {
        c->slot[0] = s[0];
        c->slot[1] = s[1];
        return;
    }
    int i = tag[0] == 'b' ? atoi(tag + 1) : -1;
    for (int w = 0; w < 2 && i >= 0 && i < 6; w++) {
        long d = s[w] - c->slot[w];
        if (s[w] >= 0 && d >= 1 && d <= 256)
            atkv_byte_set(c, 2, w, i, (unsigned)(d - 1));
    }
    static const char *const where[] = {"/proc/net/sockstat (the host's)",
                                        "/proc/PID/net/sockstat of the agent's process (its namespace)"};
    if (i == 5)
        atkv_bytes6_evidence(c, 2, 2, "the socket count", where);
}

static const struct atk A = {"sockstat_count",
                             "how many sockets the agent holds (sockets: used in /proc/net/sockstat, "
                             "/proc/PID/net/sockstat)",
                             ATK_OPEN | ATK_HIDEPID,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
