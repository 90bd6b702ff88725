// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* disclosure.c - scoped disclosure objects: issue, derive (narrow only), render, JSON. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "mnc/disclosure.h"
#include "randbuf.h"

/* ---- ids */

int mnc_oid_random(mnc_oid *id) { return mnc_random_bytes(id->b, sizeof(id->b)); }

void mnc_oid_hex(const mnc_oid *id, char out[MNC_OID_HEX])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hx[id->b[i] >> 4];
        out[2 * i + 1] = hx[id->b[i] & 15];
    }
    out[32] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int mnc_oid_parse(const char *hex, mnc_oid *id)
{
    if (!hex || strlen(hex) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        id->b[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

bool mnc_oid_is_zero(const mnc_oid *id)
{
    for (int i = 0; i < 16; i++)
        if (id->b[i])
            return false;
    return true;
}

/* ---- values */

void mnc_disclosure_free(mnc_disclosure *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n_values; i++)
        free(d->values[i].value);
    free(d->values);
    d->values = NULL;
    d->n_values = 0;
}

int mnc_disclosure_copy(mnc_disclosure *dst, const mnc_disclosure *src)
{
    mnc_disclosure tmp = *src;
    tmp.values = NULL;
    tmp.n_values = 0;
    if (src->n_values) {
        tmp.values = calloc(src->n_values, sizeof(*tmp.values));
        if (!tmp.values)
            return -1;
        for (int i = 0; i < src->n_values; i++) {
            tmp.values[i].field = src->values[i].field;
            tmp.values[i].value = strdup(src->values[i].value);
            tmp.n_values = (uint16_t)(i + 1);
            if (!tmp.values[i].value) {
                mnc_disclosure_free(&tmp);
                return -1;
            }
        }
    }
    *dst = tmp;
    return 0;
}

const char *mnc_disclosure_value(const mnc_disclosure *d, int field)
{
    for (int i = 0; i < d->n_values; i++)
        if (d->values[i].field == field)
            return d->values[i].value;
    return NULL;
}

/* Fills d->values with the state's values of `fields` (ascending field id). */
static mnc_reason take_values(mnc_disclosure *d, const mnc_set *fields, const char *(*get)(const void *, int),
                              const void *src)
{
    unsigned n = mnc_set_count(fields);
    d->values = n ? calloc(n, sizeof(*d->values)) : NULL;
    d->n_values = 0;
    if (n && !d->values)
        return MNC_R_INTERNAL;
    for (int f = mnc_set_next(fields, -1); f >= 0; f = mnc_set_next(fields, f)) {
        const char *v = get(src, f);
        if (!v) {
            mnc_disclosure_free(d);
            return MNC_R_MISSING_VALUE;
        }
        char *copy = strdup(v);
        if (!copy) {
            mnc_disclosure_free(d);
            return MNC_R_INTERNAL;
        }
        d->values[d->n_values].field = (uint16_t)f;
        d->values[d->n_values].value = copy;
        d->n_values++;
    }
    return MNC_OK;
}

static const char *state_get(const void *src, int f)
{
    const mnc_state *st = src;
    return mnc_set_has(&st->present, (unsigned)f) ? st->value[f] : NULL;
}

static const char *object_get(const void *src, int f) { return mnc_disclosure_value(src, f); }

/* Saturation point of a deadline: 2^53 ms (year 287396), the largest integer the JSON form
 * carries exactly. Saturating at UINT64_MAX instead made an object that to_json prints and
 * from_json then refuses (the daemon could not replay its own journal). */
#define DEADLINE_MAX_MS 9007199254740992ULL

static uint64_t deadline(uint64_t now_ms, uint64_t seconds)
{
    if (!seconds)
        return 0;
    if (now_ms >= DEADLINE_MAX_MS || seconds > (DEADLINE_MAX_MS - now_ms) / 1000)
        return DEADLINE_MAX_MS;
    return now_ms + seconds * 1000;
}

mnc_reason mnc_disclosure_issue(const mnc_policy *p, int contract, int origin, const char *form, const mnc_set *fields,
                                const mnc_state *st, uint64_t now_ms, mnc_disclosure *out)
{
    if (!p || !fields || !st || !out || contract < 0 || contract >= p->n_contracts)
        return MNC_R_INVALID;
    if (origin < 0 || origin >= p->n_principals || p->principals[origin].cls != MNC_SINK_AGENT)
        return MNC_R_UNKNOWN_AGENT;
    const mnc_contract *c = &p->contracts[contract];
    if (!mnc_set_has(&c->issuers, (unsigned)origin))
        return MNC_R_NOT_ISSUER;
    if (mnc_set_empty(fields))
        return MNC_R_INVALID;
    if (!mnc_set_subset(fields, &c->scope.fields))
        return MNC_R_CONTRACT_FIELDS;

    mnc_disclosure d;
    memset(&d, 0, sizeof(d));
    if (mnc_oid_random(&d.id) != 0)
        return MNC_R_INTERNAL;
    d.contract = (uint16_t)contract;
    d.origin = (uint16_t)origin;
    snprintf(d.form, sizeof(d.form), "%s", form ? form : "");
    d.scope = c->scope;
    d.issued_ms = now_ms;
    d.expires_ms = deadline(now_ms, c->scope.life.seconds);
    d.turns_left = c->scope.life.turns ? c->scope.life.turns : MNC_TURNS_UNBOUNDED;
    mnc_set_add(&d.holders, (unsigned)origin);
    mnc_reason r = take_values(&d, fields, state_get, st);
    if (r != MNC_OK)
        return r;
    *out = d;
    return MNC_OK;
}

/* ---- narrowing */

mnc_reason mnc_scope_narrows(const mnc_scope *parent, uint64_t parent_expires_ms, uint32_t parent_turns,
                             const mnc_scope *child, uint64_t child_expires_ms, uint32_t child_turns)
{
    if (!mnc_set_subset(&child->fields, &parent->fields))
        return MNC_R_WIDEN_FIELDS;
    if (!mnc_set_subset(&child->sinks, &parent->sinks))
        return MNC_R_WIDEN_SINKS;
    /* ℓ' ≤ ℓ on both clocks: a bounded parent needs a bound child no later than it. */
    if (parent_expires_ms && (!child_expires_ms || child_expires_ms > parent_expires_ms))
        return MNC_R_WIDEN_LIFETIME;
    if (parent_turns != MNC_TURNS_UNBOUNDED && child_turns > parent_turns)
        return MNC_R_WIDEN_LIFETIME;
    if (child->memory && !parent->memory)
        return MNC_R_WIDEN_MEMORY;
    if (child->recipient != parent->recipient)
        return MNC_R_WIDEN_RECIPIENT;
    return MNC_OK;
}

mnc_reason mnc_disclosure_derive(const mnc_disclosure *parent, int by, const mnc_narrowing *n, uint64_t now_ms,
                                 mnc_disclosure *out)
{
    if (!parent || !n || !out || by < 0 || by >= MNC_SET_BITS)
        return MNC_R_INVALID;
    if (parent->revoked)
        return MNC_R_REVOKED;
    if ((parent->expires_ms && now_ms >= parent->expires_ms) || parent->turns_left == 0)
        return MNC_R_EXPIRED;
    if (!mnc_set_has(&parent->holders, (unsigned)by))
        return MNC_R_NOT_HOLDER;
    if (n->memory < -1 || n->memory > 1)
        return MNC_R_INVALID;
    /* ℓ' must be representable in the object's JSON form (scope.lifetime.seconds) */
    if (n->life && n->life->seconds > UINT32_MAX)
        return MNC_R_INVALID;

    mnc_scope cs = parent->scope;
    if (n->fields)
        cs.fields = *n->fields;
    if (n->sinks)
        cs.sinks = *n->sinks;
    if (n->memory >= 0)
        cs.memory = n->memory == 1;
    uint64_t cexp = parent->expires_ms;
    uint32_t cturns = parent->turns_left;
    if (n->life) {
        cs.life = *n->life;
        cexp = deadline(now_ms, n->life->seconds);
        cturns = n->life->turns ? n->life->turns : MNC_TURNS_UNBOUNDED;
    }
    mnc_reason r = mnc_scope_narrows(&parent->scope, parent->expires_ms, parent->turns_left, &cs, cexp, cturns);
    if (r != MNC_OK)
        return r;
    if (mnc_set_empty(&cs.fields))
        return MNC_R_INVALID;

    mnc_disclosure d;
    memset(&d, 0, sizeof(d));
    if (mnc_oid_random(&d.id) != 0)
        return MNC_R_INTERNAL;
    d.parent = parent->id;
    d.has_parent = true;
    d.contract = parent->contract;
    d.origin = (uint16_t)by;
    memcpy(d.form, parent->form, sizeof(d.form));
    d.scope = cs;
    d.issued_ms = now_ms;
    d.expires_ms = cexp;
    d.turns_left = cturns;
    mnc_set_add(&d.holders, (unsigned)by);

    /* Keep only the parent's values that are still authorised. */
    mnc_set carried;
    mnc_set_clear(&carried);
    for (int i = 0; i < parent->n_values; i++)
        if (mnc_set_has(&cs.fields, parent->values[i].field))
            mnc_set_add(&carried, parent->values[i].field);
    if (mnc_set_empty(&carried))
        return MNC_R_INVALID; /* a derived object must carry something */
    r = take_values(&d, &carried, object_get, parent);
    if (r != MNC_OK)
        return r;
    *out = d;
    return MNC_OK;
}

/* ---- contract-boundary assembly */

static const mnc_form *find_form(const mnc_policy *p, const mnc_disclosure *d)
{
    if (d->contract >= p->n_contracts)
        return NULL;
    int fam = p->contracts[d->contract].family;
    if (fam < 0 || fam >= p->n_families)
        return NULL;
    const mnc_family *f = &p->families[fam];
    for (int i = 0; i < f->n_forms; i++)
        if (strcmp(f->forms[i].name, d->form) == 0)
            return &f->forms[i];
    return NULL;
}

typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

char *mnc_disclosure_render(const mnc_policy *p, const mnc_disclosure *d)
{
    sbuf b = {0};
    const mnc_form *form = find_form(p, d);
    const char *t = form ? form->tmpl : NULL;
    if (!t || !*t) {
        for (int i = 0; i < d->n_values; i++) {
            if (i)
                sb_str(&b, "\n");
            sb_str(&b, p->fields[d->values[i].field].name);
            sb_str(&b, "=");
            sb_str(&b, d->values[i].value);
        }
        if (!b.s)
            sb_str(&b, "");
    } else {
        /* Only authorised values are ever substituted; a placeholder for a field the object
         * does not carry (e.g. dropped by derive) renders as [withheld]. */
        while (*t) {
            if (t[0] == '{' && t[1] == '{') {
                sb_str(&b, "{");
                t += 2;
            } else if (t[0] == '}' && t[1] == '}') {
                sb_str(&b, "}");
                t += 2;
            } else if (t[0] == '{') {
                const char *end = strchr(t, '}');
                if (!end) {
                    sb_str(&b, t);
                    break;
                }
                char name[MNC_NAME_MAX];
                size_t n = (size_t)(end - t - 1);
                const char *v = NULL;
                if (n < sizeof(name)) {
                    memcpy(name, t + 1, n);
                    name[n] = '\0';
                    int f = mnc_policy_field(p, name);
                    if (f >= 0 && mnc_set_has(&d->scope.fields, (unsigned)f))
                        v = mnc_disclosure_value(d, f);
                }
                sb_str(&b, v ? v : "[withheld]");
                t = end + 1;
            } else {
                const char *next = strpbrk(t, "{}");
                size_t n = next ? (size_t)(next - t) : strlen(t);
                if (n == 0) { /* a lone '}' */
                    n = 1;
                }
                sb_put(&b, t, n);
                t += n;
            }
        }
        if (!b.s)
            sb_str(&b, "");
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- JSON */

static cJSON *set_to_json(const mnc_set *s, const char *(*name)(const mnc_policy *, int), const mnc_policy *p)
{
    cJSON *a = cJSON_CreateArray();
    if (!a)
        return NULL;
    for (int i = mnc_set_next(s, -1); i >= 0; i = mnc_set_next(s, i)) {
        cJSON *str = cJSON_CreateString(name(p, i));
        if (!str) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, str);
    }
    return a;
}

static const char *principal_name(const mnc_policy *p, int i)
{
    return i < p->n_principals ? p->principals[i].name : "?";
}

static const char *field_name(const mnc_policy *p, int i) { return i < p->n_fields ? p->fields[i].name : "?"; }

cJSON *mnc_disclosure_to_json(const mnc_policy *p, const mnc_disclosure *d)
{
    char hex[MNC_OID_HEX];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool ok = true;
    mnc_oid_hex(&d->id, hex);
    ok &= cJSON_AddStringToObject(o, "id", hex) != NULL;
    if (d->has_parent) {
        mnc_oid_hex(&d->parent, hex);
        ok &= cJSON_AddStringToObject(o, "parent", hex) != NULL;
    }
    const mnc_contract *c = d->contract < p->n_contracts ? &p->contracts[d->contract] : NULL;
    ok &= cJSON_AddStringToObject(o, "contract", c ? c->id : "?") != NULL;
    ok &= cJSON_AddStringToObject(o, "purpose", c ? c->purpose : "?") != NULL;
    ok &= cJSON_AddStringToObject(o, "origin", principal_name(p, d->origin)) != NULL;
    ok &= cJSON_AddStringToObject(o, "form", d->form) != NULL;

    cJSON *sc = cJSON_AddObjectToObject(o, "scope");
    ok &= sc != NULL;
    if (sc) {
        ok &= cJSON_AddStringToObject(sc, "recipient", principal_name(p, d->scope.recipient)) != NULL;
        cJSON *f = set_to_json(&d->scope.fields, field_name, p);
        cJSON *s = set_to_json(&d->scope.sinks, principal_name, p);
        ok &= f && s;
        if (f)
            cJSON_AddItemToObject(sc, "fields", f);
        if (s)
            cJSON_AddItemToObject(sc, "sinks", s);
        cJSON *life = cJSON_AddObjectToObject(sc, "lifetime");
        ok &= life != NULL;
        if (life) {
            ok &= cJSON_AddNumberToObject(life, "seconds", (double)d->scope.life.seconds) != NULL;
            ok &= cJSON_AddNumberToObject(life, "turns", (double)d->scope.life.turns) != NULL;
        }
        ok &= cJSON_AddBoolToObject(sc, "memory", d->scope.memory) != NULL;
    }
    ok &= cJSON_AddNumberToObject(o, "issued_ms", (double)d->issued_ms) != NULL;
    ok &= cJSON_AddNumberToObject(o, "expires_ms", (double)d->expires_ms) != NULL;
    if (d->turns_left == MNC_TURNS_UNBOUNDED)
        ok &= cJSON_AddNullToObject(o, "turns_left") != NULL;
    else
        ok &= cJSON_AddNumberToObject(o, "turns_left", (double)d->turns_left) != NULL;
    cJSON *h = set_to_json(&d->holders, principal_name, p);
    ok &= h != NULL;
    if (h)
        cJSON_AddItemToObject(o, "holders", h);
    ok &= cJSON_AddBoolToObject(o, "revoked", d->revoked) != NULL;
    cJSON *vals = cJSON_AddObjectToObject(o, "values");
    ok &= vals != NULL;
    for (int i = 0; vals && i < d->n_values; i++)
        ok &= cJSON_AddStringToObject(vals, field_name(p, d->values[i].field), d->values[i].value) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int set_write(mnc_jbuf *b, const mnc_set *s, const char *(*name)(const mnc_policy *, int), const mnc_policy *p)
{
    int rc = MNC_JBUF_LIT(b, "[");
    bool first = true;
    for (int i = mnc_set_next(s, -1); rc == 0 && i >= 0; i = mnc_set_next(s, i)) {
        if (!first)
            rc = MNC_JBUF_LIT(b, ",");
        first = false;
        rc = rc ? rc : mnc_jbuf_str(b, name(p, i));
    }
    return rc ? rc : MNC_JBUF_LIT(b, "]");
}

/* The same members in the same order as mnc_disclosure_to_json, written as mnc_json_print
 * prints them: keys are these literals (no byte of them is escaped), values through the
 * writers that print cJSON's text for a string, number or boolean item. */
int mnc_disclosure_write_json(mnc_jbuf *b, const mnc_policy *p, const mnc_disclosure *d)
{
    size_t len0 = b->len;
    char hex[MNC_OID_HEX];
    const mnc_contract *c = d->contract < p->n_contracts ? &p->contracts[d->contract] : NULL;
    int rc = MNC_JBUF_LIT(b, "{\"id\":");
    mnc_oid_hex(&d->id, hex);
    rc = rc ? rc : mnc_jbuf_str(b, hex);
    if (rc == 0 && d->has_parent) {
        mnc_oid_hex(&d->parent, hex);
        rc = MNC_JBUF_LIT(b, ",\"parent\":");
        rc = rc ? rc : mnc_jbuf_str(b, hex);
    }
#define W(x) rc = rc ? rc : (x)
    W(MNC_JBUF_LIT(b, ",\"contract\":"));
    W(mnc_jbuf_str(b, c ? c->id : "?"));
    W(MNC_JBUF_LIT(b, ",\"purpose\":"));
    W(mnc_jbuf_str(b, c ? c->purpose : "?"));
    W(MNC_JBUF_LIT(b, ",\"origin\":"));
    W(mnc_jbuf_str(b, principal_name(p, d->origin)));
    W(MNC_JBUF_LIT(b, ",\"form\":"));
    W(mnc_jbuf_str(b, d->form));
    W(MNC_JBUF_LIT(b, ",\"scope\":{\"recipient\":"));
    W(mnc_jbuf_str(b, principal_name(p, d->scope.recipient)));
    W(MNC_JBUF_LIT(b, ",\"fields\":"));
    W(set_write(b, &d->scope.fields, field_name, p));
    W(MNC_JBUF_LIT(b, ",\"sinks\":"));
    W(set_write(b, &d->scope.sinks, principal_name, p));
    W(MNC_JBUF_LIT(b, ",\"lifetime\":{\"seconds\":"));
    W(mnc_jbuf_num(b, (double)d->scope.life.seconds));
    W(MNC_JBUF_LIT(b, ",\"turns\":"));
    W(mnc_jbuf_num(b, (double)d->scope.life.turns));
    W(d->scope.memory ? MNC_JBUF_LIT(b, "},\"memory\":true}") : MNC_JBUF_LIT(b, "},\"memory\":false}"));
    W(MNC_JBUF_LIT(b, ",\"issued_ms\":"));
    W(mnc_jbuf_num(b, (double)d->issued_ms));
    W(MNC_JBUF_LIT(b, ",\"expires_ms\":"));
    W(mnc_jbuf_num(b, (double)d->expires_ms));
    W(MNC_JBUF_LIT(b, ",\"turns_left\":"));
    W(d->turns_left == MNC_TURNS_UNBOUNDED ? MNC_JBUF_LIT(b, "null") : mnc_jbuf_num(b, (double)d->turns_left));
    W(MNC_JBUF_LIT(b, ",\"holders\":"));
    W(set_write(b, &d->holders, principal_name, p));
    W(d->revoked ? MNC_JBUF_LIT(b, ",\"revoked\":true,\"values\":{")
                 : MNC_JBUF_LIT(b, ",\"revoked\":false,\"values\":{"));
    for (int i = 0; rc == 0 && i < d->n_values; i++) {
        if (i)
            W(MNC_JBUF_LIT(b, ","));
        W(mnc_jbuf_str(b, field_name(p, d->values[i].field)));
        W(MNC_JBUF_LIT(b, ":"));
        W(mnc_jbuf_str(b, d->values[i].value));
    }
    W(MNC_JBUF_LIT(b, "}}"));
#undef W
    if (rc != 0)
        b->len = len0;
    return rc ? -1 : 0;
}

/* Strict readers: each returns 0 or -1 after recording "where.key: message". */

static int only_keys(const cJSON *o, const char *const *keys, const char *where, mnc_errors *e)
{
    int bad = 0;
    for (const cJSON *it = o->child; it; it = it->next) {
        bool known = false;
        for (int i = 0; keys[i]; i++)
            if (it->string && strcmp(it->string, keys[i]) == 0)
                known = true;
        if (!known) {
            mnc_errors_add(e, "%s.%s: unknown key", where, it->string ? it->string : "?");
            bad = -1;
        }
    }
    return bad;
}

static const cJSON *need(const cJSON *o, const char *key, const char *where, mnc_errors *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        mnc_errors_add(e, "%s.%s: missing", where, key);
    return v;
}

static int get_str(const cJSON *o, const char *key, const char *where, mnc_errors *e, const char **out)
{
    const cJSON *v = need(o, key, where, e);
    if (!v)
        return -1;
    if (!cJSON_IsString(v)) {
        mnc_errors_add(e, "%s.%s: expected a string", where, key);
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

static int get_u64(const cJSON *o, const char *key, const char *where, mnc_errors *e, uint64_t max, uint64_t *out)
{
    const cJSON *v = need(o, key, where, e);
    if (!v)
        return -1;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > (double)max ||
        v->valuedouble != floor(v->valuedouble) || v->valuedouble > 9007199254740992.0) {
        mnc_errors_add(e, "%s.%s: expected an integer in 0..%llu", where, key, (unsigned long long)max);
        return -1;
    }
    *out = (uint64_t)v->valuedouble;
    return 0;
}

static int get_bool(const cJSON *o, const char *key, const char *where, mnc_errors *e, bool *out)
{
    const cJSON *v = need(o, key, where, e);
    if (!v)
        return -1;
    if (!cJSON_IsBool(v)) {
        mnc_errors_add(e, "%s.%s: expected a boolean", where, key);
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

static int get_set(const mnc_policy *p, const cJSON *o, const char *key, const char *where, mnc_errors *e, bool fields,
                   mnc_set *out)
{
    const cJSON *v = need(o, key, where, e);
    if (!v)
        return -1;
    if (!cJSON_IsArray(v)) {
        mnc_errors_add(e, "%s.%s: expected an array", where, key);
        return -1;
    }
    mnc_set_clear(out);
    int i = 0, rc = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        int id = cJSON_IsString(it)
                     ? (fields ? mnc_policy_field(p, it->valuestring) : mnc_policy_principal(p, it->valuestring))
                     : -1;
        if (id < 0) {
            mnc_errors_add(e, "%s.%s[%d]: unknown %s", where, key, i, fields ? "field" : "principal");
            rc = -1;
        } else {
            mnc_set_add(out, (unsigned)id);
        }
    }
    return rc;
}

/* Every object that issue() or derive() can produce lies inside its contract: scope ⊆ the
 * contract's scope, expiry no later than issue time + the contract's seconds, turns no more than
 * the contract's, holders are agents and include the origin, and a root object's origin is one
 * of the contract's issuers. A JSON object is data from a file or a peer (the daemon's journal,
 * `mncctl check`), so a tampered or stale copy must not come back wider than anything the
 * library would have issued: such an object is refused, never clamped (fail closed). */
static int within_contract(const mnc_policy *p, int c, const mnc_disclosure *d, mnc_errors *e)
{
    const char *w = "object";
    if (c < 0 || c >= p->n_contracts)
        return -1;
    const mnc_contract *k = &p->contracts[c];
    const mnc_scope *cs = &k->scope;
    int rc = 0;
    if (d->scope.recipient != cs->recipient) {
        mnc_errors_add(e, "%s.scope.recipient: not the contract's recipient", w);
        rc = -1;
    }
    if (!mnc_set_subset(&d->scope.fields, &cs->fields)) {
        mnc_errors_add(e, "%s.scope.fields: wider than the contract's fields", w);
        rc = -1;
    }
    if (!mnc_set_subset(&d->scope.sinks, &cs->sinks)) {
        mnc_errors_add(e, "%s.scope.sinks: wider than the contract's sinks", w);
        rc = -1;
    }
    if (d->scope.memory && !cs->memory) {
        mnc_errors_add(e, "%s.scope.memory: the contract does not allow memory", w);
        rc = -1;
    }
    /* Time: a bounded contract never yields an unbounded copy. A root object's deadline is
     * exactly issue time + the contract's seconds; a derived object's is bounded by its
     * parent's, which is not in the JSON, and its issue time is the (wall) clock at derive, which
     * may have stepped back, so only boundedness is checked for it. */
    if (cs->life.seconds && (!d->expires_ms || !d->scope.life.seconds ||
                             (!d->has_parent && (d->expires_ms > deadline(d->issued_ms, cs->life.seconds) ||
                                                 d->scope.life.seconds != cs->life.seconds)))) {
        mnc_errors_add(e, "%s.expires_ms: later than the contract's lifetime allows", w);
        rc = -1;
    }
    /* Turns are anchored by the policy alone: never more than the contract's. */
    if (cs->life.turns && (d->turns_left == MNC_TURNS_UNBOUNDED || d->turns_left > cs->life.turns ||
                           !d->scope.life.turns || d->scope.life.turns > cs->life.turns)) {
        mnc_errors_add(e, "%s.turns_left: more turns than the contract allows", w);
        rc = -1;
    }
    for (int h = mnc_set_next(&d->holders, -1); h >= 0; h = mnc_set_next(&d->holders, h))
        if (h >= p->n_principals || p->principals[h].cls != MNC_SINK_AGENT) {
            mnc_errors_add(e, "%s.holders: %s is not an agent", w, h < p->n_principals ? p->principals[h].name : "?");
            rc = -1;
        }
    if (!mnc_set_has(&d->holders, d->origin)) {
        mnc_errors_add(e, "%s.holders: the origin does not hold the object", w);
        rc = -1;
    }
    if (!d->has_parent && !mnc_set_has(&k->issuers, d->origin)) {
        mnc_errors_add(e, "%s.origin: not an issuer of contract %s", w, k->id);
        rc = -1;
    }
    return rc;
}

int mnc_disclosure_from_json(const mnc_policy *p, const cJSON *j, mnc_disclosure *out, mnc_errors *e)
{
    static const char *const top[] = {"id",        "parent",     "contract",   "purpose", "origin",  "form",   "scope",
                                      "issued_ms", "expires_ms", "turns_left", "holders", "revoked", "values", NULL};
    static const char *const scope_keys[] = {"recipient", "fields", "sinks", "lifetime", "memory", NULL};
    static const char *const life_keys[] = {"seconds", "turns", NULL};
    const char *w = "object";
    if (!cJSON_IsObject(j)) {
        mnc_errors_add(e, "%s: expected an object", w);
        return -1;
    }
    mnc_disclosure d;
    memset(&d, 0, sizeof(d));
    int rc = only_keys(j, top, w, e);
    const char *s;

    if (get_str(j, "id", w, e, &s) == 0 && mnc_oid_parse(s, &d.id) != 0) {
        mnc_errors_add(e, "%s.id: expected 32 hex digits", w);
        rc = -1;
    }
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(j, "parent");
    if (par) {
        if (!cJSON_IsString(par) || mnc_oid_parse(par->valuestring, &d.parent) != 0) {
            mnc_errors_add(e, "%s.parent: expected 32 hex digits", w);
            rc = -1;
        }
        d.has_parent = true;
    }
    int c = -1;
    if (get_str(j, "contract", w, e, &s) == 0 && (c = mnc_policy_contract(p, s)) < 0) {
        mnc_errors_add(e, "%s.contract: unknown contract \"%s\"", w, s);
        rc = -1;
    }
    d.contract = c >= 0 ? (uint16_t)c : 0;
    if (get_str(j, "purpose", w, e, &s) == 0 && c >= 0 && strcmp(s, p->contracts[c].purpose) != 0) {
        mnc_errors_add(e, "%s.purpose: \"%s\" does not match the contract's purpose", w, s);
        rc = -1;
    }
    int origin = -1;
    if (get_str(j, "origin", w, e, &s) == 0 && (origin = mnc_policy_agent(p, s)) < 0) {
        mnc_errors_add(e, "%s.origin: unknown agent \"%s\"", w, s);
        rc = -1;
    }
    d.origin = origin >= 0 ? (uint16_t)origin : 0;
    if (get_str(j, "form", w, e, &s) == 0) {
        if (strlen(s) >= sizeof(d.form)) {
            mnc_errors_add(e, "%s.form: too long", w);
            rc = -1;
        } else {
            memcpy(d.form, s, strlen(s) + 1);
        }
    }

    const cJSON *sc = need(j, "scope", w, e);
    if (sc && !cJSON_IsObject(sc)) {
        mnc_errors_add(e, "%s.scope: expected an object", w);
        rc = -1;
    } else if (sc) {
        const char *ws = "object.scope";
        rc |= only_keys(sc, scope_keys, ws, e);
        int r = -1;
        if (get_str(sc, "recipient", ws, e, &s) == 0 && (r = mnc_policy_agent(p, s)) < 0) {
            mnc_errors_add(e, "%s.recipient: unknown agent \"%s\"", ws, s);
            rc = -1;
        }
        d.scope.recipient = r >= 0 ? (uint16_t)r : 0;
        rc |= get_set(p, sc, "fields", ws, e, true, &d.scope.fields);
        rc |= get_set(p, sc, "sinks", ws, e, false, &d.scope.sinks);
        rc |= get_bool(sc, "memory", ws, e, &d.scope.memory);
        const cJSON *life = need(sc, "lifetime", ws, e);
        if (life && !cJSON_IsObject(life)) {
            mnc_errors_add(e, "%s.lifetime: expected an object", ws);
            rc = -1;
        } else if (life) {
            uint64_t t = 0;
            rc |= only_keys(life, life_keys, "object.scope.lifetime", e);
            rc |= get_u64(life, "seconds", "object.scope.lifetime", e, UINT32_MAX * 1000ULL, &d.scope.life.seconds);
            rc |= get_u64(life, "turns", "object.scope.lifetime", e, UINT32_MAX - 1, &t);
            d.scope.life.turns = (uint32_t)t;
        }
    } else {
        rc = -1;
    }
    rc |= get_u64(j, "issued_ms", w, e, UINT64_MAX, &d.issued_ms);
    rc |= get_u64(j, "expires_ms", w, e, UINT64_MAX, &d.expires_ms);
    const cJSON *tl = need(j, "turns_left", w, e);
    if (tl && cJSON_IsNull(tl)) {
        d.turns_left = MNC_TURNS_UNBOUNDED;
    } else if (tl) {
        uint64_t t = 0;
        rc |= get_u64(j, "turns_left", w, e, UINT32_MAX - 1, &t);
        d.turns_left = (uint32_t)t;
    } else {
        rc = -1;
    }
    rc |= get_set(p, j, "holders", w, e, false, &d.holders);
    rc |= get_bool(j, "revoked", w, e, &d.revoked);

    if (rc == 0)
        rc = within_contract(p, c, &d, e);

    const cJSON *vals = need(j, "values", w, e);
    if (vals && !cJSON_IsObject(vals)) {
        mnc_errors_add(e, "%s.values: expected an object", w);
        rc = -1;
    } else if (vals && rc == 0) {
        /* Values are stored sorted by field id, like issue() does, so a round trip is exact. */
        mnc_state tmp;
        mnc_state_init(&tmp);
        mnc_set carried;
        mnc_set_clear(&carried);
        for (const cJSON *it = vals->child; it; it = it->next) {
            int f = it->string ? mnc_policy_field(p, it->string) : -1;
            if (f < 0 || !cJSON_IsString(it) || mnc_set_has(&carried, (unsigned)f)) {
                mnc_errors_add(e, "%s.values.%s: unknown, duplicate or non-string field", w,
                               it->string ? it->string : "?");
                rc = -1;
                continue;
            }
            if (mnc_state_set(&tmp, f, it->valuestring) != 0) {
                mnc_errors_add(e, "%s.values: out of memory", w);
                rc = -1;
                break;
            }
            mnc_set_add(&carried, (unsigned)f);
        }
        if (rc == 0 && !mnc_set_subset(&carried, &d.scope.fields)) {
            mnc_errors_add(e, "%s.values: carries fields outside scope.fields", w);
            rc = -1;
        }
        if (rc == 0 && take_values(&d, &carried, state_get, &tmp) != MNC_OK) {
            mnc_errors_add(e, "%s.values: out of memory", w);
            rc = -1;
        }
        mnc_state_free(&tmp);
    }
    if (rc != 0) {
        mnc_disclosure_free(&d);
        return -1;
    }
    *out = d;
    return 0;
}
