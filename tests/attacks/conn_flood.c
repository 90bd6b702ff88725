// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* conn_flood - threat model (docs/threat-model.md): connection caps (denial of service, not a disclosure). The agent opens
 * connections to mncd and holds them until mncd refuses it; then an outsider (root, the admin)
 * tries to talk to mncd.
 * Verifier: a whoami from outside the agent while it holds the connections; refused or
 * unanswered = LEAKED (DoS).
 * Blocks it: per-agent and per-uid connection caps. */
#include <sys/resource.h>
#include <sys/time.h>

#include "atk.h"

/* Opens connections to mncd, each confirmed with a whoami (so mncd really holds it), until mncd
 * refuses one or 4000 are held: deterministic whatever mncd's accept speed or fd limit. */
static int agent(struct atk_ctx *c)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 8192) {
        rl.rlim_cur = rl.rlim_max < 8192 ? rl.rlim_max : 8192;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int held = 0, err = 0;
    const char *stop = "limit reached";
    char resp[4096];
    for (int i = 0; i < 4000; i++) {
        int fd = atk_mncd(c);
        if (fd < 0) {
            err = errno;
            stop = "connect failed";
            break;
        }
        struct timeval tv = {.tv_sec = 2};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (atk_call(fd, "{\"verb\":\"whoami\"}", resp, sizeof(resp)) < 0) {
            err = errno;
            stop = "no answer";
            close(fd);
            break;
        }
        if (!strstr(resp, "\"ok\":true")) {
            stop = strstr(resp, "too many") ? "mncd refused: too many clients" : "mncd refused";
            close(fd);
            break;
        }
        held++;
    }
    atk_note(c, "held %d connections to mncd, then %s%s%s", held, stop, err ? " " : "", err ? atk_errname(err) : "");
    atk_sync(c, "flooded");
    return 0;
}

/* Five outside whoami attempts, 200 ms apart: any refused = a legitimate client locked out. */
static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char resp[4096];
    for (int i = 0; i < 5; i++) {
        usleep(200000);
        int fd = atk_unix(SOCK_STREAM, getenv("MNC_SOCKET"));
        struct timeval tv = {.tv_sec = 3};
        if (fd >= 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int bad = fd < 0 || atk_call(fd, "{\"verb\":\"whoami\"}", resp, sizeof(resp)) < 0;
        if (bad)
            atk_evidence(c, "DoS: outside client %d/5 got no answer from mncd (%s)", i + 1, atk_errname(errno));
        else if (!strstr(resp, "\"ok\":true"))
            atk_evidence(c, "DoS: outside client %d/5 refused: %.100s", i + 1, resp);
        if (fd >= 0)
            close(fd);
        if (bad || !strstr(resp, "\"ok\":true"))
            break;
    }
}

static const struct atk A = {
    "conn_flood", "hold mncd connections until refused (lock other clients out)", 0, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
