// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* wsrec.c - the enforcer's binary records in trusted.* extended attributes (wsrec.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wsrec.h"

/* ---- layouts (little endian) */
#define WS_MAGIC "MNCw"
#define WS_VERSION 2
#define WS_HDR 88 /* magic 4, version 1, flags 1, n_obj 1, pad 1, n_sinks 2, pad 2, pad 4, time 8, agent 64 */
#define WS_F_TAINTED 0x01u
#define WS_F_LOG 0x02u
#define WS_F_MEMORY 0x04u
#define WS_F_FORWARD 0x08u
#define WS_F_EXTERNAL 0x10u
#define WS_F_NARROWED 0x20u
#define WS_F_ALL 0x3fu
#define REG_MAGIC "MNCr"
#define REG_VERSION 1
#define REG_HDR 12 /* magic 4, version 1, flags 1, n_ws 1, pad 1, uid 4 */
#define REG_F_KNOWN 0x01u
#define REG_F_ROOT 0x02u

_Static_assert(WS_HDR + WSREC_MAX_OBJECTS * 16 < WSREC_MAX, "a record without sinks always fits");

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

static bool has(const uint64_t *s, int i) { return (s[i / 64] >> (i % 64)) & 1u; }

static bool zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* A name field: [A-Za-z0-9_.:-]{1,63}, then NULs (empty allowed when may_be_empty). */
static bool name_ok(const uint8_t *f, bool may_be_empty)
{
    size_t l = 0;
    while (l < WSREC_NAME && f[l])
        l++;
    if (l == WSREC_NAME || (!l && !may_be_empty) || !zero(f + l, WSREC_NAME - l))
        return false;
    for (size_t i = 0; i < l; i++) {
        uint8_t c = f[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return false;
    }
    return true;
}

static int count_sinks(const wsrec *t, const wsrec_names *nm)
{
    int n = 0;
    for (int i = 0; i < nm->n && i < WSREC_MAX_SINKS; i++)
        n += has(t->sinks, i);
    return n;
}

int wsrec_encode(const wsrec *t, const wsrec_names *nm, uint8_t *out, size_t cap)
{
    if (!t->tainted || cap < WSREC_MAX)
        return -EINVAL;
    int first = 0, ns = count_sinks(t, nm);
    /* too long: the oldest objects go first (informational), then sink names (tighter) */
    while (WS_HDR + (size_t)(t->n_obj - first) * 16 + (size_t)ns * WSREC_NAME > WSREC_MAX)
        if (first < t->n_obj)
            first++;
        else
            ns--;
    bool narrowed = t->narrowed || ns < count_sinks(t, nm);
    memset(out, 0, WS_HDR);
    memcpy(out, WS_MAGIC, 4);
    out[4] = WS_VERSION;
    out[5] = (uint8_t)(WS_F_TAINTED | (t->may_log ? WS_F_LOG : 0) | (t->may_memory ? WS_F_MEMORY : 0) |
                       (t->may_forward ? WS_F_FORWARD : 0) | (t->may_external ? WS_F_EXTERNAL : 0) |
                       (narrowed ? WS_F_NARROWED : 0));
    out[6] = (uint8_t)(t->n_obj - first);
    put16(out + 8, (uint16_t)ns);
    put64(out + 16, t->time_ms);
    for (size_t i = 0; i < WSREC_NAME - 1 && t->agent[i]; i++)
        out[24 + i] = (uint8_t)t->agent[i];
    size_t o = WS_HDR;
    for (int i = first; i < t->n_obj; i++, o += 16)
        memcpy(out + o, t->obj[i], 16);
    for (int i = 0, k = 0; i < nm->n && i < WSREC_MAX_SINKS && k < ns; i++) {
        if (!has(t->sinks, i))
            continue;
        memset(out + o, 0, WSREC_NAME);
        memcpy(out + o, nm->name[i], strnlen(nm->name[i], WSREC_NAME - 1));
        o += WSREC_NAME;
        k++;
    }
    return (int)o;
}

int wsrec_decode(const uint8_t *v, size_t len, const wsrec_names *nm, wsrec *t)
{
    memset(t, 0, sizeof(*t));
    if (len >= 1 && v[0] == '{') { /* mncd before the split: the tightest taint, unparsed */
        t->tainted = t->legacy = t->narrowed = true;
        return 0;
    }
    if (len < WS_HDR || memcmp(v, WS_MAGIC, 4) != 0 || v[4] != WS_VERSION || (v[5] & ~WS_F_ALL) ||
        !(v[5] & WS_F_TAINTED) || v[6] > WSREC_MAX_OBJECTS || v[7] || get16(v + 10) || get32(v + 12) ||
        !name_ok(v + 24, true))
        return -EBADMSG;
    size_t n_obj = v[6], ns = get16(v + 8);
    if (ns > WSREC_MAX_SINKS || len != WS_HDR + n_obj * 16 + ns * WSREC_NAME)
        return -EBADMSG;
    t->tainted = true;
    t->may_log = v[5] & WS_F_LOG;
    t->may_memory = v[5] & WS_F_MEMORY;
    t->may_forward = v[5] & WS_F_FORWARD;
    t->may_external = v[5] & WS_F_EXTERNAL;
    t->narrowed = v[5] & WS_F_NARROWED;
    t->time_ms = get64(v + 16);
    memcpy(t->agent, v + 24, WSREC_NAME);
    const uint8_t *p = v + WS_HDR;
    for (size_t i = 0; i < n_obj; i++, p += 16)
        wsrec_add_object(t, p);
    for (size_t i = 0; i < ns; i++, p += WSREC_NAME) {
        if (!name_ok(p, false)) {
            memset(t, 0, sizeof(*t));
            return -EBADMSG;
        }
        if (!nm)
            continue; /* shown as stored (wsrec_sink_names), not mapped */
        int id = -1;
        for (int k = 0; k < nm->n && k < WSREC_MAX_SINKS && id < 0; k++)
            if (strncmp((const char *)p, nm->name[k], WSREC_NAME) == 0)
                id = k;
        if (id >= 0)
            t->sinks[id / 64] |= 1ull << (id % 64);
        else
            t->narrowed = true; /* a name the policy no longer has: dropped (tighter) */
    }
    return 0;
}

int wsrec_sink_names(const uint8_t *v, size_t len, const char **names, int max)
{
    if (len < WS_HDR || v[0] == '{')
        return 0;
    size_t ns = get16(v + 8), at = WS_HDR + (size_t)v[6] * 16;
    int k = 0;
    for (size_t i = 0; i < ns && k < max && at + (i + 1) * WSREC_NAME <= len; i++)
        names[k++] = (const char *)v + at + i * WSREC_NAME;
    return k;
}

void wsrec_add_object(wsrec *t, const uint8_t id[16])
{
    for (int i = 0; i < t->n_obj; i++)
        if (memcmp(t->obj[i], id, 16) == 0)
            return;
    if (t->n_obj == WSREC_MAX_OBJECTS) {
        memmove(t->obj[0], t->obj[1], sizeof(t->obj[0]) * (WSREC_MAX_OBJECTS - 1));
        t->n_obj--;
    }
    memcpy(t->obj[t->n_obj++], id, 16);
}

void wsrec_merge(wsrec *a, const wsrec *b)
{
    for (int i = 0; i < b->n_obj; i++)
        wsrec_add_object(a, b->obj[i]);
    if (!b->tainted)
        return;
    if (!a->tainted) {
        memcpy(a->sinks, b->sinks, sizeof(a->sinks));
        a->may_log = b->may_log;
        a->may_memory = b->may_memory;
        a->may_forward = b->may_forward;
        a->may_external = b->may_external;
    } else {
        for (int i = 0; i < WSREC_MAX_SINKS / 64; i++)
            a->sinks[i] &= b->sinks[i];
        a->may_log = a->may_log && b->may_log;
        a->may_memory = a->may_memory && b->may_memory;
        a->may_forward = a->may_forward && b->may_forward;
        a->may_external = a->may_external && b->may_external;
    }
    a->tainted = true;
    a->narrowed = a->narrowed || b->narrowed;
    a->legacy = a->legacy || b->legacy;
    if (b->agent[0])
        memcpy(a->agent, b->agent, sizeof(a->agent));
    if (b->time_ms > a->time_ms)
        a->time_ms = b->time_ms;
}

void wsrec_describe(const wsrec *t, const wsrec_names *nm, char *out, size_t n)
{
    size_t l = 0;
    out[0] = 0;
#define PUT(...)                                                                                                       \
    do {                                                                                                               \
        if (l < n) {                                                                                                   \
            int w_ = snprintf(out + l, n - l, __VA_ARGS__);                                                            \
            l = w_ < 0 ? n : l + (size_t)w_;                                                                           \
        }                                                                                                              \
    } while (0)
    PUT("objects");
    for (int i = 0; i < t->n_obj; i++) {
        PUT("%s", i ? ", " : " ");
        for (int k = 0; k < 16; k++)
            PUT("%02x", t->obj[i][k]);
    }
    if (!t->n_obj)
        PUT(" (none recorded)");
    PUT("; sinks");
    int ns = 0;
    for (int i = 0; i < nm->n && i < WSREC_MAX_SINKS; i++)
        if (has(t->sinks, i))
            PUT("%s%.63s", ns++ ? ", " : " ", nm->name[i]);
    if (!ns)
        PUT(" (none)");
    PUT("; may_log %d may_memory %d may_forward %d may_external %d", t->may_log, t->may_memory, t->may_forward,
        t->may_external);
    if (t->agent[0])
        PUT("; tainted by %.63s", t->agent);
    if (t->legacy)
        PUT("; a record of mncd before its split, read as the tightest taint");
#undef PUT
    if (l >= n && n > 4)
        memcpy(out + n - 4, "...", 4);
}

bool wsrec_within(const char *a, const char *b)
{
    size_t lb = strlen(b);
    if (lb == 1 && b[0] == '/')
        return a[0] == '/';
    return strncmp(a, b, lb) == 0 && (a[lb] == 0 || a[lb] == '/');
}

bool wsrec_overlap(const char *a, const char *b) { return wsrec_within(a, b) || wsrec_within(b, a); }

/* ---- registration facts */

int regrec_encode(const regrec *r, uint8_t *out, size_t cap)
{
    if (r->n_ws < 0 || r->n_ws > REGREC_MAX_WS || (r->root && r->known && r->uid))
        return -EINVAL;
    size_t need = REG_HDR;
    for (int i = 0; i < r->n_ws; i++) {
        size_t l = strlen(r->ws[i]);
        if (!l || l >= REGREC_PATH_MAX || r->ws[i][0] != '/')
            return -EINVAL;
        need += 2 + l;
    }
    if (need > cap)
        return -E2BIG;
    memcpy(out, REG_MAGIC, 4);
    out[4] = REG_VERSION;
    out[5] = (uint8_t)((r->known ? REG_F_KNOWN : 0) | (r->root ? REG_F_ROOT : 0));
    out[6] = (uint8_t)r->n_ws;
    out[7] = 0;
    put32(out + 8, r->known ? r->uid : 0);
    size_t o = REG_HDR;
    for (int i = 0; i < r->n_ws; i++) {
        size_t l = strlen(r->ws[i]);
        put16(out + o, (uint16_t)l);
        memcpy(out + o + 2, r->ws[i], l);
        o += 2 + l;
    }
    return (int)o;
}

int regrec_decode(const uint8_t *v, size_t len, regrec *r)
{
    memset(r, 0, sizeof(*r));
    if (len < REG_HDR || memcmp(v, REG_MAGIC, 4) != 0 || v[4] != REG_VERSION || (v[5] & ~(REG_F_KNOWN | REG_F_ROOT)) ||
        v[6] > REGREC_MAX_WS || v[7])
        return -EBADMSG;
    r->known = v[5] & REG_F_KNOWN;
    r->root = v[5] & REG_F_ROOT;
    r->uid = get32(v + 8);
    if ((!r->known && r->uid) || (r->root && r->uid))
        goto bad;
    size_t o = REG_HDR;
    for (int i = 0; i < v[6]; i++) {
        if (len - o < 2)
            goto bad;
        size_t l = get16(v + o);
        if (!l || l >= REGREC_PATH_MAX || len - o - 2 < l || v[o + 2] != '/' || memchr(v + o + 2, 0, l))
            goto bad;
        r->ws[i] = (const char *)v + o + 2;
        r->ws_len[i] = (uint16_t)l;
        o += 2 + l;
    }
    r->n_ws = v[6];
    if (o == len)
        return 0;
bad:
    memset(r, 0, sizeof(*r));
    return -EBADMSG;
}
