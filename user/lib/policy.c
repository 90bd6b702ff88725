// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* policy.c - the strict policy loader (format: docs/policy.md); lookups are in policy_lookup.c.
 *
 * Loading runs in passes so that every error in every file is reported in one run and nothing
 * is accepted unless all of it is valid:
 *   0. per file: read (size limit), check raw bytes, parse, reject duplicate keys, check the
 *      top level (version, name, risk, required arrays);
 *   1. agents, sinks and fields of every file, merged across files (an identical repeat is the
 *      same entity; a differing one is an error naming both files);
 *   2. ids: all agents (file order) then all sinks (file order) share ids 0..255; fields 0..255;
 *      then set-wide checks (a uid maps to one agent, workspaces stay clear of log/memory paths);
 *   3. families of every file (they may be referenced from any file), then requirements and
 *      contracts, whose names are resolved against the merged set.
 * Anything wrong is reported as "FILE: JSON.PATH: message" and the whole set is refused.
 * Files: this one runs passes 0 and 2 and assembles the set; pass 1 is policy_entities.c,
 * pass 3 policy_contracts.c, the typed readers and the set being built policy_read.c, the
 * strict JSON reader json_strict.c, the lookups policy_lookup.c.
 */
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

#include "mnc/policy.h"
#include "mnc/risk_bayes.h"
#include "policy_int.h"

/* ------------------------------------------------------------------ pass 0: top level */

/* Checks the top-level object; returns false if the file cannot be read any further. */
static bool check_top(build *b, fctx *c, const cJSON *root)
{
    if (!cJSON_IsObject(root)) {
        E(c, "$", "expected a policy object at the top level, got %s", mnc_json_type(root));
        return false;
    }
    static const char *const allowed[] = {"mnc_policy", "name",         "agents",    "sinks", "fields",
                                          "families",   "requirements", "contracts", "risk",  NULL};
    static const char *const required[] = {"mnc_policy", "name", "agents", "fields", "families", "contracts", NULL};
    pol_check_keys(c, root, "$", allowed, required);
    const cJSON *v = pol_get(root, "mnc_policy");
    double ver;
    if (v && pol_as_int(c, v, "mnc_policy", 0, 4294967295.0, &ver) == 0 && ver != 1)
        E(c, "mnc_policy", "unsupported format version %.0f (this build reads version 1)", ver);
    char name[MNC_NAME_MAX];
    (void)pol_get_name(c, root, "name", "$", name);
    static const struct {
        const char *key;
        bool nonempty;
    } arrays[] = {{"agents", true},   {"sinks", false},        {"fields", true},
                  {"families", true}, {"requirements", false}, {"contracts", true}};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        const cJSON *a = pol_get(root, arrays[i].key);
        if (!a)
            continue;
        if (!cJSON_IsArray(a))
            E(c, arrays[i].key, "expected an array, got %s", mnc_json_type(a));
        else if (arrays[i].nonempty && !a->child)
            E(c, arrays[i].key, "must not be empty");
    }
    const cJSON *r = pol_get(root, "risk");
    mnc_risk_kind kind = MNC_RISK_WEIGHTS;
    if (r) {
        if (!cJSON_IsObject(r)) {
            E(c, "risk", "expected an object, got %s", mnc_json_type(r));
        } else {
            static const char *const ra[] = {"model", "model_file", NULL};
            static const char *const rr[] = {"model", NULL};
            pol_check_keys(c, r, "risk", ra, rr);
            const cJSON *m = pol_get(r, "model"), *mf = pol_get(r, "model_file");
            if (mf && !cJSON_IsString(mf))
                E(c, "risk.model_file", "expected a path (string), got %s", mnc_json_type(mf));
            if (m && !cJSON_IsString(m)) {
                E(c, "risk.model", "expected \"weights\" or \"bayes\", got %s", mnc_json_type(m));
            } else if (m && strcmp(m->valuestring, "weights") == 0) {
                if (mf)
                    E(c, "risk.model_file", "the \"weights\" model takes no model_file");
            } else if (m && strcmp(m->valuestring, "bayes") == 0) {
                kind = MNC_RISK_BAYES;
                /* The MNC-L work adds the model_file reader here. Until then a bayes policy
                 * must not load: silently ranking by weights would misstate the budget. */
                if (!mf) {
                    E(c, "risk.model", "\"bayes\" requires a model_file");
                } else if (cJSON_IsString(mf) && !b->risk_model_path) {
                    /* relative to the policy file's directory (to the cwd for buffers);
                     * loaded after the fields are known, see load_sources */
                    const char *base = b->files[c->fi].path;
                    const char *slash = base ? strrchr(base, '/') : NULL;
                    int dl = (mf->valuestring[0] != '/' && slash) ? (int)(slash - base + 1) : 0;
                    if (asprintf(&b->risk_model_path, "%.*s%s", dl, base ? base : "", mf->valuestring) < 0) {
                        b->risk_model_path = NULL;
                        E(c, "risk.model_file", "out of memory");
                    }
                }
            } else if (m) {
                E(c, "risk.model", "unknown risk model %s (want \"weights\" or \"bayes\")", Q(m->valuestring));
            }
        }
    }
    if (b->risk_file < 0) {
        b->risk = kind;
        b->risk_file = c->fi;
    } else if (b->risk != kind) {
        E(c, "risk.model", "risk model differs from the one in %s", b->files[b->risk_file].name);
    }
    return true;
}

/* ------------------------------------------------------------------ pass 2: set-wide checks */

static void check_set(build *b)
{
    /* a uid identifies at most one agent */
    for (int i = 0; i < b->n_agents; i++) {
        const pent *a = &b->agents[i];
        for (int k = 0; k < a->p.n_uids; k++) {
            for (int j = 0; j < i; j++) {
                const pent *o = &b->agents[j];
                for (int m = 0; m < o->p.n_uids; m++) {
                    if (o->p.uids[m] != a->p.uids[k])
                        continue;
                    jpath p;
                    char sub[64];
                    mnc_bprintf(sub, sizeof(sub), "agents[%d].uids", a->index);
                    mnc_json_err(b->errs, b->files[a->file].name, mnc_jpath_idx(&p, sub, k),
                                 "uid %u already maps to agent %s (%s)", a->p.uids[k], Q(o->p.name),
                                 b->files[o->file].name);
                }
            }
        }
    }
    /* Landlock grants the workspace; a log or memory path inside it (or around it) would let
     * the agent write the sink directly, bypassing mncd's per-object scope check */
    for (int i = 0; i < b->n_agents; i++) {
        const pent *a = &b->agents[i];
        for (int k = 0; k < a->p.n_workspace; k++) {
            const char *w = a->p.workspace[k];
            for (int s = 0; s < b->n_sinks; s++) {
                const mnc_principal *sk = &b->sinks[s].p;
                if ((sk->cls != MNC_SINK_LOG && sk->cls != MNC_SINK_MEMORY) || !sk->path[0])
                    continue;
                const char *cls = sk->cls == MNC_SINK_LOG ? "log" : "memory";
                jpath p;
                char sub[64];
                mnc_bprintf(sub, sizeof(sub), "agents[%d].workspace", a->index);
                mnc_jpath_idx(&p, sub, k);
                if (pol_path_within(sk->path, w))
                    mnc_json_err(b->errs, b->files[a->file].name, p.s,
                                 "workspace %s contains the path of %s sink %s (%s)", Q(w), cls, Q(sk->name),
                                 Q(sk->path));
                else if (pol_path_within(w, sk->path))
                    mnc_json_err(b->errs, b->files[a->file].name, p.s,
                                 "workspace %s is inside the path of %s sink %s (%s)", Q(w), cls, Q(sk->name),
                                 Q(sk->path));
            }
        }
    }
}

/* Calls fn for each element of root[key], which must be an array (min_one: non-empty). */
typedef void (*item_fn)(build *b, fctx *c, const cJSON *j, int idx);
static void each(build *b, fctx *c, const cJSON *root, const char *key, item_fn fn)
{
    const cJSON *a = pol_get(root, key);
    if (!cJSON_IsArray(a))
        return; /* reported by check_top */
    int i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++)
        fn(b, c, x, i);
}

/* ------------------------------------------------------------------ assembly */

static mnc_policy *assemble(build *b)
{
    mnc_policy *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    int np = b->n_agents + b->n_sinks;
    p->principals = calloc((size_t)np, sizeof(*p->principals));
    p->fields = calloc((size_t)b->n_fields, sizeof(*p->fields));
    p->families = calloc((size_t)b->n_fams, sizeof(*p->families));
    p->reqs = calloc((size_t)(b->n_reqs ? b->n_reqs : 1), sizeof(*p->reqs));
    p->contracts = calloc((size_t)b->n_cons, sizeof(*p->contracts));
    if (!p->principals || !p->fields || !p->families || !p->reqs || !p->contracts) {
        mnc_policy_free(p);
        return NULL;
    }
    /* ownership of heap strings moves from the builder to the policy */
    for (int i = 0; i < b->n_agents; i++) {
        p->principals[i] = b->agents[i].p;
        b->agents[i].p.n_workspace = 0;
    }
    for (int i = 0; i < b->n_sinks; i++) {
        p->principals[b->n_agents + i] = b->sinks[i].p;
        b->sinks[i].p.n_workspace = 0;
    }
    p->n_principals = np;
    for (int i = 0; i < b->n_fields; i++)
        p->fields[i] = b->fields[i].f;
    p->n_fields = b->n_fields;
    for (int i = 0; i < b->n_fams; i++) {
        p->families[i] = b->fams[i].fam;
        b->fams[i].fam.n_forms = 0;
    }
    p->n_families = b->n_fams;
    if (b->n_reqs)
        memcpy(p->reqs, b->reqs, (size_t)b->n_reqs * sizeof(*p->reqs));
    p->n_reqs = b->n_reqs;
    memcpy(p->contracts, b->cons, (size_t)b->n_cons * sizeof(*p->contracts));
    p->n_contracts = b->n_cons;
    p->risk = b->risk;
    p->risk_model = NULL;
    return p;
}

static mnc_policy *load_sources(src *files, int n, mnc_errors *errs)
{
    int before = errs->n;
    if (n <= 0) {
        mnc_errors_add(errs, "(none): $: no policy file given");
        return NULL;
    }
    build *b = calloc(1, sizeof(*b));
    if (!b) {
        mnc_errors_add(errs, "%s: $: out of memory", files[0].name);
        return NULL;
    }
    b->errs = errs;
    b->files = files;
    b->n_files = n;
    b->risk_file = -1;

    for (int i = 0; i < n; i++) {
        src *s = &files[i];
        char *owned = NULL;
        const char *buf = s->mem;
        size_t len = s->memlen;
        if (s->path) {
            if (mnc_json_read_file(s->path, MNC_POLICY_FILE_MAX, &owned, &len, errs) != 0)
                continue;
            buf = owned;
        } else if (len > MNC_POLICY_FILE_MAX) {
            mnc_errors_add(errs, "%s: $: document is %zu bytes, over the %u-byte limit", s->name, len,
                           MNC_POLICY_FILE_MAX);
            continue;
        } else {
            /* the parser needs buf[len] == '\0'; the caller's buffer need not have it */
            owned = malloc(len + 1);
            if (!owned) {
                mnc_errors_add(errs, "%s: $: out of memory", s->name);
                continue;
            }
            memcpy(owned, buf, len);
            owned[len] = '\0';
            buf = owned;
        }
        s->root = mnc_json_parse_strict(s->name, buf, len, errs);
        free(owned);
        if (!s->root)
            continue;
        fctx c = {errs, s->name, i};
        if (!check_top(b, &c, s->root)) {
            cJSON_Delete(s->root);
            s->root = NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "agents", pol_parse_agent);
        each(b, &c, files[i].root, "sinks", pol_parse_sink);
        each(b, &c, files[i].root, "fields", pol_parse_field);
    }
    check_set(b);
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "agents", pol_parse_reads_from);
        each(b, &c, files[i].root, "families", pol_parse_family);
    }
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "requirements", pol_parse_requirement);
        each(b, &c, files[i].root, "contracts", pol_parse_contract);
    }
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "contracts", pol_parse_onward);
    }
    mnc_policy *p = NULL;
    if (errs->n == before) {
        p = assemble(b);
        if (!p)
            mnc_errors_add(errs, "%s: $: out of memory", files[0].name);
    }
    if (p && p->risk == MNC_RISK_BAYES) {
        /* all-or-nothing: a bayes policy without its model must not load. The model's own
         * errors are reported as "POLICYFILE: risk.model_file: MODEL ERROR". */
        const char *pf = files[b->risk_file >= 0 ? b->risk_file : 0].name;
        mnc_errors me;
        mnc_errors_init(&me);
        p->risk_model = b->risk_model_path ? mnc_bayes_load_file(b->risk_model_path, p, &me) : NULL;
        if (!p->risk_model) {
            if (me.n == 0)
                mnc_errors_add(errs, "%s: risk.model_file: missing", pf);
            for (int i = 0; i < me.n; i++)
                mnc_errors_add(errs, "%s: risk.model_file: %s", pf, me.msg[i]);
            mnc_policy_free(p);
            p = NULL;
        }
        mnc_errors_free(&me);
    }
    free(b->risk_model_path);
    for (int i = 0; i < n; i++) {
        cJSON_Delete(files[i].root);
        files[i].root = NULL;
    }
    pol_build_free(b);
    free(b);
    return p;
}

mnc_policy *mnc_policy_load_files(const char *const *paths, int n, mnc_errors *errs)
{
    if (n < 0 || n > 4096) {
        mnc_errors_add(errs, "(args): $: bad number of policy files (%d)", n);
        return NULL;
    }
    src *files = calloc((size_t)(n ? n : 1), sizeof(*files));
    if (!files) {
        mnc_errors_add(errs, "(args): $: out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        files[i].name = paths[i];
        files[i].path = paths[i];
    }
    mnc_policy *p = load_sources(files, n, errs);
    free(files);
    return p;
}

mnc_policy *mnc_policy_load_buffer(const char *name, const char *json, size_t len, mnc_errors *errs)
{
    src s = {.name = name ? name : "(buffer)", .mem = json ? json : "", .memlen = json ? len : 0};
    return load_sources(&s, 1, errs);
}

void mnc_policy_free(mnc_policy *p)
{
    if (!p)
        return;
    if (p->principals)
        for (int i = 0; i < p->n_principals; i++)
            pol_free_principal(&p->principals[i]);
    if (p->families)
        for (int i = 0; i < p->n_families; i++)
            pol_free_family(&p->families[i]);
    free(p->principals);
    free(p->fields);
    free(p->families);
    free(p->reqs);
    free(p->contracts);
    mnc_bayes_free(p->risk_model); /* NULL for the weights model */
    free(p);
}
