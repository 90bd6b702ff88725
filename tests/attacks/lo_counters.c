// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lo_counters - the loopback interface's byte counters. Every datagram on lo moves lo's rx/tx
 * byte and packet counters, which any user reads: /proc/net/dev for the host's namespace, and
 * /proc/PID/net/dev of one of the agent's processes for the namespace it runs in (proc does not
 * check who asks), so `mncctl run --netns` would not hide them: it would make them the agent's
 * alone, without other traffic. After its taint the agent autobinds a receiving socket A (a
 * sendto that sendmsg4 refuses has already bound it on the cgroup backend) and, per byte v of
 * the canary's 6, sends A from a second socket one datagram of 100 + v bytes, then waits at sync
 * "bN" while uid 65534 reads lo's counters (the host's, and those of the namespace of the first
 * process of the agent's uid). Verifier: a sample with exactly one more packet, whose byte delta
 * minus the 28 bytes of IP and UDP headers minus 100 is the byte, for all six.
 * Result (host, cgroup backend, user and netns modes): BLOCKED: a tainted agent cannot send to
 * its own IP sockets at all: sendmsg4/connect4 (and lsm socket_sendmsg/socket_connect) judge a
 * loopback destination that is no registered sink as an unregistered external one, and the
 * sweep disconnects the agent's datagram sockets connected to each other before the taint. The
 * positive control (unconfined) reads the canary from /proc/net/dev: the verifier is not blind.
 * Open, and in docs/threat-model.md: what an agent sends to an IN-SCOPE sink over IP moves the
 * same counters (the sink may have the bytes; the counters show their sizes to everyone). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    struct sockaddr_in lo = {.sin_family = AF_INET, .sin_port = htons(9)};
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int a = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), b = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (a < 0 || b < 0) {
        atk_note(c, "socket: %s", atk_errname(errno));
        return 0;
    }
    atk_try(c, "sendto 127.0.0.1:9 (autobinds A)", sendto(a, "x", 1, 0, (struct sockaddr *)&lo, sizeof(lo)));
    socklen_t l = sizeof(lo);
    if (getsockname(a, (struct sockaddr *)&lo, &l) < 0 || lo.sin_port == 0) {
        atk_note(c, "A has no port");
        return 0;
    }
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char buf[400];
    memset(buf, 'z', sizeof(buf));
    atk_sync(c, "s");
    int sent = 0;
    for (int i = 0; i < 6; i++) {
        unsigned v;
        if (sscanf(c->secret + 2 + 2 * i, "%2x", &v) != 1)
            return 0;
        sent += sendto(b, buf, 100 + v, 0, (struct sockaddr *)&lo, sizeof(lo)) == (ssize_t)(100 + v);
        char tag[8];
        snprintf(tag, sizeof(tag), "b%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "%d of 6 datagrams to its own socket A on lo", sent);
    return 0;
}

/* lo's received bytes and packets in one /proc/.../net/dev; 0 if found */
static int lo_counts(const char *path, long long *bytes, long long *pkts)
{
    FILE *f = fopen(path, "re");
    char line[512];
    int r = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, " lo: %lld %lld", bytes, pkts) == 2) {
            r = 0;
            break;
        }
    if (f)
        fclose(f);
    return r;
}

/* "HOSTBYTES HOSTPKTS AGENTBYTES AGENTPKTS" (-1 where not found) */
static int rd(struct atk_ctx *c, char *out, size_t n)
{
    long long hb = -1, hp = -1, ab = -1, ap = -1;
    char p[300];
    lo_counts("/proc/self/net/dev", &hb, &hp);
    if (atkv_agent_proc_path(c, "net/dev", p, sizeof(p)) == 0)
        lo_counts(p, &ab, &ap);
    snprintf(out, n, "%lld %lld %lld %lld", hb, hp, ab, ap);
    return 1;
}

/* slot[0..3]: the previous sample; slot[4], slot[5]: the bytes read so far (host, agent's) */
static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[128];
    long long s[4];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) != 1 ||
        sscanf(out, "%lld %lld %lld %lld", &s[0], &s[1], &s[2], &s[3]) != 4)
        return;
    int i = tag[0] == 'b' ? atoi(tag + 1) : -1;
    for (int w = 0; w < 2 && i >= 0 && i < 6; w++) {
        long long db = s[2 * w] - c->slot[2 * w], dp = s[2 * w + 1] - c->slot[2 * w + 1];
        if (s[2 * w] >= 0 && dp == 1 && db >= 128 && db < 128 + 256)
            atkv_byte_set(c, 4, w, i, (unsigned)(db - 128));
    }
    memcpy(c->slot, s, sizeof(s));
    static const char *const where[] = {"/proc/net/dev (the host's)",
                                        "/proc/PID/net/dev of the agent's process (its namespace)"};
    if (i == 5)
        atkv_bytes6_evidence(c, 4, 2, "lo's byte counters", where);
}

static const struct atk A = {"lo_counters",
                             "lo's byte counters, moved by datagrams the agent sends itself (/proc/net/dev, "
                             "/proc/PID/net/dev)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
