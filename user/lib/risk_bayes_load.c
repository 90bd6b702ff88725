// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* risk_bayes_load.c - reading an exact min-entropy leakage model (mnc/risk_bayes.h): its JSON,
 * checked against the policy, into the layout of risk_bayes_int.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnc_util.h"
#include "risk_bayes_int.h"

/* ---- loading ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct named {
    const char *name;
    uint32_t idx;
} named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static long find_named(const named *arr, size_t n, const char *name)
{
    named key = {name, 0};
    const named *r = bsearch(&key, arr, n, sizeof(*arr), cmp_named);
    return r ? (long)r->idx : -1;
}

long mnc_bayes_find_value(char *const *vals, size_t nv, const char *v)
{
    char *const *r = bsearch(&v, vals, nv, sizeof(*vals), cmp_str);
    return r ? (long)(r - vals) : -1;
}

void mnc_bayes_free(mnc_bayes *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ns && m->secrets; i++)
        free(m->secrets[i]);
    free(m->secrets);
    free(m->prior);
    for (size_t i = 0; i < m->nf && m->f; i++) {
        for (size_t v = 0; v < m->f[i].nv; v++)
            free(m->f[i].values[v]);
        free(m->f[i].values);
        free(m->f[i].lik);
        free(m->f[i].fn);
    }
    free(m->f);
    free(m);
}

static bool only_keys(const cJSON *o, const char *const *keys, const char *where, const char *path, mnc_errors *errs)
{
    bool ok = true;
    for (const cJSON *c = o->child; c; c = c->next) {
        bool known = false;
        for (int i = 0; keys[i]; i++)
            if (strcmp(c->string, keys[i]) == 0)
                known = true;
        if (!known) {
            mnc_errors_add(errs, "%s: %s: unknown key \"%s\"", where, path, c->string);
            ok = false;
        }
    }
    return ok;
}

/* Adds the distinct string values in `vals` (n of them, may repeat) to f as its sorted domain. */
static int set_domain(bfield *f, const char **vals, size_t n)
{
    const char **tmp = malloc((n ? n : 1) * sizeof(*tmp));
    if (!tmp)
        return -1;
    memcpy(tmp, vals, n * sizeof(*tmp));
    qsort(tmp, n, sizeof(*tmp), cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(tmp[u - 1], tmp[i]) != 0)
            tmp[u++] = tmp[i];
    f->values = calloc(u ? u : 1, sizeof(char *));
    if (!f->values) {
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < u; i++) {
        if (!(f->values[i] = strdup(tmp[i]))) {
            f->nv = i;
            free(tmp);
            return -1;
        }
    }
    f->nv = u;
    free(tmp);
    return 0;
}

static bool parse_field(mnc_bayes *m, bfield *f, const cJSON *spec, const named *sec, const char *where,
                        mnc_errors *errs)
{
    static const char *const keys[] = {"likelihood", "function", "independent", "description", NULL};
    char path[MNC_NAME_MAX + 16];
    snprintf(path, sizeof(path), "fields.%s", f->name);
    if (!cJSON_IsObject(spec)) {
        mnc_errors_add(errs, "%s: %s: must be an object", where, path);
        return false;
    }
    if (!only_keys(spec, keys, where, path, errs))
        return false;
    const cJSON *lik = cJSON_GetObjectItemCaseSensitive(spec, "likelihood");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(spec, "function");
    const cJSON *ind = cJSON_GetObjectItemCaseSensitive(spec, "independent");
    if ((lik != NULL) + (fn != NULL) + (ind != NULL) != 1) {
        mnc_errors_add(errs,
                       "%s: %s: needs exactly one of \"likelihood\", \"function\", "
                       "\"independent\"",
                       where, path);
        return false;
    }
    if (ind) {
        if (!cJSON_IsTrue(ind)) {
            mnc_errors_add(errs, "%s: %s.independent: must be true", where, path);
            return false;
        }
        f->kind = K_INDEP;
        return true;
    }
    const cJSON *rows = lik ? lik : fn;
    const char *what = lik ? "likelihood" : "function";
    if (!cJSON_IsObject(rows)) {
        mnc_errors_add(errs, "%s: %s.%s: must be an object keyed by secret value", where, path, what);
        return false;
    }
    /* every secret exactly once, nothing else */
    bool ok = true;
    size_t nrows = 0;
    unsigned char *seen = calloc(m->ns, 1);
    if (!seen) {
        mnc_errors_add(errs, "%s: out of memory", where);
        return false;
    }
    size_t ncells = 0;
    for (const cJSON *r = rows->child; r; r = r->next) {
        long s = find_named(sec, m->ns, r->string);
        if (s < 0) {
            mnc_errors_add(errs, "%s: %s.%s: \"%s\" is not in the secret's domain", where, path, what, r->string);
            ok = false;
            continue;
        }
        if (seen[s]++) {
            mnc_errors_add(errs, "%s: %s.%s: secret \"%s\" appears twice", where, path, what, r->string);
            ok = false;
        }
        nrows++;
        if (lik) {
            if (!cJSON_IsObject(r) || !r->child) {
                mnc_errors_add(errs,
                               "%s: %s.likelihood.%s: must be a non-empty object value -> "
                               "probability",
                               where, path, r->string);
                ok = false;
                continue;
            }
            long double sum = 0;
            for (const cJSON *c = r->child; c; c = c->next, ncells++) {
                if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) || c->valuedouble < 0 || c->valuedouble > 1) {
                    mnc_errors_add(errs,
                                   "%s: %s.likelihood.%s.%s: must be a probability in "
                                   "[0, 1]",
                                   where, path, r->string, c->string);
                    ok = false;
                } else {
                    sum += c->valuedouble;
                }
            }
            if (ok && fabsl(sum - 1.0L) > ROW_TOL) {
                mnc_errors_add(errs,
                               "%s: %s.likelihood.%s: row sums to %.12Lg (must be 1 within "
                               "1e-9)",
                               where, path, r->string, sum);
                ok = false;
            }
        } else if (!cJSON_IsString(r) || !r->valuestring[0]) {
            mnc_errors_add(errs, "%s: %s.function.%s: must be a non-empty string", where, path, r->string);
            ok = false;
        }
    }
    if (ok && nrows != m->ns) {
        for (size_t s = 0; s < m->ns; s++)
            if (!seen[s]) {
                mnc_errors_add(errs, "%s: %s.%s: no entry for secret \"%s\"", where, path, what, m->secrets[s]);
                break;
            }
        ok = false;
    }
    free(seen);
    if (!ok)
        return false;
    /* the field's value domain: every value named anywhere in the table / function */
    size_t nvals = lik ? ncells : m->ns;
    const char **vals = malloc((nvals ? nvals : 1) * sizeof(*vals));
    if (!vals) {
        mnc_errors_add(errs, "%s: out of memory", where);
        return false;
    }
    size_t k = 0;
    for (const cJSON *r = rows->child; r; r = r->next) {
        if (lik)
            for (const cJSON *c = r->child; c; c = c->next)
                vals[k++] = c->string;
        else
            vals[k++] = r->valuestring;
    }
    if (set_domain(f, vals, k) != 0) {
        free(vals);
        mnc_errors_add(errs, "%s: out of memory", where);
        return false;
    }
    free(vals);
    if (f->nv > MAX_VALUES || (lik && f->nv * m->ns > MAX_TABLE)) {
        mnc_errors_add(errs, "%s: %s: table too large (%zu values x %zu secrets)", where, path, f->nv, m->ns);
        return false;
    }
    if (lik) {
        f->kind = K_TABLE;
        f->lik = calloc(f->nv * m->ns, sizeof(long double));
        if (!f->lik) {
            mnc_errors_add(errs, "%s: out of memory", where);
            return false;
        }
        for (const cJSON *r = rows->child; r; r = r->next) {
            long s = find_named(sec, m->ns, r->string);
            for (const cJSON *c = r->child; c; c = c->next) {
                long v = mnc_bayes_find_value(f->values, f->nv, c->string);
                f->lik[(size_t)v * m->ns + (size_t)s] += c->valuedouble;
            }
        }
    } else {
        f->kind = K_FUNC;
        f->fn = malloc(m->ns * sizeof(*f->fn));
        if (!f->fn) {
            mnc_errors_add(errs, "%s: out of memory", where);
            return false;
        }
        for (const cJSON *r = rows->child; r; r = r->next)
            f->fn[find_named(sec, m->ns, r->string)] = (uint32_t)mnc_bayes_find_value(f->values, f->nv, r->valuestring);
    }
    return true;
}

mnc_bayes *mnc_bayes_from_json(const cJSON *j, const mnc_policy *p, const char *where, mnc_errors *errs)
{
    static const char *const top[] = {"mnc_risk_model", "description", "secret", "fields",
                                      "frozen",         "calibration", NULL};
    static const char *const skeys[] = {"name", "domain", "prior", NULL};
    if (!where)
        where = "risk model";
    if (!cJSON_IsObject(j)) {
        mnc_errors_add(errs, "%s: the model must be a JSON object", where);
        return NULL;
    }
    if (!only_keys(j, top, where, "$", errs))
        return NULL;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "mnc_risk_model");
    if (ver && !(cJSON_IsNumber(ver) && ver->valuedouble == 1)) {
        mnc_errors_add(errs, "%s: mnc_risk_model: unsupported version (must be 1)", where);
        return NULL;
    }
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(j, "secret");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(j, "fields");
    if (!cJSON_IsObject(sec) || !cJSON_IsObject(fields)) {
        mnc_errors_add(errs, "%s: \"secret\" and \"fields\" are required objects", where);
        return NULL;
    }
    if (!only_keys(sec, skeys, where, "secret", errs))
        return NULL;
    const cJSON *dom = cJSON_GetObjectItemCaseSensitive(sec, "domain");
    const cJSON *pri = cJSON_GetObjectItemCaseSensitive(sec, "prior");
    int nd = cJSON_GetArraySize(dom);
    if (!cJSON_IsArray(dom) || nd < 1 || (size_t)nd > MAX_SECRETS) {
        mnc_errors_add(errs, "%s: secret.domain: must be an array of 1..%u strings", where, MAX_SECRETS);
        return NULL;
    }
    mnc_bayes *m = calloc(1, sizeof(*m));
    named *sn = calloc((size_t)nd, sizeof(*sn));
    if (!m || !sn) {
        free(m);
        free(sn);
        mnc_errors_add(errs, "%s: out of memory", where);
        return NULL;
    }
    for (int i = 0; i < MNC_MAX_FIELDS; i++)
        m->id_to_f[i] = -1;
    static uint64_t next_uid;
    m->uid = __atomic_add_fetch(&next_uid, 1, __ATOMIC_RELAXED);
    m->secrets = calloc((size_t)nd, sizeof(char *));
    m->prior = calloc((size_t)nd, sizeof(long double));
    if (!m->secrets || !m->prior)
        goto oom;
    m->ns = (size_t)nd;
    int i = 0;
    bool ok = true;
    for (const cJSON *c = dom->child; c; c = c->next, i++) {
        if (!cJSON_IsString(c) || !c->valuestring[0]) {
            mnc_errors_add(errs, "%s: secret.domain[%d]: must be a non-empty string", where, i);
            ok = false;
            continue;
        }
        if (!(m->secrets[i] = strdup(c->valuestring)))
            goto oom;
        sn[i].name = m->secrets[i];
        sn[i].idx = (uint32_t)i;
    }
    if (!ok)
        goto fail;
    qsort(sn, m->ns, sizeof(*sn), cmp_named);
    for (size_t k = 1; k < m->ns; k++)
        if (strcmp(sn[k - 1].name, sn[k].name) == 0) {
            mnc_errors_add(errs, "%s: secret.domain: \"%s\" appears twice", where, sn[k].name);
            ok = false;
        }
    if (cJSON_IsString(pri) && strcmp(pri->valuestring, "uniform") == 0) {
        for (size_t k = 0; k < m->ns; k++)
            m->prior[k] = 1.0L / (long double)m->ns;
    } else if (cJSON_IsArray(pri) && cJSON_GetArraySize(pri) == nd) {
        long double sum = 0;
        i = 0;
        for (const cJSON *c = pri->child; c; c = c->next, i++) {
            if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) || c->valuedouble <= 0 || c->valuedouble > 1) {
                mnc_errors_add(errs, "%s: secret.prior[%d]: must be a probability > 0", where, i);
                ok = false;
                continue;
            }
            m->prior[i] = c->valuedouble;
            sum += c->valuedouble;
        }
        if (ok && fabsl(sum - 1.0L) > ROW_TOL) {
            mnc_errors_add(errs, "%s: secret.prior: sums to %.12Lg (must be 1 within 1e-9)", where, sum);
            ok = false;
        }
    } else {
        mnc_errors_add(errs,
                       "%s: secret.prior: must be \"uniform\" or an array of %d "
                       "probabilities (one per domain value)",
                       where, nd);
        ok = false;
    }
    if (!ok)
        goto fail;
    m->vprior = 0;
    for (size_t k = 0; k < m->ns; k++)
        if (m->prior[k] > m->vprior)
            m->vprior = m->prior[k];

    int nf = cJSON_GetArraySize(fields);
    if (nf < 1 || nf > MNC_MAX_FIELDS) {
        mnc_errors_add(errs, "%s: fields: must declare 1..%d fields", where, MNC_MAX_FIELDS);
        goto fail;
    }
    if (!(m->f = calloc((size_t)nf, sizeof(bfield))))
        goto oom;
    for (const cJSON *c = fields->child; c; c = c->next) {
        bfield *f = &m->f[m->nf];
        if (strlen(c->string) >= MNC_NAME_MAX || !c->string[0]) {
            mnc_errors_add(errs, "%s: fields: bad field name \"%.70s\"", where, c->string);
            ok = false;
            continue;
        }
        snprintf(f->name, sizeof(f->name), "%s", c->string);
        int id = p ? mnc_policy_field(p, c->string) : (int)m->nf;
        if (id < 0 || id >= MNC_MAX_FIELDS) {
            mnc_errors_add(errs, "%s: fields.%s: not a field of the policy", where, c->string);
            ok = false;
            continue;
        }
        if (m->id_to_f[id] >= 0) {
            mnc_errors_add(errs, "%s: fields.%s: declared twice", where, c->string);
            ok = false;
            continue;
        }
        m->nf++; /* counted before parsing so mnc_bayes_free releases partial allocations */
        if (!parse_field(m, f, c, sn, where, errs)) {
            ok = false;
            continue;
        }
        m->id_to_f[id] = (int)(f - m->f);
    }
    if (!ok)
        goto fail;
    free(sn);
    return m;
oom:
    mnc_errors_add(errs, "%s: out of memory", where);
fail:
    free(sn);
    mnc_bayes_free(m);
    return NULL;
}

mnc_bayes *mnc_bayes_load_file(const char *path, const mnc_policy *p, mnc_errors *errs)
{
    int fd = mnc_open_ro(path);
    FILE *fp = fd >= 0 ? fdopen(fd, "re") : NULL;
    if (!fp) {
        int e = fd < 0 ? -fd : errno;
        if (fd >= 0)
            close(fd);
        mnc_errors_add(errs, "%s: %s", path, strerror(e));
        return NULL;
    }
    char *buf = malloc(MAX_FILE + 1);
    if (!buf) {
        fclose(fp);
        mnc_errors_add(errs, "%s: out of memory", path);
        return NULL;
    }
    size_t n = fread(buf, 1, MAX_FILE + 1, fp);
    bool rerr = ferror(fp);
    fclose(fp);
    if (rerr || n > MAX_FILE) {
        free(buf);
        mnc_errors_add(errs, "%s: %s", path, rerr ? "read error" : "file larger than 64 MiB");
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(buf, n);
    free(buf);
    if (!j) {
        mnc_errors_add(errs, "%s: not valid JSON", path);
        return NULL;
    }
    mnc_bayes *m = mnc_bayes_from_json(j, p, path, errs);
    cJSON_Delete(j);
    return m;
}

size_t mnc_bayes_secrets(const mnc_bayes *m) { return m ? m->ns : 0; }

int mnc_bayes_field_id(const mnc_bayes *m, const char *name)
{
    if (!m || !name)
        return -1;
    for (int id = 0; id < MNC_MAX_FIELDS; id++)
        if (m->id_to_f[id] >= 0 && strcmp(m->f[m->id_to_f[id]].name, name) == 0)
            return id;
    return -1;
}
