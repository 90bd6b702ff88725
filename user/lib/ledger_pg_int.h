/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ledger_pg_int.h - internal to the postgres ledger backend (ledger_pg.c): its state, the
 * per-host cache and the connection helpers of ledger_pg_conn.c, which ledger_pg.c builds the
 * backend's operations on. Not installed; not exported by libmnc.so.
 */
#ifndef MNC_LEDGER_PG_INT_H
#define MNC_LEDGER_PG_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lb_impl.h"
#include "ledger_hist.h"
#include "mnc_htab.h"

#define BACKOFF_MIN_MS 100u
#define POOL MNC_LB_PG_POOL
#define BACKOFF_MAX_MS 5000u

typedef struct csubj {
    mnc_hnode h;      /* key: name */
    const char *name; /* the node's key (in the entry's block) */
    uint64_t version;
    double spent;
    mnc_hist hist; /* the history as of version */
} csubj;

typedef struct lb_pg {
    mnc_lbackend base;
    char *conninfo;
    char host[64];
    PGconn *conn;
    bool ever_up;
    uint64_t next_try_ms;
    unsigned backoff_ms;
    uint64_t reconnects;
    char why[512];
    mnc_htab cache; /* csubj by subject name */
    /* Suspendable callers (mnc_lb_set_wait) charge on connections of their own, so several
     * charges can be in flight; b->conn serves the blocking callers. */
    PGconn *pool[POOL];
    bool busy[POOL];
    int (*wait)(void *arg, int fd);
    bool (*suspendable)(void *arg);
    void *warg;
} lb_pg;

/* A connection in use by one operation: b->conn (slot -1) or a pool slot. */
typedef struct pgc {
    PGconn *c;
    int slot;
} pgc;

static inline lb_pg *P(mnc_lbackend *b) { return (lb_pg *)b; }

static inline uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Records why the database is unavailable: "what: msg's first line". */
void mnc_lbpg_set_why(lb_pg *b, const char *what, const char *msg);

/* The cached subject name, created empty when create; NULL if absent (or no memory). */
csubj *mnc_lbpg_cache_get(lb_pg *b, const char *name, bool create);

/* Forgets a subject's cached history (version 0). */
void mnc_lbpg_cache_reset(csubj *s);

/* Frees every cached subject; the cache is empty and usable afterwards. */
void mnc_lbpg_cache_free(lb_pg *b);

/* Adds (field, value) unless present: the history holds each distinct observation once, as
 * mnc_ledger_history does. 0 or -1 (OOM, or a field name no policy can have). */
int mnc_lbpg_cache_add(csubj *s, const char *field, const char *value);

/* Applies one recorded release's observations (jsonb text [[field, value], ...]). 0 or -1. */
int mnc_lbpg_cache_apply_obs(csubj *s, const char *obs_text);

/* The cached history as one block for selection (s NULL: empty). 0 or -1 (no memory). */
int mnc_lbpg_cache_block(const mnc_policy *p, csubj *s, mnc_obs **h, size_t *nh);

/* Connects b->conn (statements prepared). 0, or -1 with err. */
int mnc_lbpg_pg_connect(lb_pg *b, char *err, size_t err_len);

/* true if connected (reconnecting first if that is due). */
bool mnc_lbpg_ensure_up(lb_pg *b);

/* After a failed statement: rolls back an open transaction if the connection still works,
 * else drops it (reconnect scheduled). Records why. */
void mnc_lbpg_failed(lb_pg *b, const char *what);

/* Runs prepared statement stmt on b->conn; the result when its status is want, else NULL
 * (mnc_lbpg_failed done). */
PGresult *mnc_lbpg_run(lb_pg *b, const char *stmt, int n, const char *const *vals, ExecStatusType want);

/* A utility statement on b->conn (BEGIN, COMMIT, ROLLBACK). true when it succeeded. */
bool mnc_lbpg_run_cmd(lb_pg *b, const char *sql);

/* A connection for one operation: a pool slot of its own for a suspendable caller, else
 * b->conn. false when the database is unavailable. */
bool mnc_lbpg_acquire(lb_pg *b, pgc *cn);

/* Gives it back (a pool connection left in a transaction is rolled back or dropped). */
void mnc_lbpg_release_conn(lb_pg *b, pgc *cn);

/* mnc_lbpg_run on the operation's connection (suspending a suspendable caller while it waits). */
PGresult *mnc_lbpg_xrun(lb_pg *b, const pgc *cn, const char *stmt, int n, const char *const *vals, ExecStatusType want);

/* A utility statement; for COMMIT only PostgreSQL's "COMMIT" (not "ROLLBACK") is success. */
bool mnc_lbpg_xcmd(lb_pg *b, const pgc *cn, const char *sql);

/* mnc_lbpg_failed() for the connection of one operation. A pool connection that broke is dropped, and
 * so is b->conn: the server is likely gone, and the state (and backoff) are b->conn's. */
void mnc_lbpg_cfailed(lb_pg *b, pgc *cn, const char *what);

#endif
