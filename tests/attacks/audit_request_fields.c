// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_request_fields - mncd's records and its answers to other principals as the way out, by
 * what a tainted agent writes into requests: the canary (or its bytes as numbers) in every
 * field a verb takes - receivers, sinks, tools, stores, purposes, contracts, memory keys,
 * release ids, ledger subjects, request ids, broker failure codes and receipt fields, derive
 * fields, sinks and lifetimes, admin verbs' arguments, `as`, `id`, unknown members and verbs,
 * malformed lines - on requests mncd refuses and on ones it performs (a memory key it stores).
 * Variants of audit_chosen_name over every verb (test_canary_sinks does the same from the
 * protocol's table).
 * Verifier: the admin's `mncctl audit tail 10000`, `status`, `list` and `approvals` (answers
 * an operator reads), decoded by atkv_spelled.
 * What blocks it: records carry agent values only as tokens salted afresh (and the scrub
 * replaces a request's strings in any record written while it is handled); answers to others
 * carry no request value. */
#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char wval[32]; /* the wide object's value: not the canary */
    atk_mkcanary(wval, sizeof(wval));
    return atk_disclose(c, "wide_scope", wval);
}

static void one(struct atk_ctx *c, const char *fmt, const char *a, const char *b)
{
    char req[1024], resp[8192];
    snprintf(req, sizeof(req), fmt, a, b);
    if (atkv_req(c, req, resp, sizeof(resp)) < 0)
        atk_note(c, "no answer");
}

static int agent(struct atk_ctx *c)
{
    const char *s = c->secret;
    char wide[40] = "00000000000000000000000000000000", hex[300], num[16][16];
    if (atkv_recv_contract(c, "wide_scope", wide, sizeof(wide)) < 0)
        atk_note(c, "no wide_scope object");
    snprintf(hex, sizeof(hex), "00000000000000000000%.12s", s + 2);
    for (int i = 0; i < 6; i++) {
        unsigned v = 0;
        if (sscanf(s + 2 + 2 * i, "%2x", &v) != 1)
            v = 0;
        snprintf(num[i], sizeof(num[i]), "%u", v ? v : 1);
    }
    static const char *const f[] = {
        "{\"verb\":\"send\",\"object\":\"%s\",\"to\":\"%s\"}",
        "{\"verb\":\"forward\",\"object\":\"%s\",\"to\":\"%s\"}",
        "{\"verb\":\"log\",\"object\":\"%s\",\"sink\":\"%s\"}",
        "{\"verb\":\"tool\",\"object\":\"%s\",\"tool\":\"%s\"}",
        "{\"verb\":\"send\",\"object\":\"%s\",\"to\":\"bystander\",\"purpose\":\"%s\"}",
        "{\"verb\":\"mem.put\",\"object\":\"%s\",\"key\":\"slot/%s\"}",
        "{\"verb\":\"mem.put\",\"object\":\"%s\",\"key\":\"k\",\"store\":\"%s\"}",
        "{\"verb\":\"derive\",\"object\":\"%s\",\"fields\":[\"%s\"]}",
        "{\"verb\":\"derive\",\"object\":\"%s\",\"sinks\":[\"%s\"]}",
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        one(c, f[i], wide, s);
        one(c, f[i], hex, s);
    }
    one(c, "{\"verb\":\"mem.get\",\"key\":\"slot/%s\",\"purpose\":\"%s\"}", s, "wide_scope");
    one(c, "{\"verb\":\"recv\",\"purpose\":\"%s\",\"id\":\"%s\"}", s, s);
    one(c, "{\"verb\":\"disclose\",\"contract\":\"%s\",\"state\":{\"subject\":\"%s\",\"fields\":{}}}", s, s);
    one(c,
        "{\"verb\":\"disclose\",\"contract\":\"relay_scope\",\"release\":\"%s\",\"state\":{\"subject\":\"%s\","
        "\"fields\":{\"selected_slot\":\"x\"}}}",
        s, s);
    one(c, "{\"verb\":\"disclose\",\"purpose\":\"%s\",\"recipient\":\"%s\",\"state\":{\"fields\":{}}}", s, s);
    one(c, "{\"verb\":\"disclose.status\",\"request\":\"%s\",\"as\":\"%s\"}", s, s);
    one(c, "{\"verb\":\"broker.reply\",\"request\":\"%s\",\"failure\":\"%s\"}", s, s);
    one(c, "{\"verb\":\"broker.reply\",\"request\":\"%s\",\"receipt\":{\"%s\":\"x\"}}", s, s);
    one(c, "{\"verb\":\"approve\",\"request\":\"%s\",\"id\":\"%s\"}", s, s);
    one(c, "{\"verb\":\"agent.register\",\"agent\":\"%s\",\"cgroup\":\"/%s\"}", s, s);
    one(c, "{\"verb\":\"workspace.clear\",\"path\":\"/%s/%s\"}", s, s);
    one(c, "{\"verb\":\"%s\",\"%s\":1}", s, s);
    one(c, "{\"verb\":\"recv\",\"%s\":\"%s\"}", s, s);
    one(c, "{bad %s %s", s, s);
    for (int i = 0; i < 6; i++) {
        one(c, "{\"verb\":\"recv\",\"max\":%s%s}", num[i], "");
        char life[600];
        snprintf(life, sizeof(life),
                 "{\"verb\":\"derive\",\"object\":\"%%s\",\"lifetime\":{\"turns\":%s,\"seconds\":%s}}", num[i], num[i]);
        one(c, life, wide, "");
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    static const char *const q[][5] = {{"audit", "tail", "10000", NULL},
                                       {"status", NULL},
                                       {"call", "{\"verb\":\"list\",\"max\":1000}", NULL},
                                       {"call", "{\"verb\":\"approvals\",\"max\":1000}", NULL}};
    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "admin%zu.out", i);
        atkv_admin_spelled(c, q[i], name);
    }
}

static const struct atk A = {"audit_request_fields",
                             "the canary in every field of every verb, in the audit log and the admin's answers",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
