// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* risk.c - risk models behind mnc_risk_leak / mnc_risk_charge (see risk.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/risk.h"
#include "mnc/risk_bayes.h"

/* weights: br(H) = Σ weight(f) over the distinct fields observed in H. */
static int weights_leak(const mnc_policy *p, const mnc_obs *h, size_t nh, double *out)
{
    mnc_set seen;
    mnc_set_clear(&seen);
    for (size_t i = 0; i < nh; i++) {
        if (h[i].field >= p->n_fields)
            return -1;
        mnc_set_add(&seen, h[i].field);
    }
    double sum = 0;
    for (int f = mnc_set_next(&seen, -1); f >= 0; f = mnc_set_next(&seen, f))
        sum += p->fields[f].weight;
    *out = sum;
    return 0;
}

int mnc_risk_leak(const mnc_policy *p, const mnc_obs *h, size_t nh, double *out)
{
    if (!p || !out || (nh && !h))
        return -1;
    switch (p->risk) {
    case MNC_RISK_WEIGHTS:
        return weights_leak(p, h, nh, out);
    case MNC_RISK_BAYES:
        /* no model loaded: fail closed */
        return p->risk_model ? mnc_bayes_leak(p->risk_model, h, nh, out) : -1;
    }
    return -1;
}

int mnc_risk_charge(const mnc_policy *p, const mnc_obs *h, size_t nh, const mnc_obs *d, size_t nd, double *out)
{
    if (!p || !out || (nd && !d) || (nh && !h))
        return -1;
    if (p->risk == MNC_RISK_BAYES) /* one pass with the history's posterior cached */
        return p->risk_model ? mnc_bayes_charge(p->risk_model, h, nh, d, nd, out) : -1;
    /* br(H ⊕ d): evaluate the concatenated history (never truncated: that would
     * under-charge). */
    if (nh > SIZE_MAX / sizeof(mnc_obs) - nd - 1)
        return -1;
    mnc_obs *joint = malloc((nh + nd + 1) * sizeof(*joint));
    if (!joint)
        return -1;
    if (nh)
        memcpy(joint, h, nh * sizeof(*joint));
    if (nd)
        memcpy(joint + nh, d, nd * sizeof(*joint));
    double before, after;
    int rc = mnc_risk_leak(p, h, nh, &before);
    if (rc == 0)
        rc = mnc_risk_leak(p, joint, nh + nd, &after);
    free(joint);
    if (rc != 0)
        return -1;
    if (!isfinite(before) || !isfinite(after))
        return -1;
    double delta = after - before;
    *out = delta > 0 ? delta : 0;
    return 0;
}
