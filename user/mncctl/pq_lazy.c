// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pq_lazy.c - mncctl's libpq, loaded on first use.
 *
 * mncctl reaches PostgreSQL only in its ledger, audit and fleet commands (user/lib/ledger_pg.c,
 * pg_schema.c, fleet_pg.c), but linking libpq made every mncctl process - `mncctl run` above all,
 * once per agent launch - map and relocate libpq and what it pulls in (OpenSSL's libssl, Kerberos,
 * OpenLDAP, GnuTLS, SASL: 21 of mncctl's 32 libraries), about 10 ms of CPU per start on this
 * project's hosts (tests/bench/bench_launch.py prints the launch cost). mncctl is linked without
 * -lpq (Makefile); these definitions of the libpq functions the tree calls open libpq.so.5 with
 * dlopen at the first call and forward to it.
 * If libpq cannot be loaded, PQconnectdbParams returns NULL and PQconninfoParse NULL with the
 * loader's reason in *errmsg, which their callers report as a failed connection; every other
 * function needs a connection or result only libpq made, so it is reached with libpq loaded (a
 * libpq without one of them ends the process with a message: never a silent fallback). mncd keeps
 * libpq linked (its ledger is open before it drops privileges). */
#include <dlfcn.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PQ_LIB "libpq.so.5"

static void *lib;
static char lib_err[512];
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_open(void)
{
    lib = dlopen(PQ_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(lib_err, sizeof(lib_err), "%s cannot be loaded: %s", PQ_LIB, e ? e : "unknown error");
    }
}

static bool lib_ready(void)
{
    pthread_once(&lib_once, lib_open);
    return lib != NULL;
}

/* The symbol `name` of libpq; ends the process if libpq has none (or was not loaded, which only
 * a caller holding no libpq object could reach). */
static void *sym(const char *name)
{
    void *p = lib_ready() ? dlsym(lib, name) : NULL;
    if (!p) {
        fprintf(stderr, "mncctl: %s: %s\n", name, lib ? "not in " PQ_LIB : lib_err);
        abort();
    }
    return p;
}

#define PQ_FWD(ret, name, params, args)                                                                                \
    ret name params                                                                                                    \
    {                                                                                                                  \
        static ret(*f) params;                                                                                         \
        if (!f)                                                                                                        \
            f = (ret(*) params)sym(#name);                                                                             \
        return f args;                                                                                                 \
    }
#define PQ_FWD_VOID(name, params, args)                                                                                \
    void name params                                                                                                   \
    {                                                                                                                  \
        static void(*f) params;                                                                                        \
        if (!f)                                                                                                        \
            f = (void(*) params)sym(#name);                                                                            \
        f args;                                                                                                        \
    }

/* the two ways in: a connection, a parsed conninfo */
PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname)
{
    static PGconn *(*f)(const char *const *, const char *const *, int);
    if (!lib_ready())
        return NULL;
    if (!f)
        f = (PGconn * (*)(const char *const *, const char *const *, int)) sym("PQconnectdbParams");
    return f(keywords, values, expand_dbname);
}

PQconninfoOption *PQconninfoParse(const char *conninfo, char **errmsg)
{
    static PQconninfoOption *(*f)(const char *, char **);
    if (!lib_ready()) {
        if (errmsg)
            *errmsg = strdup(lib_err); /* freed with PQfreemem (free, below) */
        return NULL;
    }
    if (!f)
        f = (PQconninfoOption * (*)(const char *, char **)) sym("PQconninfoParse");
    return f(conninfo, errmsg);
}

/* libpq's PQfreemem is free(); without libpq only our own strdup reaches it */
void PQfreemem(void *ptr)
{
    static void (*f)(void *);
    if (!lib_ready()) {
        free(ptr);
        return;
    }
    if (!f)
        f = (void (*)(void *))sym("PQfreemem");
    f(ptr);
}

/* a connection or result exists: libpq is loaded */
PQ_FWD(ConnStatusType, PQstatus, (const PGconn *conn), (conn))
PQ_FWD(char *, PQerrorMessage, (const PGconn *conn), (conn))
PQ_FWD(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn))
PQ_FWD(int, PQsocket, (const PGconn *conn), (conn))
PQ_FWD_VOID(PQfinish, (PGconn * conn), (conn))
PQ_FWD_VOID(PQconninfoFree, (PQconninfoOption * connOptions), (connOptions))
PQ_FWD(PGresult *, PQexec, (PGconn * conn, const char *query), (conn, query))
PQ_FWD(PGresult *, PQexecParams,
       (PGconn * conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
        const int *paramLengths, const int *paramFormats, int resultFormat),
       (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat))
PQ_FWD(PGresult *, PQprepare,
       (PGconn * conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes),
       (conn, stmtName, query, nParams, paramTypes))
PQ_FWD(PGresult *, PQexecPrepared,
       (PGconn * conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths,
        const int *paramFormats, int resultFormat),
       (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat))
PQ_FWD(int, PQsendQuery, (PGconn * conn, const char *query), (conn, query))
PQ_FWD(int, PQsendQueryParams,
       (PGconn * conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
        const int *paramLengths, const int *paramFormats, int resultFormat),
       (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat))
PQ_FWD(int, PQsendQueryPrepared,
       (PGconn * conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths,
        const int *paramFormats, int resultFormat),
       (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat))
PQ_FWD(int, PQsetSingleRowMode, (PGconn * conn), (conn))
PQ_FWD(int, PQconsumeInput, (PGconn * conn), (conn))
PQ_FWD(int, PQisBusy, (PGconn * conn), (conn))
PQ_FWD(PGresult *, PQgetResult, (PGconn * conn), (conn))
PQ_FWD(ExecStatusType, PQresultStatus, (const PGresult *res), (res))
PQ_FWD(int, PQntuples, (const PGresult *res), (res))
PQ_FWD(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
PQ_FWD(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
PQ_FWD(char *, PQcmdStatus, (PGresult * res), (res))
PQ_FWD(char *, PQcmdTuples, (PGresult * res), (res))
PQ_FWD_VOID(PQclear, (PGresult * res), (res))
