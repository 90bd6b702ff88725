// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_bayes.c - MNC-L selection (mnc_select) over an 8-candidate family with the Bayes
 * (min-entropy) risk model, against a subject history.
 *
 * For secret domains of 16, 256 and 4096 values: a model with 3 deterministic fields
 * (s mod 2, 3, 5) and 3 noisy 4-valued likelihood tables, loaded through a real policy file
 * ("risk": {"model": "bayes", "model_file": ...}); a family of 8 forms carrying 1-3 fields
 * each; a subject history of 4 realised observations. One sample = one mnc_select call, what
 * mncd does per MNC-L request. Consecutive samples alternate between two histories so every
 * sample evaluates its history afresh (the per-thread posterior cache only helps within one
 * selection).
 *
 * Baseline, measured in the same run and interleaved sample by sample: the same mnc_select with
 * the model in reference mode (mnc_bayes_set_reference: the previous dense evaluation). It is
 * also the oracle: every candidate's risk must equal the reference's bit for bit, the chosen
 * candidate must be the same, and every risk must match the definition
 * max(0, br(H ⊕ d) − br(H)) from mnc_risk_leak within 1e-12. A mismatch exits 1.
 * Also printed: mnc_select with the weights model on the same family (selection's own cost).
 * --quick: fewer samples (CI). Targets: p50 <= 20 us at domain 256, <= 200 us at 4096.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mnc/risk.h"
#include "mnc/risk_bayes.h"
#include "mnc/select.h"
#include "mnc_bench.h"

#define EXACT 1e-12

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_bayes: %s\n", what);
    exit(1);
}

/* Appends with bounds, growing the buffer; exits on OOM. */
static void app(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void app(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (n < 0)
            die("vsnprintf failed");
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return;
        }
        *cap *= 2;
        if (!(*buf = realloc(*buf, *cap)))
            die("out of memory");
    }
}

/* Writes the model file for ns secrets to path. */
static void write_model(const char *path, int ns)
{
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    if (!b)
        die("out of memory");
    app(&b, &len, &cap, "{\"secret\":{\"domain\":[");
    for (int s = 0; s < ns; s++)
        app(&b, &len, &cap, "%s\"s%d\"", s ? "," : "", s);
    app(&b, &len, &cap, "],\"prior\":\"uniform\"},\"fields\":{");
    const int mods[3] = {2, 3, 5};
    for (int f = 0; f < 3; f++) {
        app(&b, &len, &cap, "%s\"d%d\":{\"function\":{", f ? "," : "", f);
        for (int s = 0; s < ns; s++)
            app(&b, &len, &cap, "%s\"s%d\":\"v%d\"", s ? "," : "", s, s % mods[f]);
        app(&b, &len, &cap, "}}");
    }
    for (int f = 0; f < 3; f++) {
        app(&b, &len, &cap, ",\"n%d\":{\"likelihood\":{", f);
        for (int s = 0; s < ns; s++) {
            double w[4], t = 0;
            for (int v = 0; v < 4; v++)
                t += (w[v] = 0.05 + urand());
            app(&b, &len, &cap, "%s\"s%d\":{\"v0\":%.17g,\"v1\":%.17g,\"v2\":%.17g,\"v3\":%.17g}",
                s ? "," : "", s, w[0] / t, w[1] / t, w[2] / t, 1.0 - w[0] / t - w[1] / t - w[2] / t);
        }
        app(&b, &len, &cap, "}}");
    }
    app(&b, &len, &cap, "}}");
    FILE *fp = fopen(path, "w");
    if (!fp || fwrite(b, 1, len, fp) != len || fclose(fp) != 0)
        die("cannot write the model file");
    free(b);
}

/* The policy: fields d0..d2, n0..n2; one contract to "coordinator" over all of them whose
 * family has the 8 forms below. */
static mnc_policy *load_policy(const char *risk)
{
    char json[4096];
    int n = snprintf(json, sizeof(json),
        "{\"mnc_policy\":1,\"name\":\"bench_bayes\",\"risk\":%s,"
        "\"agents\":[{\"name\":\"worker\"},{\"name\":\"coordinator\"}],"
        "\"fields\":[{\"name\":\"d0\",\"weight\":1},{\"name\":\"d1\",\"weight\":1},"
        "{\"name\":\"d2\",\"weight\":1},{\"name\":\"n0\",\"weight\":0.5},"
        "{\"name\":\"n1\",\"weight\":0.5},{\"name\":\"n2\",\"weight\":0.5}],"
        "\"families\":[{\"name\":\"fam\",\"forms\":["
        "{\"name\":\"c0\",\"fields\":[\"d1\"]},{\"name\":\"c1\",\"fields\":[\"d2\"]},"
        "{\"name\":\"c2\",\"fields\":[\"n0\"]},{\"name\":\"c3\",\"fields\":[\"d1\",\"d2\"]},"
        "{\"name\":\"c4\",\"fields\":[\"n1\",\"n2\"]},{\"name\":\"c5\",\"fields\":[\"d1\",\"n0\"]},"
        "{\"name\":\"c6\",\"fields\":[\"d1\",\"d2\",\"n1\"]},{\"name\":\"c7\",\"fields\":[\"d0\"]}]}],"
        "\"contracts\":[{\"id\":\"c\",\"purpose\":\"p\",\"issuers\":[\"worker\"],"
        "\"recipient\":\"coordinator\",\"fields\":[\"d0\",\"d1\",\"d2\",\"n0\",\"n1\",\"n2\"],"
        "\"lifetime\":{\"seconds\":3600},\"family\":\"fam\"}]}",
        risk);
    if (n < 0 || (size_t)n >= sizeof(json))
        die("policy text too long");
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("bench_bayes", json, (size_t)n, &e);
    for (int i = 0; i < e.n; i++)
        fprintf(stderr, "bench_bayes: %s\n", e.msg[i]);
    mnc_errors_free(&e);
    if (!p)
        die("policy does not load");
    return p;
}

typedef struct figures {
    double p50, p99;
} figures;

static figures summarize(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(*t), cmpd);
    return (figures){t[n / 2], t[(n * 99) / 100]};
}

/* Obs list of history hist plus the candidate's fields with their state values. */
static size_t joint(const mnc_obs *hist, size_t nh, const mnc_scored *sc, const mnc_state *st,
                    mnc_obs *out)
{
    memcpy(out, hist, nh * sizeof(*hist));
    size_t k = nh;
    for (int f = mnc_set_next(&sc->fields, -1); f >= 0; f = mnc_set_next(&sc->fields, f))
        out[k++] = (mnc_obs){.field = (uint16_t)f, .value = st->value[f]};
    return k;
}

/* Checks one selection: same verdicts, chosen and bit-identical risks as the reference, and
 * every risk equal to the definition within EXACT. Returns the largest |risk - definition|. */
static double check(const mnc_policy *p, const mnc_selection *s, const mnc_selection *ref,
                    const mnc_obs *hist, size_t nh, const mnc_state *st)
{
    if (s->n != 8 || ref->n != 8 || s->chosen != ref->chosen || s->chosen < 0)
        die("selection differs from the reference (count or choice)");
    double worst = 0;
    for (int i = 0; i < s->n; i++) {
        const mnc_scored *a = &s->c[i], *b = &ref->c[i];
        if (a->verdict != b->verdict || memcmp(&a->risk, &b->risk, sizeof(a->risk)) != 0) {
            fprintf(stderr, "bench_bayes: %s: risk %.17g, reference %.17g\n", a->name, a->risk,
                    b->risk);
            die("risk differs from the reference");
        }
        mnc_obs all[16];
        size_t k = joint(hist, nh, a, st, all);
        double before, after;
        if (mnc_risk_leak(p, hist, nh, &before) != 0 || mnc_risk_leak(p, all, k, &after) != 0)
            die("mnc_risk_leak failed");
        double def = after - before > 0 ? after - before : 0;
        double err = fabs(a->risk - def);
        if (!(err <= EXACT)) {
            fprintf(stderr, "bench_bayes: %s: risk %.17g, definition %.17g\n", a->name, a->risk,
                    def);
            die("risk differs from the definition");
        }
        if (err > worst)
            worst = err;
    }
    return worst;
}

static void bench(const char *dir, int ns, int samples, double target)
{
    char mpath[256], risk[320];
    snprintf(mpath, sizeof(mpath), "%s/model-%d.json", dir, ns);
    write_model(mpath, ns);
    snprintf(risk, sizeof(risk), "{\"model\":\"bayes\",\"model_file\":\"%s\"}", mpath);
    mnc_policy *bayes = load_policy(risk);
    mnc_policy *weights = load_policy("{\"model\":\"weights\"}");
    if (unlink(mpath) != 0)
        die("cannot remove the model file");
    if (bayes->risk != MNC_RISK_BAYES || !bayes->risk_model ||
        mnc_bayes_secrets(bayes->risk_model) != (size_t)ns)
        die("the policy did not load the bayes model");

    /* the subject's true secret is s7: d0 = v1, d1 = v1, d2 = v2 */
    mnc_state st;
    mnc_state_init(&st);
    static const char *const names[6] = {"d0", "d1", "d2", "n0", "n1", "n2"};
    static const char *const vals[6] = {"v1", "v1", "v2", "v3", "v2", "v1"};
    for (int f = 0; f < 6; f++)
        if (mnc_state_set(&st, mnc_policy_field(bayes, names[f]), vals[f]) != 0)
            die("state");
    int d0 = mnc_policy_field(bayes, "d0"), n0 = mnc_policy_field(bayes, "n0");
    int n1 = mnc_policy_field(bayes, "n1"), n2 = mnc_policy_field(bayes, "n2");
    mnc_obs hists[2][4] = {
        {{(uint16_t)n0, "v1"}, {(uint16_t)d0, "v1"}, {(uint16_t)n1, "v0"}, {(uint16_t)n2, "v2"}},
        {{(uint16_t)n0, "v2"}, {(uint16_t)d0, "v1"}, {(uint16_t)n1, "v1"}, {(uint16_t)n2, "v0"}}};
    mnc_select_req req = {.contract = mnc_policy_contract(bayes, "c"),
                          .recipient = mnc_policy_agent(bayes, "coordinator"),
                          .state = &st, .n_history = 4};

    double *t_new = malloc((size_t)samples * sizeof(double));
    double *t_ref = malloc((size_t)samples * sizeof(double));
    double *t_w = malloc((size_t)samples * sizeof(double));
    if (!t_new || !t_ref || !t_w)
        die("out of memory");
    static mnc_selection s_new, s_ref, s_w;
    double worst = 0;
    for (int i = 0; i < samples; i++) {
        req.history = hists[i & 1];
        double t0 = now_us();
        mnc_reason r1 = mnc_select(bayes, &req, &s_new);
        double t1 = now_us();
        mnc_bayes_set_reference(bayes->risk_model, 1);
        double t2 = now_us();
        mnc_reason r2 = mnc_select(bayes, &req, &s_ref);
        double t3 = now_us();
        mnc_bayes_set_reference(bayes->risk_model, 0);
        mnc_reason r3 = mnc_select(weights, &req, &s_w);
        double t4 = now_us();
        if (r1 != MNC_OK || r2 != MNC_OK || r3 != MNC_OK)
            die("mnc_select did not choose");
        t_new[i] = t1 - t0;
        t_ref[i] = t3 - t2;
        t_w[i] = t4 - t3;
        if (i < 4 || i == samples - 1) { /* both histories, checked at the start and end */
            double e = check(bayes, &s_new, &s_ref, req.history, 4, &st);
            if (e > worst)
                worst = e;
        }
    }
    figures fn = summarize(t_new, samples), fr = summarize(t_ref, samples);
    figures fw = summarize(t_w, samples);
    printf("domain %5d: mnc_select 8 candidates p50 %8.2f us p99 %8.2f us | reference p50 %8.2f us "
           "p99 %8.2f us | ratio %.2fx faster | weights model p50 %.2f us | risks == reference "
           "bit for bit, max |risk - definition| %.1e\n",
           ns, fn.p50, fn.p99, fr.p50, fr.p99, fr.p50 / fn.p50, fw.p50, worst);
    if (target > 0)
        printf("target p50 <= %.0f us at domain %d: %s (%.2f us)\n", target, ns,
               fn.p50 <= target ? "met" : "missed", fn.p50);
    free(t_new);
    free(t_ref);
    free(t_w);
    mnc_state_free(&st);
    mnc_policy_free(bayes);
    mnc_policy_free(weights);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    char dir[] = "/tmp/bench_bayes.XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp failed");
    int samples = quick ? 1000 : 20000;
    bench(dir, 16, samples, 0);
    bench(dir, 256, samples, 20);
    bench(dir, 4096, quick ? 200 : 2000, 200);
    if (rmdir(dir) != 0)
        die("cannot remove the temporary directory");
    return 0;
}
