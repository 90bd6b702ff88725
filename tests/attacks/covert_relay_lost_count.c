// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_relay_lost_count - [covert] the launcher's "N withheld bytes were lost" message. The
 * stdio relay withholds a tainted agent's stdout and hands each chunk to mncd's quarantine
 * (run_relay.c quarantine); when mncd does not take it (unreachable, restarting, or at its
 * max_clients cap) the chunk is dropped and counted, and at the agent's exit the launcher prints
 * the exact count on its stderr ("run: agent \"coordinator\": N withheld bytes were lost (mncd
 * did not take them)"), a log channel (the relay's own note at the first withheld chunk is kept
 * fixed, "no bytes and no counts", for that reason). N is the number of bytes the tainted agent
 * chose to write. Here mncd's cap stands in for an unreachable mncd: at sync "flood" the
 * orchestrator (an outsider; root here only because max_clients_per_uid caps one other uid at
 * 256 of max_clients 1024: four uids do the same) holds connections until mncd refuses new ones;
 * the agent (an agent can also tell when mncd restarts: its own connection sees EOF) then writes
 * N bytes to stdout, N = the first 5 hex digits of the canary (20 bits), and exits.
 * Verifier: the launcher's stderr (DIR/agent1.err), after the agent exited, the flood released
 * afterwards: the count printed equals those 20 bits of the canary.
 * What would close it: the loss reported without a count (or rounded to a fixed unit), as the
 * withheld note already is; the count only in mncd's audit. Bandwidth: one number per launch
 * (~20-30 bits with a write of up to 1 GiB), while mncd does not take the quarantine.
 * ATK_NO_CONTROL: the unconfined control has no relay. */
#include <poll.h>
#include <sys/resource.h>
#include <time.h>

#include "atk.h"

#define FLOOD_MAX 1400
static int flood[FLOOD_MAX];
static int nflood;

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "flood");
    unsigned v;
    if (sscanf(c->secret + 2, "%5x", &v) != 1)
        return 0;
    static char buf[1 << 16];
    memset(buf, 'x', sizeof(buf));
    size_t left = v;
    while (left > 0) {
        size_t n = left < sizeof(buf) ? left : sizeof(buf);
        ssize_t w = write(1, buf, n);
        if (w <= 0) {
            atk_note(c, "write(1): %s", atk_errname(errno));
            return 0;
        }
        left -= (size_t)w;
    }
    struct timespec ts = {0, 300 * 1000 * 1000}; /* the relay reads and tries to quarantine */
    nanosleep(&ts, NULL);
    atk_note(c, "wrote 20 bits of the canary as a byte count to stdout");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)c;
    if (strcmp(tag, "flood") != 0)
        return;
    const char *sock = getenv("MNC_SOCKET");
    if (!sock)
        return;
    struct rlimit rl = {4096, 4096};
    setrlimit(RLIMIT_NOFILE, &rl);
    while (nflood < FLOOD_MAX) {
        int fd = atk_unix(SOCK_STREAM, sock);
        if (fd < 0)
            break;
        flood[nflood++] = fd;
        if (nflood % 64 == 0) { /* refused connections get one line: stop once they do */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, 50) > 0)
                break;
        }
    }
}

static void release(struct atk_ctx *c)
{
    (void)c;
    while (nflood > 0)
        close(flood[--nflood]);
}

static void verify(struct atk_ctx *c)
{
    char p[700], line[1024];
    snprintf(p, sizeof(p), "%s/agent1.err", c->dir);
    unsigned want;
    if (sscanf(c->canary + 2, "%5x", &want) != 1)
        return;
    FILE *f = fopen(p, "r");
    while (f && fgets(line, sizeof(line), f)) {
        const char *m = strstr(line, "\": ");
        unsigned long long n;
        if (strstr(line, "withheld bytes were lost") && m && sscanf(m + 3, "%llu", &n) == 1) {
            if (n == want)
                atk_evidence(c, "the launcher's stderr printed %llu withheld bytes lost: the canary's first 20 bits",
                             n);
            else {
                size_t l = strlen(c->notes);
                snprintf(c->notes + l, sizeof(c->notes) - l, "%slauncher printed %llu lost (want %u)", l ? ", " : "", n,
                         want);
            }
        }
    }
    if (f)
        fclose(f);
    release(c);
}

static const struct atk A = {"covert_relay_lost_count",
                             "the byte count in the launcher's \"withheld bytes were lost\" message",
                             ATK_COVERT | ATK_NO_CONTROL,
                             NULL,
                             agent,
                             on_sync,
                             verify,
                             release};
ATK_MAIN(A)
