// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_bayes.c - Bayes (min-entropy) charge latency for an 8-candidate family.
 *
 * For secret domains of 16, 256 and 4096 values: a model with 3 deterministic fields and 3
 * noisy 4-valued likelihood tables; a subject history of 4 realised observations; a family of
 * 8 candidates carrying 1-3 fields each. One "family" sample = ΔR for all 8 candidates given
 * the history (what MNC-L selection does per request); consecutive samples alternate between
 * two histories so each sample evaluates its history afresh. Prints p50/p99 per family and per
 * charge. Baseline in the same run: the weights model on the same family.
 * --quick: fewer samples (CI). Target: family p50 <= 20 us at 256.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnc/risk.h"
#include "mnc/risk_bayes.h"

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

/* Appends with bounds; exits on overflow (a benchmark bug). */
static void app(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static void app(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < *cap - *len) {
            *len += (size_t)n;
            return;
        }
        *cap *= 2;
        if (!(*buf = realloc(*buf, *cap)))
            exit(1);
    }
}

static mnc_bayes *make_model(int ns)
{
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    if (!b)
        exit(1);
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
    cJSON *j = cJSON_ParseWithLength(b, len);
    free(b);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_bayes *m = j ? mnc_bayes_from_json(j, NULL, "bench", &e) : NULL;
    if (!m)
        fprintf(stderr, "bench_bayes: model: %s\n", e.n ? e.msg[0] : "parse error");
    mnc_errors_free(&e);
    cJSON_Delete(j);
    return m;
}

/* candidates: field ids (0..2 deterministic, 3..5 noisy), values chosen consistent with s7 */
typedef struct cand {
    mnc_obs o[3];
    size_t n;
} cand;

static void bench(int ns, int samples)
{
    mnc_bayes *m = make_model(ns);
    if (!m)
        exit(1);
    mnc_field fields[6] = {{"d0", 1}, {"d1", 1}, {"d2", 1}, {"n0", 0.5}, {"n1", 0.5}, {"n2", 0.5}};
    mnc_policy bayes, weights;
    memset(&bayes, 0, sizeof(bayes));
    bayes.risk = MNC_RISK_BAYES;
    bayes.risk_model = m;
    bayes.fields = fields;
    bayes.n_fields = 6;
    weights = bayes;
    weights.risk = MNC_RISK_WEIGHTS;
    weights.risk_model = NULL;
    /* true secret s7: d0 = 1, d1 = 1, d2 = 2 */
    /* two histories used alternately, so every family sample pays for evaluating its
     * history once (the per-thread posterior cache only helps within a family) */
    mnc_obs hists[2][4] = {{{3, "v1"}, {0, "v1"}, {4, "v0"}, {5, "v2"}},
                           {{3, "v2"}, {0, "v1"}, {4, "v1"}, {5, "v0"}}};
    cand c[8] = {
        {{{1, "v1"}}, 1}, {{{2, "v2"}}, 1}, {{{3, "v3"}}, 1}, {{{1, "v1"}, {2, "v2"}}, 2},
        {{{4, "v2"}, {5, "v1"}}, 2}, {{{1, "v1"}, {3, "v0"}}, 2},
        {{{1, "v1"}, {2, "v2"}, {4, "v3"}}, 3}, {{{0, "v1"}}, 1},
    };
    double *fam = malloc((size_t)samples * sizeof(double));
    double *wfam = malloc((size_t)samples * sizeof(double));
    if (!fam || !wfam)
        exit(1);
    double sink = 0;
    for (int pass = 0; pass < 2; pass++) {
        const mnc_policy *p = pass == 0 ? &bayes : &weights;
        double *out = pass == 0 ? fam : wfam;
        for (int i = 0; i < samples; i++) {
            const mnc_obs *hist = hists[i & 1];
            double t0 = now_us();
            for (int k = 0; k < 8; k++) {
                double d;
                if (mnc_risk_charge(p, hist, 4, c[k].o, c[k].n, &d) != 0) {
                    fprintf(stderr, "bench_bayes: charge failed\n");
                    exit(1);
                }
                sink += d;
            }
            out[i] = now_us() - t0;
        }
        qsort(out, (size_t)samples, sizeof(double), cmpd);
    }
    printf("domain %5d: 8-candidate family p50 %8.2f us  p99 %8.2f us  (per charge p50 %6.2f us) | "
           "weights model p50 %.2f us\n",
           ns, fam[samples / 2], fam[samples * 99 / 100], fam[samples / 2] / 8,
           wfam[samples / 2]);
    if (ns == 256)
        printf("target family p50 <= 20 us at 256: %s\n", fam[samples / 2] <= 20 ? "met" : "NOT met");
    if (!isfinite(sink))
        printf("(sink %g)\n", sink);
    free(fam);
    free(wfam);
    mnc_bayes_free(m);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int samples = quick ? 500 : 20000;
    bench(16, samples);
    bench(256, samples);
    bench(4096, quick ? 100 : 2000);
    return 0;
}
