// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* jtree.c - plain JSON to cJSON's tree in one pass (contract: jtree.h). cJSON reads a string
 * twice (length, then copy) through per-byte helpers; a disclose's ~250-byte line cost ~8.6k
 * instructions. Here each string is measured once with memchr-like loops and copied. */
#include "jtree.h"

#include <stdbool.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct rd {
    const char *p, *end;
} rd;

static void skip_ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n'))
        r->p++;
}

/* A plain string at r->p ('"' checked by the caller) as a fresh NUL-terminated copy. */
static char *plain_str(rd *r)
{
    const char *s = r->p + 1, *q = s;
    while (q < r->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20 || c == '\\')
            return NULL;
        q++;
    }
    if (q >= r->end)
        return NULL;
    size_t n = (size_t)(q - s);
    char *out = cJSON_malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, s, n);
    out[n] = '\0';
    r->p = q + 1;
    return out;
}

static bool lit(rd *r, const char *w, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0)
        return false;
    r->p += n;
    return true;
}

static cJSON *value(rd *r, int depth);

/* Appends it to parent's children (tail kept in *last); cJSON's list links. */
static void link_child(cJSON *parent, cJSON **last, cJSON *it)
{
    if (!*last) {
        parent->child = it;
    } else {
        (*last)->next = it;
        it->prev = *last;
    }
    *last = it;
}

/* An object or an array at r->p ('{' or '['). */
static cJSON *container(rd *r, int depth, bool obj)
{
    if (depth >= MAX_DEPTH)
        return NULL;
    cJSON *it = obj ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!it)
        return NULL;
    cJSON *last = NULL;
    char close = obj ? '}' : ']';
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return it;
    }
    for (;;) {
        char *key = NULL;
        if (obj) {
            skip_ws(r);
            if (r->p >= r->end || *r->p != '"' || !(key = plain_str(r)))
                goto fail;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') {
                cJSON_free(key);
                goto fail;
            }
            r->p++;
        }
        skip_ws(r);
        cJSON *v = value(r, depth + 1);
        if (!v) {
            cJSON_free(key);
            goto fail;
        }
        v->string = key;
        link_child(it, &last, v);
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            break;
        }
        goto fail;
    }
    it->child->prev = last; /* cJSON 1.7.15: the first child's prev is the last */
    return it;
fail:
    cJSON_Delete(it);
    return NULL;
}

static cJSON *value(rd *r, int depth)
{
    if (r->p >= r->end)
        return NULL;
    switch (*r->p) {
    case '{':
        return container(r, depth, true);
    case '[':
        return container(r, depth, false);
    case '"': {
        char *s = plain_str(r);
        cJSON *it = s ? cJSON_CreateStringReference("") : NULL;
        if (!it) {
            cJSON_free(s);
            return NULL;
        }
        it->type = cJSON_String; /* not a reference: it owns s */
        it->valuestring = s;
        return it;
    }
    case 't':
        if (lit(r, "true", 4)) {
            cJSON *it = cJSON_CreateTrue();
            if (it)
                it->valueint = 1; /* as cJSON's parser sets it */
            return it;
        }
        return NULL;
    case 'f':
        return lit(r, "false", 5) ? cJSON_CreateFalse() : NULL;
    case 'n':
        return lit(r, "null", 4) ? cJSON_CreateNull() : NULL;
    default:
        return NULL; /* numbers and anything else: cJSON */
    }
}

cJSON *mnc_jtree_parse(const char *s, size_t len, const char **end)
{
    rd r = {s, s + len};
    skip_ws(&r);
    if (r.p >= r.end || *r.p != '{')
        return NULL;
    cJSON *root = container(&r, 0, true);
    if (root && end)
        *end = r.p;
    return root;
}
