// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_calibrate.c - `mncctl calibrate`: fit a frozen bayes risk model from a labelled
 * development split (docs/risk.md, "Calibration").
 *
 *   π(s) = n(s)/N,   P_f(v | s) = (n(s, f=v) + α) / (n(s) + α·|V_f|)
 *
 * Fields named by --independent are declared independent of the secret (the deployer's
 * structural assumption, e.g. a slot index that the data generator draws without looking at
 * the secret): they are written as {"independent": true}, not estimated, and listed in
 * calibration.independent so the assumption is visible in the frozen model. Estimating them
 * instead would charge sampling noise in a small split as leakage.
 *
 * Guard rails against calibrating on test data: the split's SHA-256 is recorded in the model;
 * a hash listed in --test-hashes is refused; a --dev path containing "test" needs --i-know.
 * The model is validated by the library's own loader before it is written, written to a
 * temporary file in the output directory, fsynced, and linked into place (no overwrite
 * without --force), then the directory is fsynced.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnc/risk_bayes.h"
#include "mncctl.h"

#define DEV_MAX (256u << 20)
#define MAX_DOMAIN 65536
#define MAX_CAL_FIELDS 64

typedef struct strs {
    char **v;
    size_t n, cap;
} strs;

/* index of s in a, adding it if absent; -1 on OOM or overflow */
static long intern(strs *a, const char *s)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], s) == 0)
            return (long)i;
    if (a->n >= MAX_DOMAIN)
        return -1;
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 16;
        char **n = realloc(a->v, nc * sizeof(*n));
        if (!n)
            return -1;
        a->v = n;
        a->cap = nc;
    }
    if (!(a->v[a->n] = strdup(s)))
        return -1;
    return (long)a->n++;
}

static void strs_free(strs *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

typedef struct field {
    char name[MNC_NAME_MAX];
    strs vals;
    size_t *cnt; /* cnt[s * cap_v + v], grown as needed */
    size_t cap_s, cap_v;
} field;

static int bump(field *f, size_t s, size_t v)
{
    if (s >= f->cap_s || v >= f->cap_v) {
        size_t ns = f->cap_s ? f->cap_s : 8, nv = f->cap_v ? f->cap_v : 8;
        while (ns <= s)
            ns *= 2;
        while (nv <= v)
            nv *= 2;
        if (ns * nv > (64u << 20))
            return -1;
        size_t *n = calloc(ns * nv, sizeof(*n));
        if (!n)
            return -1;
        for (size_t i = 0; i < f->cap_s; i++)
            for (size_t j = 0; j < f->cap_v; j++)
                n[i * nv + j] = f->cnt[i * f->cap_v + j];
        free(f->cnt);
        f->cnt = n;
        f->cap_s = ns;
        f->cap_v = nv;
    }
    f->cnt[s * f->cap_v + v]++;
    return 0;
}

/* Scalar JSON -> text ("medical", "3", "true"); NULL for anything else. */
static char *scalar(const cJSON *j)
{
    if (cJSON_IsString(j))
        return strdup(j->valuestring);
    if (cJSON_IsNumber(j) || cJSON_IsBool(j))
        return cJSON_PrintUnformatted(j);
    return NULL;
}

static bool contains_test(const char *path)
{
    for (const char *p = path; *p; p++)
        if (strncasecmp(p, "test", 4) == 0)
            return true;
    return false;
}

static int sha256_hex(const char *buf, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(buf, n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return -1;
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}

static char *read_all(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        mncctl_err("calibrate: %s: %s", path, strerror(errno));
        return NULL;
    }
    char *b = malloc(max + 1);
    size_t n = b ? fread(b, 1, max + 1, f) : 0;
    bool bad = !b || ferror(f) || n > max;
    fclose(f);
    if (bad) {
        mncctl_err("calibrate: %s: %s", path, !b ? "out of memory" : n > max ? "file too large" : "read error");
        free(b);
        return NULL;
    }
    b[n] = '\0';
    *len = n;
    return b;
}

/* Is `hex` listed in the hashes file (one hex digest per line, '#' comments)? -1 on error. */
static int hash_listed(const char *file, const char *hex)
{
    size_t len;
    char *b = read_all(file, 16u << 20, &len);
    if (!b)
        return -1;
    int found = 0;
    for (char *save = NULL, *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (isspace((unsigned char)*line))
            line++;
        if (*line == '#')
            continue;
        if (strncasecmp(line, hex, 64) == 0 && (line[64] == '\0' || isspace((unsigned char)line[64])))
            found = 1;
    }
    free(b);
    return found;
}

static int write_atomic(const char *out, const char *text, bool force)
{
    char *dup = strdup(out);
    if (!dup)
        return -1;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", dirname(dup));
    free(dup);
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s/.mnc-calibrate.XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        mncctl_err("calibrate: %s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(text), off = 0;
    int rc = -1;
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            goto fail;
        off += (size_t)w;
    }
    if (fchmod(fd, 0644) != 0 || fsync(fd) != 0)
        goto fail;
    if (force ? rename(tmp, out) != 0 : link(tmp, out) != 0)
        goto fail;
    if (!force)
        unlink(tmp);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) {
        if (dfd >= 0)
            close(dfd);
        mncctl_err("calibrate: fsync %s: %s", dir, strerror(errno));
        close(fd);
        return -1;
    }
    close(dfd);
    close(fd);
    return 0;
fail:
    rc = errno;
    mncctl_err("calibrate: writing %s: %s", out, rc == EEXIST ? "exists (use --force to replace it)" : strerror(rc));
    close(fd);
    unlink(tmp);
    return -1;
}

static int usage(void)
{
    mncctl_err("usage: mncctl calibrate --dev FILE.jsonl --out MODEL.json [--secret-field NAME] "
               "[--fields A,B,...] [--independent A,B,...] [--alpha A] [--test-hashes FILE] [--i-know] [--force]");
    return 2;
}

static int cmd_calibrate(int argc, char **argv, const mncctl_global *g)
{
    (void)g;
    const char *dev = NULL, *out = NULL, *secret = "secret", *fields_arg = NULL, *hashes = NULL, *indep_arg = NULL;
    double alpha = 1.0;
    bool iknow = false, force = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        if (strcmp(a, "--dev") == 0 && has)
            dev = argv[++i];
        else if (strcmp(a, "--out") == 0 && has)
            out = argv[++i];
        else if (strcmp(a, "--secret-field") == 0 && has)
            secret = argv[++i];
        else if (strcmp(a, "--fields") == 0 && has)
            fields_arg = argv[++i];
        else if (strcmp(a, "--independent") == 0 && has)
            indep_arg = argv[++i];
        else if (strcmp(a, "--test-hashes") == 0 && has)
            hashes = argv[++i];
        else if (strcmp(a, "--alpha") == 0 && has) {
            char *end;
            alpha = strtod(argv[++i], &end);
            if (*end || !isfinite(alpha) || alpha <= 0 || alpha > 1e6) {
                mncctl_err("calibrate: --alpha must be a number > 0");
                return 2;
            }
        } else if (strcmp(a, "--i-know") == 0)
            iknow = true;
        else if (strcmp(a, "--force") == 0)
            force = true;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: mncctl calibrate --dev FILE.jsonl --out MODEL.json [--secret-field NAME] "
                   "[--fields A,B,...] [--independent A,B,...] [--alpha A] [--test-hashes FILE] [--i-know] "
                   "[--force]\n");
            return 0;
        } else
            return usage();
    }
    if (!dev || !out)
        return usage();
    if (contains_test(dev) && !iknow) {
        mncctl_err("calibrate: refusing: the --dev path \"%s\" looks like a test split (contains "
                   "\"test\"); calibrate on the development split, or pass --i-know",
                   dev);
        return 1;
    }
    if (!force && access(out, F_OK) == 0) {
        mncctl_err("calibrate: refusing to overwrite %s (a frozen model); use --force", out);
        return 1;
    }
    size_t len;
    char *buf = read_all(dev, DEV_MAX, &len);
    if (!buf)
        return 1;
    char hex[65];
    if (sha256_hex(buf, len, hex) != 0) {
        mncctl_err("calibrate: SHA-256 failed");
        free(buf);
        return 1;
    }
    if (hashes) {
        int l = hash_listed(hashes, hex);
        if (l != 0) {
            if (l > 0)
                mncctl_err("calibrate: refusing: %s (sha256 %s) is listed in %s as a test split", dev, hex, hashes);
            free(buf);
            return 1;
        }
    }

    int rc = 1;
    strs sec = {0}, indep = {0};
    field fs[MAX_CAL_FIELDS];
    size_t nf = 0;
    memset(fs, 0, sizeof(fs));
    size_t *ns = NULL, cap_ns = 0;
    size_t records = 0;
    cJSON *model = NULL;
    char *text = NULL;
    if (fields_arg) {
        char *copy = strdup(fields_arg);
        if (!copy)
            goto done;
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (nf == MAX_CAL_FIELDS || strlen(t) >= MNC_NAME_MAX || !*t || strcmp(t, secret) == 0) {
                mncctl_err("calibrate: --fields: bad or too many field names (\"%s\")", t);
                free(copy);
                goto done;
            }
            snprintf(fs[nf++].name, MNC_NAME_MAX, "%s", t);
        }
        free(copy);
    }
    if (indep_arg) {
        char *copy = strdup(indep_arg);
        if (!copy)
            goto done;
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            bool clash = !*t || strlen(t) >= MNC_NAME_MAX || strcmp(t, secret) == 0 || intern(&indep, t) < 0;
            for (size_t f = 0; f < nf && !clash; f++)
                clash = strcmp(fs[f].name, t) == 0;
            if (clash) {
                mncctl_err("calibrate: --independent: bad field name \"%s\" (empty, too long, the "
                           "secret, or also estimated with --fields)",
                           t);
                free(copy);
                goto done;
            }
        }
        free(copy);
    }
    size_t lineno = 0;
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        while (isspace((unsigned char)*line))
            line++;
        if (!*line)
            continue;
        cJSON *j = cJSON_Parse(line);
        if (!cJSON_IsObject(j)) {
            mncctl_err("calibrate: %s:%zu: not a JSON object", dev, lineno);
            cJSON_Delete(j);
            goto done;
        }
        char *sv = scalar(cJSON_GetObjectItemCaseSensitive(j, secret));
        long s = sv ? intern(&sec, sv) : -1;
        free(sv);
        if (s < 0) {
            mncctl_err("calibrate: %s:%zu: missing or non-scalar secret \"%s\"", dev, lineno, secret);
            cJSON_Delete(j);
            goto done;
        }
        if (!fields_arg && records == 0) {
            /* default field set: every other scalar member of the first record */
            for (const cJSON *c = j->child; c; c = c->next) {
                bool declared = false;
                for (size_t k = 0; k < indep.n; k++)
                    declared |= strcmp(indep.v[k], c->string) == 0;
                if (declared || strcmp(c->string, secret) == 0 || cJSON_IsObject(c) || cJSON_IsArray(c) ||
                    cJSON_IsNull(c))
                    continue;
                if (nf == MAX_CAL_FIELDS || strlen(c->string) >= MNC_NAME_MAX) {
                    mncctl_err("calibrate: %s:%zu: too many fields or field name too long; use --fields", dev, lineno);
                    cJSON_Delete(j);
                    goto done;
                }
                snprintf(fs[nf++].name, MNC_NAME_MAX, "%s", c->string);
            }
        }
        if ((size_t)s >= cap_ns) {
            size_t nc = cap_ns ? cap_ns * 2 : 16;
            while (nc <= (size_t)s)
                nc *= 2;
            size_t *n = realloc(ns, nc * sizeof(*n));
            if (!n) {
                cJSON_Delete(j);
                goto done;
            }
            memset(n + cap_ns, 0, (nc - cap_ns) * sizeof(*n));
            ns = n;
            cap_ns = nc;
        }
        ns[s]++;
        for (size_t f = 0; f < nf; f++) {
            char *v = scalar(cJSON_GetObjectItemCaseSensitive(j, fs[f].name));
            long vi = v ? intern(&fs[f].vals, v) : -1;
            free(v);
            if (vi < 0 || bump(&fs[f], (size_t)s, (size_t)vi) != 0) {
                mncctl_err("calibrate: %s:%zu: field \"%s\" missing, not a scalar, or too many values", dev, lineno,
                           fs[f].name);
                cJSON_Delete(j);
                goto done;
            }
        }
        cJSON_Delete(j);
        records++;
    }
    if (records == 0 || nf == 0) {
        mncctl_err("calibrate: %s: %s", dev, records == 0 ? "no records" : "no fields to model");
        goto done;
    }

    /* the model document */
    model = cJSON_CreateObject();
    cJSON *secj = cJSON_AddObjectToObject(model, "secret");
    cJSON *fj = cJSON_AddObjectToObject(model, "fields");
    cJSON *cal = cJSON_AddObjectToObject(model, "calibration");
    if (!secj || !fj || !cal)
        goto oom;
    cJSON_AddNumberToObject(model, "mnc_risk_model", 1);
    cJSON_AddStringToObject(secj, "name", secret);
    cJSON *dom = cJSON_CreateStringArray((const char *const *)sec.v, (int)sec.n);
    cJSON *pri = cJSON_AddArrayToObject(secj, "prior");
    if (!dom || !pri || !cJSON_AddItemToObject(secj, "domain", dom))
        goto oom;
    for (size_t s = 0; s < sec.n; s++)
        cJSON_AddItemToArray(pri, cJSON_CreateNumber((double)ns[s] / (double)records));
    for (size_t f = 0; f < nf; f++) {
        cJSON *spec = cJSON_AddObjectToObject(fj, fs[f].name);
        cJSON *lik = spec ? cJSON_AddObjectToObject(spec, "likelihood") : NULL;
        if (!lik)
            goto oom;
        size_t nv = fs[f].vals.n;
        for (size_t s = 0; s < sec.n; s++) {
            cJSON *row = cJSON_AddObjectToObject(lik, sec.v[s]);
            if (!row)
                goto oom;
            double den = (double)ns[s] + alpha * (double)nv;
            for (size_t v = 0; v < nv; v++) {
                size_t c = s < fs[f].cap_s && v < fs[f].cap_v ? fs[f].cnt[s * fs[f].cap_v + v] : 0;
                cJSON_AddNumberToObject(row, fs[f].vals.v[v], ((double)c + alpha) / den);
            }
        }
    }
    cJSON *ind = cJSON_AddArrayToObject(cal, "independent");
    if (!ind)
        goto oom;
    for (size_t k = 0; k < indep.n; k++) {
        cJSON *spec = cJSON_AddObjectToObject(fj, indep.v[k]);
        cJSON *name = cJSON_CreateString(indep.v[k]);
        if (!spec || !name || !cJSON_AddBoolToObject(spec, "independent", 1) || !cJSON_AddItemToArray(ind, name)) {
            cJSON_Delete(name);
            goto oom;
        }
    }
    cJSON_AddBoolToObject(model, "frozen", 1);
    char *dupdev = strdup(dev);
    if (!dupdev)
        goto oom;
    cJSON_AddStringToObject(cal, "dev", basename(dupdev));
    free(dupdev);
    cJSON_AddStringToObject(cal, "sha256", hex);
    cJSON_AddNumberToObject(cal, "records", (double)records);
    cJSON_AddNumberToObject(cal, "alpha", alpha);
    cJSON_AddStringToObject(cal, "estimator", "prior = label frequency; P(v|s) = (n(s,v)+alpha)/(n(s)+alpha*|V|)");
    cJSON_AddNumberToObject(cal, "created", (double)time(NULL));

    /* the library must accept what we write */
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_bayes *check = mnc_bayes_from_json(model, NULL, out, &e);
    if (!check) {
        for (int i = 0; i < e.n; i++)
            mncctl_err("calibrate: internal: generated model rejected: %s", e.msg[i]);
        mnc_errors_free(&e);
        goto done;
    }
    mnc_bayes_free(check);
    mnc_errors_free(&e);
    text = cJSON_Print(model);
    if (!text)
        goto oom;
    size_t tl = strlen(text);
    char *t2 = realloc(text, tl + 2);
    if (!t2)
        goto oom;
    text = t2;
    text[tl] = '\n';
    text[tl + 1] = '\0';
    if (write_atomic(out, text, force) != 0)
        goto done;
    printf("calibrated %s: %zu records, %zu secret values, %zu fields (+%zu declared independent), "
           "alpha %g, sha256 %s -> %s\n",
           dev, records, sec.n, nf, indep.n, alpha, hex, out);
    rc = 0;
    goto done;
oom:
    mncctl_err("calibrate: out of memory");
done:
    free(text);
    cJSON_Delete(model);
    for (size_t f = 0; f < nf; f++) {
        strs_free(&fs[f].vals);
        free(fs[f].cnt);
    }
    strs_free(&sec);
    strs_free(&indep);
    free(ns);
    free(buf);
    return rc;
}

MNCCTL_COMMAND(calibrate_cmd, "calibrate",
               "calibrate --dev FILE.jsonl --out MODEL.json [--secret-field NAME] [--fields A,B] "
               "[--independent A,B] [--alpha A] [--test-hashes FILE] [--i-know] [--force]",
               cmd_calibrate)
