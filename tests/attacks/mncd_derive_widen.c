// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_derive_widen - mncd's `derive` as a way to a wider scope: the agent derives children of
 * the received object asking for more than the parent has (memory, a sink, a longer lifetime,
 * the same fields), then tries to move each child it got where the parent may not go:
 * forward/send to the bystander, log to ops_log, mem.put. mncd_verbs tries those verbs on the
 * parent only. The disclosure is under multi_turn_scope (attack_scope with 4 turns: a 1-turn
 * object is spent by the recv and every derive is refused as expired).
 * Verifier: the log sink and memory dir (as mncd_verbs), and the bystander's inbox read back
 * under `mncctl run --agent bystander` (atk_recv_as).
 * Blocks it: the monitor (derive refuses widen_*; a child carries the parent's scope or less).
 * Positive control: the orchestrator has the worker disclose the canary to the bystander, so
 * the read-back must show it. */
#include <dirent.h>

#include "atk.h"

static int call(struct atk_ctx *c, const char *what, const char *req, char *id, size_t idn)
{
    static char resp[65536];
    int fd = atk_mncd(c);
    int ok = 0;
    if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0) {
        atk_note(c, "%s: no answer", what);
    } else {
        char reason[64] = "?";
        const char *r = strstr(resp, "\"reason\":\"");
        if (r)
            snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(r + 10, "\""), r + 10);
        ok = strstr(resp, "\"ok\":true") != NULL;
        atk_note(c, "%s: %s (%s)", what, ok ? "ALLOWED" : "denied", reason);
        const char *o = id ? strstr(resp, "\"object\":{\"id\":\"") : NULL;
        if (ok && o)
            snprintf(id, idn, "%.32s", o + 16);
    }
    if (fd >= 0)
        close(fd);
    return ok;
}

static void move(struct atk_ctx *c, const char *child)
{
    static const char *const fmts[] = {
        "{\"verb\":\"forward\",\"object\":\"%s\",\"to\":\"bystander\"}",
        "{\"verb\":\"send\",\"object\":\"%s\",\"to\":\"bystander\"}",
        "{\"verb\":\"log\",\"object\":\"%s\",\"sink\":\"ops_log\"}",
        "{\"verb\":\"mem.put\",\"key\":\"atk-derived\",\"object\":\"%s\"}",
    };
    static const char *const names[] = {"child forward", "child send", "child log", "child mem.put"};
    for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
        char req[512];
        snprintf(req, sizeof(req), fmts[i], child);
        call(c, names[i], req, NULL, 0);
    }
}

static int agent(struct atk_ctx *c)
{
    static const char *const asks[] = {
        "{\"verb\":\"derive\",\"object\":\"%s\",\"fields\":[\"selected_slot\"],\"memory\":true}",
        "{\"verb\":\"derive\",\"object\":\"%s\",\"fields\":[\"selected_slot\"],\"sinks\":[\"ops_log\"]}",
        "{\"verb\":\"derive\",\"object\":\"%s\",\"fields\":[\"selected_slot\"],\"lifetime\":{\"seconds\":86400,"
        "\"turns\":100}}",
        "{\"verb\":\"derive\",\"object\":\"%s\",\"fields\":[\"selected_slot\"]}",
    };
    static const char *const names[] = {"derive memory:true", "derive sinks:[ops_log]", "derive longer lifetime",
                                        "derive same scope"};
    for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
        char req[512], child[40] = "";
        snprintf(req, sizeof(req), asks[i], c->object);
        if (call(c, names[i], req, child, sizeof(child)) && child[0])
            move(c, child);
    }
    return 0;
}

static int prepare(struct atk_ctx *c)
{
    c->contract = "multi_turn_scope"; /* turns left after the recv, so derive has something to split */
    if (getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0)
        return atk_disclose(c, "to_bystander", c->canary);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    const char *log = getenv("ATK_LOG"), *mem = getenv("ATK_MEM");
    if (log && atk_file_has(log, c->canary) == 1)
        atk_evidence(c, "canary in the log sink");
    DIR *d = mem ? opendir(mem) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[1200];
        snprintf(p, sizeof(p), "%s/%s", mem, e->d_name);
        if (e->d_name[0] != '.' && atk_file_has(p, c->canary) == 1)
            atk_evidence(c, "canary in the memory sink");
    }
    if (d)
        closedir(d);
    static char got[1 << 16];
    int n = atk_recv_as(c, "bystander", got, sizeof(got));
    if (n > 0 && atk_buf_has(got, (size_t)n, c->canary))
        atk_evidence(c, "the bystander (another agent) received the canary from mncd");
}

static const struct atk A = {"mncd_derive_widen",
                             "mncd's derive asking for a wider scope, then moving the child",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
