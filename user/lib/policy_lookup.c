// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* policy_lookup.c - lookups in a loaded policy set (mnc/policy.h): by name, id, uid, purpose.
 * Kept apart from the loader so that modules the loader itself calls (the Bayes model,
 * risk_bayes.c, resolves field names) depend on the lookups only, not on the loader. */
#include <stdio.h>
#include <string.h>

#include "mnc/policy.h"
#include "mnc_util.h"

int mnc_policy_principal(const mnc_policy *p, const char *name)
{
    if (!p || !name)
        return -1;
    for (int i = 0; i < p->n_principals; i++)
        if (strcmp(p->principals[i].name, name) == 0)
            return i;
    return -1;
}

int mnc_policy_agent(const mnc_policy *p, const char *name)
{
    int i = mnc_policy_principal(p, name);
    return i >= 0 && p->principals[i].cls == MNC_SINK_AGENT ? i : -1;
}

int mnc_policy_field(const mnc_policy *p, const char *name)
{
    if (!p || !name)
        return -1;
    for (int i = 0; i < p->n_fields; i++)
        if (strcmp(p->fields[i].name, name) == 0)
            return i;
    return -1;
}

int mnc_policy_contract(const mnc_policy *p, const char *id)
{
    if (!p || !id)
        return -1;
    for (int i = 0; i < p->n_contracts; i++)
        if (strcmp(p->contracts[i].id, id) == 0)
            return i;
    return -1;
}

int mnc_policy_contract_for(const mnc_policy *p, const char *purpose, int recipient)
{
    if (!p || !purpose)
        return -1;
    for (int i = 0; i < p->n_contracts; i++)
        if (p->contracts[i].scope.recipient == recipient && strcmp(p->contracts[i].purpose, purpose) == 0)
            return i;
    return -1;
}

int mnc_policy_agent_by_uid(const mnc_policy *p, uint32_t uid)
{
    if (!p)
        return -1;
    int found = -1;
    for (int i = 0; i < p->n_principals; i++) {
        const mnc_principal *a = &p->principals[i];
        if (a->cls != MNC_SINK_AGENT)
            continue;
        for (int k = 0; k < a->n_uids; k++) {
            if (a->uids[k] != uid)
                continue;
            if (found >= 0 && found != i)
                return -1; /* ambiguous: the loader refuses this, but never guess */
            found = i;
        }
    }
    return found;
}

const mnc_requirement *mnc_policy_requirement(const mnc_policy *p, int agent, const char *purpose)
{
    if (!p || !purpose)
        return NULL;
    for (int i = 0; i < p->n_reqs; i++)
        if (p->reqs[i].agent == agent && strcmp(p->reqs[i].purpose, purpose) == 0)
            return &p->reqs[i];
    return NULL;
}

void mnc_policy_fieldset_str(const mnc_policy *p, const mnc_set *s, char *buf, size_t n)
{
    if (!buf || n == 0)
        return;
    buf[0] = '\0';
    if (!p || !s)
        return;
    size_t o = 0;
    for (int id = mnc_set_next(s, -1); id >= 0; id = mnc_set_next(s, id)) {
        const char *name = id < p->n_fields ? p->fields[id].name : "?";
        /* appended as snprintf(buf + o, n - o, "%s%s", sep, name) did, without printf: cut
         * at n - 1 bytes (truncated) */
        const char *const parts[] = {o ? "," : "", name};
        size_t w = mnc_str_cat(buf + o, n - o, parts, 2);
        if (w < strlen(parts[0]) + strlen(name))
            return; /* truncated */
        o += w;
    }
}

const char *mnc_failure_name(mnc_failure f)
{
    switch (f) {
    case MNC_FAIL_DELEGATE:
        return "delegate";
    case MNC_FAIL_APPROVAL:
        return "approval";
    case MNC_FAIL_ABSTAIN:
        return "abstain";
    }
    return "abstain";
}
