// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* reqscan.c - send and recv requests read without a cJSON tree (contract: reqscan.h).
 *
 * A send or recv line is a flat object of short plain strings (and "max", a small integer):
 * the scanner records where each known key's value is, checks them as protocol.c's check_arg
 * does, and copies the strings into one block. Anything else - and anything it is not sure
 * about - is left to the full parser (return 0), which also writes every error message. */
#include "reqscan.h"

#include <stdbool.h>
#include <string.h>

enum { F_VERB, F_ID, F_AS, F_OBJECT, F_TO, F_CHANNEL, F_PURPOSE, F_MAX, F_N };

static const char *const field_names[F_N] = {"verb", "id", "as", "object", "to", "channel", "purpose", "max"};

typedef struct span {
    const char *p; /* a string's bytes (without quotes), or the token of "id" / "max" */
    size_t n;
    bool set;
} span;

static bool ws(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && ws(*p))
        p++;
    return p;
}

/* A plain string at p (p[0] == '"'): printable ASCII without '"' or '\\'. Returns the byte
 * after its closing quote, or NULL. */
static const char *plain_string(const char *p, const char *end, span *s)
{
    const char *q = p + 1;
    while (q < end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20 || c > 0x7e || c == '\\')
            return NULL;
        q++;
    }
    if (q >= end)
        return NULL;
    s->p = p + 1;
    s->n = (size_t)(q - (p + 1));
    return q + 1;
}

/* The "id" value's token: a string (escapes skipped as cJSON's parse_string skips them) or a
 * run of number characters. cJSON reads the token itself (mnc_reqscan). */
static const char *id_token(const char *p, const char *end, span *s)
{
    const char *q = p;
    if (*q == '"') {
        q++;
        while (q < end && *q != '"') {
            if ((unsigned char)*q < 0x20)
                return NULL;
            q += *q == '\\' ? 2 : 1;
        }
        if (q >= end)
            return NULL;
        q++;
    } else {
        while (q < end && ((*q >= '0' && *q <= '9') || *q == '-' || *q == '+' || *q == '.' || *q == 'e' || *q == 'E'))
            q++;
        if (q == p)
            return NULL;
    }
    s->p = p;
    s->n = (size_t)(q - p);
    return q;
}

/* "max": 1..1000 in plain digits (no sign, fraction, exponent or leading zero). */
static const char *max_token(const char *p, const char *end, span *s)
{
    const char *q = p;
    if (*q < '1' || *q > '9')
        return NULL;
    while (q < end && *q >= '0' && *q <= '9' && q - p < 5)
        q++;
    s->p = p;
    s->n = (size_t)(q - p);
    return q;
}

static int field_of(const char *k, size_t n)
{
    for (int i = 0; i < F_N; i++)
        if (strlen(field_names[i]) == n && memcmp(field_names[i], k, n) == 0)
            return i;
    return -1;
}

static bool eq(const span *s, const char *lit) { return s->n == strlen(lit) && memcmp(s->p, lit, s->n) == 0; }

/* protocol.c's valid_name: [A-Za-z0-9_.:-]{1,63} */
static bool name_ok(const span *s)
{
    if (s->n < 1 || s->n > 63)
        return false;
    for (size_t i = 0; i < s->n; i++) {
        char c = s->p[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return false;
    }
    return true;
}

/* protocol.c's valid_oid: 32 hex digits */
static bool oid_ok(const span *s)
{
    if (s->n != 32)
        return false;
    for (size_t i = 0; i < 32; i++) {
        char c = s->p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

/* Reads the members into f[]. false if the line is not a flat object of known keys, each once. */
static bool scan_members(const char *p, const char *end, span f[F_N])
{
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return false;
    p = skip_ws(p + 1, end);
    for (;;) {
        span key;
        if (p >= end || *p != '"' || !(p = plain_string(p, end, &key)))
            return false;
        int k = field_of(key.p, key.n);
        if (k < 0 || f[k].set)
            return false;
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return false;
        p = skip_ws(p + 1, end);
        if (p >= end)
            return false;
        if (k == F_ID)
            p = id_token(p, end, &f[k]);
        else if (k == F_MAX)
            p = max_token(p, end, &f[k]);
        else
            p = *p == '"' ? plain_string(p, end, &f[k]) : NULL;
        if (!p)
            return false;
        f[k].set = true;
        p = skip_ws(p, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p >= end || *p != '}')
            return false;
        return skip_ws(p + 1, end) == end; /* only ' ', '\t', '\r' may follow, as in protocol.c */
    }
}

/* The fields' values as the full parser would check them (check_arg), for verb v. */
static bool fields_ok(mnc_verb v, const span f[F_N])
{
    if (f[F_AS].set && !name_ok(&f[F_AS]))
        return false;
    if (f[F_PURPOSE].set && !name_ok(&f[F_PURPOSE]))
        return false;
    if (f[F_OBJECT].set && !oid_ok(&f[F_OBJECT]))
        return false;
    if (v == MNC_V_SEND) {
        if (f[F_MAX].set || !f[F_OBJECT].set || !f[F_TO].set || !name_ok(&f[F_TO]))
            return false;
        return !f[F_CHANNEL].set || eq(&f[F_CHANNEL], "message") || eq(&f[F_CHANNEL], "tool");
    }
    if (f[F_TO].set || f[F_CHANNEL].set)
        return false;
    if (f[F_MAX].set) {
        int m = 0;
        for (size_t i = 0; i < f[F_MAX].n; i++)
            m = m * 10 + (f[F_MAX].p[i] - '0');
        if (m > MNC_PROTO_MAX_BATCH)
            return false;
    }
    return true;
}

/* cJSON's own node for the id token, if it is exactly one string (<= 255 bytes) or number. */
static cJSON *id_node(const span *s)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s->p, s->n, &end, false);
    if (j && end == s->p + s->n && ((cJSON_IsString(j) && strlen(j->valuestring) <= 255) || cJSON_IsNumber(j)))
        return j;
    cJSON_Delete(j);
    return NULL;
}

int mnc_reqscan(const char *line, size_t len, mnc_request *out)
{
    span f[F_N];
    memset(f, 0, sizeof(f));
    memset(out, 0, sizeof(*out));
    if (len > MNC_PROTO_MAX_LINE || !scan_members(line, line + len, f) || !f[F_VERB].set)
        return 0;
    mnc_verb v;
    if (eq(&f[F_VERB], "send"))
        v = MNC_V_SEND;
    else if (eq(&f[F_VERB], "recv"))
        v = MNC_V_RECV;
    else
        return 0;
    if (!fields_ok(v, f))
        return 0;
    static const int copied[] = {F_AS, F_OBJECT, F_TO, F_CHANNEL, F_PURPOSE};
    size_t total = 0;
    for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
        if (f[copied[i]].set)
            total += f[copied[i]].n + 1;
    cJSON *root = cJSON_CreateObject();
    char *blk = total ? cJSON_malloc(total) : NULL;
    cJSON *id = f[F_ID].set ? id_node(&f[F_ID]) : NULL;
    if (!root || (total && !blk) || (f[F_ID].set && !id)) {
        cJSON_Delete(root);
        cJSON_free(blk);
        cJSON_Delete(id);
        return 0;
    }
    root->valuestring = blk;
    root->child = id;
    const char *str[F_N] = {0};
    char *w = blk;
    for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
        const span *s = &f[copied[i]];
        if (!s->set)
            continue;
        memcpy(w, s->p, s->n);
        w[s->n] = '\0';
        str[copied[i]] = w;
        w += s->n + 1;
    }
    out->verb = v;
    out->root = root;
    out->id = id;
    out->as = str[F_AS];
    out->object = str[F_OBJECT];
    out->to = str[F_TO];
    out->channel = str[F_CHANNEL];
    out->purpose = str[F_PURPOSE];
    out->memory = -1;
    out->max = -1;
    out->uid = -1;
    out->run_as_root = -1;
    out->lost = -1;
    out->deny = -1;
    if (f[F_MAX].set) {
        int m = 0;
        for (size_t i = 0; i < f[F_MAX].n; i++)
            m = m * 10 + (f[F_MAX].p[i] - '0');
        out->max = m;
    }
    return 1;
}
