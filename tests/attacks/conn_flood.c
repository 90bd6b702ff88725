/* conn_flood - issue 9 channel 12 (denial of service, not a disclosure). The agent opens 1100
 * connections to mncd and holds them; then an outsider (root, the admin) and another client try
 * to talk to mncd.
 * Verifier: a whoami from outside the agent while it holds the connections; refused = LEAKED (DoS).
 * Blocks it: per-agent and per-uid connection caps. */
#include <sys/resource.h>
#include <sys/time.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2048) {
        rl.rlim_cur = rl.rlim_max < 2048 ? rl.rlim_max : 2048;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int n = 0, err = 0;
    for (int i = 0; i < 1100; i++) {
        int fd = atk_mncd(c);
        if (fd < 0) {
            err = errno;
            break;
        }
        n++;
    }
    atk_note(c, "held %d connections to mncd%s%s", n, err ? ", then " : "", err ? atk_errname(err) : "");
    usleep(1000000); /* let mncd accept them */
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

static const struct atk A = {"conn_flood", "hold 1100 mncd connections (lock other clients out)", 0, NULL, agent,
                             on_sync, NULL, NULL};
ATK_MAIN(A)
