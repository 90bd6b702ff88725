// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* risk_bayes.c - exact min-entropy leakage over a declared secret domain (see risk_bayes.h):
 * evaluation (leakage, posterior, expected leakage, ΔR with a per-thread cache). The model is
 * read by risk_bayes_load.c. */
#include "mnc_bench.h"
#include "risk_bayes_int.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- evaluation --------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Resolves observations to sorted unique (field index << 32 | value index) pairs, skipping
 * independent fields. -1 on an undeclared field or an out-of-domain value. */
static int resolve(const mnc_bayes *m, const mnc_obs *h, size_t nh, uint64_t *pairs, size_t *np)
{
    size_t k = 0;
    for (size_t i = 0; i < nh; i++) {
        if (h[i].field >= MNC_MAX_FIELDS || !h[i].value)
            return -1;
        int fi = m->id_to_f[h[i].field];
        if (fi < 0)
            return -1;
        const bfield *f = &m->f[fi];
        if (f->kind == K_INDEP)
            continue;
        long v = mnc_bayes_find_value(f->values, f->nv, h[i].value);
        if (v < 0)
            return -1;
        pairs[k++] = ((uint64_t)fi << 32) | (uint64_t)v;
    }
    qsort(pairs, k, sizeof(*pairs), cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || pairs[u - 1] != pairs[i])
            pairs[u++] = pairs[i];
    *np = u;
    return 0;
}

/* w[s] ∝ p(s | H), scaled so that max w = 1 after every step (no underflow). Returns 0, or
 * -1 if the history has probability 0. *sum receives Σ w. */
static int weigh(const mnc_bayes *m, const uint64_t *pairs, size_t np, long double *w, long double *sum)
{
    size_t ns = m->ns;
    for (size_t s = 0; s < ns; s++)
        w[s] = m->prior[s];
    for (size_t i = 0; i < np; i++) {
        const bfield *f = &m->f[pairs[i] >> 32];
        uint32_t v = (uint32_t)pairs[i];
        long double mx = 0;
        if (f->kind == K_FUNC) {
            for (size_t s = 0; s < ns; s++) {
                if (f->fn[s] != v)
                    w[s] = 0;
                else if (w[s] > mx)
                    mx = w[s];
            }
        } else {
            const long double *row = f->lik + (size_t)v * ns;
            for (size_t s = 0; s < ns; s++) {
                w[s] *= row[s];
                if (w[s] > mx)
                    mx = w[s];
            }
        }
        if (!(mx > 0))
            return -1;
        if (mx < 1e-1000L) {
            long double inv = 1.0L / mx;
            for (size_t s = 0; s < ns; s++)
                w[s] *= inv;
        }
    }
    long double t = 0;
    for (size_t s = 0; s < ns; s++)
        t += w[s];
    *sum = t;
    return 0;
}

/* Runs fn over the posterior weights; shared by leak and posterior. */
static int with_weights(const mnc_bayes *m, const mnc_obs *h, size_t nh, long double *w, long double *sum)
{
    uint64_t stackp[64];
    uint64_t *pairs = nh <= 64 ? stackp : malloc(nh * sizeof(*pairs));
    if (!pairs)
        return -1;
    size_t np = 0;
    int rc = resolve(m, h, nh, pairs, &np);
    if (rc == 0)
        rc = weigh(m, pairs, np, w, sum);
    if (pairs != stackp)
        free(pairs);
    return rc;
}

int mnc_bayes_leak(const void *model, const mnc_obs *h, size_t nh, double *out)
{
    const mnc_bayes *m = model;
    if (!m || !out || (nh && !h))
        return -1;
    long double stackw[512];
    long double *w = m->ns <= 512 ? stackw : malloc(m->ns * sizeof(*w));
    if (!w)
        return -1;
    long double sum;
    int rc = with_weights(m, h, nh, w, &sum);
    if (rc == 0) {
        long double mx = 0;
        for (size_t s = 0; s < m->ns; s++)
            if (w[s] > mx)
                mx = w[s];
        long double r = log2l((mx / sum) / m->vprior);
        if (isfinite(r))
            *out = (double)r;
        else
            rc = -1;
    }
    if (w != stackw)
        free(w);
    return rc;
}

int mnc_bayes_posterior(const mnc_bayes *m, const mnc_obs *h, size_t nh, long double *post, size_t n)
{
    if (!m || !post || n < m->ns || (nh && !h))
        return -1;
    long double sum;
    if (with_weights(m, h, nh, post, &sum) != 0)
        return -1;
    for (size_t s = 0; s < m->ns; s++)
        post[s] /= sum;
    return 0;
}

typedef struct sortctx {
    const mnc_bayes *m;
    const uint32_t *fi;
    size_t k;
} sortctx;

static int cmp_tuple(const void *a, const void *b, void *arg)
{
    const sortctx *c = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    for (size_t i = 0; i < c->k; i++) {
        uint32_t vx = c->m->f[c->fi[i]].fn[x], vy = c->m->f[c->fi[i]].fn[y];
        if (vx != vy)
            return vx < vy ? -1 : 1;
    }
    return 0;
}

int mnc_bayes_expected_leak(const mnc_bayes *m, const uint16_t *fields, size_t nf, int uniform_prior, double *out)
{
    if (!m || !out || (nf && !fields))
        return -1;
    size_t ns = m->ns;
    uint32_t fi[MNC_MAX_FIELDS];
    size_t k = 0;
    bool all_func = true;
    for (size_t i = 0; i < nf; i++) {
        if (fields[i] >= MNC_MAX_FIELDS || m->id_to_f[fields[i]] < 0)
            return -1;
        uint32_t x = (uint32_t)m->id_to_f[fields[i]];
        if (m->f[x].kind == K_INDEP)
            continue;
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup |= fi[j] == x;
        if (dup)
            continue;
        fi[k++] = x;
        if (m->f[x].kind != K_FUNC)
            all_func = false;
    }
    long double u = 1.0L / (long double)ns;
#define PRIOR(s) (uniform_prior ? u : m->prior[s])
    long double vprior = uniform_prior ? u : m->vprior;
    long double total = 0;
    if (all_func) {
        /* Deterministic channel: the outputs partition S; Σ_y max_s π(s)P(y|s) is the sum over
         * blocks of the block's largest prior. Sort secrets by output tuple. */
        uint32_t *idx = malloc(ns * sizeof(*idx));
        if (!idx)
            return -1;
        for (size_t s = 0; s < ns; s++)
            idx[s] = (uint32_t)s;
        sortctx c = {m, fi, k};
        qsort_r(idx, ns, sizeof(*idx), cmp_tuple, &c);
        long double bmax = 0;
        for (size_t s = 0; s < ns; s++) {
            if (s > 0 && cmp_tuple(&idx[s - 1], &idx[s], &c) != 0) {
                total += bmax;
                bmax = 0;
            }
            if (PRIOR(idx[s]) > bmax)
                bmax = PRIOR(idx[s]);
        }
        total += bmax;
        free(idx);
    } else {
        /* General case: enumerate joint outputs y (odometer over the fields' domains). */
        unsigned long long ny = 1;
        for (size_t i = 0; i < k; i++) {
            ny *= m->f[fi[i]].nv;
            if (ny * ns > MAX_ENUM)
                return -1;
        }
        uint32_t y[MNC_MAX_FIELDS] = {0};
        for (unsigned long long it = 0; it < ny; it++) {
            long double best = 0;
            for (size_t s = 0; s < ns; s++) {
                long double pr = PRIOR(s);
                for (size_t i = 0; i < k && pr > 0; i++) {
                    const bfield *f = &m->f[fi[i]];
                    pr *= f->kind == K_FUNC ? (f->fn[s] == y[i] ? 1.0L : 0.0L) : f->lik[(size_t)y[i] * ns + s];
                }
                if (pr > best)
                    best = pr;
            }
            total += best;
            for (size_t i = 0; i < k; i++) { /* next y */
                if (++y[i] < m->f[fi[i]].nv)
                    break;
                y[i] = 0;
            }
        }
    }
#undef PRIOR
    long double r = log2l(total / vprior);
    if (!isfinite(r))
        return -1;
    *out = (double)r;
    return 0;
}

/* ---- ΔR with a per-thread cache of the history's posterior --------------------------- */

/* Selection charges every candidate of a family against the same history H, so the posterior
 * weights of H are kept per thread, keyed by the model's uid and H's exact resolved
 * (field, value) pairs - compared in full, never by hash, so a stale or colliding entry
 * cannot be used. The cache also keeps H's support (the secrets with weight > 0, ascending)
 * so a candidate is evaluated over the secrets H left possible, not over the whole domain. */
typedef struct hcache {
    uint64_t uid;
    uint64_t *pairs;
    size_t np, pcap;
    long double *w; /* w[s] as weigh() leaves it (reference, or history_weigh's fallback) */
    size_t wcap;
    uint32_t *sup;   /* support of w, ascending */
    long double *sw; /* sw[j] = w[sup[j]] */
    size_t nsup, scap;
    long double sum, max;
    bool valid;
} hcache;

static __thread hcache hc;     /* mnc_bayes_charge */
static __thread hcache hc_ref; /* the reference evaluation (mnc_bayes_set_reference) */

static int ensure(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < n)
        nc *= 2;
    void *np = realloc(*p, nc * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

/* Resolved pairs split by kind, each kind in the pairs' (sorted) order. A deterministic pair
 * only selects secrets (weight kept or set to 0), so applying all of them first and then the
 * likelihood factors in their original order yields the same long double product, rounding
 * for rounding, as applying the pairs one by one in sorted order as weigh() does. */
typedef struct plan {
    size_t nfn, ntab;
    const uint32_t **fn;     /* fn[i][s]: value index of secret s under the i-th function */
    uint32_t *fv;            /* the observed value index of the i-th function */
    const long double **row; /* row[t][s] = P(v_t | s) of the t-th likelihood pair */
    const void *stackp[32];
    uint32_t stackv[16];
    void *heap;
} plan;

/* Builds the plan for n resolved pairs (stack for up to 16, else one allocation). */
static int plan_make(const mnc_bayes *m, const uint64_t *pairs, size_t n, plan *pl)
{
    pl->nfn = pl->ntab = 0;
    pl->heap = NULL;
    if (n <= 16) {
        pl->fn = (const uint32_t **)pl->stackp;
        pl->row = (const long double **)(pl->stackp + 16);
        pl->fv = pl->stackv;
    } else {
        if (n > SIZE_MAX / (2 * sizeof(void *) + sizeof(uint32_t)))
            return -1;
        char *h = malloc(n * (2 * sizeof(void *) + sizeof(uint32_t)));
        if (!h)
            return -1;
        pl->heap = h;
        pl->fn = (const uint32_t **)(void *)h;
        pl->row = (const long double **)(void *)(h + n * sizeof(void *));
        pl->fv = (uint32_t *)(void *)(h + 2 * n * sizeof(void *));
    }
    for (size_t i = 0; i < n; i++) {
        const bfield *f = &m->f[pairs[i] >> 32];
        uint32_t v = (uint32_t)pairs[i];
        if (f->kind == K_FUNC) {
            pl->fn[pl->nfn] = f->fn;
            pl->fv[pl->nfn++] = v;
        } else {
            pl->row[pl->ntab++] = f->lik + (size_t)v * m->ns;
        }
    }
    return 0;
}

static void plan_free(plan *pl) { free(pl->heap); }

/* π(s)·Π P(v_i|s) for one secret under a plan: 0 as soon as a function disagrees. */
static inline long double plan_apply(const plan *pl, size_t s, long double x)
{
    for (size_t i = 0; i < pl->nfn; i++)
        if (pl->fn[i][s] != pl->fv[i])
            return 0;
    for (size_t t = 0; t < pl->ntab; t++)
        x *= pl->row[t][s];
    return x;
}

/* Fills the support (c->sup, c->sw), sum and max for H's pairs, equal to what weigh() and
 * a scan of its weights give, bit for bit: the one-pass product per secret is the same sequence
 * of long double multiplications, and the sum is accumulated in the same secret order (a zero
 * weight adds +0, which changes no sum). weigh() rescales only when a step's maximum falls below
 * 1e-1000; step maxima never grow by more than a factor (1 + 1e-9) per step (table cells are at
 * most 1 + 1e-9, the row-sum tolerance), so a final maximum >= 1e-990 proves that no rescale
 * happened. Otherwise (or at probability 0) the stepwise weigh() decides, into c->w. */
static int history_weigh(const mnc_bayes *m, const uint64_t *pairs, size_t np, hcache *c)
{
    size_t ns = m->ns, k = 0;
    plan pl;
    if (plan_make(m, pairs, np, &pl) != 0)
        return -1;
    long double sum = 0, mx = 0;
    for (size_t s = 0; s < ns; s++) {
        long double x = plan_apply(&pl, s, m->prior[s]);
        if (!(x > 0))
            continue;
        c->sup[k] = (uint32_t)s;
        c->sw[k++] = x;
        sum += x;
        if (x > mx)
            mx = x;
    }
    plan_free(&pl);
    /* mx > 0 tested on its own: under valgrind, whose x87 emulation has double range,
     * 1e-990L reads as 0 */
    if (!(mx > 0) || !(mx >= 1e-990L)) {
        if (ensure((void **)&c->w, &c->wcap, ns, sizeof(*c->w)) != 0 || weigh(m, pairs, np, c->w, &sum) != 0)
            return -1;
        mx = 0;
        k = 0;
        for (size_t s = 0; s < ns; s++)
            if (c->w[s] > 0) {
                c->sup[k] = (uint32_t)s;
                c->sw[k++] = c->w[s];
                if (c->w[s] > mx)
                    mx = c->w[s];
            }
    }
    c->nsup = k;
    c->sum = sum;
    c->max = mx;
    return 0;
}

/* Looks up (or computes into) cache c the posterior of H's resolved pairs ph[0..nph-1];
 * with_support selects history_weigh (support kept) or the reference weigh(). */
static int cache_history(const mnc_bayes *m, const uint64_t *ph, size_t nph, hcache *c, bool with_support)
{
    if (c->valid && c->uid == m->uid && c->np == nph && (nph == 0 || memcmp(c->pairs, ph, nph * sizeof(*ph)) == 0))
        return 0;
    c->valid = false;
    if (ensure((void **)&c->pairs, &c->pcap, nph ? nph : 1, sizeof(*c->pairs)) != 0)
        return -1;
    if (with_support) {
        size_t cap = c->scap; /* sup and sw share scap: both grow from it by the same steps */
        if (ensure((void **)&c->sup, &cap, m->ns, sizeof(*c->sup)) != 0 ||
            ensure((void **)&c->sw, &c->scap, m->ns, sizeof(*c->sw)) != 0)
            return -1;
        if (history_weigh(m, ph, nph, c) != 0)
            return -1;
    } else {
        if (ensure((void **)&c->w, &c->wcap, m->ns, sizeof(*c->w)) != 0 || weigh(m, ph, nph, c->w, &c->sum) != 0)
            return -1;
        c->max = 0;
        for (size_t s = 0; s < m->ns; s++)
            if (c->w[s] > c->max)
                c->max = c->w[s];
    }
    memcpy(c->pairs, ph, nph * sizeof(*ph));
    c->np = nph;
    c->uid = m->uid;
    c->valid = true;
    return 0;
}

/* The reference evaluation of d's new pairs pd[0..k-1] against the cached H: copy H's
 * weights, apply each pair over the whole domain, then sum and take the maximum. */
static void eval_dense(const mnc_bayes *m, const hcache *c, const uint64_t *pd, size_t k, long double *w,
                       long double *sum, long double *max)
{
    long double t = 0, mx = 0;
    memcpy(w, c->w, m->ns * sizeof(*w));
    for (size_t i = 0; i < k; i++) {
        const bfield *f = &m->f[pd[i] >> 32];
        uint32_t v = (uint32_t)pd[i];
        if (f->kind == K_FUNC) {
            for (size_t s = 0; s < m->ns; s++)
                if (f->fn[s] != v)
                    w[s] = 0;
        } else {
            const long double *row = f->lik + (size_t)v * m->ns;
            for (size_t s = 0; s < m->ns; s++)
                w[s] *= row[s];
        }
    }
    for (size_t s = 0; s < m->ns; s++) {
        t += w[s];
        if (w[s] > mx)
            mx = w[s];
    }
    *sum = t;
    *max = mx;
}

/* The same sum and maximum as eval_dense, bit for bit, in one pass over H's support: a
 * secret outside the support has weight 0 there, and adding +0 leaves a sum unchanged. */
static int eval_support(const mnc_bayes *m, const hcache *c, const uint64_t *pd, size_t k, long double *sum,
                        long double *max)
{
    plan pl;
    if (plan_make(m, pd, k, &pl) != 0)
        return -1;
    long double t = 0, mx = 0;
    for (size_t j = 0; j < c->nsup; j++) {
        long double x = plan_apply(&pl, c->sup[j], c->sw[j]);
        t += x;
        if (x > mx)
            mx = x;
    }
    plan_free(&pl);
    *sum = t;
    *max = mx;
    return 0;
}

void mnc_bayes_set_reference(mnc_bayes *m, int on)
{
    if (m)
        m->reference = on != 0;
}

int mnc_bayes_charge(const void *model, const mnc_obs *h, size_t nh, const mnc_obs *d, size_t nd, double *out)
{
    const mnc_bayes *m = model;
    if (!m || !out || (nh && !h) || (nd && !d))
        return -1;
    uint64_t stackp[64], stackd[16];
    uint64_t *ph = nh <= 64 ? stackp : malloc(nh * sizeof(*ph));
    uint64_t *pd = nd <= 16 ? stackd : malloc(nd * sizeof(*pd));
    long double stackw[512], *w = NULL; /* the reference's scratch weights */
    hcache *c = m->reference ? &hc_ref : &hc;
    int rc = -1;
    size_t nph = 0, npd = 0;
    if (!ph || !pd)
        goto out;
    if (resolve(m, h, nh, ph, &nph) != 0 || resolve(m, d, nd, pd, &npd) != 0)
        goto out;
    if (cache_history(m, ph, nph, c, !m->reference) != 0)
        goto out;
    /* d's pairs not already in H (the same fact again adds nothing) */
    size_t k = 0;
    for (size_t i = 0; i < npd; i++)
        if (!bsearch(&pd[i], c->pairs, c->np, sizeof(*pd), cmp_u64))
            pd[k++] = pd[i];
    if (k == 0) {
        *out = 0;
        rc = 0;
        goto out;
    }
    long double sum, mx;
    if (m->reference) {
        if (!(w = m->ns <= 512 ? stackw : malloc(m->ns * sizeof(*w))))
            goto out;
        eval_dense(m, c, pd, k, w, &sum, &mx);
    } else if (eval_support(m, c, pd, k, &sum, &mx) != 0) {
        goto out;
    }
    if (!(mx > 0))
        goto out; /* H ⊕ d has probability 0 under the model */
    /* ΔR = log2(V_post(H⊕d)/V_prior) − log2(V_post(H)/V_prior) = log2((mx/sum)/(max_h/sum_h)) */
    long double r = log2l((mx / sum) / (c->max / c->sum));
    if (!isfinite(r))
        goto out;
    *out = r > 0 ? (double)r : 0.0;
    rc = 0;
out:
    if (ph && ph != stackp)
        free(ph);
    if (pd && pd != stackd)
        free(pd);
    if (w != stackw)
        free(w);
    return rc;
}
