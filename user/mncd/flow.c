// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* flow.c - what an agent holds limits what it may say in bytes of its own (contract in mncd.h,
 * "flow").
 *
 * `disclose` takes its state from the caller. An agent that received an object could put the
 * object's bytes into that state and disclose them to anyone it issues a contract to: mncd's
 * own verb as a relay around the object's scope (attack mncd_redisclose). So mncd keeps, per
 * agent, the objects' scopes it has delivered to that agent, grouped by contract: for each
 * contract k, the intersection of the sinks of the objects of k the agent holds. A disclosure
 * under contract c to recipient r is allowed only if, for every such k, r is among those sinks
 * or c is among k's "onward" contracts (the policy's declassification: the author says that
 * holding an object of k may inform a disclosure under c).
 *
 * The record only tightens while mncd runs (a process that has read bytes keeps them), except
 * through the admin verb taint.reset. At start it is rebuilt from the objects the state
 * journal still holds (their holders other than their origin).
 */
#include <stdlib.h>
#include <string.h>

#include "mncd.h"

struct mncd_flow {
    int n_agents;
    int n_contracts;
    /* per agent: NULL while it holds nothing; else n_contracts sets (sinks ∩ per contract)
     * and n_contracts flags (1 = holds an object of that contract) */
    mnc_set **sinks;
    unsigned char **held;
    /* per agent and contract: the AND of the held objects' memory bits, and one of their ids
     * (the label of what the agent chooses: label.c) */
    unsigned char **memory;
    mnc_oid **rep;
};

static void free_agent(struct mncd_flow *f, int agent)
{
    free(f->sinks[agent]);
    free(f->held[agent]);
    free(f->memory[agent]);
    free(f->rep[agent]);
    f->sinks[agent] = NULL;
    f->held[agent] = NULL;
    f->memory[agent] = NULL;
    f->rep[agent] = NULL;
}

static int hold_one(struct mncd_flow *f, int agent, const mnc_disclosure *o)
{
    if (agent < 0 || agent >= f->n_agents || o->contract >= f->n_contracts)
        return -1;
    if (!f->sinks[agent]) {
        f->sinks[agent] = calloc((size_t)f->n_contracts, sizeof(mnc_set));
        f->held[agent] = calloc((size_t)f->n_contracts, 1);
        f->memory[agent] = calloc((size_t)f->n_contracts, 1);
        f->rep[agent] = calloc((size_t)f->n_contracts, sizeof(mnc_oid));
        if (!f->sinks[agent] || !f->held[agent] || !f->memory[agent] || !f->rep[agent]) {
            free_agent(f, agent);
            return -1;
        }
    }
    int k = o->contract;
    bool had = f->held[agent][k];
    f->sinks[agent][k] = had ? mnc_set_and(&f->sinks[agent][k], &o->scope.sinks) : o->scope.sinks;
    f->memory[agent][k] = (had ? f->memory[agent][k] : 1) && o->scope.memory;
    if (!had)
        f->rep[agent][k] = o->id;
    f->held[agent][k] = 1;
    return 0;
}

typedef struct rebuild {
    mncd *d;
    struct mncd_flow *f;
    int rc;
} rebuild;

static int rebuild_one(mnc_disclosure *o, void *arg)
{
    rebuild *r = arg;
    for (int h = mnc_set_next(&o->holders, -1); r->rc == 0 && h >= 0; h = mnc_set_next(&o->holders, h))
        if (h != o->origin) {
            r->rc = hold_one(r->f, h, o);
            mncd_rec_tainted(r->d, h, true); /* its records count against its budget (core.c) */
        }
    return 0;
}

int mncd_flow_open(mncd *d)
{
    struct mncd_flow *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    f->n_agents = d->policy->n_principals;
    f->n_contracts = d->policy->n_contracts;
    size_t na = (size_t)(f->n_agents ? f->n_agents : 1);
    f->sinks = calloc(na, sizeof(*f->sinks));
    f->held = calloc(na, sizeof(*f->held));
    f->memory = calloc(na, sizeof(*f->memory));
    f->rep = calloc(na, sizeof(*f->rep));
    d->flow = f;
    if (!f->sinks || !f->held || !f->memory || !f->rep)
        return -1;
    rebuild r = {d, f, 0};
    mnc_registry_each(&d->store.reg, rebuild_one, &r);
    return r.rc;
}

void mncd_flow_close(mncd *d)
{
    struct mncd_flow *f = d->flow;
    if (!f)
        return;
    for (int a = 0; f->sinks && f->held && f->memory && f->rep && a < f->n_agents; a++)
        free_agent(f, a);
    free(f->sinks);
    free(f->held);
    free(f->memory);
    free(f->rep);
    free(f);
    d->flow = NULL;
}

int mncd_flow_hold(mncd *d, int agent, const mnc_disclosure *o)
{
    if (!d->flow || hold_one(d->flow, agent, o) != 0)
        return -1;
    mncd_rec_tainted(d, agent, true); /* its records count against its budget (core.c) */
    return 0;
}

void mncd_flow_reset(mncd *d, int agent)
{
    struct mncd_flow *f = d->flow;
    if (!f || agent < 0 || agent >= f->n_agents)
        return;
    free_agent(f, agent);
    mncd_rec_tainted(d, agent, false);
}

int mncd_flow_label(const mncd *d, int agent, mncd_label *out)
{
    const struct mncd_flow *f = d->flow;
    memset(out, 0, sizeof(*out));
    if (!f)
        return -1;
    if (agent < 0 || agent >= f->n_agents || !f->held[agent])
        return 0;
    for (int k = 0; k < f->n_contracts; k++)
        if (f->held[agent][k])
            mncd_label_add(out, (uint16_t)k, &f->sinks[agent][k], f->memory[agent][k], &f->rep[agent][k]);
    return 0;
}

mnc_reason mncd_flow_check(const mncd *d, int agent, int contract, int recipient, int *blocking)
{
    const struct mncd_flow *f = d->flow;
    *blocking = -1;
    if (!f || agent < 0 || agent >= f->n_agents)
        return f ? MNC_OK : MNC_R_INTERNAL; /* no record: fail closed */
    if (!f->held[agent])
        return MNC_OK;
    for (int k = 0; k < f->n_contracts; k++) {
        if (!f->held[agent][k] || mnc_set_has(&f->sinks[agent][k], (unsigned)recipient))
            continue;
        const mnc_contract *ck = &d->policy->contracts[k];
        bool onward = false;
        for (int i = 0; i < ck->n_onward; i++)
            onward |= ck->onward[i] == contract;
        if (!onward) {
            *blocking = k;
            return MNC_R_SINK;
        }
    }
    return MNC_OK;
}
