// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* metrics.c - counters, histograms and their Prometheus text (mnc/metrics.h, docs/metrics.md). */
#include "mnc/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LABEL_MAX 64

typedef struct series {
    char l[3][LABEL_MAX];
    double v;
} series;

enum { F_DECISIONS, F_KDENY, F_FAILCLOSED, F_MNCL_BITS, F_MNCL_CHARGES, F_MNCL_REFUSALS, F__COUNT };

static const struct famdef {
    const char *name, *help;
    int n;
    const char *labels[3];
} famdefs[F__COUNT] = {
    [F_DECISIONS] = {"mnc_decisions_total",
                     "Audit records by op (verb or event), decision and reason code",
                     3,
                     {"op", "decision", "reason"}},
    [F_KDENY] = {"mnc_kernel_denials_total",
                 "Kernel-layer denials by hook and reason (kernel.deny, Landlock)",
                 2,
                 {"hook", "reason"}},
    [F_FAILCLOSED] = {"mnc_fail_closed_total",
                      "Operations refused fail-closed (a check could not be made)",
                      2,
                      {"op", "reason"}},
    [F_MNCL_BITS] = {"mnc_mncl_spent_total",
                     "MNC-L leakage charged, by contract (the risk model's unit)",
                     1,
                     {"contract"}},
    [F_MNCL_CHARGES] = {"mnc_mncl_charges_total", "MNC-L charges, by contract", 1, {"contract"}},
    [F_MNCL_REFUSALS] = {"mnc_mncl_refusals_total", "MNC-L refusals by contract and reason", 2, {"contract", "reason"}},
};

static const double bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
#define NB (sizeof(bounds) / sizeof(bounds[0]))

static const struct histdef {
    const char *name, *help;
} histdefs[MNC_H__COUNT] = {
    [MNC_H_SWEEP] = {"mnc_sweep_duration_seconds", "Pre-taint connection sweeps, whole"},
    [MNC_H_FDSCAN] = {"mnc_fdscan_duration_seconds", "Fd scans before a delivery, whole"},
    [MNC_H_JOURNAL_COMMIT] = {"mnc_journal_commit_seconds", "State-journal commits (append and fdatasync)"},
    [MNC_H_PG_COMMIT] = {"mnc_pg_commit_seconds", "PostgreSQL ledger commits"},
};

typedef struct hist {
    uint64_t b[NB]; /* observations <= bounds[i] (not cumulative) */
    uint64_t count;
    double sum;
} hist;

struct mnc_metrics {
    pthread_mutex_t mu;
    struct {
        series *s;
        size_t n, cap;
        double other;
    } f[F__COUNT];
    hist h[MNC_H__COUNT];
};

mnc_metrics *mnc_metrics_new(void)
{
    mnc_metrics *m = calloc(1, sizeof(*m));
    if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void mnc_metrics_free(mnc_metrics *m)
{
    if (!m)
        return;
    for (int i = 0; i < F__COUNT; i++)
        free(m->f[i].s);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* A label value: names only ([A-Za-z0-9_.:/-]); anything else becomes '_'. */
static void label_copy(char out[LABEL_MAX], const char *v)
{
    size_t i = 0;
    for (; v && v[i] && i < LABEL_MAX - 1; i++) {
        char c = v[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                  c == ':' || c == '/' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = '\0';
    if (i == 0)
        snprintf(out, LABEL_MAX, "none");
}

/* Adds v to the family's series with these labels (mu held). */
static void add(mnc_metrics *m, int fam, const char *a, const char *b, const char *c, double v)
{
    char l[3][LABEL_MAX] = {{0}};
    const char *in[3] = {a, b, c};
    for (int i = 0; i < famdefs[fam].n; i++)
        label_copy(l[i], in[i]);
    typeof(m->f[0]) *f = &m->f[fam];
    for (size_t i = 0; i < f->n; i++)
        if (memcmp(f->s[i].l, l, sizeof(l)) == 0) {
            f->s[i].v += v;
            return;
        }
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 32;
        series *ns = nc <= MNC_METRICS_MAX_SERIES ? realloc(f->s, nc * sizeof(*ns)) : NULL;
        if (!ns) {
            f->other += v;
            return;
        }
        f->s = ns;
        f->cap = nc;
    }
    memcpy(f->s[f->n].l, l, sizeof(l));
    f->s[f->n].v = v;
    f->n++;
}

/* The value of "key":"..." in a detail mncd wrote (JSON-ish), into out. */
static bool detail_field(const char *detail, const char *key, char out[LABEL_MAX])
{
    const char *p = detail ? strstr(detail, key) : NULL;
    if (!p)
        return false;
    p += strlen(key);
    size_t i = 0;
    while (p[i] && p[i] != '"' && i < LABEL_MAX - 1) {
        out[i] = p[i];
        i++;
    }
    out[i] = '\0';
    return i > 0;
}

void mnc_metrics_on_record(mnc_metrics *m, const char *op, const char *decision, const char *reason, const char *detail)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    add(m, F_DECISIONS, op, decision, reason, 1);
    char hook[LABEL_MAX];
    if (op && strcmp(op, "kernel.deny") == 0 && detail_field(detail, "\"hook\":\"", hook))
        add(m, F_KDENY, hook, reason, NULL, 1);
    else if (op && strcmp(op, "kernel.landlock") == 0 && decision && strcmp(decision, "deny") == 0)
        add(m, F_KDENY, "landlock", reason, NULL, 1);
    if (detail && decision && strcmp(decision, "allow") != 0 && strstr(detail, "fail closed"))
        add(m, F_FAILCLOSED, op, reason, NULL, 1);
    pthread_mutex_unlock(&m->mu);
}

void mnc_metrics_mncl(mnc_metrics *m, const char *contract, const char *outcome, double bits)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    if (outcome && strcmp(outcome, "charged") == 0) {
        add(m, F_MNCL_CHARGES, contract, NULL, NULL, 1);
        add(m, F_MNCL_BITS, contract, NULL, NULL, isfinite(bits) && bits > 0 ? bits : 0);
    } else {
        add(m, F_MNCL_REFUSALS, contract, outcome, NULL, 1);
    }
    pthread_mutex_unlock(&m->mu);
}

void mnc_metrics_observe(mnc_metrics *m, mnc_metrics_hist h, double seconds)
{
    if (!m || (unsigned)h >= MNC_H__COUNT || !isfinite(seconds) || seconds < 0)
        return;
    pthread_mutex_lock(&m->mu);
    hist *x = &m->h[h];
    for (size_t i = 0; i < NB; i++)
        if (seconds <= bounds[i]) {
            x->b[i]++;
            break;
        }
    x->count++;
    x->sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

cJSON *mnc_metrics_json(const mnc_metrics *mc, const mnc_audit *a)
{
    mnc_metrics *m = (mnc_metrics *)mc; /* the lock only */
    cJSON *o = cJSON_CreateObject();
    cJSON *cs = o ? cJSON_AddObjectToObject(o, "counters") : NULL;
    cJSON *hs = o ? cJSON_AddObjectToObject(o, "histograms") : NULL;
    bool ok = cs && hs;
    if (ok && m) {
        pthread_mutex_lock(&m->mu);
        for (int fi = 0; fi < F__COUNT && ok; fi++) {
            cJSON *arr = cJSON_AddArrayToObject(cs, famdefs[fi].name);
            ok = arr != NULL;
            for (size_t i = 0; ok && i < m->f[fi].n; i++) {
                cJSON *row = cJSON_CreateArray();
                ok = row && cJSON_AddItemToArray(arr, row);
                for (int k = 0; ok && k < famdefs[fi].n; k++)
                    ok = cJSON_AddItemToArray(row, cJSON_CreateString(m->f[fi].s[i].l[k]));
                ok = ok && cJSON_AddItemToArray(row, cJSON_CreateNumber(m->f[fi].s[i].v));
            }
            if (ok && m->f[fi].other > 0) { /* beyond the series bound */
                cJSON *row = cJSON_CreateArray();
                ok = row && cJSON_AddItemToArray(arr, row);
                for (int k = 0; ok && k < famdefs[fi].n; k++)
                    ok = cJSON_AddItemToArray(row, cJSON_CreateString("other"));
                ok = ok && cJSON_AddItemToArray(row, cJSON_CreateNumber(m->f[fi].other));
            }
        }
        for (int hi = 0; hi < MNC_H__COUNT && ok; hi++) {
            cJSON *h = cJSON_AddObjectToObject(hs, histdefs[hi].name);
            cJSON *le = h ? cJSON_AddArrayToObject(h, "le") : NULL;
            cJSON *b = h ? cJSON_AddArrayToObject(h, "buckets") : NULL;
            ok = le && b && cJSON_AddNumberToObject(h, "count", (double)m->h[hi].count) &&
                 cJSON_AddNumberToObject(h, "sum", m->h[hi].sum);
            uint64_t cum = 0;
            for (size_t i = 0; ok && i < NB; i++) {
                cum += m->h[hi].b[i];
                ok = cJSON_AddItemToArray(le, cJSON_CreateNumber(bounds[i])) &&
                     cJSON_AddItemToArray(b, cJSON_CreateNumber((double)cum));
            }
        }
        pthread_mutex_unlock(&m->mu);
    }
    if (ok && a) {
        mnc_audit_rotation r;
        uint64_t bytes = 0;
        mnc_audit_rotation_status(a, &r, &bytes);
        cJSON *au = cJSON_AddObjectToObject(o, "audit");
        ok = au && cJSON_AddNumberToObject(au, "rotations", (double)r.rotations) &&
             cJSON_AddNumberToObject(au, "rotation_failures", (double)r.failures) &&
             cJSON_AddNumberToObject(au, "pruned", (double)r.pruned) &&
             cJSON_AddNumberToObject(au, "active_bytes", (double)bytes) &&
             cJSON_AddNumberToObject(au, "seq", (double)mnc_audit_seq(a));
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- rendering */

typedef struct out {
    char *p;
    size_t len, cap;
    bool oom;
} out;

__attribute__((format(printf, 2, 3))) static void put(out *o, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !o->oom; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->p ? o->p + o->len : NULL, o->p ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->oom = true;
            return;
        }
        if (o->p && (size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        size_t nc = o->cap ? o->cap : 8192;
        while (nc < o->len + (size_t)n + 1)
            nc *= 2;
        char *np = realloc(o->p, nc);
        if (!np) {
            o->oom = true;
            return;
        }
        o->p = np;
        o->cap = nc;
    }
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void head(out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name value, when the status has it */
static void gauge(out *o, const char *name, const char *type, const char *help, double v)
{
    if (isnan(v))
        return;
    head(o, name, type, help);
    put(o, "%s %.15g\n", name, v);
}

/* one sample per member of obj (a JSON object of numbers), label k = the member's name */
static void by_member(out *o, const char *name, const char *type, const char *help, const char *k, const cJSON *obj)
{
    if (!cJSON_IsObject(obj))
        return;
    head(o, name, type, help);
    for (const cJSON *c = obj->child; c; c = c->next) {
        char l[LABEL_MAX];
        label_copy(l, c->string);
        if (cJSON_IsNumber(c))
            put(o, "%s{%s=\"%s\"} %.15g\n", name, k, l, c->valuedouble);
    }
}

static void render_metrics(out *o, const cJSON *mt)
{
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(mt, "counters");
    for (int fi = 0; fi < F__COUNT; fi++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(cs, famdefs[fi].name);
        head(o, famdefs[fi].name, "counter", famdefs[fi].help);
        for (const cJSON *row = cJSON_IsArray(arr) ? arr->child : NULL; row; row = row->next) {
            if (cJSON_GetArraySize(row) != famdefs[fi].n + 1)
                continue;
            put(o, "%s{", famdefs[fi].name);
            for (int k = 0; k < famdefs[fi].n; k++) {
                char l[LABEL_MAX];
                const cJSON *v = cJSON_GetArrayItem(row, k);
                label_copy(l, cJSON_IsString(v) ? v->valuestring : "");
                put(o, "%s%s=\"%s\"", k ? "," : "", famdefs[fi].labels[k], l);
            }
            const cJSON *v = cJSON_GetArrayItem(row, famdefs[fi].n);
            put(o, "} %.15g\n", cJSON_IsNumber(v) ? v->valuedouble : 0);
        }
    }
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(mt, "histograms");
    for (int hi = 0; hi < MNC_H__COUNT; hi++) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(hs, histdefs[hi].name);
        const cJSON *le = cJSON_GetObjectItemCaseSensitive(h, "le"),
                    *b = cJSON_GetObjectItemCaseSensitive(h, "buckets");
        if (!cJSON_IsArray(le) || !cJSON_IsArray(b) || cJSON_GetArraySize(le) != cJSON_GetArraySize(b))
            continue;
        head(o, histdefs[hi].name, "histogram", histdefs[hi].help);
        for (int i = 0; i < cJSON_GetArraySize(le); i++)
            put(o, "%s_bucket{le=\"%g\"} %.15g\n", histdefs[hi].name, cJSON_GetArrayItem(le, i)->valuedouble,
                cJSON_GetArrayItem(b, i)->valuedouble);
        put(o, "%s_bucket{le=\"+Inf\"} %.15g\n%s_sum %.15g\n%s_count %.15g\n", histdefs[hi].name, num(h, "count"),
            histdefs[hi].name, num(h, "sum"), histdefs[hi].name, num(h, "count"));
    }
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(mt, "audit");
    gauge(o, "mnc_audit_rotations_total", "counter", "Audit log rotations since mncd started", num(au, "rotations"));
    gauge(o, "mnc_audit_rotation_failures_total", "counter", "Audit log rotations that failed",
          num(au, "rotation_failures"));
    gauge(o, "mnc_audit_pruned_segments_total", "counter", "Audit segments deleted by retention", num(au, "pruned"));
    gauge(o, "mnc_audit_active_bytes", "gauge", "Size of the active audit log file", num(au, "active_bytes"));
    gauge(o, "mnc_audit_seq", "gauge", "Records in the audit chain (the head's seq)", num(au, "seq"));
}

static void render_kernel(out *o, const cJSON *k)
{
    const char *mode = str(k, "mode"), *backend = str(k, "backend"), *st = str(k, "selftest");
    char lm[LABEL_MAX], lb[LABEL_MAX];
    label_copy(lm, mode);
    label_copy(lb, backend);
    head(o, "mnc_kernel_info", "gauge", "The kernel layer's mode and backend");
    put(o, "mnc_kernel_info{mode=\"%s\",backend=\"%s\"} 1\n", lm, lb);
    double links = num(k, "links"), want = num(k, "links_expected");
    bool on = mode && strcmp(mode, "off") != 0;
    /* attached: every expected hook has its link; a kernel layer that is off is not attached */
    gauge(o, "mnc_kernel_attached", "gauge", "1 if every expected BPF link is attached (0 also when the layer is off)",
          on && !isnan(links) && !isnan(want) && want > 0 && links == want ? 1 : 0);
    gauge(o, "mnc_kernel_links", "gauge", "BPF links attached", links);
    gauge(o, "mnc_kernel_links_expected", "gauge", "BPF links the backend needs", want);
    int pass = -1, total = -1;
    if (st && sscanf(st, "%d/%d", &pass, &total) == 2 && total >= 0) {
        gauge(o, "mnc_kernel_selftest_passed", "gauge", "Functional self-test checks passed at start", pass);
        gauge(o, "mnc_kernel_selftest_checks", "gauge", "Functional self-test checks run at start", total);
    }
    gauge(o, "mnc_kernel_selftest_ok", "gauge", "1 if the kernel layer is on and its self-test passed in full",
          on && total > 0 && pass == total ? 1 : 0);
    by_member(o, "mnc_kernel_deny_counter_total", "counter",
              "The kernel's own deny counters by reason (the pinned counter map)", "reason",
              cJSON_GetObjectItemCaseSensitive(k, "counters"));
}

char *mnc_metrics_render(const cJSON *status, const cJSON *quarantine)
{
    out o = {0};
    gauge(&o, "mnc_up", "gauge", "1 if mncd answered the status request", status ? 1 : 0);
    if (status) {
        char v[LABEL_MAX];
        label_copy(v, str(status, "version"));
        head(&o, "mnc_info", "gauge", "mncd's version");
        put(&o, "mnc_info{version=\"%s\"} 1\n", v);
        gauge(&o, "mnc_uptime_seconds", "gauge", "Seconds since mncd started", num(status, "uptime_ms") / 1000);
        gauge(&o, "mnc_clients", "gauge", "Connected clients", num(status, "clients"));
        gauge(&o, "mnc_objects", "gauge", "Live disclosure objects", num(status, "objects"));
        gauge(&o, "mnc_queued_deliveries", "gauge", "Deliveries waiting in inboxes", num(status, "queued"));
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(status, "records");
        gauge(&o, "mnc_audit_folded_total", "counter", "Records about agents folded by the rate limit",
              num(rec, "folded"));
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(status, "mnc_d");
        head(&o, "mnc_mncd_outcomes_total", "counter", "MNC-D outcomes since start");
        static const char *const outs[] = {"selected",           "delegated",       "approved",
                                           "approval_timeout",   "denied",          "abstained",
                                           "broker_unavailable", "broker_timeout",  "broker_failure",
                                           "receipt_rejected",   "approval_skipped"};
        for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
            if (!isnan(num(md, outs[i])))
                put(&o, "mnc_mncd_outcomes_total{outcome=\"%s\"} %.15g\n", outs[i], num(md, outs[i]));
        gauge(&o, "mnc_mncd_pending_approvals", "gauge", "Requests waiting for an admin's approval (the queue)",
              num(md, "pending_approval"));
        gauge(&o, "mnc_mncd_pending_delegations", "gauge", "Requests waiting for the broker",
              num(md, "pending_delegation"));
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(status, "mnc_l");
        const char *lst = str(ml, "state");
        gauge(&o, "mnc_mncl_ledger_available", "gauge", "1 if the MNC-L ledger is available",
              lst ? strcmp(lst, "available") == 0 : NAN);
        gauge(&o, "mnc_mncl_rejected_over_budget_total", "counter", "Releases refused: the budget B would be exceeded",
              num(ml, "rejected_over_budget"));
        gauge(&o, "mnc_mncl_rejected_over_epsilon_total", "counter", "Releases refused: one charge above epsilon",
              num(ml, "rejected_over_epsilon"));
        gauge(&o, "mnc_mncl_rejected_ledger_unavailable_total", "counter",
              "Releases refused fail-closed: the ledger was unavailable", num(ml, "rejected_ledger_unavailable"));
        gauge(&o, "mnc_mncl_charge_failures_total", "counter", "Ledger charges that failed",
              num(ml, "charge_failures"));
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(status, "observe");
        head(&o, "mnc_observe_agents", "gauge", "Agents in observe mode: scope checks audited, NOT enforced");
        put(&o, "mnc_observe_agents %d\n", cJSON_IsArray(obs) ? cJSON_GetArraySize(obs) : 0);
        head(&o, "mnc_observe_agent", "gauge", "1 for each agent in observe mode");
        for (const cJSON *a = cJSON_IsArray(obs) ? obs->child : NULL; a; a = a->next) {
            char ag[LABEL_MAX];
            label_copy(ag, str(a, "agent"));
            put(&o, "mnc_observe_agent{agent=\"%s\"} 1\n", ag);
        }
        render_kernel(&o, cJSON_GetObjectItemCaseSensitive(status, "kernel"));
        render_metrics(&o, cJSON_GetObjectItemCaseSensitive(status, "metrics"));
    }
    if (cJSON_IsObject(quarantine)) {
        head(&o, "mnc_quarantine_bytes", "gauge", "Bytes of withheld agent output kept in quarantine");
        for (const cJSON *c = quarantine->child; c; c = c->next) {
            char ag[LABEL_MAX], sm[LABEL_MAX], nm[LABEL_MAX];
            label_copy(nm, c->string);
            char *dot = strrchr(nm, '.');
            if (dot)
                *dot = '\0';
            label_copy(ag, nm);
            label_copy(sm, dot ? dot + 1 : "");
            if (cJSON_IsNumber(c))
                put(&o, "mnc_quarantine_bytes{agent=\"%s\",stream=\"%s\"} %.15g\n", ag, sm, c->valuedouble);
        }
    }
    if (o.oom) {
        free(o.p);
        return NULL;
    }
    return o.p ? o.p : strdup("");
}

int mnc_metrics_write_file(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(text), done = 0;
    while (done < n) {
        ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (done != n || fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno ? errno : EIO));
        close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
