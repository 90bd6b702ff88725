// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_security.c - adversarial properties of the monitor, derive, the object JSON reader, the
 * direct-exposure scan and the request parser.
 *
 * The property tests enumerate random operations over random objects and compare every verdict
 * with an independent restatement of the model (DESIGN.md "Operation"), written here from the
 * spec rather than from monitor.c; on top of that they check contract-level invariants that
 * must hold for every object the library can produce (issue, derive, JSON round trip), so that
 * no allow ever reaches a principal, sink, purpose, field or time the contract does not grant.
 * Seed: MNC_SEED (default fixed); the seed is printed on failure. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fixture.h"
#include "mnc/protocol.h"

#define NOW 1700000000000ULL

/* A policy with every sink class, three agents besides the issuer and four contracts that differ
 * in lifetime (seconds only, turns only, both), φ and μ. */
static const char SEC_POLICY[] =
    "{\"mnc_policy\": 1, \"name\": \"sec\","
    " \"agents\": [{\"name\": \"w\"}, {\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}],"
    " \"sinks\": [{\"name\": \"log1\", \"class\": \"log\", \"path\": \"/var/log/sec1\"},"
    "  {\"name\": \"log2\", \"class\": \"log\", \"path\": \"/var/log/sec2\"},"
    "  {\"name\": \"mem1\", \"class\": \"memory\", \"path\": \"/var/lib/sec1\"},"
    "  {\"name\": \"tool1\", \"class\": \"tool\"}, {\"name\": \"ext1\", \"class\": \"external\"}],"
    " \"fields\": [{\"name\": \"f0\", \"weight\": 1}, {\"name\": \"f1\", \"weight\": 0.5},"
    "  {\"name\": \"f2\", \"weight\": 0.2}, {\"name\": \"f3\", \"weight\": 0.1}],"
    " \"families\": [{\"name\": \"fam\", \"forms\": [{\"name\": \"all\", \"fields\": [\"f1\", \"f2\", \"f3\"]},"
    "  {\"name\": \"one\", \"fields\": [\"f3\"]}]}],"
    " \"contracts\": ["
    "  {\"id\": \"k0\", \"purpose\": \"p0\", \"issuers\": [\"w\"], \"recipient\": \"a\","
    "   \"fields\": [\"f1\", \"f2\", \"f3\"], \"lifetime\": {\"seconds\": 60}, \"sinks\": [\"b\", \"log1\", \"tool1\", "
    "\"mem1\"],"
    "   \"memory\": true, \"family\": \"fam\"},"
    "  {\"id\": \"k1\", \"purpose\": \"p1\", \"issuers\": [\"w\"], \"recipient\": \"b\","
    "   \"fields\": [\"f2\", \"f3\"], \"lifetime\": {\"turns\": 3}, \"sinks\": [\"ext1\", \"log2\"],"
    "   \"memory\": false, \"family\": \"fam\"},"
    "  {\"id\": \"k2\", \"purpose\": \"p2\", \"issuers\": [\"w\", \"c\"], \"recipient\": \"a\","
    "   \"fields\": [\"f1\", \"f3\"], \"lifetime\": {\"seconds\": 5, \"turns\": 2}, \"sinks\": [],"
    "   \"memory\": false, \"family\": \"fam\"},"
    "  {\"id\": \"k3\", \"purpose\": \"p0\", \"issuers\": [\"w\"], \"recipient\": \"c\","
    "   \"fields\": [\"f3\"], \"lifetime\": {\"seconds\": 100000, \"turns\": 4}, \"sinks\": [\"a\", \"tool1\"],"
    "   \"memory\": true, \"family\": \"fam\"}],"
    " \"risk\": {\"model\": \"weights\"}}";

typedef struct sec {
    mnc_policy *p;
    mnc_state st;
    uint64_t rng;
    unsigned long seed;
} sec;

static uint64_t rnd(sec *s)
{
    /* xorshift64*: reproducible from the seed, no libc state */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

static unsigned rn(sec *s, unsigned n) { return (unsigned)(rnd(s) % n); }

static int sec_setup(void **state)
{
    sec *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    mnc_errors e;
    mnc_errors_init(&e);
    s->p = mnc_policy_load_buffer("sec", SEC_POLICY, strlen(SEC_POLICY), &e);
    fx_print_errors(&e);
    mnc_errors_free(&e);
    assert_non_null(s->p);
    mnc_state_init(&s->st);
    for (int f = 0; f < s->p->n_fields; f++) {
        char v[32];
        snprintf(v, sizeof(v), "value-%d", f);
        assert_int_equal(mnc_state_set(&s->st, f, v), 0);
    }
    const char *env = getenv("MNC_SEED");
    s->seed = env ? strtoul(env, NULL, 10) : 20240601UL;
    s->rng = s->seed * 0x9e3779b97f4a7c15ULL + 1;
    *state = s;
    return 0;
}

static int sec_teardown(void **state)
{
    sec *s = *state;
    mnc_state_free(&s->st);
    mnc_policy_free(s->p);
    free(s);
    return 0;
}

static mnc_set rand_subset(sec *s, const mnc_set *of)
{
    mnc_set r;
    mnc_set_clear(&r);
    for (int i = mnc_set_next(of, -1); i >= 0; i = mnc_set_next(of, i))
        if (rn(s, 2))
            mnc_set_add(&r, (unsigned)i);
    return r;
}

static mnc_set rand_ids(sec *s, int n)
{
    mnc_set r;
    mnc_set_clear(&r);
    for (int i = 0; i < n; i++)
        if (rn(s, 3) == 0)
            mnc_set_add(&r, (unsigned)i);
    return r;
}

/* ---- the spec, restated from DESIGN.md independently of monitor.c */

static bool is_cls(const mnc_policy *p, int id, enum mnc_sink_class c)
{
    return id >= 0 && id < p->n_principals && p->principals[id].cls == c;
}

static bool spec_allows(const mnc_policy *p, const mnc_op *op, const mnc_disclosure *d)
{
    if (!is_cls(p, op->sender, MNC_SINK_AGENT) || op->receiver < 0 || op->receiver >= p->n_principals)
        return false;
    if (!d || d->revoked)
        return false;
    if (d->expires_ms != 0 && op->now_ms >= d->expires_ms)
        return false;
    const mnc_scope *sc = &d->scope;
    bool read = op->ch == MNC_CH_RECV || op->ch == MNC_CH_MEMORY_READ;
    if (read) {
        if (d->turns_left == 0 || op->sender != sc->recipient)
            return false;
    } else if (!mnc_set_has(&d->holders, (unsigned)op->sender)) {
        return false;
    }
    if (d->contract >= p->n_contracts || !op->purpose || strcmp(op->purpose, p->contracts[d->contract].purpose) != 0)
        return false;
    if (op->fields && !mnc_set_subset(op->fields, &sc->fields))
        return false;
    bool phi = mnc_set_has(&sc->sinks, (unsigned)op->receiver);
    switch ((int)op->ch) {
    case MNC_CH_MESSAGE:
    case MNC_CH_RECV:
        return op->receiver == sc->recipient;
    case MNC_CH_TOOL:
        return is_cls(p, op->receiver, MNC_SINK_TOOL) && phi;
    case MNC_CH_FORWARD:
        return (is_cls(p, op->receiver, MNC_SINK_AGENT) || is_cls(p, op->receiver, MNC_SINK_EXTERNAL)) && phi;
    case MNC_CH_LOG:
        return is_cls(p, op->receiver, MNC_SINK_LOG) && phi;
    case MNC_CH_MEMORY_WRITE:
        return is_cls(p, op->receiver, MNC_SINK_MEMORY) && sc->memory;
    case MNC_CH_MEMORY_READ:
        return is_cls(p, op->receiver, MNC_SINK_MEMORY);
    }
    return false; /* unknown channel */
}

/* Contract-level: what an allow may never exceed, whatever the object says about itself. */
static void assert_within_contract(const sec *s, const mnc_op *op, const mnc_disclosure *d, uint64_t root_expires)
{
    const mnc_contract *c = &s->p->contracts[d->contract];
    if (strcmp(op->purpose, c->purpose) != 0 || (op->fields && !mnc_set_subset(op->fields, &c->scope.fields)) ||
        (root_expires && op->now_ms >= root_expires)) {
        fprintf(stderr, "seed %lu: allow outside the contract (purpose/fields/time)\n", s->seed);
        fail();
    }
    bool to_recipient = op->receiver == c->scope.recipient;
    bool in_phi = mnc_set_has(&c->scope.sinks, (unsigned)op->receiver);
    switch (op->ch) {
    case MNC_CH_MESSAGE:
    case MNC_CH_RECV:
        assert_true(to_recipient);
        break;
    case MNC_CH_MEMORY_READ:
        assert_true(op->sender == c->scope.recipient);
        break;
    case MNC_CH_MEMORY_WRITE:
        assert_true(c->scope.memory);
        break;
    default:
        if (!in_phi) {
            fprintf(stderr, "seed %lu: allow to a receiver outside the contract's sinks\n", s->seed);
            fail();
        }
    }
}

/* A random object as the library can produce it: issued, then derived 0..3 times with random
 * (possibly widening) requests, JSON round-tripped, then changed the ways mncd changes objects
 * (deliveries add holders and consume turns; revoke). */
static bool rand_object(sec *s, mnc_disclosure *out, uint64_t *root_expires, uint64_t now)
{
    int c = (int)rn(s, (unsigned)s->p->n_contracts);
    const mnc_contract *k = &s->p->contracts[c];
    mnc_set fields = rand_subset(s, &k->scope.fields);
    if (mnc_set_empty(&fields))
        fields = k->scope.fields;
    int issuer = mnc_set_next(&k->issuers, -1);
    mnc_disclosure d;
    assert_int_equal(mnc_disclosure_issue(s->p, c, issuer, "all", &fields, &s->st, now, &d), MNC_OK);
    *root_expires = d.expires_ms;
    int hops = (int)rn(s, 4);
    for (int i = 0; i < hops; i++) {
        mnc_set nf = rn(s, 4) ? rand_subset(s, &d.scope.fields) : rand_ids(s, s->p->n_fields);
        mnc_set ns = rn(s, 4) ? rand_subset(s, &d.scope.sinks) : rand_ids(s, s->p->n_principals);
        mnc_lifetime life = {.seconds = rn(s, 3) ? rn(s, 120) : 0, .turns = rn(s, 3) ? rn(s, 6) : 0};
        mnc_narrowing n = {.fields = rn(s, 2) ? &nf : NULL,
                           .sinks = rn(s, 2) ? &ns : NULL,
                           .life = rn(s, 2) ? &life : NULL,
                           .memory = (int)rn(s, 3) - 1};
        int by = mnc_set_next(&d.holders, -1);
        mnc_disclosure child;
        uint64_t t = now + rn(s, 3000);
        if (mnc_disclosure_derive(&d, by, &n, t, &child) == MNC_OK) {
            mnc_disclosure_free(&d);
            d = child;
        }
    }
    /* JSON round trip: what comes back must be exactly what went out */
    cJSON *j = mnc_disclosure_to_json(s->p, &d);
    assert_non_null(j);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_disclosure back;
    int rc = mnc_disclosure_from_json(s->p, j, &back, &e);
    if (rc != 0)
        fx_print_errors(&e);
    mnc_errors_free(&e);
    cJSON_Delete(j);
    assert_int_equal(rc, 0);
    assert_true(mnc_set_eq(&back.scope.fields, &d.scope.fields));
    assert_true(mnc_set_eq(&back.scope.sinks, &d.scope.sinks));
    assert_int_equal(back.expires_ms, d.expires_ms);
    assert_int_equal(back.turns_left, d.turns_left);
    mnc_disclosure_free(&d);
    d = back;
    /* mncd's own mutations */
    mnc_set agents;
    mnc_set_clear(&agents);
    for (int i = 0; i < s->p->n_principals; i++)
        if (s->p->principals[i].cls == MNC_SINK_AGENT)
            mnc_set_add(&agents, (unsigned)i);
    if (rn(s, 2))
        d.holders = mnc_set_or(&d.holders, (mnc_set[]){rand_subset(s, &agents)});
    if (d.turns_left != MNC_TURNS_UNBOUNDED && rn(s, 3) == 0)
        d.turns_left = rn(s, d.turns_left + 1);
    d.revoked = rn(s, 8) == 0;
    *out = d;
    return true;
}

static void t_monitor_property(void **state)
{
    sec *s = *state;
    static const char *const purposes[] = {"p0", "p1", "p2", "P0", "", "p0 ", NULL};
    unsigned allows = 0, total = 0;
    for (int obj = 0; obj < 2000; obj++) {
        mnc_disclosure d;
        uint64_t root_exp;
        rand_object(s, &d, &root_exp, NOW);
        for (int k = 0; k < 200; k++) {
            mnc_set fs = rand_ids(s, s->p->n_fields);
            uint64_t now = NOW + (rn(s, 2) ? rn(s, 10000) : rn(s, 200000000));
            if (d.expires_ms && rn(s, 4) == 0) /* probe the exact deadline */
                now = d.expires_ms - 1 + rn(s, 3);
            /* half of the operations are "plausible" (a holder or the recipient, the right
             * purpose, the object's fields), so that allows are common and their edges probed */
            bool plausible = rn(s, 2);
            int holder = mnc_set_next(&d.holders, (int)rn(s, 4) - 1);
            mnc_set sub = rand_subset(s, &d.scope.fields);
            mnc_op op = {.sender = (int)rn(s, (unsigned)s->p->n_principals + 2) - 1,
                         .receiver = (int)rn(s, (unsigned)s->p->n_principals + 2) - 1,
                         .purpose = purposes[rn(s, 7)],
                         .ch = (mnc_channel)rn(s, MNC_CH_COUNT + 1),
                         .fields = rn(s, 2) ? &fs : NULL,
                         .now_ms = now};
            if (plausible) {
                op.sender = rn(s, 2) && holder >= 0 ? holder : d.scope.recipient;
                op.purpose = s->p->contracts[d.contract].purpose;
                op.fields = rn(s, 2) ? &sub : NULL;
                int phi = mnc_set_next(&d.scope.sinks, (int)rn(s, 12) - 1);
                unsigned pick = rn(s, 3);
                if (pick == 0)
                    op.receiver = d.scope.recipient;
                else if (pick == 1 && phi >= 0)
                    op.receiver = phi;
                else
                    op.receiver = mnc_policy_principal(s->p, "mem1");
                op.now_ms = NOW + rn(s, 4000);
            }
            const mnc_disclosure *dp = rn(s, 50) ? &d : NULL;
            mnc_reason r = mnc_monitor_check(s->p, &op, dp);
            bool want = spec_allows(s->p, &op, dp);
            if ((r == MNC_OK) != want) {
                fprintf(stderr, "seed %lu: monitor %s, spec %s (ch %d s %d r %d)\n", s->seed, mnc_reason_name(r),
                        want ? "allow" : "deny", op.ch, op.sender, op.receiver);
                fail();
            }
            total++;
            if (r == MNC_OK) {
                allows++;
                assert_within_contract(s, &op, &d, root_exp);
            }
        }
        mnc_disclosure_free(&d);
    }
    /* the enumeration must exercise allows, not only denials */
    if (allows < total / 50) {
        fprintf(stderr, "only %u allows in %u operations\n", allows, total);
        fail();
    }
}

/* Derive chains: each step is refused exactly when it widens its parent, and no accepted
 * descendant ever carries more than the root (fields, sinks, μ, recipient, deadline, turns). */
static void t_derive_chain_property(void **state)
{
    sec *s = *state;
    for (int round = 0; round < 3000; round++) {
        int c = (int)rn(s, (unsigned)s->p->n_contracts);
        const mnc_contract *k = &s->p->contracts[c];
        mnc_disclosure root, d;
        assert_int_equal(
            mnc_disclosure_issue(s->p, c, mnc_set_next(&k->issuers, -1), "all", &k->scope.fields, &s->st, NOW, &root),
            MNC_OK);
        assert_int_equal(mnc_disclosure_copy(&d, &root), 0);
        uint64_t t = NOW;
        for (int hop = 0; hop < 6; hop++) {
            t += rn(s, 2000);
            mnc_set nf = rn(s, 3) ? rand_subset(s, &d.scope.fields) : rand_ids(s, s->p->n_fields);
            mnc_set ns = rn(s, 3) ? rand_subset(s, &d.scope.sinks) : rand_ids(s, s->p->n_principals);
            mnc_lifetime life = {.seconds = rn(s, 3) ? rn(s, 200000) : 0, .turns = rn(s, 3) ? rn(s, 6) : 0};
            mnc_narrowing n = {.fields = rn(s, 2) ? &nf : NULL,
                               .sinks = rn(s, 2) ? &ns : NULL,
                               .life = rn(s, 2) ? &life : NULL,
                               .memory = (int)rn(s, 3) - 1};
            int by = mnc_set_next(&d.holders, -1);
            mnc_disclosure child;
            mnc_reason r = mnc_disclosure_derive(&d, by, &n, t, &child);

            /* independent expectation */
            mnc_set cf = n.fields ? nf : d.scope.fields, cs = n.sinks ? ns : d.scope.sinks;
            bool cmem = n.memory < 0 ? d.scope.memory : n.memory == 1;
            uint64_t cexp = d.expires_ms;
            uint32_t cturns = d.turns_left;
            if (n.life) {
                cexp = life.seconds ? t + life.seconds * 1000 : 0;
                cturns = life.turns ? life.turns : MNC_TURNS_UNBOUNDED;
            }
            bool dead = (d.expires_ms && t >= d.expires_ms) || d.turns_left == 0;
            bool widens = !mnc_set_subset(&cf, &d.scope.fields) || !mnc_set_subset(&cs, &d.scope.sinks) ||
                          (cmem && !d.scope.memory) || (d.expires_ms && (!cexp || cexp > d.expires_ms)) ||
                          (d.turns_left != MNC_TURNS_UNBOUNDED && cturns > d.turns_left);
            mnc_set carried = mnc_set_and(&cf, &d.scope.fields);
            bool empty = mnc_set_empty(&cf) || mnc_set_empty(&carried);
            if (dead || widens || empty) {
                if (r == MNC_OK) {
                    fprintf(stderr, "seed %lu: derive allowed (dead %d widens %d empty %d)\n", s->seed, dead, widens,
                            empty);
                    fail();
                }
                continue;
            }
            assert_int_equal(r, MNC_OK);
            /* root invariants, through a JSON round trip */
            cJSON *j = mnc_disclosure_to_json(s->p, &child);
            assert_non_null(j);
            char *txt = cJSON_PrintUnformatted(j);
            cJSON_Delete(j);
            assert_non_null(txt);
            cJSON *j2 = cJSON_Parse(txt);
            cJSON_free(txt);
            mnc_errors e;
            mnc_errors_init(&e);
            mnc_disclosure back;
            int rc = mnc_disclosure_from_json(s->p, j2, &back, &e);
            if (rc)
                fx_print_errors(&e);
            mnc_errors_free(&e);
            cJSON_Delete(j2);
            assert_int_equal(rc, 0);
            mnc_disclosure_free(&child);
            assert_true(mnc_set_subset(&back.scope.fields, &root.scope.fields));
            assert_true(mnc_set_subset(&back.scope.sinks, &root.scope.sinks));
            assert_true(!back.scope.memory || root.scope.memory);
            assert_int_equal(back.scope.recipient, root.scope.recipient);
            if (root.expires_ms)
                assert_true(back.expires_ms && back.expires_ms <= root.expires_ms);
            if (root.turns_left != MNC_TURNS_UNBOUNDED)
                assert_true(back.turns_left <= root.turns_left);
            for (int i = 0; i < back.n_values; i++)
                assert_true(mnc_set_has(&back.scope.fields, back.values[i].field));
            mnc_disclosure_free(&d);
            d = back;
        }
        mnc_disclosure_free(&d);
        mnc_disclosure_free(&root);
    }
}

/* A JSON object may not come back wider than its contract: each single edit below turns a
 * valid object into one the library could never have produced, and the reader must refuse it
 * (it used to accept all of them: the journal and `mncctl check` read objects this way). */
static void t_json_widening_refused(void **state)
{
    sec *s = *state;
    int k0 = mnc_policy_contract(s->p, "k0"), k1 = mnc_policy_contract(s->p, "k1");
    const struct {
        int contract;
        const char *path; /* "scope.KEY", "KEY" */
        const char *json; /* replacement value */
    } edits[] = {
        {k0, "scope.fields", "[\"f0\", \"f1\"]"}, /* f0 is not in k0's F */
        {k0, "scope.sinks", "[\"b\", \"log2\"]"}, /* log2 is not in k0's φ */
        {k1, "scope.memory", "true"},             /* k1 has μ = 0 */
        {k0, "scope.recipient", "\"b\""},         /* k0's recipient is a */
        {k0, "expires_ms", "0"},                  /* bounded contract, unbounded copy */
        {k0, "expires_ms", "1800000000000"},      /* later than issue + 60 s */
        {k1, "turns_left", "null"},               /* k1 has 3 turns */
        {k1, "turns_left", "4"},
        {k1, "scope.lifetime", "{\"seconds\": 0, \"turns\": 0}"},
        {k0, "holders", "[\"w\", \"log1\"]"}, /* a sink cannot hold an object */
        {k0, "holders", "[\"a\"]"},           /* the origin must hold it */
        {k0, "origin", "\"c\""},              /* c is not an issuer of k0 */
    };
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        const mnc_contract *k = &s->p->contracts[edits[i].contract];
        mnc_disclosure d;
        assert_int_equal(mnc_disclosure_issue(s->p, edits[i].contract, mnc_policy_agent(s->p, "w"), "all",
                                              &k->scope.fields, &s->st, NOW, &d),
                         MNC_OK);
        cJSON *j = mnc_disclosure_to_json(s->p, &d);
        assert_non_null(j);
        mnc_disclosure_free(&d);
        /* unmodified: accepted */
        mnc_errors e;
        mnc_errors_init(&e);
        mnc_disclosure back;
        assert_int_equal(mnc_disclosure_from_json(s->p, j, &back, &e), 0);
        mnc_disclosure_free(&back);
        const char *key = edits[i].path;
        cJSON *parent = j;
        if (strncmp(key, "scope.", 6) == 0) {
            parent = cJSON_GetObjectItemCaseSensitive(j, "scope");
            key += 6;
        }
        cJSON *v = cJSON_Parse(edits[i].json);
        assert_non_null(v);
        assert_true(cJSON_ReplaceItemInObjectCaseSensitive(parent, key, v));
        if (mnc_disclosure_from_json(s->p, j, &back, &e) == 0) {
            fprintf(stderr, "edit %zu (%s = %s) was accepted\n", i, edits[i].path, edits[i].json);
            mnc_disclosure_free(&back);
            fail();
        }
        assert_true(e.n > 0);
        mnc_errors_free(&e);
        cJSON_Delete(j);
    }
}

/* Lifetimes at the edges: a derive asking for more seconds than the object's JSON form can
 * carry is refused; a deadline past 2^53 ms saturates there (it used to saturate at 2^64 - 1,
 * which to_json printed and from_json refused: the daemon could not replay such an object). */
static void roundtrip_ok(sec *s, const mnc_disclosure *d)
{
    cJSON *j = mnc_disclosure_to_json(s->p, d);
    assert_non_null(j);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_disclosure back;
    int rc = mnc_disclosure_from_json(s->p, j, &back, &e);
    if (rc)
        fx_print_errors(&e);
    assert_int_equal(rc, 0);
    assert_int_equal(back.expires_ms, d->expires_ms);
    mnc_errors_free(&e);
    cJSON_Delete(j);
    mnc_disclosure_free(&back);
}

static void t_deadline_saturation(void **state)
{
    sec *s = *state;
    int w = mnc_policy_agent(s->p, "w");
    int k1 = mnc_policy_contract(s->p, "k1"); /* turns only: no time bound */
    mnc_disclosure root, child;
    assert_int_equal(mnc_disclosure_issue(s->p, k1, w, "all", &s->p->contracts[k1].scope.fields, &s->st, NOW, &root),
                     MNC_OK);
    mnc_lifetime life = {.seconds = UINT64_MAX / 2, .turns = 1};
    mnc_narrowing n = {.life = &life, .memory = -1};
    assert_int_equal(mnc_disclosure_derive(&root, w, &n, NOW, &child), MNC_R_INVALID);
    life.seconds = UINT32_MAX;
    assert_int_equal(mnc_disclosure_derive(&root, w, &n, NOW, &child), MNC_OK);
    roundtrip_ok(s, &child);
    mnc_disclosure_free(&child);
    /* a clock near 2^53 ms: the deadline saturates where JSON is still exact */
    assert_int_equal(mnc_disclosure_derive(&root, w, &n, 9007199254740000ULL, &child), MNC_OK);
    assert_int_equal(child.expires_ms, 9007199254740992ULL);
    roundtrip_ok(s, &child);
    mnc_disclosure_free(&child);
    mnc_disclosure_free(&root);
    int k0 = mnc_policy_contract(s->p, "k0"); /* 60 s */
    assert_int_equal(
        mnc_disclosure_issue(s->p, k0, w, "all", &s->p->contracts[k0].scope.fields, &s->st, 9007199254740000ULL, &root),
        MNC_OK);
    roundtrip_ok(s, &root);
    mnc_disclosure_free(&root);
}

/* The direct-exposure scan's documented scope (select.h), each case an attempt to smuggle a
 * forbidden value past it, and the cases it deliberately leaves to semantic review. */
static void t_exposure_scan(void **state)
{
    (void)state;
    mnc_state st;
    mnc_state_init(&st);
    assert_int_equal(mnc_state_set(&st, 0, "oncology appointment"), 0);
    assert_int_equal(mnc_state_set(&st, 1, "ab"), 0);       /* below the 3-byte floor */
    assert_int_equal(mnc_state_set(&st, 2, "Café Zoë"), 0); /* non-ASCII */
    assert_int_equal(mnc_state_set(&st, 3, " \t x "), 0);   /* one visible byte */
    mnc_set none;
    mnc_set_clear(&none);
    struct {
        const char *text;
        int want;
    } cases[] = {
        {"an Oncology Appointment on Tue", 0},
        {"ONCOLOGY APPOINTMENT", 0},
        {"oncology\n   appointment", 0}, /* split across lines */
        {"oncology\tappointment", 0},
        {"onco logy appoint ment", 0},           /* split inside words */
        {"oncologyappointment", 0},              /* joined */
        {"onco\xc2\xadlogy appointment", 0},     /* soft hyphen */
        {"onco\xe2\x80\x8blogy appointment", 0}, /* zero-width space */
        {"oncology\xc2\xa0"
         "appointment",
         0},                                     /* no-break space */
        {"oncology\xef\xbb\xbf appointment", 0}, /* BOM */
        {"café zoë", 2},                         /* ASCII letters fold, é/ë exact */
        {"cafe zoe", -1},                        /* transliteration: semantic, out of scope */
        {"CAFÉ ZOË", -1},                        /* Unicode case folding: out of scope */
        {"ab ab ab", -1},                        /* 2-byte value: not scanned */
        {"x x x", -1},                           /* one visible byte: not scanned */
        {"oncology", -1},                        /* a part is not the value */
        {"onc-ology appointment", -1},           /* other separators: out of scope */
        {"", -1},
        {"\xe2\x80", -1}, /* truncated UTF-8 at the end */
        {"\xc2", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = mnc_exposure_scan(&st, &none, cases[i].text);
        if (got != cases[i].want) {
            fprintf(stderr, "case %zu \"%s\": got %d, want %d\n", i, cases[i].text, got, cases[i].want);
            fail();
        }
    }
    /* an allowed field is never reported */
    mnc_set allow0;
    mnc_set_clear(&allow0);
    mnc_set_add(&allow0, 0);
    assert_int_equal(mnc_exposure_scan(&st, &allow0, "oncology appointment"), -1);
    mnc_state_free(&st);
}

/* Selection never chooses a candidate whose risk is not a finite number >= 0: a field weight
 * big enough to overflow the sum makes ΔR infinite, and that candidate must lose even though it
 * is the only one that would otherwise be admissible. */
static void t_select_nonfinite_risk(void **state)
{
    (void)state;
    static const char pol[] =
        "{\"mnc_policy\": 1, \"name\": \"inf\", \"agents\": [{\"name\": \"w\"}, {\"name\": \"a\"}],"
        " \"fields\": [{\"name\": \"x\", \"weight\": 1e308}, {\"name\": \"y\", \"weight\": 1e308}],"
        " \"families\": [{\"name\": \"fam\", \"forms\": [{\"name\": \"both\", \"fields\": [\"x\", \"y\"]}]}],"
        " \"contracts\": [{\"id\": \"k\", \"purpose\": \"p\", \"issuers\": [\"w\"], \"recipient\": \"a\","
        "   \"fields\": [\"x\", \"y\"], \"lifetime\": {\"turns\": 1}, \"family\": \"fam\"}]}";
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("inf", pol, strlen(pol), &e);
    fx_print_errors(&e);
    mnc_errors_free(&e);
    assert_non_null(p);
    mnc_state st;
    mnc_state_init(&st);
    assert_int_equal(mnc_state_set(&st, 0, "1"), 0);
    assert_int_equal(mnc_state_set(&st, 1, "2"), 0);
    mnc_select_req req = {.contract = 0, .recipient = mnc_policy_agent(p, "a"), .state = &st};
    mnc_selection sel;
    mnc_reason r = mnc_select(p, &req, &sel);
    assert_int_equal(r, MNC_R_NO_CANDIDATE);
    assert_int_equal(sel.chosen, -1);
    assert_int_not_equal(sel.c[0].verdict, MNC_OK);
    mnc_state_free(&st);
    mnc_policy_free(p);
}

/* Integer arguments out of int range are refused before any conversion (a double -> int cast
 * of 1e20 is undefined behaviour; the fuzz target runs this under UBSan). */
static void t_request_int_range(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"verb\":\"recv\",\"max\":1e20}",  "{\"verb\":\"recv\",\"max\":-1e20}",
        "{\"verb\":\"recv\",\"max\":1e400}", "{\"verb\":\"recv\",\"max\":2147483648}",
        "{\"verb\":\"recv\",\"max\":0.5}",   "{\"verb\":\"audit\",\"max\":10001}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mnc_request q;
        cJSON *id = NULL;
        char err[256];
        assert_int_equal(mnc_request_parse(bad[i], strlen(bad[i]), &q, &id, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "max"));
        cJSON_Delete(id);
    }
    mnc_request q;
    const char *ok = "{\"verb\":\"recv\",\"max\":7}";
    assert_int_equal(mnc_request_parse(ok, strlen(ok), &q, NULL, (char[64]){0}, 64), 0);
    assert_int_equal(q.max, 7);
    mnc_request_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_monitor_property, sec_setup, sec_teardown),
        cmocka_unit_test_setup_teardown(t_derive_chain_property, sec_setup, sec_teardown),
        cmocka_unit_test_setup_teardown(t_json_widening_refused, sec_setup, sec_teardown),
        cmocka_unit_test_setup_teardown(t_exposure_scan, sec_setup, sec_teardown),
        cmocka_unit_test_setup_teardown(t_deadline_saturation, sec_setup, sec_teardown),
        cmocka_unit_test(t_select_nonfinite_risk),
        cmocka_unit_test(t_request_int_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
