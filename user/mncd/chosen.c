// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* chosen.c - what an agent chooses in a request (mncd.h, "what an agent chooses";
 * docs/threat-model.md, "Records about agents"; docs/protocol.md, "Identifiers an agent
 * chooses"): the strings the record scrub replaces while the request is handled, the kernel
 * taint that puts an agent's records under its budget, the identifiers a tainted issuer names
 * in a disclose, and the ladder of lifetimes a tainted deriver is granted. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "mnc/monitor.h"
#include "mncd.h"

/* ---- the strings a request carries, for the record scrub (core.c) */

/* A name mncd itself uses (a principal, contract, purpose, field or form of the policy, a verb,
 * a channel): a record may carry it, so it is not the agent's text. */
static bool policy_name(const mncd *d, const char *v)
{
    const mnc_policy *p = d->policy;
    if (mnc_policy_principal(p, v) >= 0 || mnc_policy_field(p, v) >= 0 || mnc_policy_contract(p, v) >= 0 ||
        mnc_verb_from_name(v) >= 0 || mnc_channel_from_name(v) >= 0)
        return true;
    for (int i = 0; i < p->n_contracts; i++)
        if (strcmp(p->contracts[i].purpose, v) == 0)
            return true;
    for (int f = 0; f < p->n_families; f++)
        for (int i = 0; i < p->families[f].n_forms; i++)
            if (strcmp(p->families[f].forms[i].name, v) == 0)
                return true;
    return false;
}

#define SCRUB_VALS 64
typedef struct scrub_list {
    const char *v[SCRUB_VALS];
    int n;
} scrub_list;

static void scrub_add(const mncd *d, scrub_list *l, const char *v)
{
    mnc_oid oid;
    if (l->n == SCRUB_VALS || strlen(v) < 4 || policy_name(d, v) ||
        (mnc_oid_parse(v, &oid) == 0 && mnc_registry_get(&d->store.reg, &oid)))
        return;
    l->v[l->n++] = v;
}

/* Every string value of the request, and the member names of its nested objects (state
 * fields, receipt fields, a lifetime's keys). */
static void scrub_walk(const mncd *d, scrub_list *l, const cJSON *j, int depth)
{
    for (const cJSON *it = j ? j->child : NULL; it && depth < MNC_JSON_DEPTH_MAX; it = it->next) {
        if (depth > 0 && it->string)
            scrub_add(d, l, it->string);
        if (cJSON_IsString(it))
            scrub_add(d, l, it->valuestring);
        else if (cJSON_IsObject(it) || cJSON_IsArray(it))
            scrub_walk(d, l, it, depth + 1);
    }
}

/* An agent whose mncd record says it holds nothing may still be tainted in the kernel (a
 * workspace it inherited): then its records count against its budget too. */
void mncd_note_kernel_taint(mncd *d, const mncd_ident *w)
{
    if (w->agent < 0 || !mncd_kern_on(d) || mncd_rec_is_tainted(d, w->agent))
        return;
    if (mncd_label_kernel_tainted(d, w->agent))
        mncd_rec_tainted(d, w->agent, true);
}

void mncd_scrub_request(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    static scrub_list l; /* the pointers are into q, valid while it is handled */
    l.n = 0;
    if (q && !w->admin)
        scrub_walk(d, &l, q->root, 0);
    mncd_rec_scrub_set(d, l.v, l.n);
}

/* The identifiers a tainted issuer names in a disclose (docs/protocol.md, "Identifiers an agent
 * chooses"): they are data it may have taken from what it holds.
 *   - state.subject keys the shared ledger, which every issuer of the subject reads back (its
 *     history, "spent"): a tainted issuer may charge only a subject the ledger already has, so
 *     that it never writes down a name of its own choosing there;
 *   - release keys its charge for retries: kept as the keyed hash of (issuer, release), and the
 *     issuer is given its own label first (label_hold.c): whatever instance of the agent probes
 *     its release ids learns their hits and misses only carrying what the ids carry.
 * Sets mx->release. NULL, or a refusal (audited). */
static char release_h[MNC_AUDIT_HV_MAX];

cJSON *mncd_tainted_identifiers(mncd *d, const mncd_ident *w, const mnc_request *q, int contract, mncd_mncl_ctx *mx)
{
    mx->release = q->release;
    if (!mncd_rec_is_tainted(d, w->agent))
        return NULL;
    const mnc_contract *ct = &d->policy->contracts[contract];
    if (mx->ledger && mx->n_history == 0 && !(mx->limits.spent > 0)) {
        mncd_audit(d, "disclose", w->agent, ct->scope.recipient, NULL, "deny", MNC_R_INVALID,
                   "a tainted issuer named a subject the ledger does not have");
        return mnc_resp_deny(q->id, MNC_R_INVALID,
                             "not released: the ledger has no subject of that name, and an agent that holds "
                             "objects may not bring a new one (it is an identifier it chose; docs/protocol.md)");
    }
    if (!q->release)
        return NULL;
    mncd_label own;
    if (mncd_label_of(d, w->agent, &own) != 0 || mncd_label_confer(d, w->agent, &own, "disclose") != 0)
        return mnc_resp_error(q->id, MNC_R_INTERNAL,
                              "disclose refused before the ledger lookup by the kernel layer (see the audit log; "
                              "fail closed)");
    char buf[2 * MNC_NAME_MAX + 2];
    const char *me = mncd_peer_name(d, w->agent);
    size_t ml = strlen(me), rl = strlen(q->release);
    memcpy(buf, me, ml);
    buf[ml] = '\0';
    memcpy(buf + ml + 1, q->release, rl);
    mx->release = mncd_hv_id(d, buf, ml + 1 + rl, release_h);
    return NULL;
}

/* The lifetimes mncd grants a tainted deriver: the largest step of a fixed ladder not above
 * what it asked for (a narrowing still), so that the numbers in a derived object - which its
 * recipient and the admin's `list` see - are mncd's, carrying ~5 bits of choice, not 31. */
static const uint64_t seconds_ladder[] = {1,    2,     3,     5,     10,    15,     20,     30,      45,       60,
                                          90,   120,   180,   300,   600,   900,    1200,   1800,    2700,     3600,
                                          7200, 10800, 21600, 43200, 86400, 172800, 604800, 2592000, 31536000, 0};
static const uint64_t turns_ladder[] = {1, 2, 3, 4, 5, 10, 20, 50, 100, 1000, 10000, 100000, 1000000, 0};

static uint64_t ladder_floor(uint64_t v, const uint64_t *ladder)
{
    if (!v)
        return 0;
    uint64_t best = ladder[0];
    for (int i = 0; ladder[i]; i++)
        if (ladder[i] <= v)
            best = ladder[i];
    return best;
}

void mncd_ladder_lifetime(mnc_lifetime *life)
{
    life->seconds = ladder_floor(life->seconds, seconds_ladder);
    life->turns = (uint32_t)ladder_floor(life->turns, turns_ladder);
}
