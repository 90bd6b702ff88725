// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* policy_read.c - the policy loader's typed field readers and the set being built
 * (policy_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/un.h>

#include <cjson/cJSON.h>

#include "mnc_util.h"
#include "policy_int.h"

/* ------------------------------------------------------------------ typed field readers */

/* Reports keys of obj outside `allowed` and missing `required` ones (NULL-terminated lists). */
void pol_check_keys(fctx *c, const cJSON *obj, const char *path, const char *const *allowed,
                    const char *const *required)
{
    for (const cJSON *k = obj->child; k; k = k->next) {
        bool ok = false;
        for (int i = 0; allowed[i]; i++)
            if (k->string && strcmp(k->string, allowed[i]) == 0)
                ok = true;
        if (!ok)
            E(c, path, "unknown key %s", Q(k->string ? k->string : ""));
    }
    for (int i = 0; required && required[i]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(obj, required[i]))
            E(c, path, "missing required key %s", Q(required[i]));
}

const cJSON *pol_get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* A name at obj[key]. Returns 1 ok, 0 absent (not reported), -1 invalid (reported). */
int pol_get_name(fctx *c, const cJSON *obj, const char *key, const char *path, char out[MNC_NAME_MAX])
{
    const cJSON *v = pol_get(obj, key);
    jpath p;
    out[0] = '\0';
    if (!v)
        return 0;
    mnc_jpath_key(&p, path, key);
    if (!cJSON_IsString(v)) {
        E(c, p.s, "expected a name (string), got %s", mnc_json_type(v));
        return -1;
    }
    if (!mnc_name_valid(v->valuestring)) {
        E(c, p.s, "invalid name %s (1-63 characters of A-Z a-z 0-9 _ . : -)", Q(v->valuestring));
        return -1;
    }
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return 1;
}

/* An integral number in [lo, hi]. Returns 0 or -1 (reported). 1.0 counts as an integer, as in
 * JSON Schema; 1e400 parses as infinity and is out of range. */
int pol_as_int(fctx *c, const cJSON *v, const char *path, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v)) {
        E(c, path, "expected an integer, got %s", mnc_json_type(v));
        return -1;
    }
    double d = v->valuedouble;
    if (!isfinite(d) || d < lo || d > hi) {
        E(c, path, "integer out of range (must be %.0f..%.0f)", lo, hi);
        return -1;
    }
    if (d != floor(d)) {
        E(c, path, "expected an integer, got %g", d);
        return -1;
    }
    *out = d;
    return 0;
}

/* A finite number; `positive` requires > 0, otherwise >= 0. */
int pol_as_number(fctx *c, const cJSON *v, const char *path, bool positive, double *out)
{
    if (!cJSON_IsNumber(v)) {
        E(c, path, "expected a number, got %s", mnc_json_type(v));
        return -1;
    }
    double d = v->valuedouble;
    if (!isfinite(d)) {
        E(c, path, "number is not finite");
        return -1;
    }
    if (positive ? !(d > 0) : !(d >= 0)) {
        E(c, path, "must be %s, got %g", positive ? "> 0" : ">= 0", d);
        return -1;
    }
    *out = d;
    return 0;
}

/* Checks an absolute path and stores it normalised (no repeated or trailing '/'). "." and ".."
 * components are refused rather than resolved: the loader cannot know the target host's
 * symlinks, and the component-wise containment test needs a canonical spelling. */
int pol_as_path(fctx *c, const cJSON *v, const char *path, char *out, size_t outsz)
{
    if (!cJSON_IsString(v)) {
        E(c, path, "expected an absolute path (string), got %s", mnc_json_type(v));
        return -1;
    }
    const char *s = v->valuestring;
    if (s[0] != '/') {
        E(c, path, "path %s is not absolute", Q(s));
        return -1;
    }
    size_t o = 0;
    for (const char *p = s; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t n = (size_t)(e - p);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
            E(c, path, "path %s has a \".\" or \"..\" component", Q(s));
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
                E(c, path, "path %s contains a control character", Q(s));
                return -1;
            }
        }
        if (o + 1 + n + 1 > outsz) {
            E(c, path, "path is too long (at most %zu bytes)", outsz - 1);
            return -1;
        }
        out[o++] = '/';
        memcpy(out + o, p, n);
        o += n;
        p = e;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return 0;
}

/* a is b or lies below b, compared component-wise (both normalised). */
bool pol_path_within(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (strcmp(b, "/") == 0)
        return true;
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

int pol_check_address(fctx *c, const cJSON *v, const char *path, char *out, size_t outsz)
{
    if (!cJSON_IsString(v)) {
        E(c, path, "expected an address (string), got %s", mnc_json_type(v));
        return -1;
    }
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n >= outsz) {
        E(c, path, "address is too long (at most %zu bytes)", outsz - 1);
        return -1;
    }
    if (strncmp(s, "unix:", 5) == 0) {
        if (s[5] != '/' || n - 5 >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
            E(c, path, "address %s: a unix socket needs an absolute path shorter than %zu bytes", Q(s),
              sizeof(((struct sockaddr_un *)0)->sun_path));
            return -1;
        }
        memcpy(out, s, n + 1);
        return 0;
    }
    char host[64];
    const char *colon = strrchr(s, ':');
    bool ok = false;
    if (colon && (size_t)(colon - s) < sizeof(host)) {
        size_t hl = (size_t)(colon - s);
        memcpy(host, s, hl);
        host[hl] = '\0';
        unsigned char tmp[16];
        if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
            host[hl - 1] = '\0';
            ok = inet_pton(AF_INET6, host + 1, tmp) == 1;
        } else {
            ok = inet_pton(AF_INET, host, tmp) == 1;
        }
        const char *pp = colon + 1;
        char *endp = NULL;
        errno = 0;
        unsigned long port = (*pp >= '0' && *pp <= '9') ? strtoul(pp, &endp, 10) : 0;
        if (errno || !endp || *endp || port < 1 || port > 65535)
            ok = false;
    }
    if (!ok) {
        E(c, path, "invalid address %s (want unix:/abs/path, IPv4:port or [IPv6]:port)", Q(s));
        return -1;
    }
    memcpy(out, s, n + 1);
    return 0;
}

/* ------------------------------------------------------------------ the set being built */

void pol_free_principal(mnc_principal *p)
{
    for (int i = 0; i < p->n_workspace; i++)
        free(p->workspace[i]);
    p->n_workspace = 0;
}

void pol_free_family(mnc_family *f)
{
    for (int i = 0; i < f->n_forms; i++) {
        free(f->forms[i].tmpl);
        f->forms[i].tmpl = NULL;
    }
    f->n_forms = 0;
}

void pol_build_free(build *b)
{
    for (int i = 0; i < b->n_agents; i++)
        pol_free_principal(&b->agents[i].p);
    for (int i = 0; i < b->n_sinks; i++)
        pol_free_principal(&b->sinks[i].p);
    for (int i = 0; i < b->n_fams; i++)
        pol_free_family(&b->fams[i].fam);
    free(b->fams);
    free(b->reqs);
    free(b->req_file);
    free(b->cons);
    free(b->con_file);
}

/* Grows an array to hold n + 1 elements. Returns 0 or -1 on OOM. */
static pent *find_principal(build *b, const char *name, bool *is_agent)
{
    for (int i = 0; i < b->n_agents; i++)
        if (strcmp(b->agents[i].p.name, name) == 0) {
            if (is_agent)
                *is_agent = true;
            return &b->agents[i];
        }
    for (int i = 0; i < b->n_sinks; i++)
        if (strcmp(b->sinks[i].p.name, name) == 0) {
            if (is_agent)
                *is_agent = false;
            return &b->sinks[i];
        }
    return NULL;
}

/* id in the final set: agents first, then sinks */
int pol_principal_id(build *b, const char *name, bool *is_agent)
{
    bool ag = false;
    pent *e = find_principal(b, name, &ag);
    if (is_agent)
        *is_agent = ag;
    if (!e)
        return -1;
    return ag ? (int)(e - b->agents) : b->n_agents + (int)(e - b->sinks);
}

static bool same_principal(const mnc_principal *a, const mnc_principal *b)
{
    if (a->cls != b->cls || a->role != b->role || a->server != b->server ||
        a->confinement_none != b->confinement_none || a->confinement_netns != b->confinement_netns ||
        strcmp(a->path, b->path) != 0 || strcmp(a->address, b->address) != 0 || strcmp(a->stream, b->stream) != 0 ||
        a->n_uids != b->n_uids || a->n_workspace != b->n_workspace)
        return false;
    for (int i = 0; i < a->n_uids; i++)
        if (a->uids[i] != b->uids[i])
            return false;
    for (int i = 0; i < a->n_workspace; i++)
        if (strcmp(a->workspace[i], b->workspace[i]) != 0)
            return false;
    return true;
}

/* Adds or merges a parsed principal; takes ownership of p's heap strings. */
void pol_add_principal(build *b, fctx *c, mnc_principal *p, bool is_agent, int idx, const char *path)
{
    const char *kind = is_agent ? "agent" : "sink";
    const char *list = is_agent ? "agents" : "sinks";
    bool ex_agent = false;
    pent *ex = find_principal(b, p->name, &ex_agent);
    if (!ex) {
        if (b->n_agents + b->n_sinks >= MNC_MAX_PRINCIPALS) {
            if (!b->too_many_principals)
                E(c, path, "too many agents and sinks (at most %d in a policy set)", MNC_MAX_PRINCIPALS);
            b->too_many_principals = true;
            pol_free_principal(p);
            return;
        }
        pent *n = is_agent ? &b->agents[b->n_agents++] : &b->sinks[b->n_sinks++];
        n->p = *p;
        n->file = n->last_file = c->fi;
        n->index = n->last_index = idx;
        n->reads_from_file = -1;
        return;
    }
    const char *exlist = ex_agent ? "agents" : "sinks";
    if (ex->last_file == c->fi) {
        if (ex_agent == is_agent)
            E(c, path, "duplicate %s name %s (also %s[%d])", kind, Q(p->name), exlist, ex->last_index);
        else
            E(c, path, "%s name %s clashes with %s[%d] (agents and sinks share one namespace)", kind, Q(p->name),
              exlist, ex->last_index);
    } else if (ex_agent != is_agent) {
        E(c, path, "%s name %s clashes with %s[%d] in %s (agents and sinks share one namespace)", kind, Q(p->name),
          exlist, ex->index, b->files[ex->file].name);
    } else if (!same_principal(&ex->p, p)) {
        E(c, path, "%s %s differs from its definition in %s (%s[%d])", kind, Q(p->name), b->files[ex->file].name, list,
          ex->index);
    }
    if (ex_agent == is_agent) {
        ex->last_file = c->fi;
        ex->last_index = idx;
    }
    pol_free_principal(p);
}
