// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* whoami.c - the whoami verb (docs/protocol.md, "whoami"): who mncd says the caller is, what the
 * policy lets it use, and its taint (mncd's record and the kernel's entry). */
#include <cjson/cJSON.h>
#include <string.h>

#include "mncd.h"

/* whoami's "contracts": what the agent may disclose under (it is an issuer; with the recipient)
 * and receive under (it is the recipient; with the issuers). false on OOM. */
static bool whoami_contracts(const mncd *d, int agent, cJSON *r)
{
    const mnc_policy *p = d->policy;
    cJSON *c = cJSON_AddObjectToObject(r, "contracts");
    cJSON *dis = c ? cJSON_AddArrayToObject(c, "disclose") : NULL;
    cJSON *rec = c ? cJSON_AddArrayToObject(c, "receive") : NULL;
    if (!rec)
        return false;
    for (int i = 0; i < p->n_contracts; i++) {
        const mnc_contract *ct = &p->contracts[i];
        bool issuer = mnc_set_has(&ct->issuers, (unsigned)agent);
        bool recipient = ct->scope.recipient == (unsigned)agent;
        for (int k = 0; k < 2; k++) {
            if (!(k == 0 ? issuer : recipient))
                continue;
            cJSON *e = cJSON_CreateObject();
            if (!e || !cJSON_AddItemToArray(k == 0 ? dis : rec, e) || !cJSON_AddStringToObject(e, "contract", ct->id) ||
                !cJSON_AddStringToObject(e, "purpose", ct->purpose))
                return false;
            if (k == 0 && !cJSON_AddStringToObject(e, "recipient", mncd_peer_name(d, ct->scope.recipient)))
                return false;
            if (k == 1) {
                cJSON *from = cJSON_AddArrayToObject(e, "issuers");
                if (!from)
                    return false;
                for (int a = 0; a < p->n_principals; a++)
                    if (mnc_set_has(&ct->issuers, (unsigned)a) &&
                        !cJSON_AddItemToArray(from, cJSON_CreateString(p->principals[a].name)))
                        return false;
            }
        }
    }
    return true;
}

#define WHOAMI_MAX_OBJECTS 64 /* ids listed; n_objects counts all */

typedef struct held_view {
    unsigned agent;
    int n;
    bool memory;
    mnc_set sinks; /* ∩ φ over the held objects */
    cJSON *ids;
    bool oom;
} held_view;

static int held_view_one(mnc_disclosure *o, void *arg)
{
    held_view *h = arg;
    if (!mnc_set_has(&o->holders, h->agent))
        return 0;
    h->sinks = h->n ? mnc_set_and(&h->sinks, &o->scope.sinks) : o->scope.sinks;
    h->memory = (h->n ? h->memory : true) && o->scope.memory;
    if (h->n++ < WHOAMI_MAX_OBJECTS) {
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&o->id, hex);
        h->oom |= !cJSON_AddItemToArray(h->ids, cJSON_CreateString(hex));
    }
    return 0;
}

/* whoami's "taint": the monitor's view (the objects mncd delivered to the agent that it still
 * records, ∩ of their sinks, AND of their memory permission: the taint these deliveries imply)
 * and the kernel's entry for the agent (mncd_kern_whoami). NULL, or an error response. */
static cJSON *whoami_taint(mncd *d, int agent, const mnc_request *q, cJSON *r)
{
    cJSON *t = cJSON_AddObjectToObject(r, "taint");
    held_view h = {.agent = (unsigned)agent, .ids = t ? cJSON_AddArrayToObject(t, "objects") : NULL};
    if (!h.ids)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "out of memory");
    mnc_registry_each(&d->store.reg, held_view_one, &h);
    cJSON *sinks = cJSON_AddArrayToObject(t, "sinks");
    bool ok = !h.oom && sinks && cJSON_AddNumberToObject(t, "n_objects", h.n) &&
              cJSON_AddBoolToObject(t, "tainted", h.n > 0) && cJSON_AddBoolToObject(t, "memory", h.n ? h.memory : true);
    for (int i = 0; ok && h.n && i < d->policy->n_principals; i++)
        if (mnc_set_has(&h.sinks, (unsigned)i))
            ok = cJSON_AddItemToArray(sinks, cJSON_CreateString(d->policy->principals[i].name));
    if (!ok)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "out of memory");
    char why[160];
    if (mncd_kern_whoami(d, agent, t, why, sizeof(why)) != 0)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "%s", why);
    return NULL;
}

cJSON *mncd_whoami(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    cJSON *r = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (!r)
        return NULL;
    if (w->agent >= 0)
        cJSON_AddStringToObject(r, "agent", mncd_peer_name(d, w->agent));
    else
        cJSON_AddNullToObject(r, "agent");
    cJSON_AddStringToObject(r, "via", w->via == MNCD_VIA_CGROUP ? "cgroup" : w->via == MNCD_VIA_UID ? "uid" : "none");
    cJSON_AddNumberToObject(r, "uid", w->uid);
    cJSON_AddNumberToObject(r, "pid", w->pid);
    cJSON_AddStringToObject(r, "cgroup", w->cgroup);
    cJSON_AddBoolToObject(r, "admin", w->admin);
    /* an unidentified caller (or the admin, which is no agent) has no contracts and no taint */
    if (w->agent < 0) {
        if (!cJSON_AddNullToObject(r, "contracts") || !cJSON_AddNullToObject(r, "taint")) {
            cJSON_Delete(r);
            return mnc_resp_error(q->id, MNC_R_INTERNAL, "out of memory");
        }
        return r;
    }
    cJSON *err = whoami_contracts(d, w->agent, r) ? whoami_taint(d, w->agent, q, r)
                                                  : mnc_resp_error(q->id, MNC_R_INTERNAL, "out of memory");
    if (err) {
        cJSON_Delete(r);
        return err;
    }
    return r;
}
