/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* risk.h - risk models behind one interface.
 *
 * A risk model turns a history of realised releases H (observations (field, value) about one
 * protected subject) into a leakage figure br(H). Every model charges a new release d with
 *     ΔR(d) = max(0, br(H ⊕ d) − br(H)),
 * so MNC-C (empty history) and MNC-L (ledger history) rank candidates the same way.
 *
 * Models:
 *   weights: br(H) = Σ weight(f) over the distinct fields disclosed in H.
 *   bayes:   min-entropy leakage in bits (issue: MNC-L/MNC-D), see risk_bayes.h.
 */
#ifndef MNC_RISK_H
#define MNC_RISK_H

#include <stddef.h>

#include "mnc/policy.h"

typedef struct mnc_obs {
    uint16_t field;
    const char *value;
} mnc_obs;

/* br(H) for the policy's model. Returns 0 on success, -1 if the model cannot evaluate the
 * history (e.g. a value outside a declared domain): callers must then fail closed. */
int mnc_risk_leak(const mnc_policy *p, const mnc_obs *h, size_t nh, double *out);

/* ΔR(d) given history h. Same return convention. */
int mnc_risk_charge(const mnc_policy *p, const mnc_obs *h, size_t nh, const mnc_obs *d, size_t nd, double *out);

#endif
