// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_ledger.c - `mncctl ledger ...`: the MNC-L ledger on either backend
 * (mnc/ledger_backend.h, docs/fleet.md).
 *
 *   ledger init --postgres CONNINFO        create or migrate the fleet schema (mnc/fleet.h)
 *   ledger verify (FILE | --postgres CONNINFO) [--reprice POLICY]
 *                                          --reprice: also price every charge again, in order,
 *                                          with POLICY's risk model (must match bit for bit)
 *   ledger show (--file FILE | --postgres CONNINFO) [--budget B] [--json] SUBJECT
 *   ledger export (--file FILE | --postgres CONNINFO) [SUBJECT]   JSON lines on stdout
 *   ledger import --postgres CONNINFO [--host NAME] [FILE | -]    JSON lines, one transaction
 *
 * A journal FILE is read directly and read-only (no lock, no truncation), so these work while
 * mncd runs and never change what is stored. verify exits 0 for a valid ledger (a torn tail
 * of a journal is reported on stderr but is not corruption: mncd truncates it on start) and 1
 * naming the first inconsistency otherwise.
 */
#include <cjson/cJSON.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/fleet.h"
#include "mnc/ledger.h"
#include "mnc/ledger_backend.h"
#include "mnc/policy.h"
#include "mnc/risk.h"
#include "mncctl.h"

#define IMPORT_LINE_MAX (1u << 20)

static int usage(void)
{
    mncctl_err("usage: mncctl ledger init --postgres CONNINFO | ledger verify (FILE | --postgres "
               "CONNINFO) [--reprice POLICY] | ledger show (--file FILE | --postgres CONNINFO) [--budget B] "
               "[--json] SUBJECT | ledger export (--file FILE | --postgres CONNINFO) [SUBJECT] | "
               "ledger import --postgres CONNINFO [--host NAME] [FILE | -]");
    return 2;
}

/* Opens the ledger a command names: a journal file read-only, or a postgres database. */
static mnc_lbackend *open_backend(const char *file, const char *conninfo, const char *cmd)
{
    char notice[512] = "", err[768];
    mnc_lbackend *b = file ? mnc_lb_open_journal(file, true, notice, sizeof(notice), err, sizeof(err))
                           : mnc_lb_open_postgres(conninfo, "mncctl", err, sizeof(err));
    if (!b) {
        mncctl_err("ledger %s: %s", cmd, err);
        return NULL;
    }
    if (notice[0])
        fprintf(stderr, "mncctl: notice: %s (mncd truncates it on start)\n", notice);
    return b;
}

static int init(int argc, char **argv)
{
    if (argc != 4 || strcmp(argv[2], "--postgres") != 0)
        return usage();
    char err[768];
    PGconn *c = mnc_pg_connect(argv[3], "mncctl", err, sizeof(err));
    if (!c) {
        mncctl_err("ledger init: %s", err);
        return 1;
    }
    int from = 0, to = 0;
    int rc = mnc_pg_migrate(c, &from, &to, err, sizeof(err));
    PQfinish(c);
    if (rc != 0) {
        mncctl_err("ledger init: %s (schema left at version %d)", err, to);
        return 1;
    }
    if (from == to)
        printf("mnc schema is at version %d: nothing to do\n", to);
    else
        printf("mnc schema migrated from version %d to %d\n", from, to);
    return 0;
}

/* --reprice: walks each subject's charges in order and prices every one again with the
 * policy's risk model against the history before it, as a single-host ledger would. */
typedef struct reprice_ctx {
    const mnc_policy *p;
    char subject[MNC_LEDGER_SUBJECT_MAX];
    mnc_obs h[4096];
    char *vals[4096];
    size_t nh;
    size_t checked;
    char err[768];
} reprice_ctx;

static void reprice_reset(reprice_ctx *x)
{
    for (size_t i = 0; i < x->nh; i++)
        free(x->vals[i]);
    x->nh = 0;
}

static int reprice_one(void *arg, const mnc_lb_entry *le)
{
    reprice_ctx *x = arg;
    const mnc_ledger_entry *e = &le->e;
    if (strcmp(x->subject, e->subject) != 0) {
        reprice_reset(x);
        snprintf(x->subject, sizeof(x->subject), "%s", e->subject);
    }
    mnc_obs d[MNC_LEDGER_OBS_MAX];
    for (size_t i = 0; i < e->n_obs; i++) {
        int f = mnc_policy_field(x->p, e->obs[i].field);
        if (f < 0) {
            snprintf(x->err, sizeof(x->err), "subject %s #%llu: field %s is not in the policy", e->subject,
                     (unsigned long long)e->seq, e->obs[i].field);
            return 1;
        }
        d[i] = (mnc_obs){.field = (uint16_t)f, .value = e->obs[i].value};
    }
    double delta = NAN;
    if (mnc_risk_charge(x->p, x->h, x->nh, d, e->n_obs, &delta) != 0 || delta != e->delta) {
        snprintf(x->err, sizeof(x->err),
                 "subject %s #%llu (release %s): recorded delta %.17g, "
                 "the policy prices it %.17g",
                 e->subject, (unsigned long long)e->seq, e->release, e->delta, delta);
        return 1;
    }
    for (size_t i = 0; i < e->n_obs; i++) { /* each distinct observation once */
        bool seen = false;
        for (size_t j = 0; j < x->nh && !seen; j++)
            seen = x->h[j].field == d[i].field && strcmp(x->h[j].value, d[i].value) == 0;
        if (seen)
            continue;
        if (x->nh == sizeof(x->h) / sizeof(x->h[0]) || !(x->vals[x->nh] = strdup(d[i].value))) {
            snprintf(x->err, sizeof(x->err), "subject %s: history too long to re-price", e->subject);
            return 1;
        }
        x->h[x->nh] = (mnc_obs){.field = d[i].field, .value = x->vals[x->nh]};
        x->nh++;
    }
    x->checked++;
    return 0;
}

static int verify(int argc, char **argv)
{
    const char *file = NULL, *conninfo = NULL, *policy = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--postgres") == 0 && i + 1 < argc)
            conninfo = argv[++i];
        else if (strcmp(argv[i], "--reprice") == 0 && i + 1 < argc)
            policy = argv[++i];
        else if (argv[i][0] != '-' && !file)
            file = argv[i];
        else
            return usage();
    }
    if (!(file || conninfo) || (file && conninfo))
        return usage();
    mnc_policy *p = NULL;
    if (policy) {
        mnc_errors e;
        mnc_errors_init(&e);
        p = mnc_policy_load_files(&policy, 1, &e);
        if (!p) {
            mncctl_err("ledger verify: policy %s: %s", policy, e.n ? e.msg[0] : "invalid");
            mnc_errors_free(&e);
            return 1;
        }
        mnc_errors_free(&e);
    }
    mnc_lbackend *b = open_backend(file, conninfo, "verify");
    if (!b) {
        mnc_policy_free(p);
        return 1;
    }
    size_t ns = 0, nc = 0;
    char err[768];
    int rc = mnc_lb_verify(b, &ns, &nc, err, sizeof(err));
    reprice_ctx *x = NULL;
    if (rc == 0 && p) {
        x = calloc(1, sizeof(*x));
        if (!x) {
            snprintf(err, sizeof(err), "out of memory");
            rc = -1;
        } else {
            x->p = p;
            int r = mnc_lb_foreach(b, NULL, reprice_one, x, err, sizeof(err));
            if (r != 0) {
                if (r > 0)
                    snprintf(err, sizeof(err), "%s", x->err);
                rc = -1;
            }
            reprice_reset(x);
        }
    }
    mnc_lb_close(b);
    mnc_policy_free(p);
    if (rc != 0) {
        free(x);
        mncctl_err("ledger verify: %s", err);
        return 1;
    }
    printf("%s: ok, %zu charges, %zu subjects", file ? file : "postgres ledger", nc, ns);
    if (x)
        printf("; every delta re-priced exactly (%zu)", x->checked);
    printf("\n");
    free(x);
    return 0;
}

typedef struct show_ctx {
    cJSON *arr; /* --json */
    bool json;
    bool oom;
} show_ctx;

static int show_one(void *arg, const mnc_lb_entry *le)
{
    show_ctx *c = arg;
    const mnc_ledger_entry *e = &le->e;
    if (!c->json) {
        printf("  #%llu %s -> %s release %s%s%s delta %.6f:", (unsigned long long)e->seq, e->subject, e->recipient,
               e->release, le->host[0] ? " host " : "", le->host, e->delta);
        for (size_t i = 0; i < e->n_obs; i++)
            printf(" %s=%s", e->obs[i].field, e->obs[i].value);
        printf("\n");
        return 0;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(c->arr, o)) {
        cJSON_Delete(o);
        c->oom = true;
        return 1;
    }
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    cJSON_AddNumberToObject(o, "time_ms", (double)e->time_ms);
    cJSON_AddStringToObject(o, "recipient", e->recipient);
    cJSON_AddStringToObject(o, "release", e->release);
    if (le->host[0])
        cJSON_AddStringToObject(o, "host", le->host);
    cJSON_AddNumberToObject(o, "delta", e->delta);
    cJSON *obs = cJSON_AddArrayToObject(o, "obs");
    if (!obs) {
        c->oom = true;
        return 1;
    }
    for (size_t i = 0; i < e->n_obs; i++) {
        const char *pair[2] = {e->obs[i].field, e->obs[i].value};
        cJSON_AddItemToArray(obs, cJSON_CreateStringArray(pair, 2));
    }
    return 0;
}

static int show(int argc, char **argv, const mncctl_global *g)
{
    const char *file = NULL, *conninfo = NULL, *subject = NULL;
    double budget = -1;
    bool json = g->json;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if (strcmp(argv[i], "--postgres") == 0 && i + 1 < argc) {
            conninfo = argv[++i];
        } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            char *end;
            budget = strtod(argv[++i], &end);
            if (*end || !isfinite(budget) || budget < 0) {
                mncctl_err("ledger show: --budget must be a number >= 0");
                return 2;
            }
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] != '-' && !subject) {
            subject = argv[i];
        } else {
            return usage();
        }
    }
    if (!(file || conninfo) || (file && conninfo) || !subject)
        return usage();
    mnc_lbackend *l = open_backend(file, conninfo, "show");
    if (!l)
        return 1;
    double spent = 0;
    char err[768];
    if (mnc_lb_spent(l, subject, &spent) != MNC_LEDGER_OK) {
        mncctl_err("ledger show: cannot read the subject's spend");
        mnc_lb_close(l);
        return 1;
    }
    show_ctx c = {.json = json};
    int rc = 0;
    if (!json) {
        printf("subject %s: spent %.6f", subject, spent);
        if (budget >= 0)
            printf(", budget %.6f, remaining %.6f", budget, fmax(0, budget - spent));
        printf("\nhistory:\n");
        if (mnc_lb_foreach(l, subject, show_one, &c, err, sizeof(err)) < 0) {
            mncctl_err("ledger show: %s", err);
            rc = 1;
        }
    } else {
        cJSON *o = cJSON_CreateObject();
        c.arr = o ? cJSON_AddArrayToObject(o, "history") : NULL;
        if (!c.arr) {
            cJSON_Delete(o);
            mnc_lb_close(l);
            mncctl_err("out of memory");
            return 1;
        }
        cJSON_AddStringToObject(o, "subject", subject);
        cJSON_AddNumberToObject(o, "spent", spent);
        if (budget >= 0) {
            cJSON_AddNumberToObject(o, "budget", budget);
            cJSON_AddNumberToObject(o, "remaining", fmax(0, budget - spent));
        }
        if (mnc_lb_foreach(l, subject, show_one, &c, err, sizeof(err)) < 0) {
            mncctl_err("ledger show: %s", err);
            c.oom = true;
        }
        char *s = c.oom ? NULL : cJSON_Print(o);
        if (s) {
            printf("%s\n", s);
            free(s);
        } else {
            mncctl_err("out of memory");
            rc = 1;
        }
        cJSON_Delete(o);
    }
    mnc_lb_close(l);
    return rc;
}

static int export_one(void *arg, const mnc_lb_entry *le)
{
    (void)arg;
    const mnc_ledger_entry *e = &le->e;
    cJSON *o = cJSON_CreateObject();
    cJSON *obs = o ? cJSON_AddArrayToObject(o, "obs") : NULL;
    if (!obs || !cJSON_AddStringToObject(o, "subject", e->subject) ||
        !cJSON_AddNumberToObject(o, "seq", (double)e->seq) ||
        !cJSON_AddNumberToObject(o, "time_ms", (double)e->time_ms) || !cJSON_AddStringToObject(o, "host", le->host) ||
        !cJSON_AddStringToObject(o, "recipient", e->recipient) || !cJSON_AddStringToObject(o, "release", e->release) ||
        !cJSON_AddNumberToObject(o, "delta", e->delta)) {
        cJSON_Delete(o);
        return 1;
    }
    for (size_t i = 0; i < e->n_obs; i++) {
        const char *pair[2] = {e->obs[i].field, e->obs[i].value};
        if (!cJSON_AddItemToArray(obs, cJSON_CreateStringArray(pair, 2))) {
            cJSON_Delete(o);
            return 1;
        }
    }
    /* cJSON prints doubles so that they parse back to the same value: an import recomputes
     * exactly the same spend. */
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s)
        return 1;
    int rc = printf("%s\n", s) < 0;
    free(s);
    return rc;
}

static int export(int argc, char **argv)
{
    const char *file = NULL, *conninfo = NULL, *subject = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
            file = argv[++i];
        else if (strcmp(argv[i], "--postgres") == 0 && i + 1 < argc)
            conninfo = argv[++i];
        else if (argv[i][0] != '-' && !subject)
            subject = argv[i];
        else
            return usage();
    }
    if (!(file || conninfo) || (file && conninfo))
        return usage();
    mnc_lbackend *b = open_backend(file, conninfo, "export");
    if (!b)
        return 1;
    char err[768] = "write error or out of memory";
    int rc = mnc_lb_foreach(b, subject, export_one, NULL, err, sizeof(err));
    mnc_lb_close(b);
    if (rc != 0 || fflush(stdout) != 0) {
        mncctl_err("ledger export: %s", err);
        return 1;
    }
    return 0;
}

typedef struct import_ctx {
    FILE *f;
    char *line;
    size_t cap;
    long lineno;
    cJSON *cur;
    mnc_ledger_obs obs[MNC_LEDGER_OBS_MAX];
    char err[256];
} import_ctx;

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* mnc_lb_next_fn over JSON lines as `export` writes them. */
static int import_next(void *arg, mnc_lb_entry *e)
{
    import_ctx *x = arg;
    cJSON_Delete(x->cur);
    x->cur = NULL;
    ssize_t n;
    do {
        n = getline(&x->line, &x->cap, x->f);
        x->lineno++;
    } while (n == 1 && x->line[0] == '\n');
    if (n < 0) {
        if (ferror(x->f))
            snprintf(x->err, sizeof(x->err), "read error at line %ld", x->lineno);
        return ferror(x->f) ? -1 : 0;
    }
    if ((size_t)n > IMPORT_LINE_MAX) {
        snprintf(x->err, sizeof(x->err), "line %ld is longer than %u bytes", x->lineno, IMPORT_LINE_MAX);
        return -1;
    }
    cJSON *o = x->cur = cJSON_ParseWithLength(x->line, (size_t)n);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "delta");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "time_ms");
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(o, "obs");
    memset(e, 0, sizeof(*e));
    e->e.subject = str_of(o, "subject");
    e->e.recipient = str_of(o, "recipient");
    e->e.release = str_of(o, "release");
    e->host = str_of(o, "host");
    if (!e->host)
        e->host = "";
    bool ok = e->e.subject && e->e.recipient && e->e.release && cJSON_IsNumber(d) && isfinite(d->valuedouble) &&
              d->valuedouble >= 0 && cJSON_IsArray(obs) && strlen(e->e.subject) < MNC_LEDGER_SUBJECT_MAX &&
              strlen(e->e.release) < MNC_LEDGER_SUBJECT_MAX && strlen(e->e.recipient) < MNC_LEDGER_SUBJECT_MAX &&
              strlen(e->host) < 64;
    size_t k = 0;
    for (const cJSON *p = ok ? obs->child : NULL; p && ok; p = p->next) {
        ok = k < MNC_LEDGER_OBS_MAX && cJSON_GetArraySize(p) == 2 && cJSON_IsString(p->child) &&
             cJSON_IsString(p->child->next);
        if (ok) {
            x->obs[k].field = p->child->valuestring;
            x->obs[k].value = p->child->next->valuestring;
            k++;
        }
    }
    if (!ok) {
        snprintf(x->err, sizeof(x->err),
                 "line %ld is not a ledger entry {subject, recipient, "
                 "release, delta >= 0, obs: [[field, value], ...]}",
                 x->lineno);
        return -1;
    }
    e->e.delta = d->valuedouble;
    e->e.time_ms = cJSON_IsNumber(t) && t->valuedouble >= 0 ? (uint64_t)t->valuedouble : 0;
    e->e.obs = x->obs;
    e->e.n_obs = k;
    return 1;
}

static int import(int argc, char **argv)
{
    const char *conninfo = NULL, *host = "import", *in = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--postgres") == 0 && i + 1 < argc)
            conninfo = argv[++i];
        else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc)
            host = argv[++i];
        else if (!in && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
            in = argv[i];
        else
            return usage();
    }
    if (!conninfo)
        return usage();
    import_ctx x = {.f = !in || strcmp(in, "-") == 0 ? stdin : fopen(in, "re")};
    if (!x.f) {
        mncctl_err("ledger import: %s: %m", in);
        return 1;
    }
    mnc_lbackend *b = open_backend(NULL, conninfo, "import");
    if (!b) {
        if (x.f != stdin)
            fclose(x.f);
        return 1;
    }
    size_t n = 0;
    char err[768];
    int rc = mnc_lb_import(b, import_next, &x, host, &n, err, sizeof(err));
    mnc_lb_close(b);
    cJSON_Delete(x.cur);
    free(x.line);
    if (x.f != stdin)
        fclose(x.f);
    if (rc != 0) {
        mncctl_err("ledger import: %s%s%s (nothing imported)", x.err[0] ? x.err : err, x.err[0] ? ": " : "",
                   x.err[0] ? err : "");
        return 1;
    }
    printf("imported %zu charges\n", n);
    return 0;
}

static int cmd_ledger(int argc, char **argv, const mncctl_global *g)
{
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "init") == 0)
        return init(argc, argv);
    if (strcmp(argv[1], "verify") == 0)
        return verify(argc, argv);
    if (strcmp(argv[1], "show") == 0)
        return show(argc, argv, g);
    if (strcmp(argv[1], "export") == 0)
        return export(argc, argv);
    if (strcmp(argv[1], "import") == 0)
        return import(argc, argv);
    return usage();
}

MNCCTL_COMMAND(ledger_cmd, "ledger",
               "ledger init --postgres CONNINFO | ledger verify (FILE | --postgres CONNINFO) [--reprice POLICY] | "
               "ledger show (--file FILE | --postgres CONNINFO) [--budget B] [--json] SUBJECT | "
               "ledger export (--file FILE | --postgres CONNINFO) [SUBJECT] | "
               "ledger import --postgres CONNINFO [--host NAME] [FILE | -]",
               cmd_ledger)
