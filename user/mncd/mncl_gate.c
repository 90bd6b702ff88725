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
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "mnc/ledger.h"
#include "mnc/ledger_backend.h"
#include "mnc/risk.h"
#include "mnc/select.h"
#include "mnc/state.h"
#include "mncd.h"
#include "mncl_int.h"
#include "mnc_util.h"

cJSON *mncd_mncl_prepare(mncd *d, const mnc_request *q, int contract, const mnc_state *st, mnc_select_req *sr,
                         mncd_mncl_ctx *x)
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
        return mnc_resp_error(q->id, MNC_R_INVALID,
                              "contract %s has an MNC-L cap (epsilon/"
                              "budget): the state must name its protected \"subject\"",
                              ct->id);
    }
    struct mncd_mncl *m = d->mncl;
    mnc_obs *h = NULL;
    size_t nh = 0;
    double spent = 0;
    uint64_t version = 0;
    mnc_ledger_rc lrc = m && m->ledger ? mnc_lb_history(m->ledger, d->policy, st->subject, &h, &nh, &spent, &version)
                                       : MNC_LEDGER_ERROR;
    if (lrc == MNC_LEDGER_UNAVAILABLE) {
        /* Fail closed: without the subject's global history nothing can be priced. */
        m->c.unavailable++;
        char det[640];
        mnc_lb_state(m->ledger, det, sizeof(det), NULL);
        mncd_audit(d, "disclose", -1, ct->scope.recipient, NULL, "error", MNC_R_LEDGER_UNAVAILABLE, det);
        cJSON *r = mnc_resp_error(q->id, MNC_R_LEDGER_UNAVAILABLE, "not released: the ledger is unavailable (%s)", det);
        if (r)
            cJSON_AddStringToObject(r, "outcome", "ledger_unavailable");
        return r;
    }
    if (lrc != MNC_LEDGER_OK) {
        free(h);
        mncd_audit(d, "disclose", -1, ct->scope.recipient, NULL, "error", MNC_R_INTERNAL,
                   "ledger history cannot be evaluated");
        return mnc_resp_error(q->id, MNC_R_INTERNAL,
                              "the ledger history of subject \"%s\" "
                              "cannot be evaluated under this policy (fail closed)",
                              st->subject);
    }
    x->ledger = true;
    x->version = version;
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

typedef struct reprice {
    const mnc_policy *p;
    const mnc_obs *obs;
    size_t n;
} reprice;

/* The backend's recompute callback: delta of the release against a history that moved since
 * selection priced it - the same function selection uses (risk.h). */
static int reprice_cb(void *arg, const mnc_obs *h, size_t nh, double *delta)
{
    const reprice *x = arg;
    return mnc_risk_charge(x->p, h, nh, x->obs, x->n, delta);
}

mnc_ledger_rc mncd_mncl_charge_release(mncd *d, const mnc_disclosure *o, const char *subject, const char *release,
                                       double delta, uint64_t version, const mnc_ledger_limits *lim, mnc_lb_result *res,
                                       char *why, size_t n)
{
    struct mncd_mncl *m = d->mncl;
    mnc_obs obs[MNC_MAX_FIELDS];
    size_t k = 0;
    for (uint16_t i = 0; i < o->n_values && k < MNC_MAX_FIELDS; i++)
        obs[k++] = (mnc_obs){.field = o->values[i].field, .value = o->values[i].value};
    char hex[MNC_OID_HEX];
    mnc_oid_hex(&o->id, hex);
    reprice rp = {d->policy, obs, k};
    mnc_lb_request c = {.subject = subject,
                        .recipient = mncd_peer_name(d, o->scope.recipient),
                        .release = release ? release : hex,
                        .obs = obs,
                        .n_obs = k,
                        .delta = delta,
                        .version = version,
                        .recompute = reprice_cb,
                        .arg = &rp,
                        .lim = lim};
    memset(res, 0, sizeof(*res));
    mnc_ledger_rc rc =
        !isfinite(delta) || delta < 0 || !c.recipient ? MNC_LEDGER_ERROR : mnc_lb_charge(m->ledger, d->policy, &c, res);
    char det[320];
    /* The record names the subject and an agent's release id by their keyed hashes: both are
     * the issuer's choice (docs/threat-model.md, "Records about agents"); the object id is
     * mncd's. */
    char subj_h[MNC_AUDIT_HV_MAX], rel_h[MNC_AUDIT_HV_MAX];
    mncd_hv_str(d, subject, subj_h);
    const char *rel_shown = release ? mncd_hv_str(d, release, rel_h) : hex;
    if (rc == MNC_LEDGER_OK) {
        m->c.charges++;
        m->c.bits += res->delta;
        /* "committed": a deferred charge (inside the loop) is flushed first */
        if (m->kill_after_charge > 0 && (long)m->c.charges == m->kill_after_charge && mnc_lb_flush(m->ledger) == 0)
            raise(SIGKILL);
        /* "subject %s release %s charged %.6g, spent %.6g%s", without printf (one per
         * disclose): the same bytes (mnc_fmt_g6, mnc_str_cat) */
        char g1[32], g2[32];
        mnc_fmt_g6(g1, res->delta);
        mnc_fmt_g6(g2, res->spent);
        const char *const parts[] = {"subject ", subj_h,      " release ",
                                     rel_shown,  " charged ", g1,
                                     ", spent ", g2,          lim ? "" : " (approved: no caps)"};
        mnc_str_cat(det, sizeof(det), parts, sizeof(parts) / sizeof(parts[0]));
        mncd_audit(d, "ledger.charge", o->origin, o->scope.recipient, &o->id, "allow", MNC_OK, det);
        return rc;
    }
    if (rc == MNC_LEDGER_DUPLICATE && res->same) {
        m->c.replayed++;
        snprintf(det, sizeof(det),
                 "subject %s release %s already charged: handed out again "
                 "uncharged (a retried request)",
                 subj_h, rel_shown);
        mncd_audit(d, "ledger.charge", o->origin, o->scope.recipient, &o->id, "allow", MNC_OK, det);
        return rc;
    }
    m->c.charge_failed++;
    char st[512] = "";
    if (rc == MNC_LEDGER_UNAVAILABLE) {
        m->c.unavailable++;
        mnc_lb_state(m->ledger, st, sizeof(st), NULL);
    }
    const char *what = rc == MNC_LEDGER_OVER_EPSILON  ? "charge exceeds epsilon"
                       : rc == MNC_LEDGER_OVER_BUDGET ? "charge exceeds the budget"
                       : rc == MNC_LEDGER_DUPLICATE   ? "release id already used for a "
                                                        "different release"
                       : rc == MNC_LEDGER_UNAVAILABLE ? "the ledger is unavailable"
                                                      : "ledger write failed";
    snprintf(why, n, "%s (subject %s, charge %.6g)%s%s", what, subj_h, res->delta,
             rc == MNC_LEDGER_ERROR || rc == MNC_LEDGER_UNAVAILABLE ? ": " : "",
             rc == MNC_LEDGER_ERROR         ? strerror(errno)
             : rc == MNC_LEDGER_UNAVAILABLE ? st
                                            : "");
    mncd_audit(d, "ledger.charge", o->origin, o->scope.recipient, &o->id,
               rc == MNC_LEDGER_OVER_EPSILON || rc == MNC_LEDGER_OVER_BUDGET || rc == MNC_LEDGER_DUPLICATE ? "deny"
                                                                                                           : "error",
               rc == MNC_LEDGER_OVER_EPSILON  ? MNC_R_OVER_EPSILON
               : rc == MNC_LEDGER_OVER_BUDGET ? MNC_R_OVER_BUDGET
               : rc == MNC_LEDGER_DUPLICATE   ? MNC_R_INVALID
               : rc == MNC_LEDGER_UNAVAILABLE ? MNC_R_LEDGER_UNAVAILABLE
                                              : MNC_R_INTERNAL,
               why);
    return rc;
}

cJSON *mncd_mncl_charge(mncd *d, const mnc_request *q, int contract, int issuer, const mnc_state *st,
                        const mnc_disclosure *o, double risk, mncd_mncl_ctx *x)
{
    (void)issuer;
    if (!x->ledger)
        return NULL;
    const mnc_contract *ct = &d->policy->contracts[contract];
    mnc_ledger_limits lim = {.epsilon = ct->epsilon, .budget = ct->budget};
    char why[768];
    mnc_lb_result res;
    mnc_ledger_rc rc = mncd_mncl_charge_release(d, o, st->subject, x->release, risk, x->version,
                                                x->capped ? &lim : NULL, &res, why, sizeof(why));
    if (rc == MNC_LEDGER_OK || (rc == MNC_LEDGER_DUPLICATE && res.same)) {
        x->charged = rc == MNC_LEDGER_OK ? res.delta : 0;
        x->replayed = rc == MNC_LEDGER_DUPLICATE;
        x->limits.spent = res.spent - x->charged;
        return NULL;
    }
    if (rc == MNC_LEDGER_OVER_EPSILON || rc == MNC_LEDGER_OVER_BUDGET) {
        if (rc == MNC_LEDGER_OVER_EPSILON)
            d->mncl->c.over_epsilon++;
        else
            d->mncl->c.over_budget++;
        return mnc_resp_deny(q->id, rc == MNC_LEDGER_OVER_EPSILON ? MNC_R_OVER_EPSILON : MNC_R_OVER_BUDGET,
                             "not released: %s", why);
    }
    if (rc == MNC_LEDGER_DUPLICATE)
        return mnc_resp_deny(q->id, MNC_R_INVALID, "not released: %s", why);
    if (rc == MNC_LEDGER_UNAVAILABLE) {
        cJSON *r = mnc_resp_error(q->id, MNC_R_LEDGER_UNAVAILABLE, "not released: %s", why);
        if (r)
            cJSON_AddStringToObject(r, "outcome", "ledger_unavailable");
        return r;
    }
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
        if (x->replayed)
            cJSON_AddBoolToObject(r, "replayed", true);
        cJSON_AddNumberToObject(r, "spent", x->limits.spent + x->charged);
        if (x->limits.epsilon >= 0)
            cJSON_AddNumberToObject(r, "epsilon", x->limits.epsilon);
        if (x->limits.budget >= 0)
            cJSON_AddNumberToObject(r, "budget", x->limits.budget);
    }
}
