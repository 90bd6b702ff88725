// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger_pg.c - the postgres ledger backend (mnc/ledger_backend.h, docs/fleet.md).
 *
 * Tables (pg_schema.c): mnc_subject(subject, version, spent) is the subject's row - its lock
 * serialises every charge to the subject across hosts - and mnc_release(subject, seq, ...)
 * the charges, seq = 1..version, unique per (subject, release_id).
 *
 * A charge is one transaction. The common case is one statement, mnc_charge() (migration 4,
 * pg_schema.c), in autocommit: it locks the subject row, refuses a recorded release id, checks
 * that the subject's version is the one this host priced the release against (else "stale":
 * the cache is brought up to date and the release re-priced and tried again), checks ε and B,
 * records the release and commits - one round trip. Under contention (FAST_TRIES stale
 * answers in a row) the same steps run as an explicit transaction that holds the lock while
 * this host reads the history and prices (READ COMMITTED):
 *   BEGIN
 *   SELECT version, spent FROM mnc_subject WHERE subject = S FOR UPDATE   (lock; row created
 *                                                                         on first use)
 *   SELECT the releases with seq > cached version, and any with this release id
 *          (a new statement, so its snapshot sees every charge committed before the lock)
 *   -> duplicate release id: ROLLBACK, DUPLICATE
 *   -> history moved since the caller priced the release: recompute ΔR (caller's callback)
 *   -> ε / B checked against spent (exactly ledger.c's admit())
 *   INSERT the release (seq = version + 1) and UPDATE the subject row (one statement)
 *   COMMIT          (synchronous_commit on: durable when acknowledged)
 * Only a COMMIT that PostgreSQL acknowledged returns MNC_LEDGER_OK.
 *
 * The per-host cache keeps each subject's distinct observations, its version and its spend
 * summed in seq order (so it equals the database's spent bit for bit: every charge stores
 * spent + delta computed the same way). Only the releases beyond the cached version are read.
 * A database whose version is behind the cache (restored from a backup) resets the entry.
 *
 * Connection: lost connections are dropped and re-established with exponential backoff
 * (100 ms doubling to 5 s), on demand and from mnc_lb_tick. While down, every call that needs
 * the database returns MNC_LEDGER_UNAVAILABLE at once.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger_pg_int.h"
#include "mnc/fleet.h"

/* ---- the backend ------------------------------------------------------------------- */

/* Applies rows (seq, obs, delta) with seq > s->version, which must continue it without a
 * gap. col: index of the seq column. 0, or -1 (inconsistent database or OOM). */
static int apply_rows(csubj *s, PGresult *r, int col)
{
    for (int i = 0; i < PQntuples(r); i++) {
        if (PQgetisnull(r, i, col))
            continue;
        uint64_t seq = strtoull(PQgetvalue(r, i, col), NULL, 10);
        if (seq <= s->version)
            continue;
        if (seq != s->version + 1 || mnc_lbpg_cache_apply_obs(s, PQgetvalue(r, i, col + 1)) != 0)
            return -1;
        s->spent += strtod(PQgetvalue(r, i, col + 2), NULL);
        s->version = seq;
    }
    return 0;
}

static mnc_ledger_rc pg_history(mnc_lbackend *bb, const mnc_policy *p, const char *subject, mnc_obs **h, size_t *nh,
                                double *spent, uint64_t *version)
{
    lb_pg *b = P(bb);
    csubj *s = mnc_lbpg_cache_get(b, subject, true);
    if (!s) {
        errno = ENOMEM;
        return MNC_LEDGER_ERROR;
    }
    pgc cn;
    if (!mnc_lbpg_acquire(b, &cn))
        return MNC_LEDGER_UNAVAILABLE;
    for (int pass = 0; pass < 2; pass++) {
        char ver[24];
        snprintf(ver, sizeof(ver), "%llu", (unsigned long long)s->version);
        const char *v[2] = {subject, ver};
        PGresult *r = mnc_lbpg_xrun(b, &cn, "mnc_peek", 2, v, PGRES_TUPLES_OK);
        if (!r) {
            mnc_lbpg_cfailed(b, &cn, "reading the history");
            mnc_lbpg_release_conn(b, &cn);
            return MNC_LEDGER_UNAVAILABLE;
        }
        uint64_t dbv = PQntuples(r) ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
        if (dbv < s->version) {
            /* the database went back (restored): forget what this host cached */
            PQclear(r);
            mnc_lbpg_cache_reset(s);
            continue;
        }
        int rc = apply_rows(s, r, 1);
        PQclear(r);
        if (rc != 0) {
            mnc_lbpg_cache_reset(s);
            mnc_lbpg_release_conn(b, &cn);
            mnc_lbpg_set_why(b, "inconsistent history for a subject (seq gap or bad obs)", NULL);
            errno = EIO;
            return MNC_LEDGER_ERROR;
        }
        break;
    }
    mnc_lbpg_release_conn(b, &cn);
    if (mnc_lbpg_cache_block(p, s, h, nh) != 0) {
        errno = EINVAL;
        return MNC_LEDGER_ERROR;
    }
    *spent = s->spent;
    *version = s->version;
    return MNC_LEDGER_OK;
}

static char *obs_json(const mnc_policy *p, const mnc_lb_request *c)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < c->n_obs; i++) {
        const char *pair[2] = {p->fields[c->obs[i].field].name, c->obs[i].value};
        cJSON *x = cJSON_CreateStringArray(pair, 2);
        if (!x || !cJSON_AddItemToArray(arr, x)) {
            cJSON_Delete(x);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    char *out = arr ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    return out;
}

#define FAST_TRIES 4
#define FAST_CONTENDED ((mnc_ledger_rc)(MNC_LEDGER_ERROR + 100))

/* The one-round-trip path: prices the release against the cached history (re-pricing if the
 * caller priced an older version), and lets mnc_charge() (migration 4) check under the row
 * lock that the database's version is that one. A stale cache is refreshed (no lock) and
 * tried again; after FAST_TRIES the caller falls back to the explicit locked transaction.
 * Returns a ledger rc, or FAST_CONTENDED. */
static mnc_ledger_rc charge_one_statement(lb_pg *b, pgc *cn, const mnc_policy *p, const mnc_lb_request *c, csubj *s,
                                          const char *obs, mnc_lb_result *res)
{
    char eps[40] = "-1", bud[40] = "-1";
    if (c->lim && c->lim->epsilon >= 0)
        snprintf(eps, sizeof(eps), "%.17g", c->lim->epsilon);
    if (c->lim && c->lim->budget >= 0)
        snprintf(bud, sizeof(bud), "%.17g", c->lim->budget);
    for (int attempt = 0; attempt < FAST_TRIES; attempt++) {
        double delta = c->delta;
        if (s->version != c->version) {
            mnc_obs *h = NULL;
            size_t nh = 0;
            int crc =
                !c->recompute || mnc_lbpg_cache_block(p, s, &h, &nh) != 0 ? -1 : c->recompute(c->arg, h, nh, &delta);
            free(h);
            if (crc != 0 || !isfinite(delta) || delta < 0) {
                errno = EINVAL;
                return MNC_LEDGER_ERROR;
            }
        }
        char ver[24], dl[40];
        snprintf(ver, sizeof(ver), "%llu", (unsigned long long)s->version);
        snprintf(dl, sizeof(dl), "%.17g", delta);
        const char *v[9] = {c->subject, ver, c->release, b->host, c->recipient, dl, obs, eps, bud};
        PGresult *r = mnc_lbpg_xrun(b, cn, "mnc_charge1", 9, v, PGRES_TUPLES_OK);
        if (!r || PQntuples(r) != 1) {
            PQclear(r);
            mnc_lbpg_cfailed(b, cn, "charging");
            return MNC_LEDGER_UNAVAILABLE;
        }
        const char *st = PQgetvalue(r, 0, 0);
        uint64_t dbv = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
        double spent = strtod(PQgetvalue(r, 0, 2), NULL);
        bool same = strcmp(PQgetvalue(r, 0, 3), "t") == 0;
        mnc_ledger_rc rc = strcmp(st, "ok") == 0             ? MNC_LEDGER_OK
                           : strcmp(st, "duplicate") == 0    ? MNC_LEDGER_DUPLICATE
                           : strcmp(st, "over_epsilon") == 0 ? MNC_LEDGER_OVER_EPSILON
                           : strcmp(st, "over_budget") == 0  ? MNC_LEDGER_OVER_BUDGET
                                                             : FAST_CONTENDED;
        PQclear(r);
        res->delta = delta;
        res->spent = spent;
        res->same = same;
        if (rc == MNC_LEDGER_OK) {
            /* Committed (autocommit): the cache follows - unless another request moved it
             * while this one waited; it then catches up from the database next time. */
            if (s->version + 1 == dbv) {
                s->version = dbv;
                s->spent = spent;
                for (size_t i = 0; i < c->n_obs; i++)
                    if (mnc_lbpg_cache_add(s, p->fields[c->obs[i].field].name, c->obs[i].value) != 0)
                        mnc_lbpg_cache_reset(s); /* refetched next time */
            }
            return rc;
        }
        if (rc != FAST_CONTENDED)
            return rc;
        /* stale: bring the cache up to the database (without a lock) and price again */
        if (dbv < s->version)
            mnc_lbpg_cache_reset(s);
        snprintf(ver, sizeof(ver), "%llu", (unsigned long long)s->version);
        const char *pv[2] = {c->subject, ver};
        if (!(r = mnc_lbpg_xrun(b, cn, "mnc_peek", 2, pv, PGRES_TUPLES_OK))) {
            mnc_lbpg_cfailed(b, cn, "reading the history");
            return MNC_LEDGER_UNAVAILABLE;
        }
        int arc = apply_rows(s, r, 1);
        PQclear(r);
        if (arc != 0) {
            mnc_lbpg_cache_reset(s);
            errno = EIO;
            return MNC_LEDGER_ERROR;
        }
    }
    return FAST_CONTENDED;
}

static mnc_ledger_rc charge_locked(lb_pg *b, pgc *cn, const mnc_policy *p, const mnc_lb_request *c, csubj *s,
                                   const char *obs, mnc_lb_result *res);

static mnc_ledger_rc pg_charge(mnc_lbackend *bb, const mnc_policy *p, const mnc_lb_request *c, mnc_lb_result *res)
{
    lb_pg *b = P(bb);
    csubj *s = mnc_lbpg_cache_get(b, c->subject, true);
    char *obs = obs_json(p, c);
    if (!s || !obs) {
        free(obs);
        errno = ENOMEM;
        return MNC_LEDGER_ERROR;
    }
    pgc cn;
    if (!mnc_lbpg_acquire(b, &cn)) {
        free(obs);
        return MNC_LEDGER_UNAVAILABLE;
    }
    mnc_ledger_rc rc = FAST_CONTENDED;
    if (!c->lim || !c->lim->per_recipient)
        rc = charge_one_statement(b, &cn, p, c, s, obs, res);
    if (rc == FAST_CONTENDED && cn.c) /* contended: the explicit transaction */
        rc = charge_locked(b, &cn, p, c, s, obs, res);
    else if (rc == FAST_CONTENDED)
        rc = MNC_LEDGER_UNAVAILABLE;
    int e = errno;
    mnc_lbpg_release_conn(b, &cn);
    free(obs);
    errno = e;
    return rc;
}

/* The explicit transaction: holds the subject's lock while the history is read and the
 * release priced. obs: the release's observations as JSON. */
static mnc_ledger_rc charge_locked(lb_pg *b, pgc *cn, const mnc_policy *p, const mnc_lb_request *c, csubj *s,
                                   const char *obs, mnc_lb_result *res)
{
    mnc_ledger_rc rc = MNC_LEDGER_UNAVAILABLE;
    const char *what = "charging";
    PGresult *r = NULL;
    const char *v1[1] = {c->subject};
    if (!mnc_lbpg_xcmd(b, cn, "BEGIN")) {
        what = "BEGIN";
        goto fail;
    }
    what = "locking the subject";
    for (int i = 0; i < 2; i++) {
        if (!(r = mnc_lbpg_xrun(b, cn, "mnc_lock", 1, v1, PGRES_TUPLES_OK)))
            goto fail;
        if (PQntuples(r) == 1)
            break;
        PQclear(r);
        r = NULL;
        PGresult *ins = mnc_lbpg_xrun(b, cn, "mnc_newsubj", 1, v1, PGRES_COMMAND_OK);
        if (!ins)
            goto fail;
        PQclear(ins);
    }
    if (!r)
        goto fail;
    uint64_t dbv = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
    double spent = strtod(PQgetvalue(r, 0, 1), NULL);
    PQclear(r);
    r = NULL;
    if (dbv < s->version)
        mnc_lbpg_cache_reset(s);
    char ver[24];
    snprintf(ver, sizeof(ver), "%llu", (unsigned long long)s->version);
    const char *v5[5] = {c->subject, ver, c->release, c->recipient, obs};
    what = "reading the history";
    if (!(r = mnc_lbpg_xrun(b, cn, "mnc_fresh", 5, v5, PGRES_TUPLES_OK)))
        goto fail;
    for (int i = 0; i < PQntuples(r); i++)
        if (strcmp(PQgetvalue(r, i, 3), "t") == 0) {
            res->same = strcmp(PQgetvalue(r, i, 4), "t") == 0;
            res->spent = spent;
            PQclear(r);
            (void)mnc_lbpg_xcmd(b, cn, "ROLLBACK");
            return MNC_LEDGER_DUPLICATE;
        }
    if (apply_rows(s, r, 0) != 0 || s->version != dbv) {
        mnc_lbpg_cache_reset(s);
        PQclear(r);
        r = NULL;
        (void)mnc_lbpg_xcmd(b, cn, "ROLLBACK");
        mnc_lbpg_set_why(b, "inconsistent history for a subject (seq gap or bad obs)", NULL);
        errno = EIO;
        return MNC_LEDGER_ERROR;
    }
    PQclear(r);
    r = NULL;
    double delta = c->delta;
    if (dbv != c->version) {
        /* Another charge (on any host) moved the history since the caller priced this
         * release: price it again, with the caller's own code, against what is locked. */
        mnc_obs *h = NULL;
        size_t nh = 0;
        int crc = !c->recompute || mnc_lbpg_cache_block(p, s, &h, &nh) != 0 ? -1 : c->recompute(c->arg, h, nh, &delta);
        free(h);
        if (crc != 0 || !isfinite(delta) || delta < 0) {
            (void)mnc_lbpg_xcmd(b, cn, "ROLLBACK");
            errno = EINVAL;
            return MNC_LEDGER_ERROR;
        }
    }
    res->delta = delta;
    res->spent = spent;
    const mnc_ledger_limits *lim = c->lim;
    if (lim && lim->epsilon >= 0 && delta > lim->epsilon) {
        (void)mnc_lbpg_xcmd(b, cn, "ROLLBACK");
        return MNC_LEDGER_OVER_EPSILON;
    }
    if (lim && lim->budget >= 0) {
        double sigma = spent;
        if (lim->per_recipient) {
            const char *v2[2] = {c->subject, c->recipient};
            what = "reading the recipient's account";
            if (!(r = mnc_lbpg_xrun(b, cn, "mnc_account", 2, v2, PGRES_TUPLES_OK)) || PQntuples(r) != 1)
                goto fail;
            sigma = strtod(PQgetvalue(r, 0, 0), NULL);
            PQclear(r);
            r = NULL;
        }
        if (sigma + delta > lim->budget) {
            (void)mnc_lbpg_xcmd(b, cn, "ROLLBACK");
            return MNC_LEDGER_OVER_BUDGET;
        }
    }
    char seq[24], dl[40], sp[40];
    double nspent = spent + delta;
    snprintf(seq, sizeof(seq), "%llu", (unsigned long long)(dbv + 1));
    snprintf(dl, sizeof(dl), "%.17g", delta);
    snprintf(sp, sizeof(sp), "%.17g", nspent);
    const char *v8[8] = {c->subject, seq, c->release, b->host, c->recipient, dl, obs, sp};
    what = "recording the release";
    if (!(r = mnc_lbpg_xrun(b, cn, "mnc_insert", 8, v8, PGRES_COMMAND_OK)))
        goto fail;
    if (strcmp(PQcmdTuples(r), "1") != 0)
        goto fail;
    PQclear(r);
    r = NULL;
    what = "COMMIT";
    if (!mnc_lbpg_xcmd(b, cn, "COMMIT"))
        goto fail;
    /* Committed: the cache follows (the charge is now part of the subject's history),
     * unless another request reset it meanwhile. */
    if (s->version == dbv) {
        s->version = dbv + 1;
        s->spent = nspent;
        for (size_t i = 0; i < c->n_obs; i++)
            if (mnc_lbpg_cache_add(s, p->fields[c->obs[i].field].name, c->obs[i].value) != 0)
                mnc_lbpg_cache_reset(s); /* refetched next time */
    }
    res->spent = nspent;
    return MNC_LEDGER_OK;
fail:
    PQclear(r);
    mnc_lbpg_cfailed(b, cn, what);
    return rc;
}

static int pg_foreach(mnc_lbackend *bb, const char *subject, int (*cb)(void *arg, const mnc_lb_entry *e), void *arg,
                      char *err, size_t err_len)
{
    lb_pg *b = P(bb);
    if (!mnc_lbpg_ensure_up(b)) {
        snprintf(err, err_len, "ledger unavailable: %s", b->why);
        return -1;
    }
    const char *sql = subject ? "SELECT subject, seq, (extract(epoch FROM t) * 1000)::bigint, recipient, "
                                "release_id, delta, obs::text, host FROM mnc_release WHERE subject = $1 "
                                "ORDER BY subject, seq"
                              : "SELECT subject, seq, (extract(epoch FROM t) * 1000)::bigint, recipient, "
                                "release_id, delta, obs::text, host FROM mnc_release ORDER BY subject, seq";
    const char *v[1] = {subject};
    /* Single-row mode streams the result: the ledger may not fit in memory at once. */
    if (!PQsendQueryParams(b->conn, sql, subject ? 1 : 0, NULL, subject ? v : NULL, NULL, NULL, 0) ||
        !PQsetSingleRowMode(b->conn)) {
        snprintf(err, err_len, "%.*s", (int)strcspn(PQerrorMessage(b->conn), "\n"), PQerrorMessage(b->conn));
        mnc_lbpg_failed(b, "listing");
        return -1;
    }
    int ret = 0;
    bool bad = false;
    PGresult *r;
    while ((r = PQgetResult(b->conn))) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE && ret == 0 && !bad) {
            cJSON *j = cJSON_Parse(PQgetvalue(r, 0, 6));
            mnc_ledger_obs o[MNC_LEDGER_OBS_MAX];
            size_t n = 0;
            bool okj = cJSON_IsArray(j);
            for (const cJSON *x = okj ? j->child : NULL; x && okj; x = x->next) {
                okj = n < MNC_LEDGER_OBS_MAX && cJSON_GetArraySize(x) == 2 && cJSON_IsString(x->child) &&
                      cJSON_IsString(x->child->next);
                if (okj) {
                    o[n].field = x->child->valuestring;
                    o[n].value = x->child->next->valuestring;
                    n++;
                }
            }
            if (!okj) {
                snprintf(err, err_len, "subject %s seq %s: malformed obs", PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1));
                bad = true;
            } else {
                mnc_lb_entry e = {.e = {.seq = strtoull(PQgetvalue(r, 0, 1), NULL, 10),
                                        .time_ms = strtoull(PQgetvalue(r, 0, 2), NULL, 10),
                                        .subject = PQgetvalue(r, 0, 0),
                                        .recipient = PQgetvalue(r, 0, 3),
                                        .release = PQgetvalue(r, 0, 4),
                                        .delta = strtod(PQgetvalue(r, 0, 5), NULL),
                                        .obs = o,
                                        .n_obs = n},
                                  .host = PQgetvalue(r, 0, 7)};
                ret = cb(arg, &e);
            }
            cJSON_Delete(j);
        } else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK) {
            snprintf(err, err_len, "%.*s", (int)strcspn(PQerrorMessage(b->conn), "\n"), PQerrorMessage(b->conn));
            bad = true;
        }
        PQclear(r);
    }
    if (bad) {
        mnc_lbpg_failed(b, "listing");
        return -1;
    }
    return ret;
}

static mnc_ledger_rc pg_spent(mnc_lbackend *bb, const char *subject, double *out)
{
    lb_pg *b = P(bb);
    if (!mnc_lbpg_ensure_up(b))
        return MNC_LEDGER_UNAVAILABLE;
    const char *v[1] = {subject};
    PGresult *r = PQexecParams(b->conn, "SELECT spent FROM mnc_subject WHERE subject = $1", 1, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        mnc_lbpg_failed(b, "reading spent");
        return MNC_LEDGER_UNAVAILABLE;
    }
    *out = PQntuples(r) ? strtod(PQgetvalue(r, 0, 0), NULL) : 0;
    PQclear(r);
    return MNC_LEDGER_OK;
}

static void pg_stats(mnc_lbackend *bb, size_t *subjects, size_t *charges)
{
    lb_pg *b = P(bb);
    if (!mnc_lbpg_ensure_up(b))
        return;
    /* PostgreSQL's estimates, not count(*): status must stay cheap on a large ledger (a
     * table never analysed reports -1: shown as 0). */
    PGresult *r = PQexec(b->conn, "SELECT greatest(0, (SELECT reltuples FROM pg_class "
                                  "WHERE oid = 'mnc_subject'::regclass))::bigint, "
                                  "greatest(0, (SELECT reltuples FROM pg_class "
                                  "WHERE oid = 'mnc_release'::regclass))::bigint");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        PQclear(r);
        mnc_lbpg_failed(b, "counting");
        return;
    }
    if (subjects)
        *subjects = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
    if (charges)
        *charges = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
}

static bool pg_state(mnc_lbackend *bb, char *msg, size_t msg_len, uint64_t *reconnects)
{
    lb_pg *b = P(bb);
    if (reconnects)
        *reconnects = b->reconnects;
    bool up = b->conn && PQstatus(b->conn) == CONNECTION_OK;
    if (msg && msg_len) {
        if (up) {
            snprintf(msg, msg_len, "ok");
        } else {
            uint64_t now = mono_ms();
            snprintf(msg, msg_len, "unavailable: %s; next reconnect in %llu ms", b->why[0] ? b->why : "not connected",
                     (unsigned long long)(b->next_try_ms > now ? b->next_try_ms - now : 0));
        }
    }
    return up;
}

static int pg_tick(mnc_lbackend *bb, uint64_t now_ms)
{
    (void)now_ms;
    lb_pg *b = P(bb);
    if (b->conn && PQstatus(b->conn) == CONNECTION_OK)
        return -1;
    (void)mnc_lbpg_ensure_up(b);
    if (b->conn)
        return -1;
    uint64_t now = mono_ms();
    return b->next_try_ms > now ? (int)(b->next_try_ms - now) : 0;
}

static int pg_close(mnc_lbackend *bb)
{
    lb_pg *b = P(bb);
    if (b->conn)
        PQfinish(b->conn);
    for (int i = 0; i < POOL; i++)
        if (b->pool[i])
            PQfinish(b->pool[i]);
    mnc_lbpg_cache_free(b);
    free(b->conninfo);
    free(b);
    return 0;
}

typedef struct vcount {
    size_t n;
} vcount;

static int count_cb(void *arg, const mnc_lb_entry *e)
{
    (void)e;
    ((vcount *)arg)->n++;
    return 0;
}

static int pg_verify(mnc_lbackend *bb, size_t *subjects, size_t *charges, char *err, size_t err_len)
{
    lb_pg *b = P(bb);
    if (!mnc_lbpg_ensure_up(b)) {
        snprintf(err, err_len, "ledger unavailable: %s", b->why);
        return -1;
    }
    /* float8 sum() adds in the aggregate's ORDER BY order, as every charge computed spent. */
    PGresult *r = PQexec(b->conn, "SELECT s.subject, s.version, s.spent::text, count(r.seq), "
                                  "coalesce(max(r.seq), 0), coalesce(sum(r.delta ORDER BY r.seq), 0)::text "
                                  "FROM mnc_subject s LEFT JOIN mnc_release r USING (subject) "
                                  "GROUP BY s.subject, s.version, s.spent ORDER BY s.subject");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        snprintf(err, err_len, "%.*s", (int)strcspn(PQerrorMessage(b->conn), "\n"), PQerrorMessage(b->conn));
        PQclear(r);
        mnc_lbpg_failed(b, "verifying");
        return -1;
    }
    size_t total = 0;
    int rc = 0;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        uint64_t ver = strtoull(PQgetvalue(r, i, 1), NULL, 10);
        uint64_t cnt = strtoull(PQgetvalue(r, i, 3), NULL, 10);
        uint64_t mx = strtoull(PQgetvalue(r, i, 4), NULL, 10);
        double spent = strtod(PQgetvalue(r, i, 2), NULL);
        double sum = strtod(PQgetvalue(r, i, 5), NULL);
        if (cnt != ver || mx != ver) {
            snprintf(err, err_len,
                     "subject %s: version %llu but %llu releases numbered up to "
                     "%llu (a gap or a lost release)",
                     PQgetvalue(r, i, 0), (unsigned long long)ver, (unsigned long long)cnt, (unsigned long long)mx);
            rc = -1;
        } else if (spent != sum) {
            snprintf(err, err_len,
                     "subject %s: spent %s differs from the sum of its releases "
                     "%s",
                     PQgetvalue(r, i, 0), PQgetvalue(r, i, 2), PQgetvalue(r, i, 5));
            rc = -1;
        }
        total += cnt;
    }
    *subjects = (size_t)PQntuples(r);
    PQclear(r);
    if (rc != 0)
        return -1;
    vcount vc = {0};
    if (pg_foreach(bb, NULL, count_cb, &vc, err, err_len) != 0)
        return -1;
    if (vc.n != total) {
        snprintf(err, err_len, "%zu releases listed but %zu counted per subject", vc.n, total);
        return -1;
    }
    *charges = total;
    return 0;
}

/* A charge commits its PostgreSQL transaction before it returns: never deferred. */
/* no close_at_exit: closing tells the server goodbye; no set_deferred/flush: nothing is
 * ever pending */
static const lb_ops pg_ops = {.history = pg_history,
                              .charge = pg_charge,
                              .foreach = pg_foreach,
                              .spent = pg_spent,
                              .stats = pg_stats,
                              .state = pg_state,
                              .tick = pg_tick,
                              .close = pg_close,
                              .verify = pg_verify};

int mnc_lb_import(mnc_lbackend *bb, mnc_lb_next_fn next, void *arg, const char *host, size_t *n, char *err,
                  size_t err_len)
{
    *n = 0;
    if (!bb || bb->kind != MNC_LB_POSTGRES || !next || !mnc_name_valid(host)) {
        snprintf(err, err_len, "import needs a postgres ledger and a valid host name");
        return -1;
    }
    lb_pg *b = P(bb);
    if (!mnc_lbpg_ensure_up(b)) {
        snprintf(err, err_len, "ledger unavailable: %s", b->why);
        return -1;
    }
    if (!mnc_lbpg_run_cmd(b, "BEGIN")) {
        snprintf(err, err_len, "BEGIN: %.*s", (int)strcspn(PQerrorMessage(b->conn), "\n"), PQerrorMessage(b->conn));
        mnc_lbpg_failed(b, "import");
        return -1;
    }
    mnc_lb_entry e;
    int k;
    const char *what = "";
    while ((k = next(arg, &e)) == 1) {
        PGresult *r = NULL;
        const char *v1[1] = {e.e.subject};
        what = "locking the subject";
        for (int i = 0; i < 2; i++) {
            if (!(r = mnc_lbpg_run(b, "mnc_lock", 1, v1, PGRES_TUPLES_OK)))
                goto fail;
            if (PQntuples(r) == 1)
                break;
            PQclear(r);
            r = NULL;
            PGresult *ins = mnc_lbpg_run(b, "mnc_newsubj", 1, v1, PGRES_COMMAND_OK);
            if (!ins)
                goto fail;
            PQclear(ins);
        }
        if (!r)
            goto fail;
        uint64_t ver = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
        double spent = strtod(PQgetvalue(r, 0, 1), NULL);
        PQclear(r);
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; arr && i < e.e.n_obs; i++) {
            const char *pair[2] = {e.e.obs[i].field, e.e.obs[i].value};
            cJSON *x = cJSON_CreateStringArray(pair, 2);
            if (!x || !cJSON_AddItemToArray(arr, x)) {
                cJSON_Delete(x);
                cJSON_Delete(arr);
                arr = NULL;
            }
        }
        char *obs = arr ? cJSON_PrintUnformatted(arr) : NULL;
        cJSON_Delete(arr);
        if (!obs) {
            snprintf(err, err_len, "out of memory");
            goto fail_quiet;
        }
        char seq[24], dl[40], sp[40];
        snprintf(seq, sizeof(seq), "%llu", (unsigned long long)(ver + 1));
        snprintf(dl, sizeof(dl), "%.17g", e.e.delta);
        snprintf(sp, sizeof(sp), "%.17g", spent + e.e.delta);
        const char *h = e.host && e.host[0] ? e.host : host;
        const char *v8[8] = {e.e.subject, seq, e.e.release, h, e.e.recipient, dl, obs, sp};
        what = "recording the release";
        r = mnc_lbpg_run(b, "mnc_insert", 8, v8, PGRES_COMMAND_OK);
        free(obs);
        if (!r) {
            snprintf(err, err_len, "subject %s release %s: %.*s", e.e.subject, e.e.release,
                     (int)strcspn(PQerrorMessage(b->conn), "\n"), PQerrorMessage(b->conn));
            goto fail_quiet;
        }
        PQclear(r);
        (*n)++;
    }
    if (k != 0) {
        snprintf(err, err_len, "the input ended with an error after %zu entries", *n);
        goto fail_quiet;
    }
    what = "COMMIT";
    PGresult *r = PQexec(b->conn, "COMMIT");
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(r), "COMMIT") == 0;
    PQclear(r);
    if (!ok)
        goto fail;
    mnc_lbpg_cache_free(b); /* the cached versions are behind now */
    return 0;
fail:
    snprintf(err, err_len, "%s: %.*s", what, (int)strcspn(PQerrorMessage(b->conn), "\n"), PQerrorMessage(b->conn));
fail_quiet:
    *n = 0;
    mnc_lbpg_failed(b, "import");
    if (b->conn && PQtransactionStatus(b->conn) != PQTRANS_IDLE)
        (void)mnc_lbpg_run_cmd(b, "ROLLBACK");
    return -1;
}

mnc_lbackend *mnc_lb_open_postgres(const char *conninfo, const char *host, char *err, size_t err_len)
{
    if (!mnc_name_valid(host)) {
        snprintf(err, err_len, "host name must be 1..63 characters [A-Za-z0-9_.:-]");
        return NULL;
    }
    if (mnc_pg_check_conninfo(conninfo, err, err_len) != 0)
        return NULL;
    lb_pg *b = calloc(1, sizeof(*b));
    if (!b || !(b->conninfo = strdup(conninfo))) {
        if (b)
            free(b->conninfo);
        free(b);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    b->base.kind = MNC_LB_POSTGRES;
    b->base.ops = &pg_ops;
    mnc_htab_init(&b->cache, 256, 1, 4);
    snprintf(b->host, sizeof(b->host), "%s", host);
    b->backoff_ms = BACKOFF_MIN_MS;
    if (mnc_lbpg_pg_connect(b, err, err_len) != 0) {
        pg_close(&b->base);
        return NULL;
    }
    b->ever_up = true;
    return &b->base;
}

PGconn *mnc_lb_pg_conn(mnc_lbackend *bb)
{
    if (!bb || bb->kind != MNC_LB_POSTGRES)
        return NULL;
    lb_pg *b = P(bb);
    return mnc_lbpg_ensure_up(b) ? b->conn : NULL;
}

void mnc_lb_pg_failed(mnc_lbackend *bb, const char *what)
{
    if (bb && bb->kind == MNC_LB_POSTGRES)
        mnc_lbpg_failed(P(bb), what);
}

void mnc_lb_set_wait(mnc_lbackend *bb, int (*wait)(void *arg, int fd), bool (*suspendable)(void *arg), void *arg)
{
    if (!bb || bb->kind != MNC_LB_POSTGRES)
        return;
    lb_pg *b = P(bb);
    b->wait = wait;
    b->suspendable = suspendable;
    b->warg = arg;
}
