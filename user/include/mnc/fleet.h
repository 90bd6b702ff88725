/* fleet.h - the PostgreSQL side of fleet mode (docs/fleet.md): connecting, the versioned
 * schema and its migrations. The ledger itself is ledger_backend.h's postgres backend.
 *
 * Schema (one version number in mnc_schema; migrations numbered 1..MNC_PG_SCHEMA_VERSION):
 *   1  mnc_subject (subject PK, version, spent), mnc_release (subject, seq) PK,
 *      unique (subject, release_id): the ledger
 *   2  mnc_approval (subject, request_id) PK: the shared MNC-D approval queue
 *   3  mnc_anchor (host, seq) PK: audit chain heads
 * The ledger and approval tables are keyed by subject first, so they can be distributed by
 * subject (e.g. Citus hash distribution); mnc_schema and mnc_anchor are small per-fleet and
 * per-host tables (reference tables there).
 *
 * Every function here takes a connection from mnc_pg_connect; none of them logs.
 */
#ifndef MNC_FLEET_H
#define MNC_FLEET_H

#include <stddef.h>

#define MNC_PG_SCHEMA_VERSION 3

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
struct pg_conn *mnc_pg_connect(const char *conninfo, const char *appname, char *err,
                               size_t err_len);

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

#endif
