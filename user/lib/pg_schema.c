// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pg_schema.c - connecting to PostgreSQL and the versioned mnc schema (mnc/fleet.h).
 * libpq reference: https://www.postgresql.org/docs/15/libpq-connect.html */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/fleet.h"

/* libpq messages end in a newline (sometimes several lines): keep the first line. */
static void copy_msg(char *dst, size_t n, const char *prefix, const char *msg)
{
    if (!dst || !n)
        return;
    const char *m = msg ? msg : "";
    size_t len = strcspn(m, "\n");
    snprintf(dst, n, "%s%.*s", prefix, (int)len, m);
}

int mnc_pg_check_conninfo(const char *conninfo, char *err, size_t err_len)
{
    if (!conninfo || !*conninfo) {
        snprintf(err, err_len, "empty conninfo");
        return -1;
    }
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
    if (!opts) {
        copy_msg(err, err_len, "conninfo is not a libpq connection string: ", perr ? perr : "out of memory");
        PQfreemem(perr);
        return -1;
    }
    int rc = 0;
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && *o->val) {
            snprintf(err, err_len,
                     "conninfo carries a password: use a passfile (PGPASSFILE, "
                     "~/.pgpass), a client certificate or peer authentication "
                     "instead (docs/fleet.md)");
            rc = -1;
        }
    PQconninfoFree(opts);
    return rc;
}

PGconn *mnc_pg_connect(const char *conninfo, const char *appname, char *err, size_t err_len)
{
    if (mnc_pg_check_conninfo(conninfo, err, err_len) != 0)
        return NULL;
    /* Later keywords win (libpq-connect: PQconnectdbParams), so the expanded conninfo in
     * "dbname" overrides these defaults. */
    const char *kw[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *val[] = {"5", appname ? appname : "mnc", conninfo, NULL};
    PGconn *c = PQconnectdbParams(kw, val, 1);
    if (!c) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    if (PQstatus(c) != CONNECTION_OK) {
        copy_msg(err, err_len, "", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    PGresult *r = PQexec(c, "SET synchronous_commit TO on; SET lock_timeout TO '5s'; "
                            "SET statement_timeout TO '15s'");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        copy_msg(err, err_len, "session setup: ", PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        return NULL;
    }
    PQclear(r);
    return c;
}

static int read_version(PGconn *c, const char *lock, int *version, char *err, size_t err_len)
{
    PGresult *r = PQexec(c, "SELECT to_regclass('mnc_schema') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        copy_msg(err, err_len, "reading the schema version: ", PQerrorMessage(c));
        PQclear(r);
        return -1;
    }
    bool have = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!have) {
        *version = 0;
        return 0;
    }
    char q[128];
    snprintf(q, sizeof(q), "SELECT version FROM mnc_schema%s", lock);
    r = PQexec(c, q);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        if (PQresultStatus(r) == PGRES_TUPLES_OK)
            snprintf(err, err_len, "mnc_schema must hold exactly one row (it has %d)", PQntuples(r));
        else
            copy_msg(err, err_len, "reading the schema version: ", PQerrorMessage(c));
        PQclear(r);
        return -1;
    }
    *version = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

int mnc_pg_schema_version(PGconn *c, int *version, char *err, size_t err_len)
{
    return read_version(c, "", version, err, err_len);
}

int mnc_pg_schema_check(PGconn *c, char *err, size_t err_len)
{
    int v = 0;
    if (read_version(c, "", &v, err, err_len) != 0)
        return -1;
    if (v == MNC_PG_SCHEMA_VERSION)
        return 0;
    if (v == 0)
        snprintf(err, err_len,
                 "the database has no mnc schema: run `mncctl ledger init "
                 "--postgres CONNINFO` first");
    else if (v < MNC_PG_SCHEMA_VERSION)
        snprintf(err, err_len,
                 "the database's mnc schema version %d is older than this build's "
                 "%d: run `mncctl ledger init --postgres CONNINFO` to migrate it",
                 v, MNC_PG_SCHEMA_VERSION);
    else
        snprintf(err, err_len,
                 "the database's mnc schema version %d is unknown to this build "
                 "(it knows 1..%d): upgrade mnc on this host",
                 v, MNC_PG_SCHEMA_VERSION);
    return -1;
}

/* Migration N brings the schema from N-1 to N. Append only; never edit a released one. */
static const char *const migrations[MNC_PG_SCHEMA_VERSION] = {
    /* 1: the schema version and the ledger */
    "CREATE TABLE mnc_schema ("
    "  one boolean PRIMARY KEY DEFAULT true CHECK (one),"
    "  version integer NOT NULL CHECK (version >= 0));"
    "INSERT INTO mnc_schema(version) VALUES (0);"
    "CREATE TABLE mnc_subject ("
    "  subject text PRIMARY KEY CHECK (length(subject) BETWEEN 1 AND 255),"
    "  version bigint NOT NULL DEFAULT 0 CHECK (version >= 0),"
    "  spent double precision NOT NULL DEFAULT 0 CHECK (spent >= 0));"
    "CREATE TABLE mnc_release ("
    "  subject text NOT NULL REFERENCES mnc_subject(subject),"
    "  seq bigint NOT NULL CHECK (seq >= 1),"
    "  release_id text NOT NULL CHECK (length(release_id) BETWEEN 1 AND 255),"
    "  host text NOT NULL,"
    "  recipient text NOT NULL,"
    "  delta double precision NOT NULL CHECK (delta >= 0),"
    "  obs jsonb NOT NULL CHECK (jsonb_typeof(obs) = 'array'),"
    "  t timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (subject, seq),"
    "  UNIQUE (subject, release_id));",
    /* 2: the shared MNC-D approval queue */
    "CREATE TABLE mnc_approval ("
    "  subject text NOT NULL,"
    "  request_id text NOT NULL,"
    "  host text NOT NULL,"
    "  contract text NOT NULL,"
    "  created timestamptz NOT NULL DEFAULT now(),"
    "  deadline timestamptz NOT NULL,"
    "  detail jsonb NOT NULL,"
    "  decision text CHECK (decision IN ('approved', 'denied', 'timeout')),"
    "  decided_by text,"
    "  decided_at timestamptz,"
    "  seen_by_origin boolean NOT NULL DEFAULT false,"
    "  PRIMARY KEY (subject, request_id));"
    "CREATE UNIQUE INDEX mnc_approval_request ON mnc_approval (request_id);"
    "CREATE INDEX mnc_approval_host ON mnc_approval (host) WHERE NOT seen_by_origin;",
    /* 3: audit chain heads */
    "CREATE TABLE mnc_anchor ("
    "  host text NOT NULL,"
    "  seq bigint NOT NULL CHECK (seq >= 0),"
    "  hash text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),"
    "  t timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (host, seq));",
    /* 4: one charge in one statement. Under the subject's row lock: a recorded release id is
     * a duplicate; a history version other than the one the caller priced against is stale
     * (nothing written: the caller re-prices against the new history and retries); else ε and
     * B are checked and the release recorded. VOLATILE plpgsql in READ COMMITTED takes a new
     * snapshot per statement, so everything after the lock sees every committed charge. */
    "CREATE FUNCTION mnc_charge(p_subject text, p_version bigint, p_release text, p_host text,"
    "  p_recipient text, p_delta float8, p_obs jsonb, p_epsilon float8, p_budget float8)"
    " RETURNS TABLE (status text, version bigint, spent float8, same boolean)"
    " LANGUAGE plpgsql VOLATILE AS $$"
    " DECLARE v bigint; s float8; d boolean;"
    " BEGIN"
    "  SELECT m.version, m.spent INTO v, s FROM mnc_subject m WHERE m.subject = p_subject"
    "   FOR UPDATE;"
    "  IF NOT FOUND THEN"
    "   INSERT INTO mnc_subject(subject) VALUES (p_subject) ON CONFLICT DO NOTHING;"
    "   SELECT m.version, m.spent INTO v, s FROM mnc_subject m WHERE m.subject = p_subject"
    "    FOR UPDATE;"
    "  END IF;"
    "  SELECT x.recipient = p_recipient AND x.obs = p_obs INTO d FROM mnc_release x"
    "   WHERE x.subject = p_subject AND x.release_id = p_release;"
    "  IF FOUND THEN RETURN QUERY SELECT 'duplicate'::text, v, s, d; RETURN; END IF;"
    "  IF v <> p_version THEN RETURN QUERY SELECT 'stale'::text, v, s, false; RETURN; END IF;"
    "  IF p_epsilon >= 0 AND p_delta > p_epsilon THEN"
    "   RETURN QUERY SELECT 'over_epsilon'::text, v, s, false; RETURN; END IF;"
    "  IF p_budget >= 0 AND s + p_delta > p_budget THEN"
    "   RETURN QUERY SELECT 'over_budget'::text, v, s, false; RETURN; END IF;"
    "  INSERT INTO mnc_release(subject, seq, release_id, host, recipient, delta, obs)"
    "   VALUES (p_subject, v + 1, p_release, p_host, p_recipient, p_delta, p_obs);"
    "  UPDATE mnc_subject m SET version = v + 1, spent = s + p_delta WHERE m.subject = p_subject;"
    "  RETURN QUERY SELECT 'ok'::text, v + 1, s + p_delta, false;"
    " END $$;",
};

static int exec_ok(PGconn *c, const char *sql, char *err, size_t err_len, const char *what)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    PQclear(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return 0;
    copy_msg(err, err_len, what, PQerrorMessage(c));
    return -1;
}

int mnc_pg_migrate(PGconn *c, int *from, int *to, char *err, size_t err_len)
{
    int v = 0;
    if (read_version(c, "", &v, err, err_len) != 0)
        return -1;
    *from = *to = v;
    if (v > MNC_PG_SCHEMA_VERSION) {
        snprintf(err, err_len,
                 "the database's mnc schema version %d is newer than this build "
                 "(it knows 1..%d): upgrade mnc",
                 v, MNC_PG_SCHEMA_VERSION);
        return -1;
    }
    for (int n = v + 1; n <= MNC_PG_SCHEMA_VERSION; n++) {
        char what[64];
        snprintf(what, sizeof(what), "migration %d: ", n);
        /* One transaction per migration; the advisory lock serialises concurrent runs, and
         * the version is re-read under it (another run may have applied n meanwhile). */
        if (exec_ok(c, "BEGIN; SELECT pg_advisory_xact_lock(7236771)", err, err_len, what) != 0)
            goto rollback;
        int cur = 0;
        if (read_version(c, " FOR UPDATE", &cur, err, err_len) != 0)
            goto rollback;
        if (cur >= n) {
            if (exec_ok(c, "COMMIT", err, err_len, what) != 0)
                goto rollback;
            *to = cur;
            continue;
        }
        if (cur != n - 1) {
            snprintf(err, err_len, "migration %d: the schema is at version %d, expected %d", n, cur, n - 1);
            goto rollback;
        }
        char upd[96];
        snprintf(upd, sizeof(upd), "UPDATE mnc_schema SET version = %d", n);
        if (exec_ok(c, migrations[n - 1], err, err_len, what) != 0 || exec_ok(c, upd, err, err_len, what) != 0)
            goto rollback;
        PGresult *r = PQexec(c, "COMMIT");
        bool committed = PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(r), "COMMIT") == 0;
        PQclear(r);
        if (!committed) {
            copy_msg(err, err_len, what, PQerrorMessage(c));
            return -1;
        }
        *to = n;
    }
    return 0;
rollback:
    PQclear(PQexec(c, "ROLLBACK"));
    return -1;
}
