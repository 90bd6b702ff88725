/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ledger_backend.h - where the MNC-L ledger lives: one interface, two backends.
 *
 *   journal   the local CRC'd journal of ledger.h (STATE_DIR/ledger): the embedded default
 *             for a single host.
 *   postgres  a PostgreSQL database shared by a fleet of hosts (ledger_pg.c, libpq), so a
 *             subject's budget B holds across every host: docs/fleet.md.
 *
 * Charging is one step on both backends (mnc_lb_charge): under the subject's lock, the
 * history the caller priced the release against is compared with the subject's current
 * history (a version counter: the number of charges the subject has); if another charge
 * moved it (another host, on postgres) the caller's recompute callback prices the release
 * again with exactly the code that priced it first (risk.h), against the fresh history; then
 * ε and B are checked, the release is recorded under its release id and made durable. Only
 * after MNC_LEDGER_OK may the caller deliver.
 *
 * Release ids are idempotency keys: a second charge with an id that is already recorded for
 * the subject writes nothing and returns MNC_LEDGER_DUPLICATE; r->same then says whether the
 * recorded release had the same recipient and the same observations (a client retrying a
 * request whose reply was lost), so the caller may hand the release out again uncharged.
 *
 * Fail closed: MNC_LEDGER_UNAVAILABLE means the backend could not decide (database down, a
 * transaction failed or its outcome is unknown). Nothing was charged that the caller may rely
 * on: the caller must not deliver. A commit whose reply was lost may still have committed -
 * the safe direction (charged, not released); a retry with the same release id then gets
 * DUPLICATE with same = true. The postgres backend reconnects by itself with exponential
 * backoff (mnc_lb_tick, and on demand); mnc_lb_state says what it is doing.
 *
 * Thread safety: one thread per handle (mncd is single-threaded); the journal backend
 * inherits ledger.h's guarantees.
 */
#ifndef MNC_LEDGER_BACKEND_H
#define MNC_LEDGER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc/ledger.h"
#include "mnc/policy.h"
#include "mnc/risk.h"

typedef struct mnc_lbackend mnc_lbackend;

typedef enum mnc_lb_kind { MNC_LB_JOURNAL = 0, MNC_LB_POSTGRES = 1 } mnc_lb_kind;

/* Prices the release against history h (policy field ids). 0 with *delta, or -1 (the model
 * cannot evaluate it: the charge then fails closed with MNC_LEDGER_ERROR). */
typedef int (*mnc_lb_delta_fn)(void *arg, const mnc_obs *h, size_t nh, double *delta);

typedef struct mnc_lb_request {
    const char *subject, *recipient, *release; /* bounded, printable (ledger.h limits) */
    const mnc_obs *obs;                        /* the released values (policy field ids) */
    size_t n_obs;
    double delta;              /* ΔR priced against the history of `version` */
    uint64_t version;          /* from mnc_lb_history */
    mnc_lb_delta_fn recompute; /* NULL: a moved history fails with MNC_LEDGER_ERROR */
    void *arg;
    const mnc_ledger_limits *lim; /* NULL = no caps (approval override) */
} mnc_lb_request;

typedef struct mnc_lb_result {
    double delta; /* the ΔR charged (or that was refused) */
    double spent; /* the subject's total after the charge (before, if refused) */
    bool same;    /* DUPLICATE only: the recorded release has this recipient and these obs */
} mnc_lb_result;

/* One charge as recorded (show, verify, export). Pointers valid during the callback only.
 * host is "" on the journal backend. */
typedef struct mnc_lb_entry {
    mnc_ledger_entry e;
    const char *host;
} mnc_lb_entry;

/* The journal backend over STATE_DIR/ledger (ledger.h open semantics: torn tail truncated and
 * reported in notice; corruption fails naming the record). ro: read-only view, no lock. */
mnc_lbackend *mnc_lb_open_journal(const char *path, bool ro, char *notice, size_t notice_len, char *err,
                                  size_t err_len);

/* The postgres backend. conninfo is libpq's (keywords or URI); it must not carry a password
 * (use a passfile, a client certificate or peer authentication: docs/fleet.md) - refused
 * here so that it never sits in a config file or a log. host names this mncd in the shared
 * tables (1..63 bytes, [A-Za-z0-9_.:-]). Connects, and refuses a database whose schema
 * version this build does not know (err says which version, and what to run). NULL with err
 * on failure; err never contains the conninfo's secrets. */
mnc_lbackend *mnc_lb_open_postgres(const char *conninfo, const char *host, char *err, size_t err_len);

/* Closes; 0, or -1 if the backend had an unrecoverable error. NULL is a no-op. */
int mnc_lb_close(mnc_lbackend *b);

/* mnc_lb_close for a process about to exit: the journal backend closes its file
 * (mnc_ledger_close_at_exit) and leaves its memory to the exit; postgres closes fully. */
int mnc_lb_close_at_exit(mnc_lbackend *b);

mnc_lb_kind mnc_lb_kind_of(const mnc_lbackend *b);
const char *mnc_lb_kind_name(mnc_lb_kind k); /* "journal" | "postgres" */

/* The subject's realised history as mnc_ledger_history defines it (each distinct observation
 * once, in charge order; *h one heap block, free() it), its total spend and its version.
 * Returns MNC_LEDGER_OK, MNC_LEDGER_UNAVAILABLE (postgres unreachable), or MNC_LEDGER_ERROR
 * (a recorded field this policy does not know: fail closed; bad args; OOM). */
mnc_ledger_rc mnc_lb_history(mnc_lbackend *b, const mnc_policy *p, const char *subject, mnc_obs **h, size_t *nh,
                             double *spent, uint64_t *version);

/* Charges c (see the header comment). Returns OK, DUPLICATE, OVER_EPSILON, OVER_BUDGET,
 * UNAVAILABLE or ERROR (bad args, history not evaluable, read-only view). r is filled for
 * every return but ERROR. */
mnc_ledger_rc mnc_lb_charge(mnc_lbackend *b, const mnc_policy *p, const mnc_lb_request *c, mnc_lb_result *r);

/* Calls cb for each charge of subject (NULL = all), per subject in charge order; stops at a
 * non-zero return and returns it. 0 when all were visited, -1 on a backend error (msg in
 * err). */
int mnc_lb_foreach(mnc_lbackend *b, const char *subject, int (*cb)(void *arg, const mnc_lb_entry *e), void *arg,
                   char *err, size_t err_len);

/* Σ charged to a subject (0 for an unknown one). MNC_LEDGER_OK / UNAVAILABLE / ERROR. */
mnc_ledger_rc mnc_lb_spent(mnc_lbackend *b, const char *subject, double *out);

/* Checks the stored ledger: journal - it was fully replayed when opened (CRC, sequence,
 * well-formed charges); postgres - every subject's releases are numbered 1..version without
 * a gap, its spent equals the sum of its deltas in seq order (bit for bit), and every
 * release's observations are well formed. 0 with the counts, or -1 with err naming the first
 * inconsistent subject (or the connection error). */
int mnc_lb_verify(mnc_lbackend *b, size_t *subjects, size_t *charges, char *err, size_t err_len);

/* Supplies the next entry to import: 1 (e filled; its strings valid until the next call), 0 at
 * the end, -1 on error (the import then fails). e->host "" = the importing host. */
typedef int (*mnc_lb_next_fn)(void *arg, mnc_lb_entry *e);

/* postgres only: appends the entries to the ledger in ONE transaction (all or nothing),
 * each after its subject's existing charges (seq continues; deltas are kept as recorded,
 * not re-priced; spent is summed in order). A release id that the subject already has
 * aborts the whole import, naming it. host: the host name recorded for entries without one.
 * 0 with *n imported, or -1 with err (nothing imported). */
int mnc_lb_import(mnc_lbackend *b, mnc_lb_next_fn next, void *arg, const char *host, size_t *n, char *err,
                  size_t err_len);

/* Number of subjects and charges (postgres: PostgreSQL's row estimates, so that status stays
 * cheap on a large ledger - exact counts come from mnc_lb_verify; 0/0 while unavailable). */
void mnc_lb_stats(mnc_lbackend *b, size_t *subjects, size_t *charges);

/* true if the backend can charge now. msg (may be NULL) receives "ok", or what is wrong and
 * when the next reconnect is due. *reconnects (may be NULL): successful reconnects so far. */
bool mnc_lb_state(mnc_lbackend *b, char *msg, size_t msg_len, uint64_t *reconnects);

/* Periodic work (postgres: a reconnect attempt if one is due). Returns the milliseconds until
 * it wants to be called again (-1: never). */
int mnc_lb_tick(mnc_lbackend *b, uint64_t now_ms);

/* Deferred durability (mnc_ledger_set_deferred) where the backend has it - the journal; on
 * postgres every charge is committed before it returns, and both are no-ops returning 0.
 * While on, an OK charge is durable only after the next mnc_lb_flush() returned 0: release
 * nothing it covers before that. Turning it off flushes. 0, or -1 with errno (flush failed:
 * the handle refuses further charges). */
int mnc_lb_set_deferred(mnc_lbackend *b, bool on);
int mnc_lb_flush(mnc_lbackend *b);

/* Connections a postgres backend keeps for suspendable callers (mnc_lb_set_wait). */
#define MNC_LB_PG_POOL 16

/* Lets the postgres backend wait for the database without blocking its caller's thread.
 * suspendable(arg): whether the calling context may be suspended (mncd: a request running in
 * a coroutine). If it may, history reads and charges use a connection of their own (at most
 * MNC_LB_PG_POOL at once; one more is refused as unavailable) and wait through wait(arg, fd),
 * which returns 0 once fd is readable, or -1 - meanwhile the caller's thread serves other
 * requests, so several charges are in flight and PostgreSQL commits them together. Other
 * callers, and every call without a hook, block on the backend's main connection. No-op on
 * the journal backend. */
void mnc_lb_set_wait(mnc_lbackend *b, int (*wait)(void *arg, int fd), bool (*suspendable)(void *arg), void *arg);

/* The libpq connection of a postgres backend (NULL on journal, or while disconnected): for
 * the other fleet tables (fleet.h) to share one connection and its reconnect logic. */
struct pg_conn;
struct pg_conn *mnc_lb_pg_conn(mnc_lbackend *b);

/* Called by the fleet modules after a libpq call failed on mnc_lb_pg_conn(): drops the
 * connection (if it is broken) and schedules a reconnect, so every user sees one state. */
void mnc_lb_pg_failed(mnc_lbackend *b, const char *what);

#endif
