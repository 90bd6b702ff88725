/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* risk_bayes.h - the quantitative-information-flow ("bayes") risk model.
 *
 * The model (docs/risk.md) declares a protected secret S with a finite domain and a prior
 * π(s) > 0, and for each disclosed field f how its value depends on S:
 *   - a likelihood table P_f(v | s) (each secret's row sums to 1), or
 *   - a deterministic function v = g_f(s), or
 *   - "independent": the field's value carries no information about S (any value accepted).
 * Fields are conditionally independent given S.
 *
 * Realised leakage. For a realised history H = (f_1 = v_1, ..., f_n = v_n):
 *     p(s | H) ∝ π(s) · Π_i P_{f_i}(v_i | s)
 *     V_prior = max_s π(s),   V_post(H) = max_s p(s | H)
 *     br(H)   = log2(V_post(H) / V_prior)            (bits; br(∅) = 0; may be < 0)
 * This is the per-outcome (realised) min-entropy leakage: it charges what the recipient can
 * actually infer from what was actually released, so a ledger's Σ max(0, ΔR) is an upper bound
 * on br of the whole realised history. An identical (field, value) pair observed twice counts
 * once: it is the same fact released again, not a fresh noisy sample. A different value of the
 * same field counts as another independent observation.
 *
 * Expected leakage (Smith 2009). For a set of fields observed jointly, before their values are
 * known:  L = log2 Σ_y max_s π(s) P(y | s) − log2 max_s π(s)  (y ranges over joint values);
 * min-capacity is the same with the uniform prior (the maximum over all priors). Selection may
 * use these as a worst-case / average-case figure; the ledger charges realised leakage.
 *
 * Numerics: long double, posterior renormalised by its maximum so long histories do not
 * underflow; results are exact to ~1e-15 relative on well-conditioned inputs.
 *
 * Errors: every function returns 0 on success and -1 if it cannot evaluate: a field the model
 * does not declare, a value outside a field's declared domain, a history that has probability
 * 0 under the model (contradictory observations), bad arguments, or OOM. Callers fail closed.
 */
#ifndef MNC_RISK_BAYES_H
#define MNC_RISK_BAYES_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc/policy.h"
#include "mnc/risk.h"

typedef struct mnc_bayes mnc_bayes;

/* Builds a model from its JSON document (format: docs/risk.md). If `p` is non-NULL every
 * model field must name a policy field and observations use the policy's field ids; if NULL,
 * a model field's id is its position in the model's "fields" object (declaration order).
 * `where` prefixes error messages. Returns NULL with errors in *errs on any problem. */
mnc_bayes *mnc_bayes_from_json(const cJSON *j, const mnc_policy *p, const char *where, mnc_errors *errs);

/* Same, from a file (at most 64 MiB). */
mnc_bayes *mnc_bayes_load_file(const char *path, const mnc_policy *p, mnc_errors *errs);

void mnc_bayes_free(mnc_bayes *m);

/* Introspection. */
size_t mnc_bayes_secrets(const mnc_bayes *m);
int mnc_bayes_field_id(const mnc_bayes *m, const char *name); /* observation id, or -1 */

/* br(H) in bits, see above. `model` is an mnc_bayes (void * so risk.c can dispatch). */
int mnc_bayes_leak(const void *model, const mnc_obs *h, size_t nh, double *out);

/* ΔR(d) = max(0, br(H ⊕ d) − br(H)) in one pass: the posterior of H is cached per thread
 * (keyed by the model instance and H's exact observations), so charging a family of
 * candidates against one history costs one evaluation of H plus one of each candidate. */
int mnc_bayes_charge(const void *model, const mnc_obs *h, size_t nh, const mnc_obs *d, size_t nd, double *out);

/* The posterior p(s | H) into post[0..n_secrets-1] (same conventions). */
int mnc_bayes_posterior(const mnc_bayes *m, const mnc_obs *h, size_t nh, long double *post, size_t n);

/* Expected min-entropy leakage of observing `fields` jointly once, with the model's prior
 * (uniform_prior == 0) or the min-capacity (uniform_prior != 0). Bounded enumeration: fails
 * (-1) if Π |domain(f)| over the noisy fields times |S| exceeds 2^26. */
int mnc_bayes_expected_leak(const mnc_bayes *m, const uint16_t *fields, size_t nf, int uniform_prior, double *out);

#endif
