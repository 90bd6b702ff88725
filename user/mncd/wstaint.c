// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* wstaint.c - the workspace taint record (see wstaint.h). */
#include "wstaint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

static int principal(const mnc_policy *p, const char *name)
{
    for (int i = 0; i < p->n_principals; i++)
        if (strcmp(p->principals[i].name, name) == 0)
            return i;
    return -1;
}

static bool want_bool(const cJSON *o, const char *k, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsBool(v))
        return false;
    *out = cJSON_IsTrue(v);
    return true;
}

static int parse(const char *txt, const mnc_policy *p, mncd_wtaint *t)
{
    memset(t, 0, sizeof(*t));
    cJSON *o = cJSON_Parse(txt);
    int rc = -EBADMSG;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "v");
    const cJSON *sinks = cJSON_GetObjectItemCaseSensitive(o, "sinks");
    const cJSON *objs = cJSON_GetObjectItemCaseSensitive(o, "objects");
    const cJSON *agent = cJSON_GetObjectItemCaseSensitive(o, "agent");
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(o, "time_ms");
    if (!cJSON_IsObject(o) || !cJSON_IsNumber(v) || v->valuedouble != 1 || !want_bool(o, "tainted", &t->tainted) ||
        !want_bool(o, "may_log", &t->may_log) || !want_bool(o, "may_memory", &t->may_memory) ||
        !want_bool(o, "may_forward", &t->may_forward) || !want_bool(o, "may_external", &t->may_external) ||
        !cJSON_IsArray(sinks) || (objs && !cJSON_IsArray(objs)) || (agent && !cJSON_IsString(agent)) ||
        (tm && !cJSON_IsNumber(tm)))
        goto out;
    const cJSON *it;
    cJSON_ArrayForEach(it, sinks)
    {
        if (!cJSON_IsString(it))
            goto out;
        int id = principal(p, it->valuestring);
        if (id >= 0) /* a name the policy no longer has: dropped (tighter) */
            mnc_set_add(&t->sinks, (unsigned)id);
    }
    cJSON_ArrayForEach(it, objs)
    {
        mnc_oid id;
        if (!cJSON_IsString(it) || mnc_oid_parse(it->valuestring, &id) != 0)
            goto out;
        mncd_ws_add_object(t, &id);
    }
    const cJSON *nar = cJSON_GetObjectItemCaseSensitive(o, "narrowed");
    if (nar && !cJSON_IsBool(nar))
        goto out;
    t->narrowed = cJSON_IsTrue(nar);
    if (agent)
        snprintf(t->agent, sizeof(t->agent), "%s", agent->valuestring);
    if (tm && tm->valuedouble > 0)
        t->time_ms = (uint64_t)tm->valuedouble;
    rc = 0;
out:
    cJSON_Delete(o);
    if (rc)
        memset(t, 0, sizeof(*t));
    return rc;
}

/* One read of an xattr (by path, or fd when path is NULL): the record it holds. */
static int read_attr(const char *path, int fd, const char *attr, const mnc_policy *p, mncd_wtaint *t)
{
    char buf[65536];
    memset(t, 0, sizeof(*t));
    ssize_t n = path ? getxattr(path, attr, buf, sizeof(buf) - 1) : fgetxattr(fd, attr, buf, sizeof(buf) - 1);
    if (n < 0)
        return errno == ERANGE ? -EBADMSG : errno == EOPNOTSUPP ? -ENOTSUP : -errno;
    buf[n] = 0;
    if (memchr(buf, 0, (size_t)n))
        return -EBADMSG;
    return parse(buf, p, t);
}

int mncd_ws_read(const char *dir, const mnc_policy *p, mncd_wtaint *t)
{
    return read_attr(dir, -1, MNCD_WS_XATTR, p, t);
}

int mncd_ws_fread(int fd, const char *attr, const mnc_policy *p, mncd_wtaint *t)
{
    return read_attr(NULL, fd, attr, p, t);
}

/* The record as JSON: objects from first_obj on (the oldest dropped), at most max_sinks sinks. */
static char *render(const mncd_wtaint *t, const mnc_policy *p, int first_obj, int max_sinks)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *s = o ? cJSON_AddArrayToObject(o, "sinks") : NULL;
    bool ok = s && cJSON_AddNumberToObject(o, "v", 1) && cJSON_AddBoolToObject(o, "tainted", t->tainted);
    int ns = 0;
    for (int i = 0; ok && i < p->n_principals && ns < max_sinks; i++) {
        if (!mnc_set_has(&t->sinks, (unsigned)i))
            continue;
        cJSON *nm = cJSON_CreateString(p->principals[i].name);
        ok = nm && cJSON_AddItemToArray(s, nm);
        ns++;
    }
    ok = ok && cJSON_AddBoolToObject(o, "may_log", t->may_log) &&
         cJSON_AddBoolToObject(o, "may_memory", t->may_memory) &&
         cJSON_AddBoolToObject(o, "may_forward", t->may_forward) &&
         cJSON_AddBoolToObject(o, "may_external", t->may_external);
    cJSON *ob = ok ? cJSON_AddArrayToObject(o, "objects") : NULL;
    ok = ob != NULL;
    for (int i = first_obj; ok && i < t->n_obj; i++) {
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&t->obj[i], hex);
        cJSON *h = cJSON_CreateString(hex);
        ok = h && cJSON_AddItemToArray(ob, h);
    }
    ok = ok && cJSON_AddStringToObject(o, "agent", t->agent) &&
         cJSON_AddNumberToObject(o, "time_ms", (double)t->time_ms);
    bool narrowed = t->narrowed || ns < (int)mnc_set_count(&t->sinks);
    if (ok && narrowed)
        ok = cJSON_AddBoolToObject(o, "narrowed", true) != NULL;
    char *txt = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return txt;
}

static int write_attr(const char *dir, int fd, const char *attr, const mnc_policy *p, const mncd_wtaint *t);

int mncd_ws_write(const char *dir, const mnc_policy *p, const mncd_wtaint *t)
{
    return write_attr(dir, -1, MNCD_WS_XATTR, p, t);
}

int mncd_ws_fwrite(int fd, const char *attr, const mnc_policy *p, const mncd_wtaint *t)
{
    return write_attr(NULL, fd, attr, p, t);
}

static int write_attr(const char *dir, int fd, const char *attr, const mnc_policy *p, const mncd_wtaint *t)
{
    if (!t->tainted)
        return 0;
    int first = 0, max_sinks = (int)mnc_set_count(&t->sinks);
    for (;;) {
        char *txt = render(t, p, first, max_sinks);
        if (!txt)
            return -ENOMEM;
        size_t len = strlen(txt);
        if (len <= MNCD_WS_XATTR_MAX) {
            int rc = (dir ? setxattr(dir, attr, txt, len, 0) : fsetxattr(fd, attr, txt, len, 0)) == 0 ? 0
                     : errno == EOPNOTSUPP                                                            ? -ENOTSUP
                                                                                                      : -errno;
            free(txt);
            return rc;
        }
        free(txt);
        /* too long: the oldest objects go first (informational), then sink names (tighter) */
        if (first < t->n_obj)
            first++;
        else if (max_sinks > 0)
            max_sinks--;
        else
            return -E2BIG; /* cannot happen: a record without sinks or objects is ~200 bytes */
    }
}

void mncd_ws_add_object(mncd_wtaint *t, const mnc_oid *id)
{
    for (int i = 0; i < t->n_obj; i++)
        if (memcmp(&t->obj[i], id, sizeof(*id)) == 0)
            return;
    if (t->n_obj == MNCD_WS_MAX_OBJECTS) {
        memmove(&t->obj[0], &t->obj[1], sizeof(t->obj[0]) * (MNCD_WS_MAX_OBJECTS - 1));
        t->n_obj--;
    }
    t->obj[t->n_obj++] = *id;
}

void mncd_ws_merge(mncd_wtaint *a, const mncd_wtaint *b)
{
    for (int i = 0; i < b->n_obj; i++)
        mncd_ws_add_object(a, &b->obj[i]);
    if (!b->tainted)
        return;
    if (!a->tainted) {
        a->sinks = b->sinks;
        a->may_log = b->may_log;
        a->may_memory = b->may_memory;
        a->may_forward = b->may_forward;
        a->may_external = b->may_external;
    } else {
        for (int i = 0; i < MNC_SET_WORDS; i++)
            a->sinks.w[i] &= b->sinks.w[i];
        a->may_log = a->may_log && b->may_log;
        a->may_memory = a->may_memory && b->may_memory;
        a->may_forward = a->may_forward && b->may_forward;
        a->may_external = a->may_external && b->may_external;
    }
    a->tainted = true;
    a->narrowed = a->narrowed || b->narrowed;
    if (b->agent[0])
        snprintf(a->agent, sizeof(a->agent), "%s", b->agent);
    if (b->time_ms > a->time_ms)
        a->time_ms = b->time_ms;
}

void mncd_ws_describe(const mncd_wtaint *t, const mnc_policy *p, char *out, size_t n)
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
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&t->obj[i], hex);
        PUT("%s%s", i ? ", " : " ", hex);
    }
    if (!t->n_obj)
        PUT(" (none recorded)");
    PUT("; sinks");
    int ns = 0;
    for (int i = 0; i < p->n_principals; i++)
        if (mnc_set_has(&t->sinks, (unsigned)i))
            PUT("%s%s", ns++ ? ", " : " ", p->principals[i].name);
    if (!ns)
        PUT(" (none)");
    PUT("; may_log %d may_memory %d may_forward %d may_external %d", t->may_log, t->may_memory, t->may_forward,
        t->may_external);
    if (t->agent[0])
        PUT("; tainted by %s", t->agent);
#undef PUT
    if (l >= n && n > 4)
        memcpy(out + n - 4, "...", 4);
}

bool mncd_ws_implies(const mncd_wtaint *a, const mncd_wtaint *b)
{
    if (!b->tainted)
        return true;
    if (!a->tainted)
        return false;
    for (int i = 0; i < MNC_SET_WORDS; i++)
        if (a->sinks.w[i] & ~b->sinks.w[i])
            return false;
    return (!a->may_log || b->may_log) && (!a->may_memory || b->may_memory) && (!a->may_forward || b->may_forward) &&
           (!a->may_external || b->may_external);
}

bool mncd_ws_within(const char *a, const char *b)
{
    size_t lb = strlen(b);
    if (lb == 1 && b[0] == '/')
        return a[0] == '/';
    return strncmp(a, b, lb) == 0 && (a[lb] == 0 || a[lb] == '/');
}

bool mncd_ws_overlap(const char *a, const char *b) { return mncd_ws_within(a, b) || mncd_ws_within(b, a); }
