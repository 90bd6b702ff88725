// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_failure.c - MNC-D in mncd: the failure handler (delegate, approval, abstain) when
 * nothing is admissible (its request table and journal, and the start and stop of MNC-L and
 * MNC-D, are mncd_dreq.c; the ledger gate itself is mncl_gate.c). Interface: the "MNC-L and MNC-D"
 * section of mncd.h; design: docs/mncd.md, verbs: docs/protocol.md.
 *
 * MNC-D. When nothing is admissible the contract's failure order runs, one step at a time:
 *   delegate  if the contract's broker agent is connected, the request waits for it
 *             (broker.next hands it the state and contract inside the trusted boundary;
 *             broker.reply returns a receipt or a failure code). A receipt is validated
 *             (fields ⊆ F, need met, no private value of another field in it, risk
 *             computable, ε/B) and released as an object of form "mnc-d:delegated". No broker,
 *             a failure code, an invalid receipt or no reply within broker_timeout_ms: next
 *             step.
 *   approval  if some candidate is valid for the contract but was refused only by need or
 *             by ε/B, the request waits for `approve` (admin), which releases the best such
 *             candidate (the one the approver was shown); after approval_timeout_ms it is
 *             denied. The approval is the human override of ε/B: the release is still
 *             charged, without caps.
 *   abstain   nothing is released.
 * Every step is audited and counted; pending requests are journaled (STATE_DIR/mncd-d.journal)
 * so they survive a restart, and the issuer polls them with disclose.status. Deadlines are
 * evaluated when a request arrives (mncd_mncl_tick from mncd_handle): a timeout is observable
 * only through a request, so nothing is lost by evaluating it lazily.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "mnc/ledger.h"
#include "mnc/ledger_backend.h"
#include "mnc/monitor.h"
#include "mnc/risk.h"
#include "mnc/select.h"
#include "mnc/state.h"
#include "mncd.h"
#include "mncl_int.h"

/* ---- MNC-D */

static void audit_req(mncd *d, const char *op, const dreq *r, const char *decision, mnc_reason why, const char *detail)
{
    char det[700];
    snprintf(det, sizeof(det), "%s %s: %s", r->id, d->policy->contracts[r->contract].id, detail ? detail : "");
    mncd_audit(d, op, r->issuer, d->policy->contracts[r->contract].scope.recipient, NULL, decision, why, det);
}

/* Fleet mode: publishes a request waiting for approval to the shared queue (fleet.c), so an
 * admin on any host may decide it. If the database cannot take it, the request stays
 * decidable on this host only (audited); nothing is released either way until decided. */
static void publish(mncd *d, const dreq *r)
{
    if (!mncd_fleet_on(d))
        return;
    const cJSON *subj = cJSON_GetObjectItemCaseSensitive(r->state, "subject");
    const mnc_contract *ct = &d->policy->contracts[r->contract];
    cJSON *x = cJSON_CreateObject();
    char *s = NULL;
    if (x && cJSON_AddStringToObject(x, "issuer", mncd_peer_name(d, r->issuer)) &&
        cJSON_AddStringToObject(x, "recipient", mncd_peer_name(d, ct->scope.recipient)) &&
        cJSON_AddStringToObject(x, "candidate", r->cand) &&
        cJSON_AddItemToObject(x, "candidate_fields", dq_fields_json(d->policy, &r->cand_fields)) &&
        cJSON_AddNumberToObject(x, "candidate_risk", r->cand_risk) &&
        cJSON_AddItemToObject(x, "approvable", cJSON_Duplicate(r->approvable, true)))
        s = cJSON_PrintUnformatted(x);
    cJSON_Delete(x);
    char err[512] = "out of memory";
    if (!s || mncd_fleet_publish(d, cJSON_IsString(subj) ? subj->valuestring : "", r->id, ct->id, r->deadline_ms, s,
                                 err, sizeof(err)) != 0)
        audit_req(d, "mnc-d.approval", r, "error", MNC_R_LEDGER_UNAVAILABLE, err);
    cJSON_free(s);
}

/* Runs the failure order from the step after r->step: stops at the first step that can
 * wait (delegate with a connected broker, approval with an approvable candidate), else
 * abstains. Journals nothing (the caller persists). */
static void advance(mncd *d, dreq *r, uint64_t now)
{
    struct mncd_mncl *m = d->mncl;
    const mnc_contract *ct = &d->policy->contracts[r->contract];
    int nf = ct->n_failure;
    for (r->step++; r->step < nf; r->step++) {
        mnc_failure f = ct->failure[r->step];
        if (f == MNC_FAIL_ABSTAIN)
            break;
        if (f == MNC_FAIL_DELEGATE) {
            if (ct->broker != MNC_NO_ID && ct->broker < MNC_MAX_PRINCIPALS && m->conns[ct->broker] > 0 &&
                m->n_pending < MAX_PENDING) {
                r->st = RS_DELEGATING;
                r->handed = false;
                r->deadline_ms = now + d->cfg.broker_timeout_ms;
                m->c.pending_delegation++;
                audit_req(d, "mnc-d.delegate", r, "delegate", MNC_R_NO_CANDIDATE, "waiting for the broker");
                return;
            }
            m->c.broker_unavailable++;
            audit_req(d, "mnc-d.delegate", r, "deny", MNC_R_NO_CANDIDATE,
                      "no broker connected (or queue full): next step");
            continue;
        }
        /* approval */
        if (r->cand[0] && m->n_pending < MAX_PENDING) {
            r->st = RS_APPROVAL;
            r->deadline_ms = now + d->cfg.approval_timeout_ms;
            m->c.pending_approval++;
            audit_req(d, "mnc-d.approval", r, "approval", MNC_R_NO_CANDIDATE, "waiting for approve");
            publish(d, r);
            return;
        }
        m->c.approval_skipped++;
        audit_req(d, "mnc-d.approval", r, "deny", MNC_R_NO_CANDIDATE,
                  "no candidate an approver could release (or queue full): next step");
    }
    r->st = RS_ABSTAINED;
    m->c.abstained++;
    audit_req(d, "mnc-d.abstain", r, "abstain", MNC_R_NO_CANDIDATE, r->detail);
}

/* advance() for a request that is in the table (keeps the counts right). */
static void advance_linked(mncd *d, dreq *r, uint64_t now)
{
    struct mncd_mncl *m = d->mncl;
    m->n_pending--;
    advance(d, r, now);
    if (dq_pending(r))
        m->n_pending++;
    else
        m->n_done++;
}

static cJSON *apply_decision(mncd *d, const mnc_request *q, dreq *r, bool deny, const char *by);

void mncd_mncl_tick(mncd *d)
{
    struct mncd_mncl *m = d->mncl;
    if (!m || !m->n_pending)
        return;
    uint64_t now = mnc_now_ms();
    for (dreq *r = m->head; r; r = r->next) {
        if (!dq_pending(r) || now < r->deadline_ms)
            continue;
        if (r->st == RS_DELEGATING) {
            m->c.broker_timeout++;
            snprintf(r->detail, sizeof(r->detail), "the broker did not reply within %u ms", d->cfg.broker_timeout_ms);
            audit_req(d, "mnc-d.delegate", r, "deny", MNC_R_NO_CANDIDATE, r->detail);
            advance_linked(d, r, now);
        } else {
            /* Fleet mode: the timeout is a decision too, taken once in the shared queue; an
             * approver on another host may have decided first (that decision then applies),
             * and while the database is unreachable the request waits (nothing released). */
            char prev[32] = "", by[64] = "";
            int fr = mncd_fleet_decide(d, r->id, "timeout", prev, sizeof(prev), by, sizeof(by));
            if (fr < 0)
                continue;
            if (fr == 1 && strcmp(prev, "timeout") != 0) {
                cJSON_Delete(apply_decision(d, NULL, r, strcmp(prev, "approved") != 0, by));
                continue;
            }
            m->c.approval_timeout++;
            snprintf(r->detail, sizeof(r->detail), "not approved within %u ms: denied", d->cfg.approval_timeout_ms);
            dq_finish(m, r, RS_TIMEOUT);
            audit_req(d, "approve", r, "deny", MNC_R_NO_CANDIDATE, r->detail);
        }
        if (dq_persist(d, r) != 0)
            d->fatal = true; /* the queue's durable state is unknown: stop (fail closed) */
    }
    dq_prune(m);
}

static int new_id(char out[RID_LEN])
{
    uint8_t b[8];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        return -1;
    snprintf(out, RID_LEN, "d-%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
    return 0;
}

/* Adds the response members describing r's status. */
static cJSON *req_response(mncd *d, const mnc_request *q, const dreq *r)
{
    const mnc_contract *ct = &d->policy->contracts[r->contract];
    bool released = r->st == RS_DELEGATED || r->st == RS_APPROVED;
    const char *dec = r->st == RS_DELEGATING || r->st == RS_DELEGATED ? "delegate"
                      : r->st == RS_ABSTAINED                         ? "abstain"
                                                                      : "approval";
    cJSON *resp = mnc_resp_new(q->id, released, dec, released ? MNC_OK : MNC_R_NO_CANDIDATE);
    if (!resp)
        return NULL;
    cJSON_AddStringToObject(resp, "outcome", rs_name[r->st]);
    cJSON_AddStringToObject(resp, "request", r->id);
    cJSON_AddStringToObject(resp, "contract", ct->id);
    if (r->detail[0])
        cJSON_AddStringToObject(resp, "detail", r->detail);
    if (r->st == RS_DELEGATING) {
        cJSON_AddStringToObject(resp, "broker", mncd_peer_name(d, ct->broker));
        cJSON_AddNumberToObject(resp, "deadline_ms", (double)r->deadline_ms);
    } else if (r->st == RS_APPROVAL) {
        cJSON_AddNumberToObject(resp, "expires_ms", (double)r->deadline_ms);
        cJSON_AddStringToObject(resp, "candidate", r->cand);
    }
    if (released) {
        cJSON_AddBoolToObject(resp, "delegated", r->st == RS_DELEGATED);
        cJSON_AddStringToObject(resp, "queued_to", mncd_peer_name(d, ct->scope.recipient));
        mnc_oid oid;
        const mnc_disclosure *o = mnc_oid_parse(r->object, &oid) == 0 ? mnc_registry_get(&d->store.reg, &oid) : NULL;
        if (o) {
            cJSON *j = mnc_disclosure_to_json(d->policy, o);
            char *msg = mnc_disclosure_render(d->policy, o);
            if (j)
                cJSON_AddItemToObject(resp, "object", j);
            if (msg)
                cJSON_AddStringToObject(resp, "message", msg);
            free(msg);
            cJSON_AddStringToObject(resp, "form", o->form);
        } else {
            cJSON_AddStringToObject(resp, "object_id", r->object);
        }
    }
    return resp;
}

cJSON *mncd_mncl_failure(mncd *d, const mncd_ident *w, const mnc_request *q, int contract, const mnc_state *st,
                         const mnc_selection *sel, mncd_mncl_ctx *x)
{
    (void)x;
    (void)st;
    struct mncd_mncl *m = d->mncl;
    const mnc_policy *p = d->policy;
    dreq *r = calloc(1, sizeof(*r));
    if (!r || !m || new_id(r->id) != 0) {
        free(r);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "MNC-D: out of memory");
    }
    r->contract = contract;
    r->issuer = w->agent;
    r->step = -1;
    r->created_ms = mnc_now_ms();
    r->cand_risk = NAN;
    r->state = cJSON_Duplicate(q->state, true);
    r->approvable = cJSON_CreateArray();
    if (!r->state || !r->approvable) {
        dq_free(r);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "MNC-D: out of memory");
    }
    /* What an approver may release: a policy form valid for the contract whose values exist,
     * refused only by need or by the MNC-L caps. Best = lowest risk, then fewer fields. */
    int best = -1;
    for (int i = 0; i < sel->n; i++) {
        const mnc_scored *c = &sel->c[i];
        if (c->verdict == MNC_R_OVER_EPSILON)
            m->c.over_epsilon++;
        if (c->verdict == MNC_R_OVER_BUDGET)
            m->c.over_budget++;
        bool ok =
            !c->submitted && isfinite(c->risk) &&
            (c->verdict == MNC_R_OVER_EPSILON || c->verdict == MNC_R_OVER_BUDGET || c->verdict == MNC_R_INSUFFICIENT);
        if (!ok)
            continue;
        cJSON *a = cJSON_CreateObject();
        if (a) {
            cJSON_AddStringToObject(a, "name", c->name);
            cJSON_AddItemToObject(a, "fields", dq_fields_json(p, &c->fields));
            cJSON_AddNumberToObject(a, "risk", c->risk);
            cJSON_AddStringToObject(a, "verdict", mnc_reason_name(c->verdict));
            cJSON_AddStringToObject(a, "detail", c->detail);
            cJSON_AddItemToArray(r->approvable, a);
        }
        if (best < 0 || c->risk < sel->c[best].risk ||
            (c->risk == sel->c[best].risk && mnc_set_count(&c->fields) < mnc_set_count(&sel->c[best].fields)))
            best = i;
    }
    if (best >= 0) {
        snprintf(r->cand, sizeof(r->cand), "%s", sel->c[best].name);
        r->cand_fields = sel->c[best].fields;
        r->cand_risk = sel->c[best].risk;
    }
    snprintf(r->detail, sizeof(r->detail), "nothing admissible");
    advance(d, r, r->created_ms);
    if (!dq_pending(r)) {
        /* Final at once: nothing to poll, nothing queued. */
        cJSON *resp = req_response(d, q, r);
        if (resp)
            cJSON_DeleteItemFromObjectCaseSensitive(resp, "request");
        dq_free(r);
        return resp;
    }
    if (dq_persist(d, r) != 0) {
        dq_free(r);
        mncd_audit(d, "disclose", w->agent, p->contracts[contract].scope.recipient, NULL, "error", MNC_R_INTERNAL,
                   "MNC-D journal append failed");
        return mnc_resp_error(q->id, MNC_R_INTERNAL,
                              "MNC-D: cannot journal the request; "
                              "nothing was queued");
    }
    dq_link(m, r);
    dq_prune(m);
    return req_response(d, q, r);
}

/* Issues, first-hop-checks, charges, stores and queues one MNC-D release. vals supplies the
 * values (the broker's receipt, or the original state); lim NULL = approval (no caps).
 * Returns 0 with r->object set, or -1 with why. */
static int release(mncd *d, dreq *r, const char *form, const mnc_set *fields, const mnc_state *vals,
                   const char *subject, bool capped, char *why, size_t n)
{
    const mnc_policy *p = d->policy;
    const mnc_contract *ct = &p->contracts[r->contract];
    uint64_t now = mnc_now_ms();
    mnc_disclosure *o = calloc(1, sizeof(*o));
    mnc_reason ir = o ? mnc_disclosure_issue(p, r->contract, r->issuer, form, fields, vals, now, o) : MNC_R_INTERNAL;
    if (ir != MNC_OK) {
        free(o);
        snprintf(why, n, "issue refused: %s", mnc_reason_name(ir));
        return -1;
    }
    mnc_op e = {.sender = r->issuer,
                .receiver = ct->scope.recipient,
                .purpose = ct->purpose,
                .ch = MNC_CH_MESSAGE,
                .fields = NULL,
                .now_ms = now};
    mnc_reason mr = mnc_monitor_check(p, &e, o);
    mncd_audit(d, "disclose", r->issuer, ct->scope.recipient, &o->id, mr == MNC_OK ? "allow" : "deny", mr,
               "MNC-D release, first hop");
    if (mr != MNC_OK) {
        snprintf(why, n, "first hop denied: %s", mnc_reason_name(mr));
        goto fail;
    }
    if (subject && subject[0]) {
        /* Charged against the history as it is now (it may have grown since the request). */
        mnc_obs *h = NULL;
        size_t nh = 0;
        mnc_obs obs[MNC_MAX_FIELDS];
        size_t k = 0;
        for (uint16_t i = 0; i < o->n_values && k < MNC_MAX_FIELDS; i++)
            obs[k++] = (mnc_obs){.field = o->values[i].field, .value = o->values[i].value};
        double delta = NAN, spent = 0;
        uint64_t version = 0;
        mnc_ledger_rc hrc = mnc_lb_history(d->mncl->ledger, p, subject, &h, &nh, &spent, &version);
        if (hrc == MNC_LEDGER_UNAVAILABLE) {
            snprintf(why, n, "the ledger is unavailable (ledger_unavailable)");
            goto fail;
        }
        if (hrc != MNC_LEDGER_OK || mnc_risk_charge(p, h, nh, obs, k, &delta) != 0) {
            free(h);
            snprintf(why, n, "the risk model cannot evaluate this release (fail closed)");
            goto fail;
        }
        free(h);
        mnc_ledger_limits lim = {.epsilon = ct->epsilon, .budget = ct->budget};
        mnc_lb_result res;
        if (mncd_mncl_charge_release(d, o, subject, NULL, delta, version, capped ? &lim : NULL, &res, why, n) !=
            MNC_LEDGER_OK)
            goto fail;
    } else if (capped && (ct->epsilon >= 0 || ct->budget >= 0)) {
        snprintf(why, n, "MNC-L contract without a subject");
        goto fail;
    }
    if (mncd_store_put_object(&d->store, o) != 0) {
        snprintf(why, n, "out of memory");
        goto fail;
    }
    mnc_oid_hex(&o->id, r->object);
    if (mncd_store_push(&d->store, ct->scope.recipient, &o->id, r->issuer, false, o->issued_ms) != 0) {
        snprintf(why, n, "recipient inbox full or out of memory (object stored, not queued)");
        return -1;
    }
    return 0;
fail:
    mnc_disclosure_free(o);
    free(o);
    return -1;
}

/* Parses a request's stored state document. 0 or -1. */
static int req_state(mncd *d, const dreq *r, mnc_state *st)
{
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_state_init(st);
    int rc = mnc_state_from_json(d->policy, r->state, st, "state", &e);
    mnc_errors_free(&e);
    return rc;
}

static cJSON *v_broker_next(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    struct mncd_mncl *m = d->mncl;
    const mnc_policy *p = d->policy;
    uint64_t now = mnc_now_ms();
    dreq *r = m->head;
    for (; r; r = r->next)
        if (r->st == RS_DELEGATING && !r->handed && now < r->deadline_ms &&
            p->contracts[r->contract].broker == w->agent)
            break;
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (!resp)
        return NULL;
    if (!r) {
        cJSON_AddNullToObject(resp, "request");
        return resp;
    }
    const mnc_contract *ct = &p->contracts[r->contract];
    const mnc_requirement *need = mnc_policy_requirement(p, ct->scope.recipient, ct->purpose);
    mnc_set none;
    mnc_set_clear(&none);
    cJSON *x = cJSON_CreateObject();
    if (!x || !cJSON_AddStringToObject(x, "id", r->id) || !cJSON_AddStringToObject(x, "contract", ct->id) ||
        !cJSON_AddStringToObject(x, "purpose", ct->purpose) ||
        !cJSON_AddStringToObject(x, "issuer", mncd_peer_name(d, r->issuer)) ||
        !cJSON_AddStringToObject(x, "recipient", mncd_peer_name(d, ct->scope.recipient)) ||
        !cJSON_AddItemToObject(x, "fields", dq_fields_json(p, &ct->scope.fields)) ||
        !cJSON_AddItemToObject(x, "needs", dq_fields_json(p, need ? &need->needs : &none)) ||
        !cJSON_AddItemToObject(x, "state", cJSON_Duplicate(r->state, true)) ||
        !cJSON_AddNumberToObject(x, "deadline_ms", (double)r->deadline_ms)) {
        cJSON_Delete(x);
        cJSON_Delete(resp);
        return NULL;
    }
    cJSON_AddItemToObject(resp, "request", x);
    r->handed = true;
    mncd_audit(d, "broker.next", r->issuer, w->agent, NULL, "allow", MNC_OK, r->id);
    return resp;
}

/* Validates a broker receipt against the contract; fills fields/vals. 0 or -1 with why. */
static int check_receipt(mncd *d, const dreq *r, const cJSON *receipt, const mnc_state *orig, mnc_set *fields,
                         mnc_state *vals, char *why, size_t n)
{
    const mnc_policy *p = d->policy;
    const mnc_contract *ct = &p->contracts[r->contract];
    mnc_set_clear(fields);
    mnc_state_init(vals);
    snprintf(vals->subject, sizeof(vals->subject), "%s", orig->subject);
    size_t tlen = 1;
    for (const cJSON *it = receipt->child; it; it = it->next) {
        int f = mnc_policy_field(p, it->string);
        if (f < 0 || !mnc_set_has(&ct->scope.fields, (unsigned)f)) {
            char fh[MNC_AUDIT_HV_MAX]; /* a name the broker chose: its keyed hash */
            snprintf(why, n, "receipt field %s is %s", f < 0 ? mncd_hv_str(d, it->string, fh) : p->fields[f].name,
                     f < 0 ? "not a policy field" : "outside the contract's fields");
            return -1;
        }
        char num[64];
        const char *v = cJSON_IsString(it) ? it->valuestring : NULL;
        if (cJSON_IsBool(it))
            v = cJSON_IsTrue(it) ? "true" : "false";
        else if (cJSON_IsNumber(it)) {
            snprintf(num, sizeof(num), "%.17g", it->valuedouble);
            v = num;
        }
        if (!v || !*v || strlen(v) >= MNC_LEDGER_VALUE_MAX) {
            snprintf(why, n,
                     "receipt field %s: a value is a string, number or boolean of "
                     "1..%d bytes",
                     it->string, MNC_LEDGER_VALUE_MAX - 1);
            return -1;
        }
        if (mnc_state_set(vals, f, v) != 0) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        mnc_set_add(fields, (unsigned)f);
        tlen += strlen(v) + 1;
    }
    if (mnc_set_empty(fields)) {
        snprintf(why, n, "empty receipt");
        return -1;
    }
    if (mnc_need(p, fields, ct->purpose, ct->scope.recipient) != MNC_OK) {
        snprintf(why, n, "receipt does not meet the recipient's need");
        return -1;
    }
    /* No direct exposure: no private value of a field outside the receipt may appear in it
     * (the broker sees the whole state; only the receipt's own fields may leave). */
    char *text = malloc(tlen);
    if (!text) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    text[0] = '\0';
    size_t off = 0;
    for (int f = mnc_set_next(fields, -1); f >= 0; f = mnc_set_next(fields, f)) {
        size_t l = strlen(vals->value[f]);
        memcpy(text + off, vals->value[f], l);
        text[off + l] = '\n';
        off += l + 1;
    }
    text[off ? off - 1 : 0] = '\0';
    int ex = mnc_exposure_scan(orig, fields, text);
    free(text);
    if (ex >= 0) {
        snprintf(why, n, "receipt contains the private value of field %s (direct exposure)", p->fields[ex].name);
        return -1;
    }
    return 0;
}

static cJSON *v_broker_reply(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    struct mncd_mncl *m = d->mncl;
    const mnc_policy *p = d->policy;
    dreq *r = dq_find(m, q->request_id);
    if (!r || r->st != RS_DELEGATING || p->contracts[r->contract].broker != w->agent) {
        /* the id only if it names a request: otherwise it is the caller's text */
        mncd_audit(d, "broker.reply", -1, w->agent, NULL, "deny", MNC_R_INVALID, r ? r->id : "unknown request id");
        return mnc_resp_deny(q->id, MNC_R_INVALID,
                             "request %s is not waiting for this "
                             "broker (%s)",
                             q->request_id, !r ? "unknown or forgotten" : rs_name[r->st]);
    }
    /* The reply is text of the broker's own: a receipt goes to the contract's recipient, a
     * failure code to the issuer (disclose.status). Judged like `disclose` by what the broker
     * holds (flow.c); a refused reply leaves the request to the broker timeout. */
    int held = -1;
    int to = q->failure ? r->issuer : (int)p->contracts[r->contract].scope.recipient;
    mnc_reason fr = mncd_flow_check(d, w->agent, r->contract, to, &held);
    if (fr != MNC_OK) {
        const char *hk = held >= 0 ? p->contracts[held].id : "?";
        mncd_audit(d, "broker.reply", w->agent, to, NULL, "deny", fr, hk);
        return mnc_resp_deny(q->id, fr,
                             "broker %s holds an object of contract %s, whose sinks do not include %s "
                             "and whose onward contracts do not include %s",
                             mncd_peer_name(d, w->agent), hk, mncd_peer_name(d, to), p->contracts[r->contract].id);
    }
    uint64_t now = mnc_now_ms();
    cJSON *resp = NULL;
    if (q->failure) {
        m->c.broker_failure++;
        /* the code is the broker's choice: its keyed hash (docs/threat-model.md, "Records about
         * agents"); the detail reaches the audit log and the approval queue */
        char fh[MNC_AUDIT_HV_MAX];
        snprintf(r->detail, sizeof(r->detail), "broker failure: %s", mncd_hv_str(d, q->failure, fh));
        audit_req(d, "broker.reply", r, "deny", MNC_R_NO_CANDIDATE, r->detail);
        advance_linked(d, r, now);
        resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    } else {
        mnc_state orig, vals;
        mnc_set fields;
        char why[320];
        int rc = req_state(d, r, &orig);
        if (rc != 0)
            snprintf(why, sizeof(why), "stored state no longer parses under this policy");
        else
            rc = check_receipt(d, r, q->receipt, &orig, &fields, &vals, why, sizeof(why));
        if (rc == 0)
            rc = release(d, r, MNCD_DELEGATED_FORM, &fields, &vals, orig.subject, true, why, sizeof(why));
        if (rc == 0) {
            m->c.delegated++;
            snprintf(r->detail, sizeof(r->detail), "broker receipt released as %s", r->object);
            dq_finish(m, r, RS_DELEGATED);
            audit_req(d, "mnc-d.delegate", r, "allow", MNC_OK, r->detail);
            resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
            if (resp)
                cJSON_AddStringToObject(resp, "object_id", r->object);
        } else {
            m->c.receipt_rejected++;
            snprintf(r->detail, sizeof(r->detail), "receipt rejected: %s", why);
            audit_req(d, "broker.reply", r, "deny", MNC_R_INVALID, r->detail);
            if (!r->object[0])
                advance_linked(d, r, now);
            else
                dq_finish(m, r, RS_DELEGATED); /* stored but not queued: still released */
            resp = mnc_resp_deny(q->id, MNC_R_INVALID, "%s", r->detail);
        }
        mnc_state_free(&vals);
        mnc_state_free(&orig);
    }
    if (dq_persist(d, r) != 0)
        d->fatal = true;
    if (resp) {
        cJSON_AddStringToObject(resp, "outcome", rs_name[r->st]);
        cJSON_AddStringToObject(resp, "request", r->id);
    }
    dq_prune(m);
    return resp;
}

/* Applies an approver's decision to pending request r: approve releases the candidate the
 * approver was shown, deny finishes it unreleased. by: the host that decided ("" = here, or
 * outside fleet mode). q may be NULL (a decision polled from the fleet queue): returns the
 * response for q, or NULL. Persists, and marks a fleet decision applied. */
static cJSON *apply_decision(mncd *d, const mnc_request *q, dreq *r, bool deny, const char *by)
{
    struct mncd_mncl *m = d->mncl;
    char where[96] = "";
    if (by && by[0] && strcmp(by, d->cfg.fleet_host) != 0)
        snprintf(where, sizeof(where), " on host %s", by);
    cJSON *resp = NULL;
    if (deny) {
        m->c.denied++;
        snprintf(r->detail, sizeof(r->detail), "denied by an approver%s", where);
        dq_finish(m, r, RS_DENIED);
        audit_req(d, "approve", r, "deny", MNC_R_NO_CANDIDATE, r->detail);
        resp = q ? req_response(d, q, r) : NULL;
    } else {
        mnc_state orig;
        char why[320];
        int rc = req_state(d, r, &orig);
        if (rc != 0)
            snprintf(why, sizeof(why), "stored state no longer parses under this policy");
        else
            rc = release(d, r, r->cand, &r->cand_fields, &orig, orig.subject, false, why, sizeof(why));
        mnc_state_free(&orig);
        if (rc == 0 || r->object[0]) {
            m->c.approved++;
            snprintf(r->detail, sizeof(r->detail), "approved%s: candidate %s released as %s", where, r->cand,
                     r->object);
            dq_finish(m, r, RS_APPROVED);
            audit_req(d, "approve", r, "allow", MNC_OK, r->detail);
            resp = q ? req_response(d, q, r) : NULL;
        } else {
            m->c.abstained++;
            snprintf(r->detail, sizeof(r->detail), "approved%s, but the release failed: %s", where, why);
            dq_finish(m, r, RS_ABSTAINED);
            audit_req(d, "approve", r, "error", MNC_R_INTERNAL, r->detail);
            resp = q ? mnc_resp_error(q->id, MNC_R_INTERNAL, "%s", r->detail) : NULL;
        }
    }
    if (dq_persist(d, r) != 0)
        d->fatal = true;
    mncd_fleet_applied(d, r->id);
    dq_prune(m);
    return resp;
}

static cJSON *v_approve(mncd *d, const mnc_request *q)
{
    struct mncd_mncl *m = d->mncl;
    dreq *r = dq_find(m, q->request_id);
    bool deny = q->deny == 1;
    if (!r && mncd_fleet_on(d)) /* another host's request: decide it in the fleet queue */
        return mncd_fleet_decide_remote(d, q, deny);
    if (!r || r->st != RS_APPROVAL) {
        mncd_audit(d, "approve", -1, -1, NULL, "deny", MNC_R_INVALID, r ? r->id : "unknown request id");
        return mnc_resp_deny(q->id, MNC_R_INVALID, "request %s is not pending approval (%s)", q->request_id,
                             !r ? "unknown or forgotten" : rs_name[r->st]);
    }
    /* Fleet mode: decide once, in the shared queue, before acting. */
    char prev[32] = "", by[64] = "";
    int fr = mncd_fleet_decide(d, r->id, deny ? "denied" : "approved", prev, sizeof(prev), by, sizeof(by));
    if (fr < 0) {
        audit_req(d, "approve", r, "error", MNC_R_LEDGER_UNAVAILABLE,
                  "the fleet approval queue is unavailable: not decided");
        return mnc_resp_error(q->id, MNC_R_LEDGER_UNAVAILABLE,
                              "request %s: the fleet approval "
                              "queue is unavailable, so it cannot be decided exactly once; "
                              "retry",
                              r->id);
    }
    if (fr == 1) {
        /* decided elsewhere first: that decision applies, this one is refused */
        cJSON_Delete(apply_decision(d, NULL, r, strcmp(prev, "approved") != 0, by));
        mncd_audit(d, "approve", -1, -1, NULL, "deny", MNC_R_INVALID, q->request_id);
        return mnc_resp_deny(q->id, MNC_R_INVALID,
                             "request %s was already decided (%s on host "
                             "%s)",
                             r->id, prev, by);
    }
    return apply_decision(d, q, r, deny, d->cfg.fleet_host);
}

void mncd_mncl_apply_remote(mncd *d, const char *request_id, const char *decision, const char *by)
{
    dreq *r = d->mncl ? dq_find(d->mncl, request_id) : NULL;
    if (!r || r->st != RS_APPROVAL) {
        mncd_fleet_applied(d, request_id); /* already applied (or forgotten): nothing to do */
        return;
    }
    if (strcmp(decision, "timeout") == 0) {
        d->mncl->c.approval_timeout++;
        snprintf(r->detail, sizeof(r->detail), "not approved within %u ms: denied", d->cfg.approval_timeout_ms);
        dq_finish(d->mncl, r, RS_TIMEOUT);
        audit_req(d, "approve", r, "deny", MNC_R_NO_CANDIDATE, r->detail);
        if (dq_persist(d, r) != 0)
            d->fatal = true;
        mncd_fleet_applied(d, request_id);
        return;
    }
    cJSON_Delete(apply_decision(d, NULL, r, strcmp(decision, "approved") != 0, by));
}

size_t mncd_mncl_pending_approvals(mncd *d)
{
    size_t n = 0;
    for (const dreq *r = d->mncl ? d->mncl->head : NULL; r; r = r->next)
        n += r->st == RS_APPROVAL;
    return n;
}

static cJSON *v_approvals(mncd *d, const mnc_request *q)
{
    struct mncd_mncl *m = d->mncl;
    const mnc_policy *p = d->policy;
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    cJSON *arr = cJSON_CreateArray();
    if (!resp || !arr) {
        cJSON_Delete(resp);
        cJSON_Delete(arr);
        return NULL;
    }
    int left = q->max > 0 ? q->max : 100;
    for (dreq *r = m->head; r && left > 0; r = r->next) {
        if (r->st != RS_APPROVAL)
            continue;
        left--;
        const mnc_contract *ct = &p->contracts[r->contract];
        const cJSON *subj = cJSON_GetObjectItemCaseSensitive(r->state, "subject");
        cJSON *x = cJSON_CreateObject();
        if (!x)
            break;
        cJSON_AddStringToObject(x, "request", r->id);
        cJSON_AddStringToObject(x, "contract", ct->id);
        cJSON_AddStringToObject(x, "issuer", mncd_peer_name(d, r->issuer));
        cJSON_AddStringToObject(x, "recipient", mncd_peer_name(d, ct->scope.recipient));
        if (cJSON_IsString(subj))
            cJSON_AddStringToObject(x, "subject", subj->valuestring);
        cJSON_AddNumberToObject(x, "created_ms", (double)r->created_ms);
        cJSON_AddNumberToObject(x, "expires_ms", (double)r->deadline_ms);
        cJSON_AddStringToObject(x, "candidate", r->cand);
        cJSON_AddItemToObject(x, "candidate_fields", dq_fields_json(p, &r->cand_fields));
        cJSON_AddNumberToObject(x, "candidate_risk", r->cand_risk);
        cJSON_AddItemToObject(x, "approvable", cJSON_Duplicate(r->approvable, true));
        cJSON_AddItemToArray(arr, x);
    }
    cJSON_AddNumberToObject(resp, "pending", (double)m->n_pending);
    cJSON_AddItemToObject(resp, "approvals", arr);
    mncd_fleet_list(d, resp, q->max); /* fleet mode: every host's pending requests */
    return resp;
}

cJSON *mncd_mncl_verb(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    struct mncd_mncl *m = d->mncl;
    if (!m)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "MNC-D is not initialised");
    switch (q->verb) {
    case MNC_V_APPROVE:
        return v_approve(d, q);
    case MNC_V_APPROVALS:
        return v_approvals(d, q);
    case MNC_V_BROKER_NEXT:
    case MNC_V_BROKER_REPLY:
        if (w->agent < 0 || d->policy->principals[w->agent].role != MNC_ROLE_BROKER) {
            mncd_audit(d, mnc_verb_name(q->verb), w->agent, -1, NULL, "deny", MNC_R_UNKNOWN_AGENT, "not a broker");
            return mnc_resp_deny(q->id, MNC_R_UNKNOWN_AGENT,
                                 "%s is for agents in the broker "
                                 "role; %s is not one",
                                 mnc_verb_name(q->verb),
                                 mncd_peer_name(d, w->agent) ? mncd_peer_name(d, w->agent) : "this caller");
        }
        return q->verb == MNC_V_BROKER_NEXT ? v_broker_next(d, w, q) : v_broker_reply(d, w, q);
    case MNC_V_DISCLOSE_STATUS: {
        dreq *r = dq_find(m, q->request_id);
        if (!r || r->issuer != w->agent)
            return mnc_resp_error(q->id, MNC_R_INVALID,
                                  "no MNC-D request %s of this agent "
                                  "(unknown, forgotten, or another agent's)",
                                  q->request_id);
        return req_response(d, q, r);
    }
    default:
        return mnc_resp_error(q->id, MNC_R_INVALID, "not an MNC-D verb");
    }
}

void mncd_mncl_status(mncd *d, cJSON *resp)
{
    struct mncd_mncl *m = d->mncl;
    cJSON *r = resp;
    if (!m || !r)
        return;
    size_t subjects = 0, charges = 0;
    mnc_lb_stats(m->ledger, &subjects, &charges);
    cJSON *l = cJSON_AddObjectToObject(r, "mnc_l");
    if (l) {
        char st[640];
        uint64_t reconnects = 0;
        bool up = mnc_lb_state(m->ledger, st, sizeof(st), &reconnects);
        cJSON_AddStringToObject(l, "ledger", m->ledger_path);
        cJSON_AddStringToObject(l, "backend", mnc_lb_kind_name(mnc_lb_kind_of(m->ledger)));
        cJSON_AddStringToObject(l, "state", up ? "available" : "unavailable");
        cJSON_AddStringToObject(l, "state_detail", st);
        cJSON_AddNumberToObject(l, "reconnects", (double)reconnects);
        cJSON_AddNumberToObject(l, "rejected_ledger_unavailable", (double)m->c.unavailable);
        cJSON_AddNumberToObject(l, "replayed_releases", (double)m->c.replayed);
        cJSON_AddNumberToObject(l, "subjects", (double)subjects);
        cJSON_AddNumberToObject(l, "charges", (double)charges);
        cJSON_AddNumberToObject(l, "charged_since_start", (double)m->c.charges);
        cJSON_AddNumberToObject(l, "bits_since_start", m->c.bits);
        cJSON_AddNumberToObject(l, "charge_failures", (double)m->c.charge_failed);
        cJSON_AddNumberToObject(l, "rejected_over_epsilon", (double)m->c.over_epsilon);
        cJSON_AddNumberToObject(l, "rejected_over_budget", (double)m->c.over_budget);
    }
    cJSON *x = cJSON_AddObjectToObject(r, "mnc_d");
    if (!x)
        return;
    size_t pd = 0, pa = 0;
    for (const dreq *q = m->head; q; q = q->next) {
        pd += q->st == RS_DELEGATING;
        pa += q->st == RS_APPROVAL;
    }
    cJSON_AddNumberToObject(x, "selected", (double)m->c.selected);
    cJSON_AddNumberToObject(x, "delegated", (double)m->c.delegated);
    cJSON_AddNumberToObject(x, "approved", (double)m->c.approved);
    cJSON_AddNumberToObject(x, "approval_timeout", (double)m->c.approval_timeout);
    cJSON_AddNumberToObject(x, "denied", (double)m->c.denied);
    cJSON_AddNumberToObject(x, "abstained", (double)m->c.abstained);
    cJSON_AddNumberToObject(x, "delegations_started", (double)m->c.pending_delegation);
    cJSON_AddNumberToObject(x, "approvals_requested", (double)m->c.pending_approval);
    cJSON_AddNumberToObject(x, "pending_delegation", (double)pd);
    cJSON_AddNumberToObject(x, "pending_approval", (double)pa);
    cJSON_AddNumberToObject(x, "broker_unavailable", (double)m->c.broker_unavailable);
    cJSON_AddNumberToObject(x, "broker_timeout", (double)m->c.broker_timeout);
    cJSON_AddNumberToObject(x, "broker_failure", (double)m->c.broker_failure);
    cJSON_AddNumberToObject(x, "receipt_rejected", (double)m->c.receipt_rejected);
    cJSON_AddNumberToObject(x, "approval_skipped", (double)m->c.approval_skipped);
    cJSON *b = cJSON_AddArrayToObject(x, "brokers_connected");
    for (int i = 0; b && i < d->policy->n_principals && i < MNC_MAX_PRINCIPALS; i++)
        if (d->policy->principals[i].cls == MNC_SINK_AGENT && d->policy->principals[i].role == MNC_ROLE_BROKER &&
            m->conns[i] > 0)
            cJSON_AddItemToArray(b, cJSON_CreateString(d->policy->principals[i].name));
}
