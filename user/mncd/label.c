// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* label.c - the label an agent's choices carry: the data type (mncd.h, "labels";
 * docs/protocol.md, "Identifiers an agent chooses"); taken and given: label_hold.c.
 *
 * An identifier an agent writes into mncd - a memory key, a release id, the narrowing of a
 * derived object - is data: the agent may have chosen it from anything it holds. So it carries
 * the intersection of the scopes of everything the agent holds, exactly as bytes the agent
 * writes would: per contract of a held object, the intersection of those objects' sinks (what
 * flow.c keeps for disclose), and overall the AND of their memory permissions; plus, with the
 * kernel layer on, the agent's kernel taint entry (which also holds what it inherited from a
 * workspace: kern_hold.c, wstaint.h). Whoever later learns something from such an identifier
 * - by matching it, by a hit or a miss - is given that label (label_hold.c). */
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "mncd.h"

static mncd_label_e *entry_for(mncd_label *l, uint16_t contract)
{
    for (int i = 0; i < l->n; i++)
        if (l->e[i].contract == contract)
            return &l->e[i];
    return NULL;
}

/* Adds one scope to l (meet): the contract's entry tightens, or a new entry. */
void mncd_label_add(mncd_label *l, uint16_t contract, const mnc_set *sinks, bool memory, const mnc_oid *rep)
{
    mncd_label_e *e = entry_for(l, contract);
    if (e) {
        e->sinks = mnc_set_and(&e->sinks, sinks);
        e->memory = e->memory && memory;
        return;
    }
    if (l->n == MNCD_LABEL_MAX) {
        /* more contracts than entries: fold the rest into the kernel part (still tightens
         * where the agent may go; only flow's per-contract record misses them) */
        l->kt_sinks = l->kt ? mnc_set_and(&l->kt_sinks, sinks) : *sinks;
        l->kt_memory = (l->kt ? l->kt_memory : true) && memory;
        l->kt = true;
        return;
    }
    e = &l->e[l->n++];
    e->contract = contract;
    e->sinks = *sinks;
    e->memory = memory;
    e->rep = *rep;
}

bool mncd_label_empty(const mncd_label *l) { return l->n == 0 && !l->kt; }

void mncd_label_meet(mncd_label *a, const mncd_label *b)
{
    for (int i = 0; i < b->n; i++)
        mncd_label_add(a, b->e[i].contract, &b->e[i].sinks, b->e[i].memory, &b->e[i].rep);
    if (b->kt) {
        a->kt_sinks = a->kt ? mnc_set_and(&a->kt_sinks, &b->kt_sinks) : b->kt_sinks;
        a->kt_memory = (a->kt ? a->kt_memory : true) && b->kt_memory;
        a->kt = true;
    }
}

void mncd_label_scope(const mncd_label *l, mnc_set *sinks, bool *memory)
{
    bool any = false;
    *memory = true;
    for (int i = 0; i < l->n; i++) {
        *sinks = any ? mnc_set_and(sinks, &l->e[i].sinks) : l->e[i].sinks;
        *memory = *memory && l->e[i].memory;
        any = true;
    }
    if (l->kt) {
        *sinks = any ? mnc_set_and(sinks, &l->kt_sinks) : l->kt_sinks;
        *memory = *memory && l->kt_memory;
        any = true;
    }
    if (!any) /* nothing: no restriction; the caller checks mncd_label_empty first */
        memset(sinks, 0xff, sizeof(*sinks));
}

int mncd_label_write_json(mnc_jbuf *b, const mnc_policy *p, const mncd_label *l)
{
    int rc = MNC_JBUF_LIT(b, "{\"c\":[");
    for (int i = 0; rc == 0 && i < l->n; i++) {
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&l->e[i].rep, hex);
        rc = i ? MNC_JBUF_LIT(b, ",{\"k\":") : MNC_JBUF_LIT(b, "{\"k\":");
        rc = rc ? rc : mnc_jbuf_str(b, p->contracts[l->e[i].contract].id);
        rc = rc ? rc : MNC_JBUF_LIT(b, ",\"o\":");
        rc = rc ? rc : mnc_jbuf_str(b, hex);
        rc = rc ? rc : MNC_JBUF_LIT(b, ",\"s\":[");
        bool first = true;
        for (int s = mnc_set_next(&l->e[i].sinks, -1); rc == 0 && s >= 0; s = mnc_set_next(&l->e[i].sinks, s)) {
            rc = first ? 0 : MNC_JBUF_LIT(b, ",");
            rc = rc ? rc : mnc_jbuf_str(b, p->principals[s].name);
            first = false;
        }
        rc = rc ? rc : l->e[i].memory ? MNC_JBUF_LIT(b, "],\"m\":true}") : MNC_JBUF_LIT(b, "],\"m\":false}");
    }
    rc = rc ? rc : MNC_JBUF_LIT(b, "]");
    if (rc == 0 && l->kt) {
        rc = MNC_JBUF_LIT(b, ",\"kt\":{\"s\":[");
        bool first = true;
        for (int s = mnc_set_next(&l->kt_sinks, -1); rc == 0 && s >= 0; s = mnc_set_next(&l->kt_sinks, s)) {
            rc = first ? 0 : MNC_JBUF_LIT(b, ",");
            rc = rc ? rc : mnc_jbuf_str(b, p->principals[s].name);
            first = false;
        }
        rc = rc ? rc : l->kt_memory ? MNC_JBUF_LIT(b, "],\"m\":true}") : MNC_JBUF_LIT(b, "],\"m\":false}");
    }
    return rc ? rc : MNC_JBUF_LIT(b, "}");
}

static int sinks_from(const mnc_policy *p, const cJSON *a, mnc_set *out)
{
    mnc_set_clear(out);
    if (!cJSON_IsArray(a))
        return -1;
    for (const cJSON *it = a->child; it; it = it->next) {
        int id = cJSON_IsString(it) ? mnc_policy_principal(p, it->valuestring) : -1;
        if (id < 0)
            return -1;
        mnc_set_add(out, (unsigned)id);
    }
    return 0;
}

int mncd_label_from_json(const mnc_policy *p, const cJSON *j, mncd_label *out)
{
    memset(out, 0, sizeof(*out));
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "c");
    if (!cJSON_IsObject(j) || !cJSON_IsArray(c))
        return -1;
    for (const cJSON *it = c->child; it; it = it->next) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "k");
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(it, "o");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "m");
        int ct = cJSON_IsString(k) ? mnc_policy_contract(p, k->valuestring) : -1;
        mnc_oid rep;
        mnc_set s;
        if (ct < 0 || !cJSON_IsString(o) || mnc_oid_parse(o->valuestring, &rep) != 0 || !cJSON_IsBool(m) ||
            sinks_from(p, cJSON_GetObjectItemCaseSensitive(it, "s"), &s) != 0)
            return -1;
        mncd_label_add(out, (uint16_t)ct, &s, cJSON_IsTrue(m), &rep);
    }
    const cJSON *kt = cJSON_GetObjectItemCaseSensitive(j, "kt");
    if (kt) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(kt, "m");
        mnc_set s;
        if (!cJSON_IsBool(m) || sinks_from(p, cJSON_GetObjectItemCaseSensitive(kt, "s"), &s) != 0)
            return -1;
        out->kt_sinks = out->kt ? mnc_set_and(&out->kt_sinks, &s) : s;
        out->kt_memory = (out->kt ? out->kt_memory : true) && cJSON_IsTrue(m);
        out->kt = true;
    }
    return 0;
}
