// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* label_hold.c - the label of what an agent chooses, taken from what it holds, and given to
 * whoever learns from it (mncd.h, "labels"; the label itself: label.c).
 *
 * mncd_label_of: flow.c's record of what the agent holds (per contract: ∩ sinks, AND memory)
 * and, with the kernel layer on, its kernel taint entry (which also holds what it inherited
 * from a workspace: kern_hold.c, wstaint.h). mncd_label_confer: the reader's flow record and
 * kernel taint take the label, as at a delivery (mncd_kern_hold: map, workspace record, sweep,
 * fd scan); a failure refuses the answer. */
#include <stdlib.h>
#include <string.h>

#include "mncd.h"

/* The agent's kernel taint entry, if it says tainted: *sinks, *memory. 1 tainted, 0 not (or the
 * layer is off), -1 the entry could not be read. */
static int kernel_part(mncd *d, int agent, mnc_set *sinks, bool *memory)
{
    if (!mncd_kern_on(d))
        return 0;
    cJSON *t = cJSON_CreateObject();
    char why[160];
    int rc = -1;
    if (t && mncd_kern_whoami(d, agent, t, why, sizeof(why)) == 0) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(t, "kernel");
        const cJSON *tn = cJSON_GetObjectItemCaseSensitive(k, "tainted");
        const cJSON *sn = cJSON_GetObjectItemCaseSensitive(k, "sinks");
        const cJSON *mn = cJSON_GetObjectItemCaseSensitive(k, "memory");
        rc = cJSON_IsTrue(tn) ? 1 : 0;
        mnc_set_clear(sinks);
        for (const cJSON *it = cJSON_IsArray(sn) ? sn->child : NULL; it; it = it->next) {
            int id = cJSON_IsString(it) ? mnc_policy_principal(d->policy, it->valuestring) : -1;
            if (id >= 0)
                mnc_set_add(sinks, (unsigned)id);
        }
        *memory = cJSON_IsTrue(mn);
        if (!cJSON_IsBool(tn) || !cJSON_IsArray(sn))
            rc = -1;
    }
    cJSON_Delete(t);
    return rc;
}

int mncd_label_of(mncd *d, int agent, mncd_label *out)
{
    if (mncd_flow_label(d, agent, out) != 0)
        return -1;
    if (agent < 0 || agent >= d->policy->n_principals)
        return 0;
    mnc_set ks;
    bool km = false;
    int k = kernel_part(d, agent, &ks, &km);
    if (k < 0) { /* unknown: the tightest there is */
        mnc_set_clear(&ks);
        km = false;
        k = 1;
    }
    if (k == 1) {
        out->kt_sinks = out->kt ? mnc_set_and(&out->kt_sinks, &ks) : ks;
        out->kt_memory = (out->kt ? out->kt_memory : true) && km;
        out->kt = true;
    }
    return 0;
}

int mncd_label_confer(mncd *d, int agent, const mncd_label *l, const char *op)
{
    if (mncd_label_empty(l))
        return 0;
    /* flow.c: per contract, as if an object of that contract with these sinks were delivered */
    for (int i = 0; i < l->n; i++) {
        mnc_disclosure s;
        memset(&s, 0, sizeof(s));
        s.id = l->e[i].rep;
        s.contract = l->e[i].contract;
        s.scope.sinks = l->e[i].sinks;
        s.scope.memory = l->e[i].memory;
        if (mncd_flow_hold(d, agent, &s) != 0)
            return -1;
    }
    mncd_rec_tainted(d, agent, true);
    /* the kernel: one hold with the intersection (kern_hold.c: taint map, workspace record,
     * sweep and fd scan, as before any delivery) */
    mnc_disclosure k;
    memset(&k, 0, sizeof(k));
    k.id = l->n ? l->e[0].rep : (mnc_oid){{0}};
    k.contract = l->n ? l->e[0].contract : 0;
    mncd_label_scope(l, &k.scope.sinks, &k.scope.memory);
    return mncd_kern_hold(d, agent, &k, op);
}

bool mncd_label_kernel_tainted(mncd *d, int agent)
{
    mnc_set s;
    bool m;
    return kernel_part(d, agent, &s, &m) != 0; /* unreadable counts as tainted */
}
