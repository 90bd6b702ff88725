// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fleet_pg.c - the shared approval queue and audit anchors on PostgreSQL (mnc/fleet.h). */
#include <cjson/cJSON.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/fleet.h"

static void pg_err(PGconn *c, const char *what, char *err, size_t err_len)
{
    const char *m = PQerrorMessage(c);
    snprintf(err, err_len, "%s: %.*s", what, (int)strcspn(m, "\n"), m);
}

static PGresult *q(PGconn *c, const char *sql, int n, const char *const *v, ExecStatusType want, const char *what,
                   char *err, size_t err_len)
{
    PGresult *r = PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != want) {
        pg_err(c, what, err, err_len);
        PQclear(r);
        return NULL;
    }
    return r;
}

int mnc_pg_approval_put(PGconn *c, const char *subject, const char *request_id, const char *host, const char *contract,
                        unsigned long long deadline_ms, const char *detail_json, char *err, size_t err_len)
{
    char dl[32];
    snprintf(dl, sizeof(dl), "%llu", deadline_ms);
    const char *v[6] = {subject ? subject : "", request_id, host, contract, dl, detail_json};
    PGresult *r = q(c,
                    "INSERT INTO mnc_approval(subject, request_id, host, contract, deadline, "
                    "detail) VALUES ($1, $2, $3, $4, to_timestamp($5::float8 / 1000), $6::jsonb)",
                    6, v, PGRES_COMMAND_OK, "publishing the approval request", err, err_len);
    PQclear(r);
    return r ? 0 : -1;
}

mnc_pg_decide_rc mnc_pg_approval_decide(PGconn *c, const char *request_id, const char *decision, const char *by,
                                        char *origin, size_t origin_len, char *prev, size_t prev_len, char *prev_by,
                                        size_t prev_by_len, char *err, size_t err_len)
{
    const char *v[3] = {request_id, decision, by};
    /* One statement decides: concurrent deciders serialise on the row, and the loser's
     * WHERE no longer matches (READ COMMITTED re-checks it on the updated row). */
    PGresult *r = q(c,
                    "UPDATE mnc_approval SET decision = $2, decided_by = $3, decided_at = now() "
                    "WHERE request_id = $1 AND decision IS NULL "
                    "AND ($2 = 'timeout' OR deadline > now()) RETURNING host",
                    3, v, PGRES_TUPLES_OK, "deciding the approval request", err, err_len);
    if (!r)
        return MNC_PG_FAILED;
    if (PQntuples(r) == 1) {
        if (origin)
            snprintf(origin, origin_len, "%s", PQgetvalue(r, 0, 0));
        PQclear(r);
        return MNC_PG_DECIDED;
    }
    PQclear(r);
    r = q(c,
          "SELECT host, coalesce(decision, ''), coalesce(decided_by, '') FROM mnc_approval "
          "WHERE request_id = $1",
          1, v, PGRES_TUPLES_OK, "reading the approval request", err, err_len);
    if (!r)
        return MNC_PG_FAILED;
    mnc_pg_decide_rc rc = MNC_PG_UNKNOWN;
    if (PQntuples(r) == 1) {
        if (origin)
            snprintf(origin, origin_len, "%s", PQgetvalue(r, 0, 0));
        if (prev)
            snprintf(prev, prev_len, "%s", PQgetvalue(r, 0, 1));
        if (prev_by)
            snprintf(prev_by, prev_by_len, "%s", PQgetvalue(r, 0, 2));
        rc = PQgetvalue(r, 0, 1)[0] ? MNC_PG_ALREADY : MNC_PG_EXPIRED;
    }
    PQclear(r);
    return rc;
}

int mnc_pg_approval_poll(PGconn *c, const char *host,
                         void (*cb)(void *arg, const char *request_id, const char *decision, const char *by), void *arg,
                         char *err, size_t err_len)
{
    const char *v[1] = {host};
    PGresult *r = q(c,
                    "SELECT request_id, decision, decided_by FROM mnc_approval "
                    "WHERE host = $1 AND NOT seen_by_origin AND decision IS NOT NULL "
                    "ORDER BY decided_at",
                    1, v, PGRES_TUPLES_OK, "polling approval decisions", err, err_len);
    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r); i++)
        cb(arg, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
    PQclear(r);
    return 0;
}

int mnc_pg_approval_seen(PGconn *c, const char *request_id, char *err, size_t err_len)
{
    const char *v[1] = {request_id};
    PGresult *r = q(c, "UPDATE mnc_approval SET seen_by_origin = true WHERE request_id = $1", 1, v, PGRES_COMMAND_OK,
                    "marking the decision applied", err, err_len);
    PQclear(r);
    return r ? 0 : -1;
}

cJSON *mnc_pg_approval_pending(PGconn *c, int max, char *err, size_t err_len)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", max > 0 ? max : 100);
    const char *v[1] = {lim};
    PGresult *r = q(c,
                    "SELECT request_id, host, subject, contract, "
                    "(extract(epoch FROM deadline) * 1000)::bigint, detail::text "
                    "FROM mnc_approval WHERE decision IS NULL AND deadline > now() "
                    "ORDER BY created LIMIT $1::int",
                    1, v, PGRES_TUPLES_OK, "listing the fleet's approval requests", err, err_len);
    if (!r)
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < PQntuples(r); i++) {
        cJSON *x = cJSON_CreateObject();
        if (!x || !cJSON_AddItemToArray(arr, x)) {
            cJSON_Delete(x);
            break;
        }
        cJSON_AddStringToObject(x, "request", PQgetvalue(r, i, 0));
        cJSON_AddStringToObject(x, "host", PQgetvalue(r, i, 1));
        cJSON_AddStringToObject(x, "subject", PQgetvalue(r, i, 2));
        cJSON_AddStringToObject(x, "contract", PQgetvalue(r, i, 3));
        cJSON_AddNumberToObject(x, "expires_ms", strtod(PQgetvalue(r, i, 4), NULL));
        cJSON *d = cJSON_Parse(PQgetvalue(r, i, 5));
        if (d)
            cJSON_AddItemToObject(x, "detail", d);
    }
    PQclear(r);
    if (!arr)
        snprintf(err, err_len, "out of memory");
    return arr;
}

int mnc_pg_anchor_put(PGconn *c, const char *host, unsigned long long seq, const char *hash, char *err, size_t err_len)
{
    char s[32];
    snprintf(s, sizeof(s), "%llu", seq);
    const char *v[3] = {host, s, hash};
    PGresult *r = q(c,
                    "WITH i AS (INSERT INTO mnc_anchor(host, seq, hash) VALUES ($1, $2, $3) "
                    "ON CONFLICT (host, seq) DO NOTHING RETURNING hash) "
                    "SELECT hash FROM i UNION ALL "
                    "SELECT hash FROM mnc_anchor WHERE host = $1 AND seq = $2::bigint",
                    3, v, PGRES_TUPLES_OK, "anchoring the audit head", err, err_len);
    if (!r)
        return -1;
    int rc = 0;
    for (int i = 0; i < PQntuples(r); i++)
        if (strcmp(PQgetvalue(r, i, 0), hash) != 0) {
            snprintf(err, err_len,
                     "host %s already anchored seq %llu with another hash %s: its "
                     "audit log forked or was rewritten",
                     host, seq, PQgetvalue(r, i, 0));
            rc = -1;
        }
    PQclear(r);
    return rc;
}

int mnc_pg_anchor_foreach(PGconn *c, const char *host, int (*cb)(void *arg, unsigned long long seq, const char *hash),
                          void *arg, char *err, size_t err_len)
{
    const char *v[1] = {host};
    PGresult *r = q(c, "SELECT seq, hash FROM mnc_anchor WHERE host = $1 ORDER BY seq", 1, v, PGRES_TUPLES_OK,
                    "reading the anchors", err, err_len);
    if (!r)
        return -1;
    int ret = 0;
    for (int i = 0; i < PQntuples(r) && ret == 0; i++)
        ret = cb(arg, strtoull(PQgetvalue(r, i, 0), NULL, 10), PQgetvalue(r, i, 1));
    PQclear(r);
    return ret;
}
