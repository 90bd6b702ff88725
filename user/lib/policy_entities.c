// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* policy_entities.c - the policy loader's pass 1 (policy.c): agents, sinks and fields of
 * every file, merged across files (an identical repeat is the same entity; a differing one is
 * an error naming both files). Format: docs/policy.md. */
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

#include "policy_int.h"

/* ------------------------------------------------------------------ pass 1: agents, sinks, fields */

void pol_parse_agent(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2, p3;
    mnc_jpath_idx(&path, "agents", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected an agent object, got %s", mnc_json_type(j));
        return;
    }
    static const char *const allowed[] = {"name",   "uids",        "workspace",  "role",
                                          "server", "confinement", "reads_from", NULL};
    static const char *const required[] = {"name", NULL};
    pol_check_keys(c, j, path.s, allowed, required);
    mnc_principal p;
    memset(&p, 0, sizeof(p));
    p.cls = MNC_SINK_AGENT;
    p.role = MNC_ROLE_AGENT;
    int named = pol_get_name(c, j, "name", path.s, p.name);

    const cJSON *u = pol_get(j, "uids");
    if (u) {
        mnc_jpath_key(&p2, path.s, "uids");
        if (!cJSON_IsArray(u)) {
            E(c, p2.s, "expected an array of uids, got %s", mnc_json_type(u));
        } else if (cJSON_GetArraySize(u) > MNC_MAX_UIDS) {
            E(c, p2.s, "too many uids (at most %d)", MNC_MAX_UIDS);
        } else {
            int i = 0;
            for (const cJSON *x = u->child; x; x = x->next, i++) {
                double d;
                mnc_jpath_idx(&p3, p2.s, i);
                if (pol_as_int(c, x, p3.s, 0, MAX_UID, &d) != 0)
                    continue;
                bool dup = false;
                for (int k = 0; k < p.n_uids; k++)
                    dup |= p.uids[k] == (uint32_t)d;
                if (dup)
                    E(c, p3.s, "duplicate uid %.0f", d);
                else
                    p.uids[p.n_uids++] = (uint32_t)d;
            }
        }
    }
    const cJSON *w = pol_get(j, "workspace");
    if (w) {
        mnc_jpath_key(&p2, path.s, "workspace");
        if (!cJSON_IsArray(w)) {
            E(c, p2.s, "expected an array of absolute paths, got %s", mnc_json_type(w));
        } else if (cJSON_GetArraySize(w) > MNC_MAX_WORKSPACE) {
            E(c, p2.s, "too many workspace paths (at most %d)", MNC_MAX_WORKSPACE);
        } else {
            int i = 0;
            for (const cJSON *x = w->child; x; x = x->next, i++) {
                char norm[MNC_PATH_MAX];
                mnc_jpath_idx(&p3, p2.s, i);
                if (pol_as_path(c, x, p3.s, norm, sizeof(norm)) != 0)
                    continue;
                bool dup = false;
                for (int k = 0; k < p.n_workspace; k++)
                    dup |= strcmp(p.workspace[k], norm) == 0;
                if (dup) {
                    E(c, p3.s, "duplicate workspace path %s", Q(norm));
                    continue;
                }
                char *s = strdup(norm);
                if (!s) {
                    E(c, p3.s, "out of memory");
                    continue;
                }
                p.workspace[p.n_workspace++] = s;
            }
        }
    }
    const cJSON *sv = pol_get(j, "server");
    if (sv) {
        mnc_jpath_key(&p2, path.s, "server");
        if (cJSON_IsBool(sv))
            p.server = cJSON_IsTrue(sv);
        else
            E(c, p2.s, "expected true or false, got %s", mnc_json_type(sv));
    }
    const cJSON *r = pol_get(j, "role");
    if (r) {
        mnc_jpath_key(&p2, path.s, "role");
        if (cJSON_IsString(r) && strcmp(r->valuestring, "agent") == 0)
            p.role = MNC_ROLE_AGENT;
        else if (cJSON_IsString(r) && strcmp(r->valuestring, "broker") == 0)
            p.role = MNC_ROLE_BROKER;
        else if (cJSON_IsString(r))
            E(c, p2.s, "unknown role %s (want \"agent\" or \"broker\")", Q(r->valuestring));
        else
            E(c, p2.s, "expected \"agent\" or \"broker\", got %s", mnc_json_type(r));
    }
    /* "confinement": "kernel" (default: with a kernel layer on, mncd delivers to this agent only
     * while it runs in a cgroup that `mncctl run` registered), "netns" ("kernel", and every
     * process of the instance in a network namespace of its own: sock_diag dumps made outside
     * it do not list its sockets; `mncctl run` then always unshares one) or "none" (the
     * operator accepts deliveries to it without kernel confinement; each one is audited).
     * Anything else is an error: a typo must not silently widen or narrow what the kernel
     * layer demands. */
    const cJSON *cf = pol_get(j, "confinement");
    if (cf) {
        mnc_jpath_key(&p2, path.s, "confinement");
        const char *v = cJSON_IsString(cf) ? cf->valuestring : NULL;
        p.confinement_none = v && strcmp(v, "none") == 0;
        p.confinement_netns = v && strcmp(v, "netns") == 0;
        if (v && strcmp(v, "kernel") != 0 && !p.confinement_none && !p.confinement_netns)
            E(c, p2.s, "unknown confinement %s (want \"kernel\", \"netns\" or \"none\")", Q(v));
        else if (!v)
            E(c, p2.s, "expected \"kernel\", \"netns\" or \"none\", got %s", mnc_json_type(cf));
    }
    if (named != 1) {
        pol_free_principal(&p);
        return;
    }
    pol_add_principal(b, c, &p, true, idx, path.s);
}

void pol_parse_sink(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2;
    mnc_jpath_idx(&path, "sinks", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a sink object, got %s", mnc_json_type(j));
        return;
    }
    static const char *const allowed[] = {"name", "class", "path", "address", "stream", NULL};
    static const char *const required[] = {"name", "class", NULL};
    pol_check_keys(c, j, path.s, allowed, required);
    mnc_principal p;
    memset(&p, 0, sizeof(p));
    int named = pol_get_name(c, j, "name", path.s, p.name);
    const cJSON *cl = pol_get(j, "class");
    if (cl) {
        mnc_jpath_key(&p2, path.s, "class");
        static const struct {
            const char *n;
            enum mnc_sink_class k;
        } classes[] = {{"log", MNC_SINK_LOG},
                       {"memory", MNC_SINK_MEMORY},
                       {"tool", MNC_SINK_TOOL},
                       {"external", MNC_SINK_EXTERNAL}};
        if (!cJSON_IsString(cl)) {
            E(c, p2.s, "expected a sink class (string), got %s", mnc_json_type(cl));
        } else {
            for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
                if (strcmp(cl->valuestring, classes[i].n) == 0)
                    p.cls = classes[i].k;
            if (p.cls == MNC_SINK_NONE)
                E(c, p2.s, "unknown sink class %s (want log, memory, tool or external)", Q(cl->valuestring));
        }
    }
    bool filesink = p.cls == MNC_SINK_LOG || p.cls == MNC_SINK_MEMORY;
    const cJSON *pa = pol_get(j, "path");
    if (pa) {
        mnc_jpath_key(&p2, path.s, "path");
        if (p.cls != MNC_SINK_NONE && !filesink)
            E(c, p2.s, "only log and memory sinks have a path");
        else
            (void)pol_as_path(c, pa, p2.s, p.path, sizeof(p.path));
    }
    const cJSON *ad = pol_get(j, "address");
    if (ad) {
        mnc_jpath_key(&p2, path.s, "address");
        if (filesink)
            E(c, p2.s, "only tool and external sinks have an address");
        else
            (void)pol_check_address(c, ad, p2.s, p.address, sizeof(p.address));
    }
    const cJSON *st = pol_get(j, "stream");
    if (st) {
        /* an output stream of the agent (relayed by `mncctl run`): a log sink with no file; its
         * name is the stream's, so the launcher resolves it through the names map alone */
        mnc_jpath_key(&p2, path.s, "stream");
        if (!cJSON_IsString(st) || (strcmp(st->valuestring, "stdout") != 0 && strcmp(st->valuestring, "stderr") != 0 &&
                                    strcmp(st->valuestring, "console") != 0))
            E(c, p2.s, "expected \"stdout\", \"stderr\" or \"console\"");
        else if (p.cls != MNC_SINK_NONE && p.cls != MNC_SINK_LOG)
            E(c, p2.s, "only log sinks can be an output stream");
        else if (pa)
            E(c, p2.s, "an output stream sink has no path");
        else if (named == 1 && strcmp(p.name, st->valuestring) != 0)
            E(c, p2.s, "an output stream sink must be named after its stream (name %s, stream %s)", Q(p.name),
              Q(st->valuestring));
        else
            snprintf(p.stream, sizeof(p.stream), "%s", st->valuestring);
    } else if (named == 1 && p.cls == MNC_SINK_LOG &&
               (strcmp(p.name, "stdout") == 0 || strcmp(p.name, "stderr") == 0 || strcmp(p.name, "console") == 0)) {
        /* the launcher resolves stream sinks by these names: a file log sink must not take one */
        mnc_jpath_key(&p2, path.s, "name");
        E(c, p2.s, "log sink name %s is reserved for the output stream (add \"stream\": %s)", Q(p.name), Q(p.name));
    }
    if (named != 1 || p.cls == MNC_SINK_NONE)
        return;
    pol_add_principal(b, c, &p, false, idx, path.s);
}

void pol_parse_field(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2;
    mnc_jpath_idx(&path, "fields", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a field object, got %s", mnc_json_type(j));
        return;
    }
    static const char *const allowed[] = {"name", "weight", NULL};
    static const char *const required[] = {"name", NULL};
    pol_check_keys(c, j, path.s, allowed, required);
    mnc_field f = {.weight = 1.0};
    int named = pol_get_name(c, j, "name", path.s, f.name);
    const cJSON *w = pol_get(j, "weight");
    if (w)
        (void)pol_as_number(c, w, mnc_jpath_key(&p2, path.s, "weight"), false, &f.weight);
    if (named != 1)
        return;
    for (int i = 0; i < b->n_fields; i++) {
        fent *ex = &b->fields[i];
        if (strcmp(ex->f.name, f.name) != 0)
            continue;
        if (ex->last_file == c->fi)
            E(c, path.s, "duplicate field name %s (also fields[%d])", Q(f.name), ex->last_index);
        else if (ex->f.weight != f.weight)
            E(c, path.s, "field %s differs from its definition in %s (fields[%d])", Q(f.name), b->files[ex->file].name,
              ex->index);
        ex->last_file = c->fi;
        ex->last_index = idx;
        return;
    }
    if (b->n_fields >= MNC_MAX_FIELDS) {
        if (!b->too_many_fields)
            E(c, path.s, "too many fields (at most %d in a policy set)", MNC_MAX_FIELDS);
        b->too_many_fields = true;
        return;
    }
    b->fields[b->n_fields++] = (fent){.f = f, .file = c->fi, .index = idx, .last_file = c->fi, .last_index = idx};
}

/* ------------------------------------------------------------------ after pass 1: reads_from */

/* "reads_from": names of agents (resolved now that every file's agents are known). An agent
 * repeated in another file must name the same set there. */
void pol_parse_reads_from(build *b, fctx *c, const cJSON *j, int idx)
{
    const cJSON *rf = cJSON_IsObject(j) ? pol_get(j, "reads_from") : NULL;
    const cJSON *nm = rf ? pol_get(j, "name") : NULL;
    if (!nm || !cJSON_IsString(nm))
        return;
    bool is_agent = false;
    int me = pol_principal_id(b, nm->valuestring, &is_agent);
    if (me < 0 || !is_agent)
        return; /* reported by pass 1 */
    jpath path, p2, p3;
    mnc_jpath_idx(&path, "agents", idx);
    mnc_jpath_key(&p2, path.s, "reads_from");
    if (!cJSON_IsArray(rf)) {
        E(c, p2.s, "expected an array of agent names, got %s", mnc_json_type(rf));
        return;
    }
    mnc_set set = {{0}};
    int i = 0;
    for (const cJSON *x = rf->child; x; x = x->next, i++) {
        mnc_jpath_idx(&p3, p2.s, i);
        bool ag = false;
        int id = cJSON_IsString(x) ? pol_principal_id(b, x->valuestring, &ag) : -1;
        if (!cJSON_IsString(x))
            E(c, p3.s, "expected an agent name (string), got %s", mnc_json_type(x));
        else if (id < 0 || !ag)
            E(c, p3.s, "%s is not an agent", Q(x->valuestring));
        else if (mnc_set_has(&set, (unsigned)id))
            E(c, p3.s, "duplicate agent %s", Q(x->valuestring));
        else
            mnc_set_add(&set, (unsigned)id);
    }
    mnc_principal *p = &b->agents[me].p;
    bool seen = b->agents[me].reads_from_file >= 0;
    if (seen && memcmp(&p->reads_from, &set, sizeof(set)) != 0)
        E(c, p2.s, "agent %s's reads_from differs from its definition in %s", Q(p->name),
          b->files[b->agents[me].reads_from_file].name);
    p->reads_from = set;
    b->agents[me].reads_from_file = c->fi;
}
