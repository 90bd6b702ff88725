// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_qif.c - the bayes risk model: exact min-entropy leakage on hand-computed channels,
 * model validation, and the MNC-L budget invariants over long random release sequences. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/risk.h"
#include "mnc/risk_bayes.h"
#include "mnc_bench.h"

#define EXACT 1e-12

/* cmocka 1.1 has no assert_double_equal; |a - b| <= eps, printing both on failure. */
#define assert_double_equal(a, b, eps)                                                     \
    do {                                                                                   \
        double a_ = (a), b_ = (b);                                                         \
        if (!(fabs(a_ - b_) <= (eps))) {                                                   \
            print_message("# %s = %.17g, expected %.17g (tolerance %g)\n", #a, a_, b_,    \
                          (double)(eps));                                                  \
            fail();                                                                        \
        }                                                                                  \
    } while (0)

static mnc_bayes *model(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_bayes *m = mnc_bayes_from_json(j, NULL, "test", &e);
    for (int i = 0; i < e.n; i++)
        print_message("# %s\n", e.msg[i]);
    mnc_errors_free(&e);
    cJSON_Delete(j);
    return m;
}

/* Returns the first error for a model expected to be rejected. */
static void expect_bad(const char *json, const char *needle)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_bayes *m = mnc_bayes_from_json(j, NULL, "bad", &e);
    assert_null(m);
    assert_true(e.n >= 1);
    bool found = false;
    for (int i = 0; i < e.n; i++)
        if (strstr(e.msg[i], needle))
            found = true;
    if (!found)
        print_message("# wanted \"%s\", got \"%s\"\n", needle, e.msg[0]);
    assert_true(found);
    mnc_errors_free(&e);
    cJSON_Delete(j);
}

static double leak(const mnc_bayes *m, const mnc_obs *h, size_t n)
{
    double r = NAN;
    assert_int_equal(mnc_bayes_leak(m, h, n, &r), 0);
    return r;
}

/* Deterministic channel. S = {a,b,c,d}; field "half" (id 0) = x for a,b and y for c,d.
 *   uniform prior: V_prior = 1/4; observing x leaves {a,b} at 1/2 each: br = log2(2) = 1.
 *   prior (.4,.3,.2,.1): V_prior = .4
 *     half=y: posterior ∝ (0,0,.2,.1) -> V_post = 2/3, br = log2((2/3)/.4) = log2(5/3)
 *     half=x: posterior ∝ (.4,.3,0,0) -> V_post = 4/7, br = log2((4/7)/.4) = log2(10/7)
 *     expected: Σ_y max_s π(s)P(y|s) = .4 + .2 = .6 -> log2(.6/.4) = log2(1.5)
 *     min-capacity (uniform prior): two blocks -> log2(2) = 1 */
static void test_deterministic(void **state)
{
    (void)state;
    mnc_bayes *u = model("{\"secret\":{\"domain\":[\"a\",\"b\",\"c\",\"d\"],\"prior\":\"uniform\"},"
                         "\"fields\":{\"half\":{\"function\":{\"a\":\"x\",\"b\":\"x\",\"c\":\"y\",\"d\":\"y\"}}}}");
    assert_non_null(u);
    mnc_obs x = {0, "x"};
    assert_double_equal(leak(u, &x, 1), 1.0, EXACT);
    assert_double_equal(leak(u, NULL, 0), 0.0, EXACT);
    mnc_bayes_free(u);

    mnc_bayes *m = model("{\"mnc_risk_model\":1,\"secret\":{\"name\":\"s\",\"domain\":[\"a\",\"b\",\"c\",\"d\"],"
                         "\"prior\":[0.4,0.3,0.2,0.1]},"
                         "\"fields\":{\"half\":{\"function\":{\"a\":\"x\",\"b\":\"x\",\"c\":\"y\",\"d\":\"y\"}}}}");
    assert_non_null(m);
    mnc_obs y = {0, "y"};
    assert_double_equal(leak(m, &y, 1), 0.7369655941662062, EXACT); /* log2(5/3) */
    assert_double_equal(leak(m, &x, 1), 0.5145731728297582, EXACT); /* log2(10/7) */
    uint16_t f = 0;
    double e;
    assert_int_equal(mnc_bayes_expected_leak(m, &f, 1, 0, &e), 0);
    assert_double_equal(e, 0.5849625007211562, EXACT); /* log2(1.5) */
    assert_int_equal(mnc_bayes_expected_leak(m, &f, 1, 1, &e), 0);
    assert_double_equal(e, 1.0, EXACT);
    /* the same value twice is the same fact: no extra leakage */
    mnc_obs yy[2] = {{0, "y"}, {0, "y"}};
    assert_double_equal(leak(m, yy, 2), 0.7369655941662062, EXACT);
    /* x then y: contradictory under a deterministic channel -> probability 0 -> error */
    mnc_obs xy[2] = {{0, "x"}, {0, "y"}};
    double r;
    assert_int_equal(mnc_bayes_leak(m, xy, 2, &r), -1);
    long double post[4];
    assert_int_equal(mnc_bayes_posterior(m, &y, 1, post, 4), 0);
    assert_true(fabsl(post[2] - 2.0L / 3) < 1e-15L && fabsl(post[3] - 1.0L / 3) < 1e-15L);
    assert_true(post[0] == 0 && post[1] == 0);
    mnc_bayes_free(m);
}

/* Noisy channel. S = {neg, pos} uniform. Field "test" (id 0):
 *   P(+|neg) = .1, P(-|neg) = .9, P(+|pos) = .8, P(-|pos) = .2.
 *   test=+: posterior ∝ (.05, .4) -> V_post = 8/9, br = log2((8/9)/.5) = log2(16/9)
 *   test=-: posterior ∝ (.45, .1) -> V_post = 9/11, br = log2(18/11)
 *   expected: max(.05,.4) + max(.45,.1) = .85 -> log2(.85/.5) = log2(1.7) */
#define NOISY "{\"secret\":{\"domain\":[\"neg\",\"pos\"],\"prior\":[0.5,0.5]},\"fields\":{" \
    "\"test\":{\"likelihood\":{\"neg\":{\"+\":0.1,\"-\":0.9},\"pos\":{\"+\":0.8,\"-\":0.2}}}," \
    "\"retest\":{\"likelihood\":{\"neg\":{\"+\":0.1,\"-\":0.9},\"pos\":{\"+\":0.8,\"-\":0.2}}}," \
    "\"slot\":{\"independent\":true}}}"

static void test_noisy(void **state)
{
    (void)state;
    mnc_bayes *m = model(NOISY);
    assert_non_null(m);
    mnc_obs p = {0, "+"}, n = {0, "-"};
    assert_double_equal(leak(m, &p, 1), 0.8300749985576875, EXACT); /* log2(16/9) */
    assert_double_equal(leak(m, &n, 1), log2(18.0 / 11.0), EXACT);
    uint16_t f = 0;
    double e;
    assert_int_equal(mnc_bayes_expected_leak(m, &f, 1, 0, &e), 0);
    assert_double_equal(e, 0.765534746362977, EXACT); /* log2(1.7) */
    /* an independent field leaks nothing and accepts any value */
    mnc_obs s = {2, "Thu 10:00"};
    assert_double_equal(leak(m, &s, 1), 0.0, EXACT);
    mnc_obs ps[2] = {{0, "+"}, {2, "anything"}};
    assert_double_equal(leak(m, ps, 2), 0.8300749985576875, EXACT);
    /* fail closed: a value outside the field's domain, an undeclared field */
    double r;
    mnc_obs bad = {0, "maybe"};
    assert_int_equal(mnc_bayes_leak(m, &bad, 1, &r), -1);
    mnc_obs undeclared = {7, "+"};
    assert_int_equal(mnc_bayes_leak(m, &undeclared, 1, &r), -1);
    assert_int_equal(mnc_bayes_field_id(m, "retest"), 1);
    assert_int_equal(mnc_bayes_field_id(m, "nope"), -1);
    mnc_bayes_free(m);
}

/* Sub-additivity. Two conditionally independent noisy tests of the same secret (NOISY):
 *   test=+, retest=+: posterior ∝ (.5·.01, .5·.64) -> V_post = 64/65,
 *   br = log2((64/65)/.5) = log2(128/65) ≈ 0.9776 < 2·log2(16/9) ≈ 1.6601.
 *   Expected leakage of {test, retest}: y ∈ {++,+-,-+,--}:
 *   max(.005,.32) + max(.045,.08) + max(.045,.08) + max(.405,.02) = .885 -> log2(1.77).
 * And two deterministic fields that reveal the same bit: joint 1 bit < 1 + 1. */
static void test_subadditive(void **state)
{
    (void)state;
    mnc_bayes *m = model(NOISY);
    assert_non_null(m);
    mnc_obs a = {0, "+"}, b = {1, "+"};
    mnc_obs ab[2] = {a, b};
    double la = leak(m, &a, 1), lb = leak(m, &b, 1), lab = leak(m, ab, 2);
    assert_double_equal(lab, 0.9776321869715455, EXACT); /* log2(128/65) */
    assert_true(lab < la + lb);
    /* the charge for the second test given the first is the difference */
    mnc_policy pol;
    memset(&pol, 0, sizeof(pol));
    pol.risk = MNC_RISK_BAYES;
    pol.risk_model = m;
    double d;
    assert_int_equal(mnc_risk_charge(&pol, &a, 1, &b, 1, &d), 0);
    assert_double_equal(d, 0.9776321869715455 - 0.8300749985576875, EXACT);
    uint16_t fs[2] = {0, 1};
    double e;
    assert_int_equal(mnc_bayes_expected_leak(m, fs, 2, 0, &e), 0);
    assert_double_equal(e, 0.8237493603082727, EXACT); /* log2(1.77) */
    mnc_bayes_free(m);

    mnc_bayes *det = model("{\"secret\":{\"domain\":[\"0\",\"1\",\"2\",\"3\"],\"prior\":\"uniform\"},\"fields\":{"
                           "\"hi\":{\"function\":{\"0\":\"lo\",\"1\":\"lo\",\"2\":\"hi\",\"3\":\"hi\"}},"
                           "\"band\":{\"function\":{\"0\":\"low\",\"1\":\"low\",\"2\":\"high\",\"3\":\"high\"}},"
                           "\"zero\":{\"function\":{\"0\":\"z\",\"1\":\"nz\",\"2\":\"nz\",\"3\":\"nz\"}}}}");
    assert_non_null(det);
    mnc_obs h1 = {0, "lo"}, h2 = {1, "low"};
    mnc_obs h12[2] = {h1, h2};
    assert_double_equal(leak(det, &h1, 1), 1.0, EXACT);
    assert_double_equal(leak(det, &h2, 1), 1.0, EXACT);
    assert_double_equal(leak(det, h12, 2), 1.0, EXACT); /* 1 < 1 + 1 */
    /* and the reverse (super-additive) case, why the ledger charges the history:
     * zero=nz alone: {1,2,3} at 1/3 -> log2(4/3); after hi=lo it pins s=1: 2 bits total,
     * so its charge given the history is 1 bit, not log2(4/3). */
    mnc_obs nz = {2, "nz"};
    assert_double_equal(leak(det, &nz, 1), 0.41503749927884376, EXACT);
    pol.risk_model = det;
    assert_int_equal(mnc_risk_charge(&pol, &h1, 1, &nz, 1, &d), 0);
    assert_double_equal(d, 1.0, EXACT);
    double e2;
    uint16_t two[2] = {0, 2};
    assert_int_equal(mnc_bayes_expected_leak(det, two, 2, 0, &e2), 0);
    /* blocks {0},{1},{2,3}: 3/4 -> log2(3) */
    assert_double_equal(e2, log2(3.0), EXACT);
    mnc_bayes_free(det);
}

static void test_bad_models(void **state)
{
    (void)state;
    expect_bad("{\"secret\":{\"domain\":[\"a\",\"b\"],\"prior\":[0.5,0.6]},\"fields\":{\"f\":{\"independent\":true}}}",
               "secret.prior: sums to 1.1");
    expect_bad("{\"secret\":{\"domain\":[\"a\",\"b\"],\"prior\":[1.0,0]},\"fields\":{\"f\":{\"independent\":true}}}",
               "secret.prior[1]: must be a probability > 0");
    expect_bad("{\"secret\":{\"domain\":[\"a\",\"a\"],\"prior\":\"uniform\"},\"fields\":{\"f\":{\"independent\":true}}}",
               "\"a\" appears twice");
    expect_bad("{\"secret\":{\"domain\":[\"a\",\"b\"],\"prior\":\"uniform\"},\"fields\":{\"f\":"
               "{\"likelihood\":{\"a\":{\"x\":0.5,\"y\":0.4},\"b\":{\"x\":1}}}}}",
               "fields.f.likelihood.a: row sums to 0.9");
    expect_bad("{\"secret\":{\"domain\":[\"a\",\"b\"],\"prior\":\"uniform\"},\"fields\":{\"f\":"
               "{\"likelihood\":{\"a\":{\"x\":1}}}}}",
               "no entry for secret \"b\"");
    expect_bad("{\"secret\":{\"domain\":[\"a\",\"b\"],\"prior\":\"uniform\"},\"fields\":{\"f\":"
               "{\"function\":{\"a\":\"x\",\"b\":\"y\",\"c\":\"z\"}}}}",
               "\"c\" is not in the secret's domain");
    expect_bad("{\"secret\":{\"domain\":[\"a\"],\"prior\":\"uniform\"},\"fields\":{\"f\":"
               "{\"function\":{\"a\":\"x\"},\"independent\":true}}}",
               "exactly one of");
    expect_bad("{\"secret\":{\"domain\":[\"a\"],\"prior\":\"uniform\"},\"fields\":{\"f\":{\"independent\":true}},"
               "\"extra\":1}", "unknown key \"extra\"");
    expect_bad("{\"secret\":{\"domain\":[],\"prior\":\"uniform\"},\"fields\":{}}", "secret.domain");
    mnc_errors e;
    mnc_errors_init(&e);
    assert_null(mnc_bayes_load_file("/nonexistent/model.json", NULL, &e));
    assert_true(e.n == 1 && strstr(e.msg[0], "No such file"));
    mnc_errors_free(&e);
}

/* ---- random release sequences ------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static double urand(void) { return (rnd() & 0xffffff) / (double)0x1000000; }

#define NS 16
#define NFN 4   /* noisy fields 0..3 */
#define NFD 2   /* deterministic fields 4..5 */
#define NV 3

static char vname[NV][4] = {"v0", "v1", "v2"};

/* Builds a random model: random prior (or uniform), random 3-valued likelihood tables,
 * deterministic fields s mod 3 and s / 6. */
static mnc_bayes *random_model(int uniform, double tab[NFN][NS][NV])
{
    char *buf = malloc(1 << 16);
    assert_non_null(buf);
    size_t o = 0;
    o += (size_t)snprintf(buf + o, (1 << 16) - o, "{\"secret\":{\"domain\":[");
    for (int s = 0; s < NS; s++)
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "%s\"s%d\"", s ? "," : "", s);
    if (uniform) {
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "],\"prior\":\"uniform\"},\"fields\":{");
    } else {
        double w[NS], sum = 0;
        for (int s = 0; s < NS; s++)
            sum += (w[s] = 0.05 + urand());
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "],\"prior\":[");
        double acc = 0;
        for (int s = 0; s < NS; s++) {
            double pv = s < NS - 1 ? w[s] / sum : 1.0 - acc;
            acc += pv;
            o += (size_t)snprintf(buf + o, (1 << 16) - o, "%s%.17g", s ? "," : "", pv);
        }
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "]},\"fields\":{");
    }
    for (int f = 0; f < NFN; f++) {
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "%s\"n%d\":{\"likelihood\":{", f ? "," : "", f);
        for (int s = 0; s < NS; s++) {
            double a = 0.05 + urand(), b = 0.05 + urand(), c = 0.05 + urand(), t = a + b + c;
            tab[f][s][0] = a / t;
            tab[f][s][1] = b / t;
            tab[f][s][2] = 1.0 - a / t - b / t;
            o += (size_t)snprintf(buf + o, (1 << 16) - o, "%s\"s%d\":{\"v0\":%.17g,\"v1\":%.17g,\"v2\":%.17g}",
                                  s ? "," : "", s, tab[f][s][0], tab[f][s][1], tab[f][s][2]);
        }
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "}}");
    }
    for (int f = 0; f < NFD; f++) {
        o += (size_t)snprintf(buf + o, (1 << 16) - o, ",\"d%d\":{\"function\":{", f);
        for (int s = 0; s < NS; s++)
            o += (size_t)snprintf(buf + o, (1 << 16) - o, "%s\"s%d\":\"v%d\"", s ? "," : "", s,
                                  f == 0 ? s % 3 : s / 6);
        o += (size_t)snprintf(buf + o, (1 << 16) - o, "}}");
    }
    o += (size_t)snprintf(buf + o, (1 << 16) - o, "}}");
    assert_true(o < (1 << 16) - 1);
    mnc_bayes *m = model(buf);
    free(buf);
    assert_non_null(m);
    return m;
}

/* One run: a fixed true secret; each round a candidate (1 or 2 random fields) is drawn with
 * values sampled from the channel; it is charged ΔR = max(0, br(H⊕d) − br(H)) and released
 * only if Σ + ΔR ≤ B. Returns 1 if every realised raw ΔR was ≥ 0. */
static int run_sequence(const mnc_policy *pol, double tab[NFN][NS][NV], int det_only, double B,
                        int rounds, int *released)
{
    mnc_obs hist[256];
    size_t nh = 0;
    int secret = (int)(rnd() % NS);
    double spent = 0;
    int all_nonneg = 1;
    *released = 0;
    for (int r = 0; r < rounds && nh + 2 <= 256; r++) {
        mnc_obs d[2];
        size_t nd = 1 + (rnd() % 2);
        for (size_t i = 0; i < nd; i++) {
            int f = det_only ? NFN + (int)(rnd() % NFD) : (int)(rnd() % (NFN + NFD));
            int v;
            if (f >= NFN) {
                v = f == NFN ? secret % 3 : secret / 6;
            } else {
                double u = urand();
                v = u < tab[f][secret][0] ? 0 : u < tab[f][secret][0] + tab[f][secret][1] ? 1 : 2;
            }
            d[i].field = (uint16_t)f;
            d[i].value = vname[v];
        }
        double delta, before, after;
        assert_int_equal(mnc_risk_charge(pol, hist, nh, d, nd, &delta), 0);
        assert_true(delta >= 0);
        memcpy(hist + nh, d, nd * sizeof(*d));
        assert_int_equal(mnc_risk_leak(pol, hist, nh, &before), 0);
        assert_int_equal(mnc_risk_leak(pol, hist, nh + nd, &after), 0);
        if (spent + delta > B)
            continue; /* refused: not realised, not charged */
        if (after - before < 0)
            all_nonneg = 0;
        nh += nd;
        spent += delta;
        (*released)++;
        assert_true(spent <= B);
        /* Σ max(0, ΔR) telescopes to an upper bound of br(H) */
        assert_true(spent >= after - 1e-12);
    }
    double br;
    assert_int_equal(mnc_risk_leak(pol, hist, nh, &br), 0);
    if (all_nonneg)
        assert_double_equal(spent, br, 1e-12);
    return all_nonneg;
}

static void test_random_sequences(void **state)
{
    (void)state;
    double tab[NFN][NS][NV];
    int equal_runs = 0, runs = 0, total_released = 0;
    const double budgets[] = {0.1, 0.2, 0.5, 1.0, 2.0, 4.0};
    for (int rep = 0; rep < 40; rep++) {
        int uniform = rep % 2;
        mnc_bayes *m = random_model(uniform, tab);
        mnc_policy pol;
        memset(&pol, 0, sizeof(pol));
        pol.risk = MNC_RISK_BAYES;
        pol.risk_model = m;
        for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
            int rel;
            /* mixed noisy + deterministic releases */
            equal_runs += run_sequence(&pol, tab, 0, budgets[b], 100, &rel);
            total_released += rel;
            runs++;
            /* deterministic releases under a uniform prior: every raw ΔR ≥ 0, so the running
             * sum must equal br(joint history) exactly */
            if (uniform) {
                assert_int_equal(run_sequence(&pol, tab, 1, budgets[b], 100, &rel), 1);
                equal_runs++;
                runs++;
            }
        }
        mnc_bayes_free(m);
    }
    print_message("# %d sequences, %d with all ΔR >= 0 (sum == br checked), %d releases\n", runs,
                  equal_runs, total_released);
    assert_true(equal_runs > 0 && total_released > 0);
}

/* mnc_bayes_charge against its reference evaluation (mnc_bayes_set_reference: the dense
 * per-observation passes) on random models, histories and candidates: the return code and the
 * double must be identical bit for bit - that is what lets `mncctl ledger verify --reprice`
 * compare recorded deltas exactly across versions. Candidates are charged in runs against one
 * history (posterior cache hits) and histories change between runs (misses); some candidates
 * contradict the history under a deterministic field (-1 from both). */
static int charge_with(mnc_bayes *m, int reference, const mnc_obs *h, size_t nh,
                       const mnc_obs *d, size_t nd, double *out)
{
    mnc_bayes_set_reference(m, reference);
    int rc = mnc_bayes_charge(m, h, nh, d, nd, out);
    mnc_bayes_set_reference(m, 0);
    return rc;
}

static void random_obs(double tab[NFN][NS][NV], int secret, mnc_obs *o)
{
    int f = (int)(rnd() % (NFN + NFD));
    int v;
    if (f >= NFN) /* a deterministic field: mostly the true value, sometimes a contradiction */
        v = rnd() % 8 ? (f == NFN ? secret % 3 : secret / 6) : (int)(rnd() % NV);
    else {
        double u = urand();
        v = u < tab[f][secret][0] ? 0 : u < tab[f][secret][0] + tab[f][secret][1] ? 1 : 2;
    }
    o->field = (uint16_t)f;
    o->value = vname[v];
}

static void test_charge_matches_reference(void **state)
{
    (void)state;
    double tab[NFN][NS][NV];
    int compared = 0, refused = 0;
    for (int rep = 0; rep < 20; rep++) {
        mnc_bayes *m = random_model(rep % 2, tab);
        for (int run = 0; run < 40; run++) {
            int secret = (int)(rnd() % NS);
            mnc_obs h[24];
            size_t nh = rnd() % 24;
            for (size_t i = 0; i < nh; i++)
                random_obs(tab, secret, &h[i]);
            for (int c = 0; c < 8; c++) {
                mnc_obs d[3];
                size_t nd = 1 + rnd() % 3;
                for (size_t i = 0; i < nd; i++)
                    random_obs(tab, secret, &d[i]);
                double fast = NAN, ref = NAN;
                int rf = charge_with(m, 0, h, nh, d, nd, &fast);
                int rr = charge_with(m, 1, h, nh, d, nd, &ref);
                assert_int_equal(rf, rr);
                if (rf != 0) {
                    refused++;
                    continue;
                }
                assert_memory_equal(&fast, &ref, sizeof(fast));
                compared++;
            }
        }
        mnc_bayes_free(m);
    }
    print_message("# %d charges identical to the reference, %d refused by both\n", compared,
                  refused);
    assert_true(compared > 1000 && refused > 0);
}

/* Histories whose weights fall below 1e-1000, where the stepwise evaluation rescales and the
 * one-pass evaluation must hand over to it: noisy tests t0..t6 that each report "a" with
 * probability 3e-300 under s0 and 7e-300 under s1.
 *   after n reports: posterior ∝ (3^n, 7^n) -> br = log2((7^n / (3^n + 7^n)) / (1/2))
 *   charge of the 7th given 6: br(7) - br(6)
 * Then random tiny likelihoods over 16 secrets. Charges equal the reference bit for bit and
 * the closed form within 1e-12. (A rescale moves the long double weights by an ulp or so, which
 * rarely survives the rounding of ΔR to double, so this checks exactness in that regime more
 * than it detects a missed hand-over.) */
static void test_charge_tiny_likelihoods(void **state)
{
    (void)state;
    volatile long double tiny = 1e-300L;
    if (!(tiny * tiny > 0)) { /* e.g. valgrind: its x87 emulation computes in double */
        print_message("# long double has no range below 1e-308 on this CPU model: the 1e-1000 "
                      "rescale regime does not exist here, not checked\n");
        return;
    }
    char buf[16384];
    size_t o = (size_t)snprintf(buf, sizeof(buf), "{\"secret\":{\"domain\":[\"s0\",\"s1\"],"
                                "\"prior\":\"uniform\"},\"fields\":{");
    for (int f = 0; f < 7; f++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o,
                              "%s\"t%d\":{\"likelihood\":{\"s0\":{\"a\":3e-300,\"b\":1},"
                              "\"s1\":{\"a\":7e-300,\"b\":1}}}", f ? "," : "", f);
    snprintf(buf + o, sizeof(buf) - o, "}}");
    mnc_bayes *m = model(buf);
    assert_non_null(m);
    mnc_obs h[7] = {{0, "a"}, {1, "a"}, {2, "a"}, {3, "a"}, {4, "a"}, {5, "a"}, {6, "a"}};
    double br6 = log2(pow(7, 6) / (pow(3, 6) + pow(7, 6)) / 0.5);
    double br7 = log2(pow(7, 7) / (pow(3, 7) + pow(7, 7)) / 0.5);
    assert_double_equal(leak(m, h, 6), br6, EXACT);
    for (size_t nh = 3; nh <= 6; nh++) {
        double fast, ref;
        assert_int_equal(charge_with(m, 0, h, nh, &h[nh], 7 - nh, &fast), 0);
        assert_int_equal(charge_with(m, 1, h, nh, &h[nh], 7 - nh, &ref), 0);
        assert_memory_equal(&fast, &ref, sizeof(fast));
        if (nh == 6)
            assert_double_equal(fast, br7 - br6, EXACT);
    }
    /* an "a" already in the history adds nothing */
    double z;
    assert_int_equal(charge_with(m, 0, h, 7, &h[2], 1, &z), 0);
    assert_double_equal(z, 0.0, 0);
    mnc_bayes_free(m);

    /* random tiny likelihoods over 16 secrets: histories of 4..7 reports cross 1e-1000 */
    int compared = 0;
    for (int rep = 0; rep < 20; rep++) {
        o = (size_t)snprintf(buf, sizeof(buf), "{\"secret\":{\"domain\":[");
        for (int sc = 0; sc < 16; sc++)
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"s%d\"", sc ? "," : "", sc);
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "],\"prior\":\"uniform\"},\"fields\":{");
        for (int f = 0; f < 7; f++) {
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"t%d\":{\"likelihood\":{",
                                  f ? "," : "", f);
            for (int sc = 0; sc < 16; sc++)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o,
                                      "%s\"s%d\":{\"a\":%.17g,\"b\":1}", sc ? "," : "", sc,
                                      (1 + 9 * urand()) * 1e-300);
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "}}");
        }
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "}}");
        assert_true(o < sizeof(buf) - 1);
        m = model(buf);
        assert_non_null(m);
        for (size_t nh = 4; nh <= 6; nh++)
            for (size_t nd = 1; nh + nd <= 7; nd++) {
                double fast, ref;
                assert_int_equal(charge_with(m, 0, h, nh, &h[nh], nd, &fast), 0);
                assert_int_equal(charge_with(m, 1, h, nh, &h[nh], nd, &ref), 0);
                assert_memory_equal(&fast, &ref, sizeof(fast));
                compared++;
            }
        mnc_bayes_free(m);
    }
    assert_true(compared > 0);
}

/* Large domain: 4096 secrets, exactness of a deterministic observation (1/16 of the domain
 * consistent, uniform prior -> log2(4096/256) = 4 bits). */
static void test_large_domain(void **state)
{
    (void)state;
    size_t cap = 1 << 20, o = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    o += (size_t)snprintf(buf + o, cap - o, "{\"secret\":{\"domain\":[");
    for (int s = 0; s < 4096; s++)
        o += (size_t)snprintf(buf + o, cap - o, "%s\"%d\"", s ? "," : "", s);
    o += (size_t)snprintf(buf + o, cap - o, "],\"prior\":\"uniform\"},\"fields\":{\"top\":{\"function\":{");
    for (int s = 0; s < 4096; s++)
        o += (size_t)snprintf(buf + o, cap - o, "%s\"%d\":\"%d\"", s ? "," : "", s, s >> 8);
    o += (size_t)snprintf(buf + o, cap - o, "}}}}");
    mnc_bayes *m = model(buf);
    free(buf);
    assert_non_null(m);
    assert_int_equal(mnc_bayes_secrets(m), 4096);
    mnc_obs t = {0, "7"};
    assert_double_equal(leak(m, &t, 1), 4.0, EXACT);
    mnc_bayes_free(m);
}

/* The policy loader: "risk": {"model": "bayes", "model_file": PATH} with PATH relative to the
 * policy file; selection-facing mnc_risk_charge then uses the model. A missing or invalid
 * model makes the whole policy fail to load. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void test_policy_bayes(void **state)
{
    (void)state;
    FILE *in = fopen("policies/scheduling.json", "r");
    if (!in)
        in = fopen("../policies/scheduling.json", "r");
    assert_non_null(in);
    static char pol[1 << 17];
    size_t n = fread(pol, 1, sizeof(pol) - 1, in);
    fclose(in);
    pol[n] = '\0';
    char *r = strstr(pol, "\"model\": \"weights\"");
    assert_non_null(r);
    char dir[] = "/tmp/mnc-qif-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ppath[64], mpath[64], bad[64];
    snprintf(ppath, sizeof(ppath), "%s/policy.json", dir);
    snprintf(mpath, sizeof(mpath), "%s/model.json", dir);
    snprintf(bad, sizeof(bad), "%s/bad.json", dir);
    /* splice in the bayes risk block */
    static char out[1 << 17];
    snprintf(out, sizeof(out), "%.*s\"model\": \"bayes\", \"model_file\": \"model.json\"%s",
             (int)(r - pol), pol, r + strlen("\"model\": \"weights\""));
    write_file(ppath, out);
    write_file(mpath, "{\"secret\":{\"domain\":[\"oncology\",\"dental\",\"personal\",\"travel\"],"
                      "\"prior\":\"uniform\"},\"fields\":{"
                      "\"reason\":{\"function\":{\"oncology\":\"oncology appointment\",\"dental\":\"dentist\","
                      "\"personal\":\"personal matter\",\"travel\":\"flight\"}},"
                      "\"reason_class\":{\"function\":{\"oncology\":\"medical\",\"dental\":\"medical\","
                      "\"personal\":\"personal\",\"travel\":\"travel\"}},"
                      "\"busy_slot\":{\"independent\":true},\"selected_slot\":{\"independent\":true},"
                      "\"slot_feasible\":{\"independent\":true}}}");
    mnc_errors e;
    mnc_errors_init(&e);
    const char *paths[1] = {ppath};
    mnc_policy *p = mnc_policy_load_files(paths, 1, &e);
    for (int i = 0; i < e.n; i++)
        print_message("# %s\n", e.msg[i]);
    assert_non_null(p);
    assert_int_equal(p->risk, MNC_RISK_BAYES);
    assert_non_null(p->risk_model);
    int rc_id = mnc_policy_field(p, "reason_class"), slot = mnc_policy_field(p, "selected_slot");
    int reason = mnc_policy_field(p, "reason");
    mnc_obs h = {(uint16_t)rc_id, "medical"};
    mnc_obs d = {(uint16_t)reason, "dentist"};
    mnc_obs s = {(uint16_t)slot, "Thu 10:00"};
    double v;
    /* medical: 2 of 4 -> 1 bit; then the full reason pins it: +1 bit; a slot: 0 */
    assert_int_equal(mnc_risk_leak(p, &h, 1, &v), 0);
    assert_double_equal(v, 1.0, EXACT);
    assert_int_equal(mnc_risk_charge(p, &h, 1, &d, 1, &v), 0);
    assert_double_equal(v, 1.0, EXACT);
    assert_int_equal(mnc_risk_charge(p, &h, 1, &s, 1, &v), 0);
    assert_double_equal(v, 0.0, EXACT);
    mnc_obs unknown = {(uint16_t)reason, "a value the model does not declare"};
    assert_int_equal(mnc_risk_charge(p, &h, 1, &unknown, 1, &v), -1);
    mnc_policy_free(p);
    mnc_errors_free(&e);
    /* a model naming a field the policy does not have: the policy does not load */
    write_file(mpath, "{\"secret\":{\"domain\":[\"a\"],\"prior\":\"uniform\"},\"fields\":{\"nosuch\":{\"independent\":true}}}");
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(paths, 1, &e));
    assert_true(e.n >= 1 && strstr(e.msg[e.n - 1], "fields.nosuch: not a field of the policy"));
    mnc_errors_free(&e);
    /* missing model file */
    unlink(mpath);
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(paths, 1, &e));
    assert_true(e.n >= 1 && strstr(e.msg[e.n - 1], "model.json: No such file"));
    mnc_errors_free(&e);
    unlink(ppath);
    (void)bad;
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_noisy),
        cmocka_unit_test(test_subadditive),
        cmocka_unit_test(test_bad_models),
        cmocka_unit_test(test_random_sequences),
        cmocka_unit_test(test_charge_matches_reference),
        cmocka_unit_test(test_charge_tiny_likelihoods),
        cmocka_unit_test(test_large_domain),
        cmocka_unit_test(test_policy_bayes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
