// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncl_gate.c - MNC-L in mncd: the leakage ledger as a gate inside selection. Interface: the
 * "MNC-L and MNC-D" section of mncd.h; ledger rules: docs/risk.md; design: docs/mncd.md.
 *
 * MNC-L. STATE_DIR/ledger is opened at startup (a torn tail is truncated, printed and
 * audited; a corrupt record refuses the start, naming it). A disclose whose state names a
 * subject is selected against that subject's realised history with the contract's ε and B,
 * and the chosen release is charged with mnc_ledger_charge - durable (fdatasync) - before the
 * object is stored, queued or answered. If the charge fails nothing is released.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/ledger.h"
#include "mnc/risk.h"
#include "mnc/select.h"
#include "mnc/state.h"
#include "mncd.h"
#include "mncl_int.h"

cJSON *mncd_mncl_prepare(mncd *d, const mnc_request *q, int contract, const mnc_state *st,
                        mnc_select_req *sr, mncd_mncl_ctx *x)
{
    const mnc_contract *ct = &d->policy->contracts[contract];
    memset(x, 0, sizeof(*x));
    x->limits = (mnc_limits){.epsilon = ct->epsilon, .budget = ct->budget, .spent = 0};
    x->capped = ct->epsilon >= 0 || ct->budget >= 0;
    if (!st->subject[0]) {
        if (!x->capped)
            return NULL; /* MNC-C: no subject, no ledger */
        mncd_audit(d, "disclose", -1, ct->scope.recipient, NULL, "error", MNC_R_INVALID,
                   "MNC-L contract without state.subject");
        return mnc_resp_error(q->id, MNC_R_INVALID, "contract %s has an MNC-L cap (epsilon/"
                              "budget): the state must name its protected \"subject\"", ct->id);
    }
    struct mncd_mncl *m = d->mncl;
    mnc_obs *h = NULL;
    size_t nh = 0;
    double spent = 0;
    if (!m || !m->ledger || mnc_ledger_history(m->ledger, d->policy, st->subject, &h, &nh) != 0 ||
        mnc_ledger_spent(m->ledger, st->subject, NULL, &spent) != 0) {
        free(h);
        mncd_audit(d, "disclose", -1, ct->scope.recipient, NULL, "error", MNC_R_INTERNAL,
                   "ledger history cannot be evaluated");
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "the ledger history of subject \"%s\" "
                              "cannot be evaluated under this policy (fail closed)",
                              st->subject);
    }
    x->ledger = true;
    x->history = h;
    x->n_history = nh;
    x->limits.spent = spent;
    sr->history = h;
    sr->n_history = nh;
    sr->limits = x->capped ? &x->limits : NULL;
    return NULL;
}

void mncd_mncl_ctx_free(mncd_mncl_ctx *x)
{
    free(x->history);
    x->history = NULL;
    x->n_history = 0;
}

mnc_ledger_rc mncd_mncl_charge_release(mncd *d, const mnc_disclosure *o, const char *subject,
                                       double delta, const mnc_ledger_limits *lim, char *why, size_t n)
{
    struct mncd_mncl *m = d->mncl;
    mnc_obs obs[MNC_MAX_FIELDS];
    size_t k = 0;
    for (uint16_t i = 0; i < o->n_values && k < MNC_MAX_FIELDS; i++)
        obs[k++] = (mnc_obs){.field = o->values[i].field, .value = o->values[i].value};
    char hex[MNC_OID_HEX];
    mnc_oid_hex(&o->id, hex);
    mnc_ledger_rc rc = !isfinite(delta) || delta < 0
                           ? MNC_LEDGER_ERROR
                           : mnc_ledger_charge_ids(m->ledger, d->policy, subject,
                                                   mncd_peer_name(d, o->scope.recipient), hex, obs, k,
                                                   delta, lim);
    char det[256];
    if (rc == MNC_LEDGER_OK) {
        m->c.charges++;
        m->c.bits += delta;
        double spent = 0;
        mnc_ledger_spent(m->ledger, subject, NULL, &spent);
        snprintf(det, sizeof(det), "subject %s charged %.6g, spent %.6g%s", subject, delta, spent,
                 lim ? "" : " (approved: no caps)");
        mncd_audit(d, "ledger.charge", o->origin, o->scope.recipient, &o->id, "allow", MNC_OK,
                   det);
        return rc;
    }
    m->c.charge_failed++;
    const char *what = rc == MNC_LEDGER_OVER_EPSILON  ? "charge exceeds epsilon"
                       : rc == MNC_LEDGER_OVER_BUDGET ? "charge exceeds the budget"
                       : rc == MNC_LEDGER_DUPLICATE   ? "release already charged"
                                                      : "ledger write failed";
    snprintf(why, n, "%s (subject %s, charge %.6g)%s%s", what, subject, delta,
             rc == MNC_LEDGER_ERROR ? ": " : "", rc == MNC_LEDGER_ERROR ? strerror(errno) : "");
    mncd_audit(d, "ledger.charge", o->origin, o->scope.recipient, &o->id,
               rc == MNC_LEDGER_ERROR ? "error" : "deny",
               rc == MNC_LEDGER_OVER_EPSILON  ? MNC_R_OVER_EPSILON
               : rc == MNC_LEDGER_OVER_BUDGET ? MNC_R_OVER_BUDGET
                                              : MNC_R_INTERNAL,
               why);
    return rc;
}

cJSON *mncd_mncl_charge(mncd *d, const mnc_request *q, int contract, int issuer,
                       const mnc_state *st, const mnc_disclosure *o, double risk,
                       mncd_mncl_ctx *x)
{
    (void)issuer;
    if (!x->ledger)
        return NULL;
    const mnc_contract *ct = &d->policy->contracts[contract];
    mnc_ledger_limits lim = {.epsilon = ct->epsilon, .budget = ct->budget};
    char why[320];
    mnc_ledger_rc rc = mncd_mncl_charge_release(d, o, st->subject, risk, x->capped ? &lim : NULL, why, sizeof(why));
    if (rc == MNC_LEDGER_OK) {
        x->charged = risk;
        return NULL;
    }
    if (rc == MNC_LEDGER_OVER_EPSILON || rc == MNC_LEDGER_OVER_BUDGET)
        return mnc_resp_deny(q->id, rc == MNC_LEDGER_OVER_EPSILON ? MNC_R_OVER_EPSILON
                                                                  : MNC_R_OVER_BUDGET,
                             "not released: %s", why);
    return mnc_resp_error(q->id, MNC_R_INTERNAL, "not released: %s", why);
}

void mncd_mncl_selected(mncd *d, cJSON *resp, const mncd_mncl_ctx *x)
{
    cJSON *r = resp;
    if (d->mncl)
        d->mncl->c.selected++;
    if (!r)
        return;
    cJSON_AddStringToObject(r, "outcome", "selected");
    if (x->ledger) {
        cJSON_AddNumberToObject(r, "charge", x->charged);
        cJSON_AddNumberToObject(r, "spent", x->limits.spent + x->charged);
        if (x->limits.epsilon >= 0)
            cJSON_AddNumberToObject(r, "epsilon", x->limits.epsilon);
        if (x->limits.budget >= 0)
            cJSON_AddNumberToObject(r, "budget", x->limits.budget);
    }
}
