/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* fleet.h - the PostgreSQL side of fleet mode (docs/fleet.md): connecting, the versioned
 * schema and its migrations. The ledger itself is ledger_backend.h's postgres backend.
 *
 * Schema (one version number in mnc_schema; migrations numbered 1..MNC_PG_SCHEMA_VERSION):
 *   1  mnc_subject (subject PK, version, spent), mnc_release (subject, seq) PK,
 *      unique (subject, release_id): the ledger
 *   2  mnc_approval (subject, request_id) PK: the shared MNC-D approval queue
 *   3  mnc_anchor (host, seq) PK: audit chain heads
 *   4  mnc_charge(): one charge as one statement (lock, duplicate check, version check, ε/B,
 *      insert) - the one-round-trip path of ledger_pg.c
 * The ledger and approval tables are keyed by subject first, so they can be distributed by
 * subject (e.g. Citus hash distribution); mnc_schema and mnc_anchor are small per-fleet and
 * per-host tables (reference tables there).
 *
 * Every function here takes a connection from mnc_pg_connect; none of them logs.
 */
#ifndef MNC_FLEET_H
#define MNC_FLEET_H

#include <stddef.h>

#define MNC_PG_SCHEMA_VERSION 4

struct pg_conn; /* libpq's PGconn */

/* Checks that conninfo parses as a libpq connection string and carries no password (a
 * password belongs in a passfile, PGPASSFILE, or is replaced by peer/certificate
 * authentication: never in mncd's config or logs). 0, or -1 with err. */
int mnc_pg_check_conninfo(const char *conninfo, char *err, size_t err_len);

/* Connects (mnc_pg_check_conninfo first) with mnc's defaults - connect_timeout 5 s,
 * application_name "mnc" - which the conninfo may override, then sets the session's
 * synchronous_commit on (a charge must be durable when it is acknowledged), lock_timeout 5 s
 * and statement_timeout 15 s (a stuck database refuses charges instead of stalling mncd
 * forever). NULL with err (libpq's message; it names host and user, never a password). */
struct pg_conn *mnc_pg_connect(const char *conninfo, const char *appname, char *err, size_t err_len);

/* The database's schema version: 0 if there is no mnc schema. 0, or -1 with err. */
int mnc_pg_schema_version(struct pg_conn *c, int *version, char *err, size_t err_len);

/* 0 if the schema version is exactly MNC_PG_SCHEMA_VERSION; else -1 with one clear message
 * (no schema / older: run `mncctl ledger init`; newer: this build is too old). */
int mnc_pg_schema_check(struct pg_conn *c, char *err, size_t err_len);

/* Creates or migrates the schema to MNC_PG_SCHEMA_VERSION. Each migration runs in its own
 * transaction under an advisory lock and re-reads the version inside it, so concurrent or
 * repeated runs are idempotent. *from / *to: the versions before and after. A database
 * newer than this build is refused. 0, or -1 with err (the failing migration rolled back;
 * earlier ones stay committed). */
int mnc_pg_migrate(struct pg_conn *c, int *from, int *to, char *err, size_t err_len);

/* ---- the shared MNC-D approval queue (fleet_pg.c)
 *
 * The host that holds a request (its "origin": it has the private state and the issuer)
 * publishes it; any host's admin may decide it; the decision is taken exactly once by an
 * UPDATE ... WHERE decision IS NULL, so concurrent deciders cannot both win; the origin polls
 * for decisions on its requests, applies them (releases, or denies) and marks them seen. */

/* Publishes a pending request. deadline_ms: Unix ms. detail: JSON shown to approvers. 0 or
 * -1 with err. */
int mnc_pg_approval_put(struct pg_conn *c, const char *subject, const char *request_id, const char *host,
                        const char *contract, unsigned long long deadline_ms, const char *detail_json, char *err,
                        size_t err_len);

typedef enum mnc_pg_decide_rc {
    MNC_PG_FAILED = -1, /* database error (err) */
    MNC_PG_DECIDED = 0, /* this call decided it */
    MNC_PG_ALREADY = 1, /* decided before: *prev / *prev_by say how and where */
    MNC_PG_UNKNOWN = 2, /* no such request in the fleet queue */
    MNC_PG_EXPIRED = 3, /* past its deadline, not decided yet: only "timeout" may decide it */
} mnc_pg_decide_rc;

/* Decides request_id ("approved", "denied" or "timeout") on behalf of host by. origin (may be
 * NULL) receives the origin host's name. */
mnc_pg_decide_rc mnc_pg_approval_decide(struct pg_conn *c, const char *request_id, const char *decision, const char *by,
                                        char *origin, size_t origin_len, char *prev, size_t prev_len, char *prev_by,
                                        size_t prev_by_len, char *err, size_t err_len);

/* Calls cb for each decided request of origin host not yet marked seen. 0 or -1 with err. */
int mnc_pg_approval_poll(struct pg_conn *c, const char *host,
                         void (*cb)(void *arg, const char *request_id, const char *decision, const char *by), void *arg,
                         char *err, size_t err_len);

/* Marks a decided request as applied by its origin. 0 or -1 with err. */
int mnc_pg_approval_seen(struct pg_conn *c, const char *request_id, char *err, size_t err_len);

/* The fleet's undecided requests whose deadline has not passed, oldest first, as a JSON array
 * of {request, host, subject, contract, expires_ms, detail} (caller frees), or NULL with err. */
struct cJSON *mnc_pg_approval_pending(struct pg_conn *c, int max, char *err, size_t err_len);

/* ---- audit anchors (fleet_pg.c): a host's audit chain head (seq, hash) */

/* Records an anchor. Re-recording the same (host, seq, hash) is a no-op; the same (host,
 * seq) with another hash is refused (-1, err says so): a log that forked. */
int mnc_pg_anchor_put(struct pg_conn *c, const char *host, unsigned long long seq, const char *hash, char *err,
                      size_t err_len);

/* Calls cb for host's anchors in seq order; stops at a non-zero return and returns it. 0 when
 * all were visited, -1 with err. */
int mnc_pg_anchor_foreach(struct pg_conn *c, const char *host,
                          int (*cb)(void *arg, unsigned long long seq, const char *hash), void *arg, char *err,
                          size_t err_len);

#endif
