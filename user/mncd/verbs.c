// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* verbs.c - one handler per protocol verb.
 *
 * Rules every handler follows:
 *   - the caller's identity is `who` (from the kernel), never a request field;
 *   - every operation on an object goes through mnc_monitor_check, and the decision (allow or
 *     deny, with its reason) is written to the audit log before anything else happens;
 *   - content leaves mncd only as mnc_disclosure_render() of an object's authorised values
 *     (contract-boundary assembly): no agent-supplied text is ever relayed;
 *   - the consequences of an allow (consume a turn, add a holder, queue a delivery, store a
 *     memory entry) go through store.c, so they are journaled in the same commit as the audit
 *     record, before the response is sent.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnc/monitor.h"
#include "mnc/select.h"
#include "mnc/state.h"
#include "answer.h"
#include "json_write.h"
#include "mncd.h"

/* ---- helpers */

static cJSON *oom(const mnc_request *q) { return mnc_resp_error(q ? q->id : NULL, MNC_R_INTERNAL, "out of memory"); }

static mnc_disclosure *lookup(mncd *d, const char *hex)
{
    mnc_oid id;
    if (!hex || mnc_oid_parse(hex, &id) != 0)
        return NULL;
    return mnc_registry_get(&d->store.reg, &id);
}

static const char *contract_purpose(const mncd *d, const mnc_disclosure *o)
{
    return o && o->contract < d->policy->n_contracts ? d->policy->contracts[o->contract].purpose : "";
}

/* Adds "object" (lossless JSON) and "message" (rendered) to a response. The object is added
 * as its printed text (mnc_disclosure_write_json: the bytes mnc_disclosure_to_json's tree
 * prints, json_write.h) in one raw item, not as a tree of ~40 items allocated, printed and
 * freed per answer; a response is only printed (loop.c), never read. The text is written into
 * one buffer reused by every answer (one thread; nothing runs between the write and the copy
 * cJSON_AddRawToObject makes). */
static mnc_jbuf obj_text;
/* send's and recv's answers as text (answer.h): the answer, and recv's two arrays while the
 * inbox is read; reused by every answer (one thread, each written and copied in one call). */
static mnc_jbuf ans, ans_msgs, ans_refused;

static int add_object(mncd *d, cJSON *resp, const mnc_disclosure *o, bool with_message)
{
    obj_text.len = 0;
    if (mnc_disclosure_write_json(&obj_text, d->policy, o) != 0 || mnc_jbuf_reserve(&obj_text, 1) != 0)
        return -1;
    obj_text.p[obj_text.len] = '\0';
    if (!cJSON_AddRawToObject(resp, "object", obj_text.p))
        return -1;
    if (with_message) {
        char *m = mnc_disclosure_render(d->policy, o);
        if (!m || !cJSON_AddStringToObject(resp, "message", m)) {
            free(m);
            return -1;
        }
        free(m);
    }
    return 0;
}

/* Adds the scored candidates to a disclose's answer as the text of the array of objects they
 * used to be built as ({"name","submitted","risk" (null if NaN),"verdict"[,"detail"]}), one
 * raw item: mnc_json_print's bytes for that tree (json_write.h). Written into obj_text, which
 * nothing else uses between this write and the copy. 0 or -1 (out of memory). */
static int write_candidates(mnc_jbuf *cb, const mnc_selection *sel)
{
    int rc = MNC_JBUF_LIT(cb, "[");
    for (int i = 0; rc == 0 && i < sel->n; i++) {
        const mnc_scored *sc = &sel->c[i];
        rc = i ? MNC_JBUF_LIT(cb, ",{\"name\":") : MNC_JBUF_LIT(cb, "{\"name\":");
        rc = rc ? rc : mnc_jbuf_str(cb, sc->name);
        rc = rc ? rc
                : (sc->submitted ? MNC_JBUF_LIT(cb, ",\"submitted\":true,\"risk\":")
                                 : MNC_JBUF_LIT(cb, ",\"submitted\":false,\"risk\":"));
        rc = rc ? rc : (sc->risk == sc->risk ? mnc_jbuf_num(cb, sc->risk) : MNC_JBUF_LIT(cb, "null"));
        rc = rc ? rc : MNC_JBUF_LIT(cb, ",\"verdict\":");
        rc = rc ? rc : mnc_jbuf_str(cb, mnc_reason_name(sc->verdict));
        if (rc == 0 && sc->detail[0]) {
            rc = MNC_JBUF_LIT(cb, ",\"detail\":");
            rc = rc ? rc : mnc_jbuf_str(cb, sc->detail);
        }
        rc = rc ? rc : MNC_JBUF_LIT(cb, "}");
    }
    return rc ? rc : MNC_JBUF_LIT(cb, "]");
}

static int add_candidates(cJSON *resp, const mnc_selection *sel)
{
    mnc_jbuf *cb = &obj_text;
    cb->len = 0;
    int rc = write_candidates(cb, sel);
    rc = rc ? rc : mnc_jbuf_put(cb, "", 1); /* the NUL */
    return rc == 0 && cJSON_AddRawToObject(resp, "candidates", cb->p) ? 0 : -1;
}

/* A disclose's answer as text (answer.h): the bytes of the tree mnc_resp_new, add_object,
 * "form", "queued_to", mncd_mncl_selected and add_candidates built. NULL when out of memory
 * before the MNC-L members (the caller answers as the tree path did then); once they are
 * written, candidates that cannot be written are left out, as add_candidates leaves them. */
static cJSON *disclose_answer(mncd *d, const mnc_request *q, const mnc_disclosure *o, const char *form,
                              const char *queued_to, const mncd_mncl_ctx *mx, const mnc_selection *sel)
{
    ans.len = 0;
    int rc = mncd_ans_head(&ans, q->id, true, "allow", mnc_reason_name(MNC_OK));
    rc = rc ? rc : MNC_JBUF_LIT(&ans, ",\"object\":");
    rc = rc ? rc : mnc_disclosure_write_json(&ans, d->policy, o);
    char *m = rc ? NULL : mnc_disclosure_render(d->policy, o);
    rc = rc ? rc : !m ? -1 : mncd_ans_str(&ans, "message", m);
    free(m);
    rc = rc ? rc : mncd_ans_str(&ans, "form", form);
    rc = rc ? rc : queued_to ? mncd_ans_str(&ans, "queued_to", queued_to) : -1;
    rc = rc ? rc
            : mncd_ans_selected(&ans, mx->ledger, mx->charged, mx->replayed, mx->limits.spent, mx->limits.epsilon,
                                mx->limits.budget);
    if (rc)
        return NULL;
    mncd_mncl_selected(d, NULL, mx); /* its count */
    size_t mark = ans.len;
    if (MNC_JBUF_LIT(&ans, ",\"candidates\":") != 0 || write_candidates(&ans, sel) != 0)
        ans.len = mark;
    return mncd_ans_item(&ans);
}

/* Runs the monitor for one operation, audits it, and returns the reason. */
static mnc_reason check(mncd *d, const char *op, int sender, int receiver, mnc_channel ch, const char *purpose,
                        const mnc_oid *oid, const mnc_disclosure *o)
{
    mnc_op e = {.sender = sender,
                .receiver = receiver,
                .purpose = purpose ? purpose : contract_purpose(d, o),
                .ch = ch,
                .fields = NULL,
                .now_ms = mnc_now_ms()};
    mnc_reason r = mnc_monitor_check(d->policy, &e, o);
    if (r != MNC_OK && mncd_observe_pass(d, strcmp(op, "recv") == 0 ? receiver : sender, r)) { /* observe.c */
        mncd_audit(d, op, sender, receiver, oid, "would_deny", r, mnc_channel_name(ch));
        return MNC_OK;
    }
    mncd_audit(d, op, sender, receiver, oid, r == MNC_OK ? "allow" : "deny", r, mnc_channel_name(ch));
    return r;
}

static cJSON *deny(const mnc_request *q, mnc_reason r, const char *what)
{
    return mnc_resp_deny(q->id, r, "%s denied: %s", what, mnc_reason_name(r));
}

/* A delivery (recv, mem.get): records the object's scope against the reader (flow.c: what it
 * may still disclose), consumes one turn and makes the reader a holder. */
static int deliver(mncd *d, mnc_disclosure *o, int reader)
{
    if (mncd_flow_hold(d, reader, o) != 0)
        return -1;
    if (o->turns_left != MNC_TURNS_UNBOUNDED && o->turns_left > 0)
        o->turns_left--;
    else if (mnc_set_has(&o->holders, (unsigned)reader))
        return 0; /* nothing changed: no journal record */
    mnc_set_add(&o->holders, (unsigned)reader);
    return mncd_store_touch(&d->store, o);
}

/* Kernel on means confined: with the kernel layer active, an object is handed only to a reader
 * the kernel confines, i.e. identified by a cgroup `mncctl run` registered. A reader identified
 * by uid (config "agents", the policy's "uids") has no taint a program consults: refused
 * (not_confined, audited), unless its policy entry says "confinement": "none" - then the
 * delivery is allowed and audited every time (confined_delivery).
 * confined: before the monitor check (so a refusal leaves no misleading "allow" record).
 * Returns MNC_OK or MNC_R_NOT_CONFINED (audited). */
static bool unconfined_ok(const mncd *d, const mncd_ident *w)
{
    return w->agent >= 0 && w->agent < d->policy->n_principals && d->policy->principals[w->agent].confinement_none;
}

static mnc_reason confined(mncd *d, const mncd_ident *w, const mnc_oid *oid, const char *op)
{
    if (!mncd_kern_on(d) || w->via == MNCD_VIA_CGROUP || unconfined_ok(d, w))
        return MNC_OK;
    mncd_audit(d, op, w->agent, w->agent, oid, "deny", MNC_R_NOT_CONFINED,
               "kernel layer on, reader not in a registered agent cgroup (identified by uid)");
    return MNC_R_NOT_CONFINED;
}

static cJSON *not_confined(const mnc_request *q, const char *op)
{
    return mnc_resp_deny(q->id, MNC_R_NOT_CONFINED,
                         "%s denied: not_confined (the kernel layer is "
                         "on and this agent is not confined by it)",
                         op);
}

/* At the delivery itself: records each delivery to an agent with "confinement": "none". */
static void confined_delivery(mncd *d, const mncd_ident *w, const mnc_oid *oid, const char *op)
{
    if (mncd_kern_on(d) && w->via != MNCD_VIA_CGROUP && unconfined_ok(d, w))
        mncd_audit(d, op, w->agent, w->agent, oid, "allow", MNC_OK,
                   "confinement none: delivered to an agent the kernel does not confine");
}

/* Hands one checked object to its reader (confined() already passed): taint the reader in the
 * kernel first (kern_hold.c; if that fails nothing is delivered - fail closed), then consume the
 * turn and answer with the object and its rendered message. */
static cJSON *hand_over(mncd *d, const mnc_request *q, const mncd_ident *w, mnc_disclosure *o, const char *op)
{
    int reader = w->agent;
    if (confined(d, w, &o->id, op) != MNC_OK) /* defensive: callers check first */
        return not_confined(q, op);
    confined_delivery(d, w, &o->id, op);
    if (mncd_kern_hold(d, reader, o, op) != 0)
        return mnc_resp_error(q->id, MNC_R_INTERNAL,
                              "%s refused before delivery by the kernel layer "
                              "(taint update, sweep or fd scan: see the audit log; fail closed)",
                              op);
    if (deliver(d, o, reader) != 0)
        return oom(q);
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp && add_object(d, resp, o, true) != 0) {
        cJSON_Delete(resp);
        return oom(q);
    }
    return resp;
}

static int principal_or(const mncd *d, const char *name) { return name ? mnc_policy_principal(d->policy, name) : -1; }

/* mnc_selection holds every candidate's scores (tens of KiB): one is kept for the next
 * disclose instead of a malloc and free each (glibc's large-chunk path cost ~4.5k
 * instructions a call). A disclose that suspends in a job (fleet mode) while holding it makes
 * the next one allocate its own, so two never share one. */
static mnc_selection *sel_spare;

static mnc_selection *sel_get(void)
{
    mnc_selection *s = sel_spare;
    sel_spare = NULL;
    return s ? s : malloc(sizeof(*s));
}

static void sel_put(mnc_selection *s)
{
    if (!sel_spare)
        sel_spare = s;
    else
        free(s);
}

/* ---- agent verbs */

static cJSON *v_disclose(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    const mnc_policy *p = d->policy;
    int c;
    if (q->contract) {
        c = mnc_policy_contract(p, q->contract);
        if (c < 0)
            return mnc_resp_error(q->id, MNC_R_INVALID, "unknown contract \"%s\"", q->contract);
    } else {
        int r = mnc_policy_agent(p, q->recipient);
        if (r < 0)
            return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT, "unknown recipient \"%s\"", q->recipient);
        c = mnc_policy_contract_for(p, q->purpose, r);
        if (c < 0)
            return mnc_resp_error(q->id, MNC_R_INVALID,
                                  "no contract for purpose \"%s\" and "
                                  "recipient \"%s\"",
                                  q->purpose, q->recipient);
    }
    const mnc_contract *ct = &p->contracts[c];
    if (!mnc_set_has(&ct->issuers, (unsigned)w->agent)) {
        mncd_audit(d, "disclose", w->agent, ct->scope.recipient, NULL, "deny", MNC_R_NOT_ISSUER, ct->id);
        return mnc_resp_deny(q->id, MNC_R_NOT_ISSUER,
                             "agent %s may not disclose under contract "
                             "%s",
                             mncd_peer_name(d, w->agent), ct->id);
    }
    /* What the issuer holds: its state may carry bytes of objects delivered to it (flow.c) */
    int held = -1;
    mnc_reason fr = mncd_flow_check(d, w->agent, c, ct->scope.recipient, &held);
    if (fr != MNC_OK) {
        const char *hk = held >= 0 ? p->contracts[held].id : "?";
        mncd_audit(d, "disclose", w->agent, ct->scope.recipient, NULL, "deny", fr, hk);
        return mnc_resp_deny(q->id, fr,
                             "agent %s holds an object of contract %s, whose sinks do not include %s "
                             "and whose onward contracts do not include %s",
                             mncd_peer_name(d, w->agent), hk, mncd_peer_name(d, ct->scope.recipient), ct->id);
    }
    mnc_state st;
    mnc_state_init(&st);
    mncd_mncl_ctx mx = {0}; /* MNC-L: history and limits (mncl_gate.c) */
    mnc_errors e;
    mnc_errors_init(&e);
    if (mnc_state_from_json(p, q->state, &st, "state", &e) != 0) {
        cJSON *r = mnc_resp_error(q->id, MNC_R_INVALID, "%s", e.n ? e.msg[0] : "bad state");
        mnc_errors_free(&e);
        return r;
    }
    mnc_errors_free(&e);
    /* Submitted candidates: validated by selection (fields, exposure scan); never released
     * as text. */
    mnc_submitted sub[MNC_MAX_SUBMITTED];
    int nsub = 0;
    cJSON *resp = NULL;
    for (const cJSON *it = q->candidates ? q->candidates->child : NULL; it; it = it->next) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(it, "fields");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(it, "text");
        if (nsub >= MNC_MAX_SUBMITTED || !cJSON_IsObject(it) || cJSON_GetArraySize(it) != 3 || !cJSON_IsString(nm) ||
            strlen(nm->valuestring) >= MNC_NAME_MAX || !cJSON_IsArray(fl) || !cJSON_IsString(tx)) {
            resp = mnc_resp_error(q->id, MNC_R_INVALID,
                                  "candidates: at most %d objects "
                                  "{\"name\", \"fields\": [...], \"text\"}",
                                  MNC_MAX_SUBMITTED);
            goto out;
        }
        mnc_submitted *s = &sub[nsub];
        memset(s, 0, sizeof(*s));
        snprintf(s->name, sizeof(s->name), "%s", nm->valuestring);
        s->text = tx->valuestring;
        for (const cJSON *f = fl->child; f; f = f->next) {
            int fid = cJSON_IsString(f) ? mnc_policy_field(p, f->valuestring) : -1;
            if (fid < 0) {
                resp = mnc_resp_error(q->id, MNC_R_INVALID, "candidates[%d]: unknown field", nsub);
                goto out;
            }
            mnc_set_add(&s->fields, (unsigned)fid);
        }
        nsub++;
    }
    mnc_select_req sr = {
        .contract = c, .recipient = ct->scope.recipient, .state = &st, .submitted = sub, .n_submitted = nsub};
    if ((resp = mncd_mncl_prepare(d, q, c, &st, &sr, &mx)) != NULL)
        goto out;
    if ((resp = mncd_tainted_identifiers(d, w, q, c, &mx)) != NULL)
        goto out;
    mnc_selection *sel = sel_get();
    if (!sel) {
        resp = oom(q);
        goto out;
    }
    mnc_reason r = mnc_select(p, &sr, sel);
    if (r == MNC_R_INVALID || r == MNC_R_INTERNAL) {
        mncd_audit(d, "disclose", w->agent, ct->scope.recipient, NULL, "error", r, ct->id);
        resp = mnc_resp_error(q->id, r, "selection failed");
        sel_put(sel);
        goto out;
    }
    if (r == MNC_R_NO_CANDIDATE || sel->chosen < 0) {
        /* MNC-D: the contract's failure order (mncd_failure.c). Each outcome is its own decision,
         * never a success. */
        resp = mncd_mncl_failure(d, w, q, c, &st, sel, &mx);
    } else {
        const mnc_scored *ch = &sel->c[sel->chosen];
        const char *form = ch->submitted ? "" : ch->name;
        mnc_disclosure *o = calloc(1, sizeof(*o));
        mnc_reason ir =
            o ? mnc_disclosure_issue(p, c, w->agent, form, &ch->fields, &st, mnc_now_ms(), o) : MNC_R_INTERNAL;
        if (ir != MNC_OK) {
            free(o);
            mncd_audit(d, "disclose", w->agent, ct->scope.recipient, NULL, "deny", ir, ct->id);
            resp = mnc_resp_deny(q->id, ir, "issue refused: %s", mnc_reason_name(ir));
        } else {
            /* First hop: the monitor must agree that the issuer may message the recipient. */
            mnc_reason mr = check(d, "disclose", w->agent, ct->scope.recipient, MNC_CH_MESSAGE, NULL, &o->id, o);
            if (mr != MNC_OK) {
                mnc_disclosure_free(o);
                free(o);
                resp = deny(q, mr, "first hop");
            } else if ((resp = mncd_mncl_charge(d, q, c, w->agent, &st, o, ch->risk, &mx))) {
                /* MNC-L: the charge is durable before anything leaves, or nothing does */
                mnc_disclosure_free(o);
                free(o);
            } else if (mncd_store_put_object(&d->store, o) != 0) {
                mnc_disclosure_free(o);
                free(o);
                resp = oom(q);
            } else if (mncd_store_push(&d->store, ct->scope.recipient, &o->id, w->agent, false, o->issued_ms) != 0) {
                resp = mnc_resp_error(q->id, MNC_R_INTERNAL, "recipient inbox full or OOM");
            } else if ((resp = disclose_answer(d, q, o, ch->name, mncd_peer_name(d, ct->scope.recipient), &mx, sel))) {
                sel_put(sel); /* the answer is complete, candidates included */
                goto out;
            } else {
                resp = oom(q); /* as the tree path answered when it could not build the answer */
                mncd_mncl_selected(d, resp, &mx);
            }
        }
    }
    if (resp) /* out of memory: the answer goes without them, as when the array could not be built */
        (void)add_candidates(resp, sel);
    sel_put(sel);
out:
    mncd_mncl_ctx_free(&mx);
    mnc_state_free(&st);
    return resp;
}

/* send (message | tool), forward, tool, log: move an object to a receiver. */
static cJSON *v_move(mncd *d, const mncd_ident *w, const mnc_request *q, mnc_channel ch, const char *to)
{
    const char *op = mnc_verb_name(q->verb);
    int rcv = principal_or(d, to);
    mnc_oid oid;
    if (mnc_oid_parse(q->object, &oid) != 0)
        return mnc_resp_error(q->id, MNC_R_INVALID, "bad object id");
    mnc_disclosure *o = mnc_registry_get(&d->store.reg, &oid);
    if (rcv < 0) {
        /* not the name: a receiver nobody registered is text of the sender's choosing */
        mncd_audit(d, op, w->agent, -1, &oid, "deny", MNC_R_UNKNOWN_AGENT, "unknown receiver");
        return mnc_resp_deny(q->id, MNC_R_UNKNOWN_AGENT, "unknown receiver \"%s\"", to);
    }
    mnc_reason r = check(d, op, w->agent, rcv, ch, q->purpose, &oid, o);
    if (r != MNC_OK)
        return deny(q, r, op);
    enum mnc_sink_class cls = d->policy->principals[rcv].cls;
    if (ch == MNC_CH_LOG) {
        /* The log line carries only the rendered, authorised content. */
        char path[PATH_MAX + 64];
        const char *sp = d->policy->principals[rcv].path;
        if (sp[0])
            snprintf(path, sizeof(path), "%s", sp);
        else
            snprintf(path, sizeof(path), "%s/logs/%s.log", d->cfg.state_dir, to);
        char *m = mnc_disclosure_render(d->policy, o);
        cJSON *l = cJSON_CreateObject();
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&oid, hex);
        char *txt = NULL;
        if (m && l && cJSON_AddNumberToObject(l, "time", (double)mnc_now_ms()) &&
            cJSON_AddStringToObject(l, "agent", mncd_peer_name(d, w->agent)) &&
            cJSON_AddStringToObject(l, "object", hex) && cJSON_AddStringToObject(l, "message", m))
            txt = cJSON_PrintUnformatted(l);
        cJSON_Delete(l);
        free(m);
        /* --privsep: the enforcer opened it (root's file); the monitor only appends */
        int fd = !txt     ? -1
                 : d->psp ? mon_kern_sink_fd(d, rcv)
                          : open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        int ok = 0;
        if (fd >= 0) {
            size_t n = strlen(txt);
            txt[n] = '\n'; /* overwrite the NUL; write exactly n+1 bytes */
            ok = write(fd, txt, n + 1) == (ssize_t)(n + 1) && fdatasync(fd) == 0;
            close(fd);
        }
        cJSON_free(txt);
        if (!ok) {
            mncd_audit(d, op, w->agent, rcv, &oid, "error", MNC_R_INTERNAL, "log write failed");
            return mnc_resp_error(q->id, MNC_R_INTERNAL, "cannot write log sink %s (%s)", to, path);
        }
        cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
        return resp;
    }
    bool queue = (ch == MNC_CH_MESSAGE || ch == MNC_CH_FORWARD) && cls == MNC_SINK_AGENT;
    if (queue && mncd_store_push(&d->store, rcv, &oid, w->agent, ch == MNC_CH_FORWARD, mnc_now_ms()) != 0)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "receiver inbox full or OOM");
    if (queue) { /* written as text (answer.h): the bytes of the tree it used to be */
        ans.len = 0;
        if (mncd_ans_head(&ans, q->id, true, "allow", mnc_reason_name(MNC_OK)) != 0 ||
            mncd_ans_str(&ans, "queued_to", to) != 0)
            return NULL;
        return mncd_ans_item(&ans);
    }
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (!resp)
        return NULL;
    {
        /* Tool calls and external sinks: mncd does not run tools or open connections; it
         * returns the authorised argument for the caller's tool runner to use. */
        char *m = mnc_disclosure_render(d->policy, o);
        if (!m || !cJSON_AddStringToObject(resp, "argument", m)) {
            free(m);
            cJSON_Delete(resp);
            return oom(q);
        }
        free(m);
    }
    return resp;
}

/* recv: the caller's inbox (re-checked at delivery), or a re-read of one object. */
static cJSON *v_recv(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    if (q->object) {
        mnc_oid oid;
        if (mnc_oid_parse(q->object, &oid) != 0)
            return mnc_resp_error(q->id, MNC_R_INVALID, "bad object id");
        mnc_disclosure *o = mnc_registry_get(&d->store.reg, &oid);
        if (confined(d, w, &oid, "recv") != MNC_OK)
            return not_confined(q, "recv");
        mnc_reason r = check(d, "recv", w->agent, w->agent, MNC_CH_RECV, q->purpose, &oid, o);
        if (r != MNC_OK)
            return deny(q, r, "recv");
        return hand_over(d, q, w, o, "recv");
    }
    int max = q->max > 0 ? q->max : 100;
    /* Nothing leaves the inbox for a reader the kernel does not confine (kernel layer on):
     * the messages stay queued. With "confinement": "none" each delivery is audited below. */
    if (d->store.inbox[w->agent].n > 0 && confined(d, w, &d->store.inbox[w->agent].head->id, "recv") != MNC_OK)
        return mnc_resp_deny(q->id, MNC_R_NOT_CONFINED,
                             "recv denied: not_confined (the kernel "
                             "layer is on and this agent is not confined by it; %zu message(s) "
                             "stay queued)",
                             d->store.inbox[w->agent].n);
    /* The answer is written as text (answer.h): {head,"messages":[..],"denied":[..]}, the
     * bytes of the tree it used to be built as. */
    ans.len = ans_msgs.len = ans_refused.len = 0;
    if (mncd_ans_head(&ans, q->id, true, "allow", mnc_reason_name(MNC_OK)) != 0)
        return oom(q);
    bool first_msg = true, first_refused = true;
    for (int i = 0; i < max; i++) {
        mncd_msg m;
        int pr = mncd_store_pop(&d->store, w->agent, &m);
        if (pr <= 0)
            break;
        mnc_disclosure *o = mnc_registry_get(&d->store.reg, &m.id);
        /* Re-check at delivery. A first-hop message is a recv by the contract recipient; a
         * forwarded one repeats the forward check (the forwarder must still hold a live object
         * and the reader must still be in phi). */
        mnc_reason r = m.forwarded ? check(d, "recv", m.from, w->agent, MNC_CH_FORWARD, q->purpose, &m.id, o)
                                   : check(d, "recv", w->agent, w->agent, MNC_CH_RECV, q->purpose, &m.id, o);
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&m.id, hex);
        const char *from = mncd_peer_name(d, m.from) ? mncd_peer_name(d, m.from) : "?";
        size_t mark = ans_refused.len;
        if (r != MNC_OK) {
            /* Re-checked at delivery: an object that expired or was revoked while queued is
             * dropped and reported, never delivered. */
            if (mncd_ans_refusal(&ans_refused, first_refused, from, hex, "deny", mnc_reason_name(r), NULL) != 0) {
                ans_refused.len = mark;
                break;
            }
            first_refused = false;
            continue;
        }
        if (mncd_kern_hold(d, w->agent, o, "recv") != 0) {
            /* taint before delivery failed (kern_hold.c): not delivered, fail closed; the message
             * goes back to the inbox (at its tail) and the caller is told */
            if (mncd_store_push(&d->store, w->agent, &m.id, m.from, m.forwarded, m.time_ms) != 0)
                d->fatal = true;
            if (mncd_ans_refusal(&ans_refused, first_refused, from, hex, "error", mnc_reason_name(MNC_R_INTERNAL),
                                 "refused before delivery by the kernel layer (taint update, "
                                 "sweep or fd scan: see the audit log); kept queued") != 0)
                ans_refused.len = mark;
            else
                first_refused = false;
            break;
        }
        confined_delivery(d, w, &m.id, "recv");
        if (deliver(d, o, w->agent) != 0)
            break;
        mark = ans_msgs.len;
        obj_text.len = 0;
        char *text =
            mnc_disclosure_write_json(&obj_text, d->policy, o) == 0 ? mnc_disclosure_render(d->policy, o) : NULL;
        if (!text || mncd_ans_msg(&ans_msgs, first_msg, from, obj_text.p, obj_text.len, text) != 0) {
            free(text);
            ans_msgs.len = mark;
            break;
        }
        free(text);
        first_msg = false;
    }
    if (MNC_JBUF_LIT(&ans, ",\"messages\":[") != 0 || mnc_jbuf_put(&ans, ans_msgs.p, ans_msgs.len) != 0 ||
        MNC_JBUF_LIT(&ans, "],\"denied\":[") != 0 || mnc_jbuf_put(&ans, ans_refused.p, ans_refused.len) != 0 ||
        MNC_JBUF_LIT(&ans, "]") != 0)
        return oom(q);
    cJSON *resp = mncd_ans_item(&ans);
    return resp ? resp : oom(q);
}

static int parse_names(const mncd *d, const cJSON *arr, bool fields, mnc_set *out, char *bad, size_t n)
{
    mnc_set_clear(out);
    for (const cJSON *it = arr->child; it; it = it->next) {
        int id = -1;
        if (cJSON_IsString(it))
            id = fields ? mnc_policy_field(d->policy, it->valuestring)
                        : mnc_policy_principal(d->policy, it->valuestring);
        if (id < 0) {
            snprintf(bad, n, "%s", cJSON_IsString(it) ? it->valuestring : "(not a string)");
            return -1;
        }
        mnc_set_add(out, (unsigned)id);
    }
    return 0;
}

static cJSON *v_derive(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    mnc_oid oid;
    if (mnc_oid_parse(q->object, &oid) != 0)
        return mnc_resp_error(q->id, MNC_R_INVALID, "bad object id");
    mnc_disclosure *o = mnc_registry_get(&d->store.reg, &oid);
    mnc_set fs, ss;
    mnc_lifetime life = {0};
    char bad[80];
    if (q->fields && parse_names(d, q->fields, true, &fs, bad, sizeof(bad)) != 0)
        return mnc_resp_error(q->id, MNC_R_INVALID, "unknown field \"%s\"", bad);
    if (q->sinks && parse_names(d, q->sinks, false, &ss, bad, sizeof(bad)) != 0)
        return mnc_resp_error(q->id, MNC_R_INVALID, "unknown sink \"%s\"", bad);
    if (q->lifetime) {
        for (const cJSON *it = q->lifetime->child; it; it = it->next) {
            bool sec = strcmp(it->string, "seconds") == 0;
            if ((!sec && strcmp(it->string, "turns") != 0) || !cJSON_IsNumber(it) || it->valuedouble < 1 ||
                it->valuedouble > 2147483647.0 || it->valuedouble != (double)(long)it->valuedouble)
                return mnc_resp_error(q->id, MNC_R_INVALID,
                                      "lifetime is {\"seconds\": N, "
                                      "\"turns\": N} with integers 1..2^31-1");
            if (sec)
                life.seconds = (uint64_t)it->valuedouble;
            else
                life.turns = (uint32_t)it->valuedouble;
        }
        if (!life.seconds && !life.turns)
            return mnc_resp_error(q->id, MNC_R_INVALID, "lifetime needs seconds or turns");
    }
    bool tainted = mncd_rec_is_tainted(d, w->agent);
    if (tainted) /* mncd chooses the numbers a tainted deriver asks for (chosen.c) */
        mncd_ladder_lifetime(&life);
    /* The deriver must hold a live object: the same existence/revocation/expiry/holder checks
     * the monitor applies to every operation. */
    mnc_reason r = !o                                                                   ? MNC_R_NO_OBJECT
                   : o->revoked                                                         ? MNC_R_REVOKED
                   : (o->expires_ms && mnc_now_ms() >= o->expires_ms) || !o->turns_left ? MNC_R_EXPIRED
                   : !mnc_set_has(&o->holders, (unsigned)w->agent)                      ? MNC_R_NOT_HOLDER
                                                                                        : MNC_OK;
    mnc_disclosure *c = NULL;
    if (r == MNC_OK) {
        mnc_narrowing n = {.fields = q->fields ? &fs : NULL,
                           .sinks = q->sinks ? &ss : NULL,
                           .life = q->lifetime ? &life : NULL,
                           .memory = q->memory};
        c = calloc(1, sizeof(*c));
        r = c ? mnc_disclosure_derive(o, w->agent, &n, mnc_now_ms(), c) : MNC_R_INTERNAL;
    }
    /* The narrowing is the deriver's choice, made knowing all it holds: the copy goes no
     * further than everything it holds may (its label, label.c), and no further than the parent
     * (derive's own rule). So a copy cannot carry, in the fields, sinks or lifetime it was given,
     * what a narrower object the deriver holds says. */
    mncd_label lbl;
    if (r == MNC_OK && tainted && mncd_label_of(d, w->agent, &lbl) == 0 && !mncd_label_empty(&lbl)) {
        mnc_set ls;
        bool lm;
        mncd_label_scope(&lbl, &ls, &lm);
        c->scope.sinks = mnc_set_and(&c->scope.sinks, &ls);
        c->scope.memory = c->scope.memory && lm;
    }
    mncd_audit(d, "derive", w->agent, o ? o->scope.recipient : -1, &oid, r == MNC_OK ? "allow" : "deny", r, NULL);
    if (r != MNC_OK) {
        free(c);
        return deny(q, r, "derive");
    }
    /* Turns are a budget of deliveries: a child takes its turns out of its parent's, so N
     * derived copies can never be delivered more often than the parent could have been. */
    uint32_t moved = c->turns_left;
    if (mncd_store_put_object(&d->store, c) != 0) {
        mnc_disclosure_free(c);
        free(c);
        return oom(q);
    }
    if (o->turns_left != MNC_TURNS_UNBOUNDED) {
        o->turns_left -= moved; /* derive guarantees moved <= o->turns_left */
        if (mncd_store_touch(&d->store, o) != 0)
            return oom(q);
    }
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp && add_object(d, resp, c, false) != 0) {
        cJSON_Delete(resp);
        return oom(q);
    }
    return resp;
}

static int default_store(const mncd *d)
{
    for (int i = 0; i < d->policy->n_principals; i++)
        if (d->policy->principals[i].cls == MNC_SINK_MEMORY)
            return i;
    return -1;
}

static cJSON *v_mem(mncd *d, const mncd_ident *w, const mnc_request *q, bool put)
{
    int store = q->store ? mnc_policy_principal(d->policy, q->store) : default_store(d);
    if (store < 0)
        return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT,
                              q->store ? "unknown memory store "
                                         "\"%s\""
                                       : "%sthe policy declares no memory store",
                              q->store ? q->store : "");
    const char *op = put ? "mem.put" : "mem.get";
    /* The key is the agent's choice: mncd keeps only its keyed hash (in memory and in the
     * journal), and it carries its writer's label (docs/protocol.md, "Identifiers an agent
     * chooses"). */
    char hkey[MNC_AUDIT_HV_MAX];
    mncd_hv_id(d, q->key, strlen(q->key), hkey);
    if (put) {
        mnc_oid oid;
        if (mnc_oid_parse(q->object, &oid) != 0)
            return mnc_resp_error(q->id, MNC_R_INVALID, "bad object id");
        mnc_disclosure *o = mnc_registry_get(&d->store.reg, &oid);
        mnc_reason r = check(d, op, w->agent, store, MNC_CH_MEMORY_WRITE, q->purpose, &oid, o);
        if (r != MNC_OK)
            return deny(q, r, op);
        mncd_label wl;
        if (mncd_label_of(d, w->agent, &wl) != 0)
            return mnc_resp_error(q->id, MNC_R_INTERNAL, "mem.put: no flow record (fail closed)");
        if (mncd_store_mem_put(&d->store, store, hkey, &oid, w->agent, mnc_now_ms(), &wl) != 0)
            return oom(q);
        return mnc_resp_new(q->id, true, "allow", MNC_OK);
    }
    /* Kernel on: only a reader the kernel confines learns anything here (before the lookup,
     * so that the refusal says nothing about it). */
    if (confined(d, w, NULL, op) != MNC_OK)
        return not_confined(q, op);
    /* Hit or miss, the answer is a function of the keys every writer chose: the reader gets the
     * store's key label first (label.c), or no answer. */
    const mncd_label *ml = mncd_store_mem_label(&d->store, store);
    if (ml && mncd_label_confer(d, w->agent, ml, op) != 0)
        return mnc_resp_error(q->id, MNC_R_INTERNAL,
                              "%s refused before answering by the kernel layer (the store's key label could "
                              "not be given to the reader: see the audit log; fail closed)",
                              op);
    const mncd_mem *m = mncd_store_mem_get(&d->store, store, hkey);
    mnc_disclosure *o = m ? mnc_registry_get(&d->store.reg, &m->id) : NULL;
    mnc_oid oid = m ? m->id : (mnc_oid){{0}};
    mnc_reason r = check(d, op, w->agent, store, MNC_CH_MEMORY_READ, q->purpose, m ? &oid : NULL, o);
    if (r != MNC_OK)
        return deny(q, r, op);
    return hand_over(d, q, w, o, op);
}

/* ---- admin verbs */

typedef struct list_ctx {
    mncd *d;
    cJSON *arr;
    int left;
} list_ctx;

static int list_one(mnc_disclosure *o, void *arg)
{
    list_ctx *l = arg;
    if (l->left-- <= 0)
        return 1;
    cJSON *x = cJSON_CreateObject();
    if (!x)
        return 1;
    char hex[MNC_OID_HEX];
    mnc_oid_hex(&o->id, hex);
    cJSON_AddStringToObject(x, "id", hex);
    cJSON_AddStringToObject(x, "contract", l->d->policy->contracts[o->contract].id);
    cJSON_AddStringToObject(x, "origin", mncd_peer_name(l->d, o->origin));
    cJSON_AddStringToObject(x, "recipient", mncd_peer_name(l->d, o->scope.recipient));
    cJSON *h = cJSON_AddArrayToObject(x, "holders");
    for (int a = mnc_set_next(&o->holders, -1); h && a >= 0; a = mnc_set_next(&o->holders, a))
        cJSON_AddItemToArray(h, cJSON_CreateString(mncd_peer_name(l->d, a)));
    cJSON_AddNumberToObject(x, "expires_ms", (double)o->expires_ms);
    if (o->turns_left == MNC_TURNS_UNBOUNDED)
        cJSON_AddNullToObject(x, "turns_left");
    else
        cJSON_AddNumberToObject(x, "turns_left", o->turns_left);
    cJSON_AddBoolToObject(x, "revoked", o->revoked);
    cJSON_AddItemToArray(l->arr, x);
    return 0;
}

typedef struct revoke_ctx {
    mncd *d;
    int changed;
} revoke_ctx;

/* Revocation cascades to derived objects: a child of a revoked parent is revoked too. */
static int revoke_children(mnc_disclosure *o, void *arg)
{
    revoke_ctx *rc = arg;
    if (o->revoked || !o->has_parent)
        return 0;
    const mnc_disclosure *par = mnc_registry_get(&rc->d->store.reg, &o->parent);
    if (par && par->revoked) {
        o->revoked = true;
        if (mncd_store_touch(&rc->d->store, o) != 0)
            rc->d->fatal = true;
        mncd_audit(rc->d, "revoke", -1, -1, &o->id, "allow", MNC_OK, "cascade from parent");
        rc->changed++;
    }
    return 0;
}

static cJSON *v_admin(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    (void)w;
    switch (q->verb) {
    case MNC_V_STATUS: {
        cJSON *r = mnc_resp_new(q->id, true, "allow", MNC_OK);
        if (!r)
            return NULL;
        cJSON_AddStringToObject(r, "version", MNCD_VERSION);
        cJSON_AddNumberToObject(r, "pid", getpid());
        cJSON_AddNumberToObject(r, "uptime_ms", (double)(mnc_now_ms() - d->started_ms));
        cJSON_AddNumberToObject(r, "clients", (double)d->n_clients);
        cJSON_AddNumberToObject(r, "requests", (double)d->n_requests);
        cJSON_AddNumberToObject(r, "objects", (double)d->store.reg.n);
        cJSON_AddNumberToObject(r, "queued", (double)mncd_store_inbox_total(&d->store));
        cJSON_AddNumberToObject(r, "memory_entries", (double)d->store.mem.n);
        cJSON_AddNumberToObject(r, "contracts", d->policy->n_contracts);
        cJSON_AddNumberToObject(r, "principals", d->policy->n_principals);
        cJSON_AddStringToObject(r, "state_dir", d->cfg.state_dir);
        cJSON_AddStringToObject(r, "audit_log", d->audit_path);
        cJSON_AddNumberToObject(r, "audit_seq", (double)mnc_audit_seq(d->audit));
        cJSON_AddStringToObject(r, "audit_head", mnc_audit_head(d->audit));
        cJSON *rec = cJSON_AddObjectToObject(r, "records"); /* records about agents (core.c) */
        if (rec) {
            cJSON_AddNumberToObject(rec, "rate", MNCD_REC_RATE);
            cJSON_AddNumberToObject(rec, "burst", MNCD_REC_BURST);
            cJSON_AddNumberToObject(rec, "folded", (double)mncd_audit_folded(d));
            cJSON_AddNumberToObject(rec, "scrubbed", (double)mncd_audit_scrubbed(d));
        }
        mncd_mncl_status(d, r);                             /* MNC-L / MNC-D counters */
        mncd_kern_status(d, r);                             /* "kernel": mode, backend, counters (kern_verbs.c) */
        mncd_observe_status(d, r);                          /* "observe" agents, loudly (observe.c) */
        cJSON *mt = mnc_metrics_json(d->metrics, d->audit); /* mncctl metrics (mnc/metrics.h) */
        if (mt)
            cJSON_AddItemToObject(r, "metrics", mt);
        return r;
    }
    case MNC_V_LIST: {
        cJSON *r = mnc_resp_new(q->id, true, "allow", MNC_OK);
        list_ctx l = {.d = d, .arr = cJSON_CreateArray(), .left = q->max > 0 ? q->max : 100};
        if (!r || !l.arr) {
            cJSON_Delete(r);
            cJSON_Delete(l.arr);
            return oom(q);
        }
        mnc_registry_each(&d->store.reg, list_one, &l);
        cJSON_AddNumberToObject(r, "total", (double)d->store.reg.n);
        cJSON_AddItemToObject(r, "objects", l.arr);
        return r;
    }
    case MNC_V_REVOKE: {
        mnc_disclosure *o = lookup(d, q->object);
        mnc_oid oid;
        if (mnc_oid_parse(q->object, &oid) != 0)
            return mnc_resp_error(q->id, MNC_R_INVALID, "bad object id");
        if (!o) {
            mncd_audit(d, "revoke", -1, -1, &oid, "deny", MNC_R_NO_OBJECT, NULL);
            return deny(q, MNC_R_NO_OBJECT, "revoke");
        }
        o->revoked = true;
        if (mncd_store_touch(&d->store, o) != 0)
            return oom(q);
        mncd_audit(d, "revoke", -1, -1, &oid, "allow", MNC_OK, NULL);
        revoke_ctx rc = {.d = d};
        do { /* fixpoint: depth of the derivation tree */
            rc.changed = 0;
            mnc_registry_each(&d->store.reg, revoke_children, &rc);
        } while (rc.changed);
        return mnc_resp_new(q->id, true, "allow", MNC_OK);
    }
    case MNC_V_APPROVE:
    case MNC_V_APPROVALS:
        return mncd_mncl_verb(d, w, q); /* MNC-D approval queue (mncd_failure.c) */
    case MNC_V_AUDIT: {
        if (mnc_audit_sync(d->audit) != 0) {
            d->fatal = true;
            return mnc_resp_error(q->id, MNC_R_INTERNAL, "audit sync failed");
        }
        cJSON *t = mnc_audit_tail(d->audit_path, q->max > 0 ? q->max : 20);
        cJSON *r = t ? mnc_resp_new(q->id, true, "allow", MNC_OK) : NULL;
        if (!r) {
            cJSON_Delete(t);
            return mnc_resp_error(q->id, MNC_R_INTERNAL, "cannot read the audit log");
        }
        cJSON_AddItemToObject(r, "records", t);
        return r;
    }
    case MNC_V_AGENT_REGISTER:
    case MNC_V_TAINT_RESET:
    case MNC_V_WORKSPACE_CLEAR:
        return mncd_kern_verb(d, w, q); /* kernel layer (kern_verbs.c) */
    case MNC_V_QUARANTINE_PUT:
        return mncd_quarantine_put(d, w, q); /* withheld agent output (quarantine.c) */
    default:
        return mnc_resp_error(q->id, MNC_R_INVALID, "not an admin verb");
    }
}

static cJSON *handle(mncd *d, const mncd_ident *w, const mnc_request *q);

cJSON *mncd_handle(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    /* The strings of a request from anyone but the admin: no record written while it is handled
     * carries them (core.c replaces them by their keyed hash). */
    mncd_scrub_request(d, w, q);
    mncd_note_kernel_taint(d, w);
    cJSON *r = handle(d, w, q);
    mncd_scrub_request(d, w, NULL);
    mncd_audit_tick(d);
    return r;
}

static cJSON *handle(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    d->n_requests++;
    mncd_mncl_tick(d); /* MNC-D deadlines (evaluated lazily, before any request is served) */
    const char *me = mncd_peer_name(d, w->agent);
    if (q->as && (!me || strcmp(q->as, me) != 0)) {
        mncd_audit(d, mnc_verb_name(q->verb), w->agent, -1, NULL, "error", MNC_R_UNKNOWN_AGENT,
                   "identity claim does not match the kernel's");
        return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT,
                              "identity mismatch: request claims "
                              "\"%s\" but the kernel identifies its sender as %s%s%s",
                              q->as, me ? "\"" : "", me ? me : "no agent", me ? "\"" : "");
    }
    if (q->verb == MNC_V_WHOAMI)
        return mncd_whoami(d, w, q);
    if (mnc_verb_is_admin(q->verb)) {
        if (!w->admin) {
            mncd_audit(d, mnc_verb_name(q->verb), w->agent, -1, NULL, "deny", MNC_R_UNKNOWN_AGENT,
                       "admin verb from a non-admin caller");
            return mnc_resp_deny(q->id, MNC_R_UNKNOWN_AGENT,
                                 "%s is an admin verb: it needs uid "
                                 "%u and a caller that is not an agent (caller uid %u%s)",
                                 mnc_verb_name(q->verb), d->cfg.admin_uid, (unsigned)w->uid,
                                 w->via == MNCD_VIA_CGROUP ? ", in an agent cgroup"
                                 : w->via == MNCD_VIA_UID  ? ", an agent by uid"
                                                           : "");
        }
        return v_admin(d, w, q);
    }
    if (w->agent < 0)
        return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT,
                              "the sender of this request (uid %u, "
                              "pid %d, cgroup %s) is not registered as an agent",
                              (unsigned)w->uid, (int)w->pid, w->cgroup[0] ? w->cgroup : "?");
    switch (q->verb) {
    case MNC_V_DISCLOSE:
        return v_disclose(d, w, q);
    case MNC_V_SEND: {
        bool tool = q->channel && strcmp(q->channel, "tool") == 0;
        return v_move(d, w, q, tool ? MNC_CH_TOOL : MNC_CH_MESSAGE, q->to);
    }
    case MNC_V_FORWARD:
        return v_move(d, w, q, MNC_CH_FORWARD, q->to);
    case MNC_V_TOOL:
        return v_move(d, w, q, MNC_CH_TOOL, q->tool);
    case MNC_V_LOG:
        return v_move(d, w, q, MNC_CH_LOG, q->sink);
    case MNC_V_RECV:
        return v_recv(d, w, q);
    case MNC_V_DERIVE:
        return v_derive(d, w, q);
    case MNC_V_MEM_PUT:
        return v_mem(d, w, q, true);
    case MNC_V_MEM_GET:
        return v_mem(d, w, q, false);
    case MNC_V_DISCLOSE_STATUS:
    case MNC_V_BROKER_NEXT:
    case MNC_V_BROKER_REPLY:
        return mncd_mncl_verb(d, w, q); /* MNC-D (mncd_failure.c) */
    default:
        return mnc_resp_error(q->id, MNC_R_INVALID, "unhandled verb");
    }
}
