// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* observe.c - "enforce": "observe" agents (mnc_principal.observe; docs/threat-model.md,
 * "Observe mode").
 *
 * For a rollout, a policy may mark an agent "enforce": "observe". A scope check that the
 * agent's own operation fails (recipient, onward sink, purpose, fields, memory, log: the
 * reasons of the contract's scope) is then audited with decision "would_deny" and its reason,
 * and the operation goes on as if allowed. Everything else stays enforced: unknown objects,
 * revoked or expired ones, holding, channels, identity, MNC-L and MNC-D.
 *
 * It never happens silently: it is never the default and only a policy file says it (no flag);
 * mncd refuses to start with it while its kernel layer is on or may come on ("auto"), because
 * the kernel layer cannot observe (Landlock and the seccomp filter have no audit-only mode, and
 * the BPF hooks have no per-agent observe flag): an observe agent would be partly enforced,
 * partly not, without its record saying which. At start mncd says so on stderr and in an
 * audit record (observe.on) naming each observe agent and every contract whose scope it leaves
 * unenforced; `status` and the metrics carry the list.
 */
#include <stdio.h>
#include <string.h>

#include "mncd.h"

bool mncd_observed(const mncd *d, int agent)
{
    return agent >= 0 && agent < d->policy->n_principals && d->policy->principals[agent].observe;
}

bool mncd_observe_pass(mncd *d, int actor, mnc_reason r)
{
    if (!mncd_observed(d, actor))
        return false;
    switch (r) {
    case MNC_R_RECIPIENT:
    case MNC_R_SINK:
    case MNC_R_PURPOSE:
    case MNC_R_FIELDS:
    case MNC_R_MEMORY:
    case MNC_R_LOG:
        return true;
    default:
        return false;
    }
}

/* The contracts whose scope an observe agent leaves unenforced: it is their recipient (its
 * onward sends, logs and memory writes of their objects) or one of their issuers. */
static void contracts_of(const mncd *d, int agent, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (int k = 0; k < d->policy->n_contracts; k++) {
        const mnc_contract *c = &d->policy->contracts[k];
        if (c->scope.recipient != agent && !mnc_set_has(&c->issuers, (unsigned)agent))
            continue;
        int w = snprintf(out + o, n - o, "%s%s", o ? "," : "", c->id);
        if (w < 0 || (size_t)w >= n - o)
            break;
        o += (size_t)w;
    }
}

int mncd_observe_start(mncd *d)
{
    char names[512] = "";
    size_t o = 0;
    for (int i = 0; i < d->policy->n_principals; i++)
        if (d->policy->principals[i].observe) {
            int w = snprintf(names + o, sizeof(names) - o, "%s%s", o ? "," : "", d->policy->principals[i].name);
            if (w > 0 && (size_t)w < sizeof(names) - o)
                o += (size_t)w;
        }
    if (!o)
        return 0;
    if (d->cfg.kernel != MNCD_KERN_OFF) {
        fprintf(stderr,
                "mncd: refusing to start: agent(s) %s are \"enforce\": \"observe\", but the kernel layer is %s: it "
                "cannot observe (Landlock and seccomp have no audit-only mode), so they would be half enforced; "
                "run observe agents with \"kernel\": \"off\" (docs/threat-model.md, \"Observe mode\")\n",
                names, d->cfg.kernel == MNCD_KERN_AUTO ? "auto (it may come on)" : "on");
        return -1;
    }
    for (int i = 0; i < d->policy->n_principals; i++) {
        if (!d->policy->principals[i].observe)
            continue;
        char cs[600], det[800];
        contracts_of(d, i, cs, sizeof(cs));
        snprintf(det, sizeof(det),
                 "OBSERVE MODE: scope checks of agent %s are audited as would_deny and NOT enforced; contracts "
                 "left unenforced: %s",
                 d->policy->principals[i].name, cs[0] ? cs : "(none)");
        fprintf(stderr, "mncd: WARNING: %s\n", det);
        mncd_audit_named(d, "observe.on", d->policy->principals[i].name, NULL, NULL, "allow", "ok", det);
    }
    return 0;
}

void mncd_observe_status(const mncd *d, cJSON *r)
{
    cJSON *arr = NULL;
    for (int i = 0; i < d->policy->n_principals; i++) {
        if (!d->policy->principals[i].observe)
            continue;
        if (!arr && !(arr = cJSON_AddArrayToObject(r, "observe")))
            return;
        char cs[600];
        contracts_of(d, i, cs, sizeof(cs));
        cJSON *a = cJSON_CreateObject();
        if (!a || !cJSON_AddItemToArray(arr, a) || !cJSON_AddStringToObject(a, "agent", d->policy->principals[i].name))
            return;
        cJSON *l = cJSON_AddArrayToObject(a, "contracts_unenforced");
        for (char *p = cs, *e; l && *p; p = e ? e + 1 : p + strlen(p)) {
            e = strchr(p, ',');
            if (e)
                *e = '\0';
            cJSON_AddItemToArray(l, cJSON_CreateString(p));
        }
    }
}
