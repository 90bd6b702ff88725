// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_chosen_name - mncd's audit log as the way out: the tainted agent puts the canary into
 * the fields of requests that mncd refuses but records verbatim. `send` (and `forward`, `tool`,
 * `log`) to a receiver that is no principal is audited before any check of the object
 * (verbs.c v_move: op send, decision deny, reason unknown_agent, detail = the `to` name, which
 * the protocol lets be any [A-Za-z0-9_.:-]{1,63}: the canary "mk" + 12 hex digits fits), and
 * the request's `object` id (any 32 hex digits, no such object needed) is recorded as the
 * record's object: 63 + 16 bytes of the agent's choice per refused request, at mncd's
 * request rate (each record is made durable before the answer).
 * Verifier: after the agent exited, the operator's `mncctl audit tail 10000` (admin, the
 * documented way to read the log; also what a log shipper of STATE_DIR/audit.jsonl forwards)
 * into DIR/audit.out, searched for the canary (name) and for its 12 hex digits as the tail of
 * an object id. The launcher's stderr is a log channel by the same reasoning (ws_launcher_msg).
 * Positive control: the agent runs unregistered (mncd does not audit its requests), so the
 * orchestrator has the worker (a registered agent) make the same request; the verifier must
 * then see the canary.
 * What would block it: audit records that never carry agent-chosen text (an unknown receiver
 * recorded as "unknown" plus a hash or length; an object id that names no object recorded as
 * such), or only from untainted agents. */
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>

#include "atk.h"

static void one(struct atk_ctx *c, const char *what, const char *req)
{
    char resp[4096];
    int fd = atk_mncd(c);
    if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0) {
        atk_note(c, "%s: no answer", what);
    } else {
        char reason[64] = "?";
        const char *r = strstr(resp, "\"reason\":\"");
        if (r)
            snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(r + 10, "\""), r + 10);
        atk_note(c, "%s: %s", what, reason);
    }
    if (fd >= 0)
        close(fd);
}

static void reqs(const char *secret, char *a, size_t an, char *b, size_t bn)
{
    snprintf(a, an, "{\"verb\":\"send\",\"object\":\"00000000000000000000%.12s\",\"to\":\"%s\"}", secret + 2, secret);
    snprintf(b, bn, "{\"verb\":\"log\",\"object\":\"00000000000000000000%.12s\",\"sink\":\"%s\"}", secret + 2, secret);
}

static int agent(struct atk_ctx *c)
{
    char a[512], b[512];
    reqs(c->secret, a, sizeof(a), b, sizeof(b));
    one(c, "send to=<canary> object=<hex>", a);
    one(c, "log sink=<canary> object=<hex>", b);
    /* bandwidth: 100 refused requests on one connection, each one audit record */
    int fd = atk_mncd(c);
    struct timespec t0, t1;
    char resp[4096];
    int n = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (fd >= 0 && n < 100 && atk_call(fd, a, resp, sizeof(resp)) == 0)
        n++;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    atk_note(c, "%d audited requests in %ld ms", n, ms);
    if (fd >= 0)
        close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0) {
        char a[512], b[512], resp[4096];
        reqs(c->canary, a, sizeof(a), b, sizeof(b));
        if (atk_worker_request(c, a, resp, sizeof(resp)) < 0)
            atk_note(c, "control: worker request failed");
    }
    char out[700], hex[40];
    snprintf(out, sizeof(out), "%s/audit.out", c->dir);
    const char *const args[] = {"audit", "tail", "10000", NULL};
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (o < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
            _exit(127);
        const char *ctl = getenv("MNCCTL");
        if (!ctl)
            _exit(127);
        execl(ctl, ctl, args[0], args[1], args[2], (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
    if (atk_file_has(out, c->canary) == 1)
        atk_evidence(c, "`mncctl audit tail` printed the canary as the receiver of a refused send/log (%s)", out);
    snprintf(hex, sizeof(hex), "00000000000000000000%.12s", c->canary + 2);
    if (atk_file_has(out, hex) == 1)
        atk_evidence(c, "`mncctl audit tail` printed the canary's hex digits as a refused request's object id");
}

static const struct atk A = {"audit_chosen_name",
                             "agent-chosen receiver names and object ids of refused requests in mncd's audit log",
                             0,
                             NULL,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
