// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* policy_contracts.c - the policy loader's pass 3 (policy.c): families, requirements and
 * contracts, whose names are resolved against the merged set of pass 1. Format:
 * docs/policy.md. */
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

/* ------------------------------------------------------------------ pass 3: references */

static int field_id(build *b, const char *name)
{
    for (int i = 0; i < b->n_fields; i++)
        if (strcmp(b->fields[i].f.name, name) == 0)
            return i;
    return -1;
}

enum ref { REF_FIELD, REF_AGENT, REF_PRINCIPAL };

/* Resolves the name in string v; returns the id or -1 (reported). */
static int resolve(build *b, fctx *c, const cJSON *v, const char *path, enum ref kind)
{
    if (!cJSON_IsString(v)) {
        E(c, path, "expected a name (string), got %s", mnc_json_type(v));
        return -1;
    }
    const char *s = v->valuestring;
    if (!mnc_name_valid(s)) {
        E(c, path, "invalid name %s", Q(s));
        return -1;
    }
    if (kind == REF_FIELD) {
        int id = field_id(b, s);
        if (id < 0)
            E(c, path, "unknown field %s", Q(s));
        return id;
    }
    bool ag = false;
    int id = pol_principal_id(b, s, &ag);
    if (id < 0) {
        E(c, path, "unknown %s %s", kind == REF_AGENT ? "agent" : "sink", Q(s));
        return -1;
    }
    if (kind == REF_AGENT && !ag) {
        E(c, path, "%s is a sink, not an agent", Q(s));
        return -1;
    }
    return id;
}

/* obj[key] as a set of names. Returns 1 ok, 0 absent, -1 error (reported). */
static int name_set(build *b, fctx *c, const cJSON *obj, const char *key, const char *path, bool nonempty,
                    enum ref kind, mnc_set *out)
{
    jpath p2, p3;
    const cJSON *a = pol_get(obj, key);
    mnc_set_clear(out);
    if (!a)
        return 0;
    mnc_jpath_key(&p2, path, key);
    if (!cJSON_IsArray(a)) {
        E(c, p2.s, "expected an array of names, got %s", mnc_json_type(a));
        return -1;
    }
    if (nonempty && !a->child) {
        E(c, p2.s, "must not be empty");
        return -1;
    }
    int i = 0, bad = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++) {
        mnc_jpath_idx(&p3, p2.s, i);
        int id = resolve(b, c, x, p3.s, kind);
        if (id < 0) {
            bad = 1;
            continue;
        }
        if (mnc_set_has(out, (unsigned)id)) {
            E(c, p3.s, "duplicate name %s", Q(x->valuestring));
            bad = 1;
        }
        mnc_set_add(out, (unsigned)id);
    }
    return bad ? -1 : 1;
}

/* Checks "{field}" placeholders ("{{" / "}}" are literal braces) against the form's fields. */
static void check_template(build *b, fctx *c, const char *t, const mnc_set *fields, const char *path)
{
    for (size_t i = 0; t[i];) {
        if (t[i] == '{' && t[i + 1] == '{') {
            i += 2;
        } else if (t[i] == '}' && t[i + 1] == '}') {
            i += 2;
        } else if (t[i] == '}') {
            E(c, path, "unmatched \"}\" at offset %zu (write \"}}\" for a literal brace)", i);
            return;
        } else if (t[i] == '{') {
            const char *e = strchr(t + i + 1, '}');
            if (!e) {
                E(c, path, "unterminated placeholder at offset %zu", i);
                return;
            }
            char name[MNC_NAME_MAX];
            size_t n = (size_t)(e - (t + i + 1));
            if (n == 0 || n >= sizeof(name)) {
                E(c, path, "invalid placeholder at offset %zu", i);
                return;
            }
            memcpy(name, t + i + 1, n);
            name[n] = '\0';
            int id = mnc_name_valid(name) ? field_id(b, name) : -1;
            if (!mnc_name_valid(name))
                E(c, path, "invalid placeholder {%s}", Q(name));
            else if (id < 0)
                E(c, path, "template names unknown field %s", Q(name));
            else if (!mnc_set_has(fields, (unsigned)id))
                E(c, path, "template names field %s, which is not one of the form's fields", Q(name));
            i += n + 2;
        } else {
            i++;
        }
    }
}

void pol_parse_family(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2, p3;
    mnc_jpath_idx(&path, "families", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a family object, got %s", mnc_json_type(j));
        return;
    }
    static const char *const allowed[] = {"name", "forms", NULL};
    static const char *const required[] = {"name", "forms", NULL};
    pol_check_keys(c, j, path.s, allowed, required);
    mnc_family fam;
    memset(&fam, 0, sizeof(fam));
    int named = pol_get_name(c, j, "name", path.s, fam.name);
    bool bad = named != 1;
    const cJSON *forms = pol_get(j, "forms");
    if (forms) {
        mnc_jpath_key(&p2, path.s, "forms");
        if (!cJSON_IsArray(forms)) {
            E(c, p2.s, "expected an array of forms, got %s", mnc_json_type(forms));
            bad = true;
        } else if (!forms->child || cJSON_GetArraySize(forms) > MNC_MAX_FORMS) {
            E(c, p2.s, "a family has 1 to %d forms", MNC_MAX_FORMS);
            bad = true;
        } else {
            int i = 0;
            for (const cJSON *x = forms->child; x; x = x->next, i++) {
                mnc_jpath_idx(&p3, p2.s, i);
                if (!cJSON_IsObject(x)) {
                    E(c, p3.s, "expected a form object, got %s", mnc_json_type(x));
                    bad = true;
                    continue;
                }
                static const char *const fa[] = {"name", "fields", "template", NULL};
                static const char *const fr[] = {"name", "fields", NULL};
                int before = c->errs->n;
                pol_check_keys(c, x, p3.s, fa, fr);
                mnc_form *f = &fam.forms[fam.n_forms];
                memset(f, 0, sizeof(*f));
                if (pol_get_name(c, x, "name", p3.s, f->name) == 1) {
                    for (int k = 0; k < fam.n_forms; k++)
                        if (strcmp(fam.forms[k].name, f->name) == 0) {
                            jpath pn;
                            E(c, mnc_jpath_key(&pn, p3.s, "name"), "duplicate form name %s (also forms[%d])",
                              Q(f->name), k);
                        }
                }
                (void)name_set(b, c, x, "fields", p3.s, true, REF_FIELD, &f->fields);
                const cJSON *t = pol_get(x, "template");
                const char *tmpl = "";
                if (t) {
                    jpath pt;
                    mnc_jpath_key(&pt, p3.s, "template");
                    if (!cJSON_IsString(t))
                        E(c, pt.s, "expected a string, got %s", mnc_json_type(t));
                    else {
                        tmpl = t->valuestring;
                        check_template(b, c, tmpl, &f->fields, pt.s);
                    }
                }
                if (c->errs->n != before) {
                    bad = true;
                    continue;
                }
                f->tmpl = strdup(tmpl);
                if (!f->tmpl) {
                    E(c, p3.s, "out of memory");
                    bad = true;
                    continue;
                }
                fam.n_forms++;
            }
        }
    }
    /* register the name even if a form is bad, so that contracts naming it do not cascade */
    if (named == 1) {
        for (int k = 0; k < b->n_fams; k++) {
            if (strcmp(b->fams[k].fam.name, fam.name) != 0)
                continue;
            jpath pn;
            mnc_jpath_key(&pn, path.s, "name");
            if (b->fams[k].file == c->fi)
                E(c, pn.s, "duplicate family name %s (also families[%d])", Q(fam.name), b->fams[k].index);
            else
                E(c, pn.s, "family %s is already defined in %s (families[%d])", Q(fam.name),
                  b->files[b->fams[k].file].name, b->fams[k].index);
            bad = true;
            named = 0;
            break;
        }
    }
    if (named == 1 && b->n_fams >= MAX_FAMILIES) {
        E(c, path.s, "too many families (at most %d in a policy set)", MAX_FAMILIES);
        named = 0;
    }
    if (named == 1 && mnc_grow((void **)&b->fams, &b->cap_fams, b->n_fams, sizeof(*b->fams), 8) != 0) {
        E(c, path.s, "out of memory");
        named = 0;
    }
    if (named != 1) {
        pol_free_family(&fam);
        return;
    }
    (void)bad; /* the errors are recorded; the entry only serves name resolution then */
    b->fams[b->n_fams++] = (fament){.fam = fam, .file = c->fi, .index = idx};
}

/* Room for element n of two parallel arrays (values of elem bytes, and the index of the file
 * each came from; one capacity *cap for both): false after reporting at path why not - the
 * set's limit max (too_many: a message with one %d), or out of memory. */
static bool room_for_one(fctx *c, const char *path, void **vals, int **files, int *cap, int n, size_t elem, int max,
                         const char *too_many)
{
    if (n >= max) {
        E(c, path, too_many, max);
        return false;
    }
    int vcap = *cap;
    if (mnc_grow(vals, &vcap, n, elem, 8) != 0 || mnc_grow((void **)files, cap, n, sizeof(**files), 8) != 0) {
        E(c, path, "out of memory");
        return false;
    }
    return true;
}

void pol_parse_requirement(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2;
    mnc_jpath_idx(&path, "requirements", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a requirement object, got %s", mnc_json_type(j));
        return;
    }
    static const char *const allowed[] = {"agent", "purpose", "needs", NULL};
    static const char *const required[] = {"agent", "purpose", "needs", NULL};
    int before = c->errs->n;
    pol_check_keys(c, j, path.s, allowed, required);
    mnc_requirement r;
    memset(&r, 0, sizeof(r));
    int agent = -1;
    const cJSON *a = pol_get(j, "agent");
    if (a)
        agent = resolve(b, c, a, mnc_jpath_key(&p2, path.s, "agent"), REF_AGENT);
    (void)pol_get_name(c, j, "purpose", path.s, r.purpose);
    (void)name_set(b, c, j, "needs", path.s, true, REF_FIELD, &r.needs);
    if (c->errs->n != before || agent < 0)
        return;
    r.agent = (uint16_t)agent;
    for (int k = 0; k < b->n_reqs; k++) {
        if (b->reqs[k].agent == r.agent && strcmp(b->reqs[k].purpose, r.purpose) == 0) {
            E(c, path.s,
              "second requirement for agent %s and purpose %s (one per agent and purpose; "
              "first in %s)",
              Q(a->valuestring), Q(r.purpose), b->files[b->req_file[k]].name);
            return;
        }
    }
    if (!room_for_one(c, path.s, (void **)&b->reqs, &b->req_file, &b->cap_reqs, b->n_reqs, sizeof(*b->reqs),
                      MAX_REQUIREMENTS, "too many requirements (at most %d)"))
        return;
    b->reqs[b->n_reqs] = r;
    b->req_file[b->n_reqs++] = c->fi;
}

static void parse_lifetime(fctx *c, const cJSON *l, const char *path, mnc_lifetime *out)
{
    jpath p2;
    if (!cJSON_IsObject(l)) {
        E(c, path, "expected {\"seconds\": N} and/or {\"turns\": N}, got %s", mnc_json_type(l));
        return;
    }
    static const char *const allowed[] = {"seconds", "turns", NULL};
    pol_check_keys(c, l, path, allowed, NULL);
    const cJSON *s = pol_get(l, "seconds"), *t = pol_get(l, "turns");
    double d;
    if (!s && !t)
        E(c, path, "a lifetime needs \"seconds\", \"turns\" or both");
    if (s && pol_as_int(c, s, mnc_jpath_key(&p2, path, "seconds"), 1, LIFE_MAX, &d) == 0)
        out->seconds = (uint64_t)d;
    if (t && pol_as_int(c, t, mnc_jpath_key(&p2, path, "turns"), 1, LIFE_MAX, &d) == 0)
        out->turns = (uint32_t)d;
}

void pol_parse_contract(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2, p3;
    mnc_jpath_idx(&path, "contracts", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a contract object, got %s", mnc_json_type(j));
        return;
    }
    static const char *const allowed[] = {"id",       "purpose", "issuers", "recipient", "fields",
                                          "lifetime", "sinks",   "memory",  "family",    "failure",
                                          "broker",   "epsilon", "budget",  "onward",    NULL};
    static const char *const required[] = {"id",     "purpose",  "issuers", "recipient",
                                           "fields", "lifetime", "family",  NULL};
    int before = c->errs->n;
    pol_check_keys(c, j, path.s, allowed, required);
    mnc_contract k;
    memset(&k, 0, sizeof(k));
    k.broker = MNC_NO_ID;
    k.epsilon = -1;
    k.budget = -1;
    k.family = -1;
    int has_id = pol_get_name(c, j, "id", path.s, k.id);
    (void)pol_get_name(c, j, "purpose", path.s, k.purpose);
    (void)name_set(b, c, j, "issuers", path.s, true, REF_AGENT, &k.issuers);
    const cJSON *r = pol_get(j, "recipient");
    int rid = -1;
    if (r) {
        mnc_jpath_key(&p2, path.s, "recipient");
        rid = resolve(b, c, r, p2.s, REF_AGENT);
        if (rid >= 0) {
            k.scope.recipient = (uint16_t)rid;
            if (mnc_set_has(&k.issuers, (unsigned)rid))
                E(c, p2.s, "recipient %s is also an issuer of this contract", Q(r->valuestring));
        }
    }
    (void)name_set(b, c, j, "fields", path.s, true, REF_FIELD, &k.scope.fields);
    const cJSON *l = pol_get(j, "lifetime");
    if (l)
        parse_lifetime(c, l, mnc_jpath_key(&p2, path.s, "lifetime"), &k.scope.life);
    (void)name_set(b, c, j, "sinks", path.s, false, REF_PRINCIPAL, &k.scope.sinks);
    const cJSON *m = pol_get(j, "memory");
    if (m) {
        if (cJSON_IsBool(m))
            k.scope.memory = cJSON_IsTrue(m);
        else
            E(c, mnc_jpath_key(&p2, path.s, "memory"), "expected a boolean, got %s", mnc_json_type(m));
    }
    char fam[MNC_NAME_MAX];
    if (pol_get_name(c, j, "family", path.s, fam) == 1) {
        for (int i = 0; i < b->n_fams; i++)
            if (strcmp(b->fams[i].fam.name, fam) == 0)
                k.family = i;
        if (k.family < 0)
            E(c, mnc_jpath_key(&p2, path.s, "family"), "unknown family %s", Q(fam));
    }
    const cJSON *fl = pol_get(j, "failure");
    bool delegate = false;
    if (!fl) {
        k.failure[0] = MNC_FAIL_ABSTAIN;
        k.n_failure = 1;
    } else {
        mnc_jpath_key(&p2, path.s, "failure");
        if (!cJSON_IsArray(fl)) {
            E(c, p2.s, "expected an array, got %s", mnc_json_type(fl));
        } else if (!fl->child) {
            E(c, p2.s, "must not be empty (omit it for [\"abstain\"])");
        } else {
            int i = 0;
            for (const cJSON *x = fl->child; x; x = x->next, i++) {
                mnc_jpath_idx(&p3, p2.s, i);
                int v = -1;
                if (cJSON_IsString(x) && strcmp(x->valuestring, "abstain") == 0)
                    v = MNC_FAIL_ABSTAIN;
                else if (cJSON_IsString(x) && strcmp(x->valuestring, "delegate") == 0)
                    v = MNC_FAIL_DELEGATE;
                else if (cJSON_IsString(x) && strcmp(x->valuestring, "approval") == 0)
                    v = MNC_FAIL_APPROVAL;
                if (v < 0) {
                    E(c, p3.s, "expected \"delegate\", \"approval\" or \"abstain\"");
                    continue;
                }
                bool dup = false;
                for (int q = 0; q < k.n_failure; q++)
                    dup |= (int)k.failure[q] == v;
                if (dup) {
                    E(c, p3.s, "duplicate failure mode %s", Q(x->valuestring));
                    continue;
                }
                if (k.n_failure < MNC_MAX_FAILURE)
                    k.failure[k.n_failure++] = (mnc_failure)v;
                delegate |= v == MNC_FAIL_DELEGATE;
            }
        }
    }
    const cJSON *br = pol_get(j, "broker");
    if (br) {
        mnc_jpath_key(&p2, path.s, "broker");
        int bid = resolve(b, c, br, p2.s, REF_AGENT);
        if (bid >= 0) {
            if (b->agents[bid].p.role != MNC_ROLE_BROKER)
                E(c, p2.s, "agent %s does not have role \"broker\"", Q(br->valuestring));
            else if (!delegate && fl)
                E(c, p2.s, "a broker is only allowed when failure has \"delegate\"");
            else if (!fl)
                E(c, p2.s,
                  "a broker is only allowed when failure has \"delegate\" (failure defaults "
                  "to [\"abstain\"])");
            k.broker = (uint16_t)bid;
        }
    } else if (delegate) {
        E(c, path.s, "failure has \"delegate\" but no broker is given");
    }
    const cJSON *ep = pol_get(j, "epsilon");
    if (ep)
        (void)pol_as_number(c, ep, mnc_jpath_key(&p2, path.s, "epsilon"), true, &k.epsilon);
    const cJSON *bu = pol_get(j, "budget");
    if (bu)
        (void)pol_as_number(c, bu, mnc_jpath_key(&p2, path.s, "budget"), true, &k.budget);

    if (has_id == 1) {
        for (int i = 0; i < b->n_cons; i++) {
            if (strcmp(b->cons[i].id, k.id) != 0)
                continue;
            mnc_jpath_key(&p2, path.s, "id");
            if (b->con_file[i] == c->fi)
                E(c, p2.s, "duplicate contract id %s", Q(k.id));
            else
                E(c, p2.s, "contract id %s is already used in %s", Q(k.id), b->files[b->con_file[i]].name);
            return;
        }
    }
    if (c->errs->n != before || has_id != 1)
        return;
    if (!room_for_one(c, path.s, (void **)&b->cons, &b->con_file, &b->cap_cons, b->n_cons, sizeof(*b->cons),
                      MAX_CONTRACTS, "too many contracts (at most %d in a policy set)"))
        return;
    b->cons[b->n_cons] = k;
    b->con_file[b->n_cons++] = c->fi;
}

/* A contract's "onward" (a second pass: it names contracts of any file of the set, defined
 * before or after it). Contracts that failed to parse are skipped (their errors are reported). */
void pol_parse_onward(build *b, fctx *c, const cJSON *j, int idx)
{
    const cJSON *on = cJSON_IsObject(j) ? pol_get(j, "onward") : NULL;
    const cJSON *id = on ? pol_get(j, "id") : NULL;
    if (!on || !cJSON_IsString(id))
        return;
    int me = -1;
    for (int i = 0; i < b->n_cons && me < 0; i++)
        if (b->con_file[i] == c->fi && strcmp(b->cons[i].id, id->valuestring) == 0)
            me = i;
    if (me < 0)
        return;
    jpath path, p2, p3;
    mnc_jpath_idx(&path, "contracts", idx);
    mnc_jpath_key(&p2, path.s, "onward");
    if (!cJSON_IsArray(on)) {
        E(c, p2.s, "expected an array of contract ids, got %s", mnc_json_type(on));
        return;
    }
    mnc_contract *k = &b->cons[me];
    int i = 0;
    for (const cJSON *x = on->child; x; x = x->next, i++) {
        mnc_jpath_idx(&p3, p2.s, i);
        if (!cJSON_IsString(x)) {
            E(c, p3.s, "expected a contract id (string), got %s", mnc_json_type(x));
            continue;
        }
        int t = -1;
        for (int q = 0; q < b->n_cons && t < 0; q++)
            if (strcmp(b->cons[q].id, x->valuestring) == 0)
                t = q;
        if (t < 0) {
            E(c, p3.s, "unknown contract %s", Q(x->valuestring));
            continue;
        }
        bool dup = false;
        for (int q = 0; q < k->n_onward; q++)
            dup |= k->onward[q] == t;
        if (dup)
            E(c, p3.s, "duplicate contract %s", Q(x->valuestring));
        else if (k->n_onward >= MNC_MAX_ONWARD)
            E(c, p3.s, "too many contracts (at most %d)", MNC_MAX_ONWARD);
        else
            k->onward[k->n_onward++] = (uint16_t)t;
    }
}
