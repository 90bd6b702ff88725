// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_dreq.c - MNC-D's request table (pending delegations and approvals) and its journal
 * (STATE_DIR/mncd-d.journal, replayed at start), and the start and stop of MNC-L and MNC-D
 * together (mncd_mncl_open/close, mncd_mncl_conn). The failure handler that fills the table is
 * mncd_failure.c; the shared types are mncl_int.h. */
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

/* ---- the request table */

void dq_free(dreq *r)
{
    if (!r)
        return;
    cJSON_Delete(r->state);
    cJSON_Delete(r->approvable);
    free(r);
}

void dq_link(struct mncd_mncl *m, dreq *r)
{
    r->prev = m->tail;
    r->next = NULL;
    if (m->tail)
        m->tail->next = r;
    else
        m->head = r;
    m->tail = r;
    if (dq_pending(r))
        m->n_pending++;
    else
        m->n_done++;
}

static void req_unlink(struct mncd_mncl *m, dreq *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        m->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        m->tail = r->prev;
    if (dq_pending(r))
        m->n_pending--;
    else
        m->n_done--;
}

dreq *dq_find(struct mncd_mncl *m, const char *id)
{
    for (dreq *r = m->head; r; r = r->next)
        if (strcmp(r->id, id) == 0)
            return r;
    return NULL;
}

/* Moves r to a final status (keeps the pending/done counts right). */
void dq_finish(struct mncd_mncl *m, dreq *r, rstatus st)
{
    if (dq_pending(r) && !(st == RS_DELEGATING || st == RS_APPROVAL)) {
        m->n_pending--;
        m->n_done++;
    }
    r->st = st;
}

/* Forgets the oldest finished requests beyond KEEP_DONE (memory bound; the journal keeps
 * them until the next start's compaction). */
void dq_prune(struct mncd_mncl *m)
{
    for (dreq *r = m->head; r && m->n_done > KEEP_DONE;) {
        dreq *nx = r->next;
        if (!dq_pending(r)) {
            req_unlink(m, r);
            dq_free(r);
        }
        r = nx;
    }
}

cJSON *dq_fields_json(const mnc_policy *p, const mnc_set *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int f = mnc_set_next(s, -1); a && f >= 0; f = mnc_set_next(s, f))
        cJSON_AddItemToArray(a, cJSON_CreateString(p->fields[f].name));
    return a;
}

/* The persisted form of a request (a full snapshot: replay keeps the last one per id). */
static cJSON *req_json(const mncd *d, const dreq *r)
{
    const mnc_policy *p = d->policy;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool ok = cJSON_AddStringToObject(o, "id", r->id) &&
              cJSON_AddStringToObject(o, "contract", p->contracts[r->contract].id) &&
              cJSON_AddStringToObject(o, "issuer", mncd_peer_name(d, r->issuer)) &&
              cJSON_AddItemToObject(o, "state", cJSON_Duplicate(r->state, true)) &&
              cJSON_AddNumberToObject(o, "step", r->step) && cJSON_AddStringToObject(o, "status", rs_name[r->st]) &&
              cJSON_AddNumberToObject(o, "created_ms", (double)r->created_ms) &&
              cJSON_AddNumberToObject(o, "deadline_ms", (double)r->deadline_ms) &&
              cJSON_AddStringToObject(o, "candidate", r->cand) &&
              cJSON_AddItemToObject(o, "candidate_fields", dq_fields_json(p, &r->cand_fields)) &&
              cJSON_AddNumberToObject(o, "candidate_risk", isfinite(r->cand_risk) ? r->cand_risk : 0) &&
              cJSON_AddItemToObject(o, "approvable",
                                    r->approvable ? cJSON_Duplicate(r->approvable, true) : cJSON_CreateArray()) &&
              cJSON_AddStringToObject(o, "object", r->object) && cJSON_AddStringToObject(o, "detail", r->detail);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Appends r's snapshot to the MNC-D journal (durable on return). 0 or -1. */
int dq_persist(mncd *d, const dreq *r)
{
    cJSON *o = req_json(d, r);
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    int rc = s ? mnc_journal_append(d->mncl->j, s, strlen(s), NULL) : -1;
    if (rc != 0)
        fprintf(stderr, "mncd: MNC-D journal append failed: %s\n", strerror(errno));
    cJSON_free(s);
    return rc;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k, bool *ok)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v)) {
        *ok = false;
        return 0;
    }
    return v->valuedouble;
}

typedef struct replay_ctx {
    mncd *d;
    char *err;
    size_t errlen;
} replay_ctx;

/* One journaled snapshot -> the table. A record that does not parse is corruption of a
 * CRC-valid record: refuse (the caller refuses to start). A record naming a contract or
 * agent the current policy lacks cannot be released any more: it is kept as abstained. */
static int replay_one(void *arg, uint64_t seq, const void *payload, size_t len)
{
    replay_ctx *rc = arg;
    mncd *d = rc->d;
    struct mncd_mncl *m = d->mncl;
    cJSON *o = cJSON_ParseWithLength(payload, len);
    const char *id = jstr(o, "id"), *ct = jstr(o, "contract"), *is = jstr(o, "issuer"), *stn = jstr(o, "status"),
               *cand = jstr(o, "candidate"), *obj = jstr(o, "object"), *det = jstr(o, "detail");
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(o, "state");
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(o, "candidate_fields");
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(o, "approvable");
    bool ok = true;
    double step = jnum(o, "step", &ok), cr = jnum(o, "created_ms", &ok), dl = jnum(o, "deadline_ms", &ok),
           risk = jnum(o, "candidate_risk", &ok);
    int st = -1;
    for (int i = 0; stn && i < RS_COUNT; i++)
        if (strcmp(stn, rs_name[i]) == 0)
            st = i;
    if (!o || !id || strlen(id) >= RID_LEN || !ct || !is || st < 0 || !cand || strlen(cand) >= MNC_NAME_MAX || !obj ||
        strlen(obj) >= MNC_OID_HEX || !det || !cJSON_IsObject(state) || !cJSON_IsArray(cf) || !cJSON_IsArray(ap) ||
        !ok) {
        snprintf(rc->err, rc->errlen, "record #%llu is not a well-formed MNC-D request", (unsigned long long)seq);
        cJSON_Delete(o);
        return -1;
    }
    dreq *r = dq_find(m, id);
    if (r) {
        req_unlink(m, r);
        dq_free(r);
    }
    r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(rc->err, rc->errlen, "out of memory");
        cJSON_Delete(o);
        return -1;
    }
    snprintf(r->id, sizeof(r->id), "%s", id);
    r->contract = mnc_policy_contract(d->policy, ct);
    r->issuer = mnc_policy_agent(d->policy, is);
    r->state = cJSON_Duplicate(state, true);
    r->approvable = cJSON_Duplicate(ap, true);
    r->step = (int)step;
    r->st = (rstatus)st;
    r->created_ms = (uint64_t)cr;
    r->deadline_ms = (uint64_t)dl;
    snprintf(r->cand, sizeof(r->cand), "%s", cand);
    r->cand_risk = risk;
    snprintf(r->object, sizeof(r->object), "%s", obj);
    snprintf(r->detail, sizeof(r->detail), "%s", det);
    for (const cJSON *f = cf->child; f; f = f->next) {
        int fid = cJSON_IsString(f) ? mnc_policy_field(d->policy, f->valuestring) : -1;
        if (fid < 0) {
            r->cand[0] = '\0'; /* the candidate no longer exists under this policy */
            break;
        }
        mnc_set_add(&r->cand_fields, (unsigned)fid);
    }
    if (!r->state || !r->approvable) {
        dq_free(r);
        snprintf(rc->err, rc->errlen, "out of memory");
        cJSON_Delete(o);
        return -1;
    }
    if (r->contract < 0 || r->issuer < 0 || (r->st == RS_APPROVAL && !r->cand[0])) {
        if (r->contract < 0)
            r->contract = 0; /* only for printing; it can never be released */
        if (dq_pending(r)) {
            r->st = RS_ABSTAINED;
            snprintf(r->detail, sizeof(r->detail),
                     "the current policy no longer has its "
                     "contract, issuer or candidate: abstained at restart");
        }
    }
    dq_link(m, r);
    cJSON_Delete(o);
    return 0;
}

/* ---- startup / shutdown */

int mncd_mncl_open(mncd *d)
{
    struct mncd_mncl *m = calloc(1, sizeof(*m));
    if (!m) {
        fprintf(stderr, "mncd: out of memory\n");
        return -1;
    }
    d->mncl = m;
    m->p = d->policy;
    const char *kac = getenv("MNCD_TEST_KILL_AFTER_CHARGE");
    m->kill_after_charge = kac ? atol(kac) : 0;
    if (!d->cfg.broker_timeout_ms)
        d->cfg.broker_timeout_ms = MNCD_DEFAULT_BROKER_TIMEOUT_MS;
    if (!d->cfg.approval_timeout_ms)
        d->cfg.approval_timeout_ms = MNCD_DEFAULT_APPROVAL_TIMEOUT_MS;
    if (snprintf(m->ledger_path, sizeof(m->ledger_path), "%s/ledger", d->cfg.state_dir) >=
            (int)sizeof(m->ledger_path) ||
        snprintf(m->jpath, sizeof(m->jpath), "%s/mncd-d.journal", d->cfg.state_dir) >= (int)sizeof(m->jpath)) {
        fprintf(stderr, "mncd: state dir path too long\n");
        return -1;
    }
    char notice[768], err[768];
    notice[0] = '\0';
    if (d->cfg.ledger_backend == MNC_LB_POSTGRES) {
        /* Fleet mode: the database must be reachable and its schema known at start (a
         * wrong database is a configuration error, not an outage). */
        m->ledger = mnc_lb_open_postgres(d->cfg.ledger_conninfo, d->cfg.fleet_host, err, sizeof(err));
        if (!m->ledger) {
            fprintf(stderr, "mncd: refusing to start: ledger (postgres): %s\n", err);
            return -1;
        }
        snprintf(m->ledger_path, sizeof(m->ledger_path), "postgres (host %s)", d->cfg.fleet_host);
        d->ledger = m->ledger;
    } else {
        m->ledger = mnc_lb_open_journal(m->ledger_path, false, notice, sizeof(notice), err, sizeof(err));
        if (!m->ledger) {
            /* Fail closed: a ledger that cannot be replayed in full would reset budgets. */
            fprintf(stderr, "mncd: refusing to start: ledger %s: %s\n", m->ledger_path, err);
            return -1;
        }
        d->ledger = m->ledger;
    }
    if (notice[0]) {
        fprintf(stderr, "mncd: notice: %s\n", notice);
        mncd_audit(d, "ledger.recover", -1, -1, NULL, "allow", MNC_OK, notice);
    }
    replay_ctx rc = {.d = d, .err = m->err, .errlen = sizeof(m->err)};
    m->err[0] = '\0';
    m->j = mnc_journal_open(m->jpath, replay_one, &rc, notice, sizeof(notice), err, sizeof(err));
    if (!m->j) {
        fprintf(stderr, "mncd: refusing to start: MNC-D queue %s: %s%s%s\n", m->jpath, err, m->err[0] ? ": " : "",
                m->err);
        return -1;
    }
    if (notice[0]) {
        fprintf(stderr, "mncd: notice: MNC-D queue: %s\n", notice);
        mncd_audit(d, "mnc-d.recover", -1, -1, NULL, "allow", MNC_OK, notice);
    }
    dq_prune(m);
    /* Compact: one snapshot per request still kept. */
    size_t n = 0;
    for (dreq *r = m->head; r; r = r->next)
        n++;
    char **pl = calloc(n ? n : 1, sizeof(*pl));
    size_t *lens = calloc(n ? n : 1, sizeof(*lens));
    size_t k = 0;
    bool ok = pl && lens;
    for (dreq *r = m->head; ok && r; r = r->next) {
        cJSON *o = req_json(d, r);
        pl[k] = o ? cJSON_PrintUnformatted(o) : NULL;
        cJSON_Delete(o);
        ok = pl[k] != NULL;
        if (ok)
            lens[k] = strlen(pl[k]);
        k++;
    }
    if (ok && mnc_journal_compact(m->j, (const void *const *)pl, lens, k) != 0)
        ok = false;
    for (size_t i = 0; pl && i < k; i++)
        cJSON_free(pl[i]);
    free(pl);
    free(lens);
    if (!ok) {
        fprintf(stderr, "mncd: refusing to start: cannot compact the MNC-D queue %s: %s\n", m->jpath, strerror(errno));
        return -1;
    }
    size_t subjects = 0, charges = 0;
    mnc_lb_stats(m->ledger, &subjects, &charges);
    char det[256];
    snprintf(det, sizeof(det), "ledger (%s) %zu charges over %zu subjects; MNC-D %zu pending",
             mnc_lb_kind_name(mnc_lb_kind_of(m->ledger)), charges, subjects, m->n_pending);
    mncd_audit(d, "mnc-l.open", -1, -1, NULL, "allow", MNC_OK, det);
    return d->fatal ? -1 : 0;
}

void mncd_mncl_close(mncd *d, bool at_exit)
{
    struct mncd_mncl *m = d->mncl;
    if (!m)
        return;
    d->ledger = NULL;
    if (m->ledger && (at_exit ? mnc_lb_close_at_exit(m->ledger) : mnc_lb_close(m->ledger)) != 0)
        fprintf(stderr, "mncd: ledger close reported an earlier I/O error\n");
    if (m->j && mnc_journal_close(m->j) != 0)
        fprintf(stderr, "mncd: MNC-D journal close reported an earlier I/O error\n");
    m->j = NULL;
    if (at_exit)
        return; /* m, and through it the ledger's tables, stay reachable from d->mncl */
    while (m->head) {
        dreq *r = m->head;
        m->head = r->next;
        dq_free(r);
    }
    free(m);
    d->mncl = NULL;
}

void mncd_mncl_conn(mncd *d, const mncd_ident *who, int delta)
{
    if (!d->mncl || !who || who->agent < 0 || who->agent >= MNC_MAX_PRINCIPALS)
        return;
    int *n = &d->mncl->conns[who->agent];
    *n += delta;
    if (*n < 0)
        *n = 0;
}
