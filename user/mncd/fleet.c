// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fleet.c - mncd's fleet mode (docs/fleet.md): the "ledger" config section and the periodic
 * work a shared ledger needs (reconnecting with backoff). The ledger backend itself is in
 * libmnc (mnc/ledger_backend.h); mncl_gate.c charges through it. fleet.c sits below MNC-D
 * (mncd_failure.c calls it; it never calls MNC-D: loop.c hands it mncd_mncl_apply_remote).
 *
 * Config: "ledger": {"backend": "journal" | "postgres", "conninfo": "host=/run/postgresql
 * dbname=mnc", "host": "web-1", "anchor_interval_ms": 10000}. conninfo is libpq's; a password
 * in it is refused (it would sit in the config and could reach a log): libpq reads it from a
 * passfile, or authentication uses peer or certificates. "host" defaults to gethostname().
 */
#include <cjson/cJSON.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mnc/fleet.h"
#include "mnc/ledger_backend.h"
#include "mncd.h"

#define DEFAULT_ANCHOR_MS 10000u

int mncd_fleet_config(mncd_config *c, const cJSON *it, const char *path)
{
    if (!cJSON_IsObject(it)) {
        fprintf(stderr,
                "mncd: config %s: \"ledger\" must be an object {\"backend\", "
                "\"conninfo\", \"host\", \"anchor_interval_ms\"}\n",
                path);
        return -1;
    }
    const cJSON *be = NULL, *ci = NULL, *host = NULL, *anchor = NULL;
    for (const cJSON *x = it->child; x; x = x->next) {
        if (strcmp(x->string, "backend") == 0)
            be = x;
        else if (strcmp(x->string, "conninfo") == 0)
            ci = x;
        else if (strcmp(x->string, "host") == 0)
            host = x;
        else if (strcmp(x->string, "anchor_interval_ms") == 0)
            anchor = x;
        else {
            fprintf(stderr, "mncd: config %s: ledger: unknown key \"%s\"\n", path, x->string);
            return -1;
        }
    }
    if (!cJSON_IsString(be) || (strcmp(be->valuestring, "journal") != 0 && strcmp(be->valuestring, "postgres") != 0)) {
        fprintf(stderr, "mncd: config %s: ledger.backend must be \"journal\" or \"postgres\"\n", path);
        return -1;
    }
    if (strcmp(be->valuestring, "journal") == 0) {
        if (ci || host || anchor) {
            fprintf(stderr,
                    "mncd: config %s: ledger: conninfo, host and anchor_interval_ms "
                    "belong to the postgres backend\n",
                    path);
            return -1;
        }
        c->ledger_backend = MNC_LB_JOURNAL;
        return 0;
    }
    char err[512];
    if (!cJSON_IsString(ci) || strlen(ci->valuestring) >= sizeof(c->ledger_conninfo)) {
        fprintf(stderr,
                "mncd: config %s: ledger.conninfo must be a libpq connection string "
                "(< %zu bytes)\n",
                path, sizeof(c->ledger_conninfo));
        return -1;
    }
    if (mnc_pg_check_conninfo(ci->valuestring, err, sizeof(err)) != 0) {
        fprintf(stderr, "mncd: config %s: ledger.conninfo: %s\n", path, err);
        return -1;
    }
    snprintf(c->ledger_conninfo, sizeof(c->ledger_conninfo), "%s", ci->valuestring);
    if (host) {
        if (!cJSON_IsString(host) || !mnc_name_valid(host->valuestring)) {
            fprintf(stderr,
                    "mncd: config %s: ledger.host must be 1..63 characters "
                    "[A-Za-z0-9_.:-]\n",
                    path);
            return -1;
        }
        snprintf(c->fleet_host, sizeof(c->fleet_host), "%s", host->valuestring);
    }
    if (anchor) {
        if (!cJSON_IsNumber(anchor) || anchor->valuedouble < 100 || anchor->valuedouble > 86400000 ||
            anchor->valuedouble != (double)(long long)anchor->valuedouble) {
            fprintf(stderr,
                    "mncd: config %s: ledger.anchor_interval_ms must be an integer "
                    "100..86400000\n",
                    path);
            return -1;
        }
        c->anchor_interval_ms = (uint32_t)anchor->valuedouble;
    }
    c->ledger_backend = MNC_LB_POSTGRES;
    return 0;
}

int mncd_fleet_defaults(mncd_config *c)
{
    if (c->ledger_backend != MNC_LB_POSTGRES)
        return 0;
    if (!c->anchor_interval_ms)
        c->anchor_interval_ms = DEFAULT_ANCHOR_MS;
    if (!c->fleet_host[0]) {
        char h[256];
        if (gethostname(h, sizeof(h)) != 0 || (h[sizeof(h) - 1] = '\0', !mnc_name_valid(h))) {
            fprintf(stderr, "mncd: config: this host's name is not usable as ledger.host "
                            "(1..63 characters [A-Za-z0-9_.:-]): set \"ledger\": {\"host\"}\n");
            return -1;
        }
        memcpy(c->fleet_host, h, strlen(h) + 1); /* mnc_name_valid: <= 63 bytes */
    }
    return 0;
}

int mncd_fleet_timeout(mncd *d, size_t pending_approvals)
{
    mnc_lbackend *b = d->ledger;
    if (!b || mnc_lb_kind_of(b) != MNC_LB_POSTGRES)
        return -1;
    char st[8];
    /* Down: wake up for the next reconnect; approvals pending: poll for decisions other
     * hosts take; else for the next anchor. */
    if (!mnc_lb_state(b, st, sizeof(st), NULL))
        return 200;
    if (pending_approvals)
        return 200;
    return (int)d->cfg.anchor_interval_ms;
}

bool mncd_fleet_tick(mncd *d)
{
    mnc_lbackend *b = d->ledger;
    if (!b || mnc_lb_kind_of(b) != MNC_LB_POSTGRES)
        return false;
    bool was_up = mnc_lb_state(b, NULL, 0, NULL);
    (void)mnc_lb_tick(b, mnc_now_ms());
    char st[640];
    bool up = mnc_lb_state(b, st, sizeof(st), NULL);
    if (up != was_up) {
        fprintf(stderr, "mncd: ledger (postgres): %s\n", up ? "reconnected" : st);
        mncd_audit(d, up ? "ledger.reconnect" : "ledger.unavailable", -1, -1, NULL, up ? "allow" : "error",
                   up ? MNC_OK : MNC_R_LEDGER_UNAVAILABLE, st);
    }
    return up;
}

/* ---- the shared approval queue (mnc/fleet.h) */

bool mncd_fleet_on(mncd *d)
{
    mnc_lbackend *b = d->ledger;
    return b && mnc_lb_kind_of(b) == MNC_LB_POSTGRES;
}

int mncd_fleet_publish(mncd *d, const char *subject, const char *request_id, const char *contract, uint64_t deadline_ms,
                       const char *detail_json, char *err, size_t err_len)
{
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    if (!c) {
        snprintf(err, err_len,
                 "the fleet database is unavailable: request %s can be decided "
                 "on this host only",
                 request_id);
        return -1;
    }
    if (mnc_pg_approval_put(c, subject, request_id, d->cfg.fleet_host, contract, deadline_ms, detail_json, err,
                            err_len) != 0) {
        mnc_lb_pg_failed(b, "publishing an approval request");
        return -1;
    }
    return 0;
}

int mncd_fleet_decide(mncd *d, const char *request_id, const char *decision, char *prev, size_t prev_len, char *by,
                      size_t by_len)
{
    if (!mncd_fleet_on(d))
        return 0;
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    if (!c)
        return -1;
    char err[512];
    mnc_pg_decide_rc rc = mnc_pg_approval_decide(c, request_id, decision, d->cfg.fleet_host, NULL, 0, prev, prev_len,
                                                 by, by_len, err, sizeof(err));
    switch (rc) {
    case MNC_PG_FAILED:
        mnc_lb_pg_failed(b, "deciding an approval request");
        return -1;
    case MNC_PG_ALREADY:
        return 1;
    case MNC_PG_EXPIRED:
        /* past its deadline in the database's clock: only the timeout may decide it now */
        snprintf(prev, prev_len, "timeout");
        snprintf(by, by_len, "%s", d->cfg.fleet_host);
        return strcmp(decision, "timeout") == 0 ? 0 : 1;
    default: /* decided now, or a request only this host knows (published while down) */
        return 0;
    }
}

cJSON *mncd_fleet_decide_remote(mncd *d, const mnc_request *q, bool deny)
{
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    char det[768];
    if (!c) {
        snprintf(det, sizeof(det), "%s: the fleet approval queue is unavailable: not decided", q->request_id);
        mncd_audit(d, "approve", -1, -1, NULL, "error", MNC_R_LEDGER_UNAVAILABLE, det);
        return mnc_resp_error(q->id, MNC_R_LEDGER_UNAVAILABLE, "%s", det);
    }
    char origin[64] = "", prev[32] = "", by[64] = "", err[512] = "";
    const char *decision = deny ? "denied" : "approved";
    mnc_pg_decide_rc rc = mnc_pg_approval_decide(c, q->request_id, decision, d->cfg.fleet_host, origin, sizeof(origin),
                                                 prev, sizeof(prev), by, sizeof(by), err, sizeof(err));
    switch (rc) {
    case MNC_PG_DECIDED: {
        snprintf(det, sizeof(det),
                 "%s of host %s: %s here, recorded in the fleet queue; its "
                 "host applies it",
                 q->request_id, origin, decision);
        mncd_audit(d, "approve", -1, -1, NULL, deny ? "deny" : "allow", MNC_OK, det);
        cJSON *r = mnc_resp_new(q->id, true, "approval", MNC_OK);
        if (r) {
            cJSON_AddStringToObject(r, "outcome", deny ? "denied" : "approved");
            cJSON_AddStringToObject(r, "request", q->request_id);
            cJSON_AddStringToObject(r, "host", origin);
            cJSON_AddStringToObject(r, "detail", det);
        }
        return r;
    }
    case MNC_PG_ALREADY:
    case MNC_PG_EXPIRED:
        snprintf(det, sizeof(det), "%s of host %s was already decided (%s%s%s)", q->request_id, origin,
                 rc == MNC_PG_EXPIRED ? "expired" : prev, by[0] ? " on host " : "", by);
        mncd_audit(d, "approve", -1, -1, NULL, "deny", MNC_R_INVALID, det);
        return mnc_resp_deny(q->id, MNC_R_INVALID, "%s", det);
    case MNC_PG_UNKNOWN:
        snprintf(det, sizeof(det), "%s: no such request on this host or in the fleet queue", q->request_id);
        mncd_audit(d, "approve", -1, -1, NULL, "deny", MNC_R_INVALID, det);
        return mnc_resp_deny(q->id, MNC_R_INVALID, "%s", det);
    default:
        mnc_lb_pg_failed(b, "deciding an approval request");
        snprintf(det, sizeof(det), "%s: %s", q->request_id, err);
        mncd_audit(d, "approve", -1, -1, NULL, "error", MNC_R_LEDGER_UNAVAILABLE, det);
        return mnc_resp_error(q->id, MNC_R_LEDGER_UNAVAILABLE, "%s", det);
    }
}

void mncd_fleet_applied(mncd *d, const char *request_id)
{
    if (!mncd_fleet_on(d))
        return;
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    char err[512];
    /* If this fails the decision is polled again and found already applied: harmless. */
    if (c && mnc_pg_approval_seen(c, request_id, err, sizeof(err)) != 0)
        mnc_lb_pg_failed(b, "marking an approval decision applied");
}

void mncd_fleet_list(mncd *d, cJSON *resp, int max)
{
    if (!mncd_fleet_on(d) || !resp)
        return;
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    char err[512] = "the fleet database is unavailable";
    cJSON *arr = c ? mnc_pg_approval_pending(c, max, err, sizeof(err)) : NULL;
    if (arr)
        cJSON_AddItemToObject(resp, "fleet_approvals", arr);
    else {
        if (c)
            mnc_lb_pg_failed(b, "listing approval requests");
        cJSON_AddStringToObject(resp, "fleet_approvals_error", err);
    }
}

typedef struct decision {
    char id[64], decision[16], by[64];
} decision;

typedef struct poll_ctx {
    decision v[64];
    size_t n;
} poll_ctx;

static void poll_cb(void *arg, const char *id, const char *dec, const char *by)
{
    poll_ctx *x = arg;
    if (x->n == sizeof(x->v) / sizeof(x->v[0]))
        return; /* the rest next tick */
    decision *o = &x->v[x->n++];
    snprintf(o->id, sizeof(o->id), "%s", id);
    snprintf(o->decision, sizeof(o->decision), "%s", dec);
    snprintf(o->by, sizeof(o->by), "%s", by);
}

void mncd_fleet_poll(mncd *d, mncd_fleet_apply_fn apply)
{
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    if (!c)
        return;
    poll_ctx x = {.n = 0};
    char err[512];
    if (mnc_pg_approval_poll(c, d->cfg.fleet_host, poll_cb, &x, err, sizeof(err)) != 0) {
        mnc_lb_pg_failed(b, "polling approval decisions");
        return;
    }
    for (size_t i = 0; i < x.n; i++)
        apply(d, x.v[i].id, x.v[i].decision, x.v[i].by);
}

/* ---- audit anchoring (mnc/fleet.h) */

/* Last anchored head. Static: one mncd per process, single-threaded. */
static uint64_t anchored_seq, anchored_ms;
static bool anchor_forked;

void mncd_fleet_anchor(mncd *d, bool force)
{
    if (!mncd_fleet_on(d) || !d->audit || anchor_forked)
        return;
    uint64_t seq = mnc_audit_seq(d->audit), now = mnc_now_ms();
    if (seq == anchored_seq || (!force && now - anchored_ms < d->cfg.anchor_interval_ms))
        return;
    mnc_lbackend *b = d->ledger;
    PGconn *c = mnc_lb_pg_conn(b);
    if (!c)
        return; /* retried after the reconnect */
    char err[512];
    if (mnc_pg_anchor_put(c, d->cfg.fleet_host, seq, mnc_audit_head(d->audit), err, sizeof(err)) != 0) {
        if (PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE && strstr(err, "forked")) {
            /* Another mncd uses this host name, or this log was replaced: say so once, loudly,
             * and stop anchoring (the existing anchors are the evidence). */
            fprintf(stderr, "mncd: audit anchoring stopped: %s\n", err);
            mncd_audit(d, "audit.anchor", -1, -1, NULL, "error", MNC_R_INTERNAL, err);
            anchor_forked = true;
        } else {
            mnc_lb_pg_failed(b, "anchoring the audit head");
        }
        return;
    }
    anchored_seq = seq;
    anchored_ms = now;
}
