// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger_pg_conn.c - the postgres ledger backend's per-host cache and connections
 * (ledger_pg_int.h; the backend itself: ledger_pg.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_pg_int.h"
#include "mnc/fleet.h"

void mnc_lbpg_set_why(lb_pg *b, const char *what, const char *msg)
{
    size_t len = msg ? strcspn(msg, "\n") : 0;
    snprintf(b->why, sizeof(b->why), "%s%s%.*s", what, len ? ": " : "", (int)len, msg ? msg : "");
}

/* ---- the per-host cache ------------------------------------------------------------ */

csubj *mnc_lbpg_cache_get(lb_pg *b, const char *name, bool create)
{
    csubj *s = MNC_HTAB_ENTRY(mnc_htab_find(&b->cache, name), csubj, h);
    if (s || !create)
        return s;
    s = mnc_htab_add_new(&b->cache, name, sizeof(*s), offsetof(csubj, h));
    if (s) {
        s->name = s->h.key;
        mnc_hist_init(&s->hist);
    }
    return s;
}

void mnc_lbpg_cache_reset(csubj *s)
{
    mnc_hist_fini(&s->hist);
    s->version = 0;
    s->spent = 0;
}

static int cache_free_one(mnc_hnode *n, void *arg)
{
    (void)arg;
    csubj *s = MNC_HTAB_ENTRY(n, csubj, h);
    mnc_hist_fini(&s->hist);
    free(s); /* and its name (mnc_htab_add_new) */
    return 0;
}

/* Frees every cached subject; the cache is empty and usable afterwards. */
void mnc_lbpg_cache_free(lb_pg *b)
{
    mnc_htab_each(&b->cache, cache_free_one, NULL);
    mnc_htab_fini(&b->cache);
}

/* Adds (field, value) unless present: the history holds each distinct observation once, as
 * mnc_ledger_history does. 0 or -1 (OOM, or a field name no policy can have). */
int mnc_lbpg_cache_add(csubj *s, const char *field, const char *value)
{
    return mnc_hist_add(&s->hist, field, value, NULL, NULL);
}

/* Applies one recorded release's observations (jsonb text [[field, value], ...]). 0 or -1. */
int mnc_lbpg_cache_apply_obs(csubj *s, const char *obs_text)
{
    cJSON *j = cJSON_Parse(obs_text);
    int rc = cJSON_IsArray(j) ? 0 : -1;
    for (const cJSON *o = j ? j->child : NULL; o && rc == 0; o = o->next) {
        if (cJSON_GetArraySize(o) != 2 || !cJSON_IsString(o->child) || !cJSON_IsString(o->child->next))
            rc = -1;
        else
            rc = mnc_lbpg_cache_add(s, o->child->valuestring, o->child->next->valuestring);
    }
    cJSON_Delete(j);
    return rc;
}

int mnc_lbpg_cache_block(const mnc_policy *p, csubj *s, mnc_obs **h, size_t *nh)
{
    if (!s) {
        *h = NULL;
        *nh = 0;
        return 0;
    }
    return mnc_hist_block(&s->hist, p, h, nh);
}

/* ---- the connection ---------------------------------------------------------------- */

static const struct {
    const char *name, *sql;
    int nparams;
} stmts[] = {
    {"mnc_lock", "SELECT version, spent FROM mnc_subject WHERE subject = $1 FOR UPDATE", 1},
    {"mnc_newsubj", "INSERT INTO mnc_subject(subject) VALUES ($1) ON CONFLICT DO NOTHING", 1},
    /* after the lock: the history beyond the cache, and this release id if recorded */
    {"mnc_fresh",
     "SELECT seq, obs::text, delta, release_id = $3, (recipient = $4 AND obs = $5::jsonb) "
     "FROM mnc_release WHERE subject = $1 AND (seq > $2 OR release_id = $3) ORDER BY seq",
     5},
    /* without a lock (history for selection): version and the releases beyond the cache in
     * one snapshot */
    {"mnc_peek",
     "SELECT s.version, r.seq, r.obs::text, r.delta FROM mnc_subject s LEFT JOIN mnc_release r "
     "ON r.subject = s.subject AND r.seq > $2 WHERE s.subject = $1 ORDER BY r.seq",
     2},
    {"mnc_insert",
     "WITH r AS (INSERT INTO mnc_release(subject, seq, release_id, host, recipient, delta, obs) "
     "VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING subject) "
     "UPDATE mnc_subject s SET version = $2, spent = $8 FROM r WHERE s.subject = r.subject",
     8},
    {"mnc_charge1",
     "SELECT status, version, spent, same FROM mnc_charge($1, $2, $3, $4, $5, "
     "$6, $7::jsonb, $8, $9)",
     9},
    {"mnc_account",
     "SELECT coalesce(sum(delta ORDER BY seq), 0) FROM mnc_release "
     "WHERE subject = $1 AND recipient = $2",
     2},
};

static void drop_conn(lb_pg *b)
{
    if (b->conn)
        PQfinish(b->conn);
    b->conn = NULL;
    b->next_try_ms = mono_ms() + b->backoff_ms;
    b->backoff_ms = b->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b->backoff_ms * 2;
}

static PGconn *open_conn(lb_pg *b, char *err, size_t err_len)
{
    PGconn *c = mnc_pg_connect(b->conninfo, "mncd", err, err_len);
    if (!c)
        return NULL;
    if (mnc_pg_schema_check(c, err, err_len) != 0) {
        PQfinish(c);
        return NULL;
    }
    for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++) {
        PGresult *r = PQprepare(c, stmts[i].name, stmts[i].sql, stmts[i].nparams, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            size_t len = strcspn(PQerrorMessage(c), "\n");
            snprintf(err, err_len, "preparing %s: %.*s", stmts[i].name, (int)len, PQerrorMessage(c));
            PQclear(r);
            PQfinish(c);
            return NULL;
        }
        PQclear(r);
    }
    return c;
}

int mnc_lbpg_pg_connect(lb_pg *b, char *err, size_t err_len)
{
    b->conn = open_conn(b, err, err_len);
    return b->conn ? 0 : -1;
}

/* true if connected (reconnecting first if that is due). */
bool mnc_lbpg_ensure_up(lb_pg *b)
{
    if (b->conn && PQstatus(b->conn) == CONNECTION_OK)
        return true;
    if (b->conn)
        drop_conn(b);
    if (mono_ms() < b->next_try_ms)
        return false;
    char err[512];
    if (mnc_lbpg_pg_connect(b, err, sizeof(err)) != 0) {
        mnc_lbpg_set_why(b, "cannot connect", err);
        drop_conn(b);
        return false;
    }
    b->reconnects += b->ever_up;
    b->ever_up = true;
    /* idle pooled connections predate the outage: reopen them on demand */
    for (int i = 0; i < POOL; i++)
        if (!b->busy[i] && b->pool[i]) {
            PQfinish(b->pool[i]);
            b->pool[i] = NULL;
        }
    b->backoff_ms = BACKOFF_MIN_MS;
    b->why[0] = '\0';
    return true;
}

/* After a failed statement: rolls back an open transaction if the connection still works,
 * else drops it (reconnect scheduled). Records why. */
void mnc_lbpg_failed(lb_pg *b, const char *what)
{
    mnc_lbpg_set_why(b, what, b->conn ? PQerrorMessage(b->conn) : "not connected");
    if (!b->conn)
        return;
    if (PQstatus(b->conn) != CONNECTION_OK) {
        drop_conn(b);
        return;
    }
    if (PQtransactionStatus(b->conn) != PQTRANS_IDLE) {
        PGresult *r = PQexec(b->conn, "ROLLBACK");
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok)
            drop_conn(b);
    }
}

PGresult *mnc_lbpg_run(lb_pg *b, const char *stmt, int n, const char *const *vals, ExecStatusType want)
{
    PGresult *r = PQexecPrepared(b->conn, stmt, n, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != want) {
        PQclear(r);
        return NULL;
    }
    return r;
}

bool mnc_lbpg_run_cmd(lb_pg *b, const char *sql)
{
    PGresult *r = PQexec(b->conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

/* ---- connections for one operation (suspendable callers get their own) -------------- */

bool mnc_lbpg_acquire(lb_pg *b, pgc *cn)
{
    cn->c = NULL;
    cn->slot = -1;
    if (!mnc_lbpg_ensure_up(b))
        return false;
    if (!b->wait || !b->suspendable || !b->suspendable(b->warg)) {
        cn->c = b->conn;
        return true;
    }
    for (int i = 0; i < POOL; i++) {
        if (b->busy[i])
            continue;
        if (!b->pool[i]) {
            char err[512];
            if (!(b->pool[i] = open_conn(b, err, sizeof(err)))) {
                mnc_lbpg_set_why(b, "cannot connect", err);
                return false;
            }
        }
        b->busy[i] = true;
        cn->c = b->pool[i];
        cn->slot = i;
        return true;
    }
    mnc_lbpg_set_why(b, "every ledger connection is busy", NULL);
    return false;
}

void mnc_lbpg_release_conn(lb_pg *b, pgc *cn)
{
    if (cn->slot >= 0)
        b->busy[cn->slot] = false;
    cn->c = NULL;
    cn->slot = -1;
}

/* Collects the results of the query just sent on a pool connection, suspending the caller
 * (b->wait) while PostgreSQL works. Returns the last result, or NULL (connection error). */
static PGresult *collect(lb_pg *b, PGconn *c)
{
    PGresult *last = NULL;
    for (;;) {
        while (PQisBusy(c))
            if (b->wait(b->warg, PQsocket(c)) != 0 || !PQconsumeInput(c)) {
                PQclear(last);
                return NULL;
            }
        PGresult *r = PQgetResult(c);
        if (!r)
            break;
        PQclear(last);
        last = r;
    }
    return last;
}

PGresult *mnc_lbpg_xrun(lb_pg *b, const pgc *cn, const char *stmt, int n, const char *const *vals, ExecStatusType want)
{
    PGresult *r;
    if (cn->slot < 0)
        r = PQexecPrepared(cn->c, stmt, n, vals, NULL, NULL, 0);
    else
        r = PQsendQueryPrepared(cn->c, stmt, n, vals, NULL, NULL, 0) ? collect(b, cn->c) : NULL;
    if (PQresultStatus(r) != want) {
        PQclear(r);
        return NULL;
    }
    return r;
}

/* A utility statement; for COMMIT only PostgreSQL's "COMMIT" (not "ROLLBACK") is success. */
bool mnc_lbpg_xcmd(lb_pg *b, const pgc *cn, const char *sql)
{
    PGresult *r = cn->slot < 0 ? PQexec(cn->c, sql) : PQsendQuery(cn->c, sql) ? collect(b, cn->c) : NULL;
    bool ok =
        PQresultStatus(r) == PGRES_COMMAND_OK && (strcmp(sql, "COMMIT") != 0 || strcmp(PQcmdStatus(r), "COMMIT") == 0);
    PQclear(r);
    return ok;
}

/* mnc_lbpg_failed() for the connection of one operation. A pool connection that broke is dropped, and
 * so is b->conn: the server is likely gone, and the state (and backoff) are b->conn's. */
void mnc_lbpg_cfailed(lb_pg *b, pgc *cn, const char *what)
{
    if (cn->slot < 0) {
        mnc_lbpg_failed(b, what);
        return;
    }
    PGconn *c = cn->c;
    mnc_lbpg_set_why(b, what, PQerrorMessage(c));
    bool lost = PQstatus(c) != CONNECTION_OK;
    bool broken = lost || (PQtransactionStatus(c) != PQTRANS_IDLE && !mnc_lbpg_xcmd(b, cn, "ROLLBACK"));
    if (broken) {
        PQfinish(c);
        b->pool[cn->slot] = NULL;
        cn->c = NULL;
        if (lost && b->conn)
            drop_conn(b);
    }
}
