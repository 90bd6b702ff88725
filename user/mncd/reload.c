// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* reload.c - SIGHUP: a validated restart in place (mncd.h, "reload"; docs/mncd.md, "Reload").
 *
 * mncd holds its policy as integer ids everywhere (objects, inboxes, flow records, the kernel
 * maps), so a reload is a restart: the loop stops as for SIGTERM (everything acknowledged is
 * durable, the stop is audited) and main() executes mncd again with the same arguments and
 * pid. The new process loads the edited policy, re-reads the state journal by name, and binds
 * the pinned kernel state to the new ids by name (kern_principals.c). A restart that would fail
 * leaves no daemon, so the running one first checks what it can - the config parses, the
 * policy loads, the config's agent mappings name agents of it, and every object, memory entry
 * and inbox the journal holds loads under it - and refuses the reload (audited; it keeps
 * running on the old policy) when any of that does not hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc_kern.h"
#include "mncd.h"

typedef struct check_ctx {
    const mnc_policy *old, *nu;
    char *why;
    size_t n;
    int bad;
} check_ctx;

/* The object as the journal stores it (by name), read back under the new policy. */
static int check_object(mnc_disclosure *o, void *arg)
{
    check_ctx *x = arg;
    if (x->bad)
        return 0;
    cJSON *j = mnc_disclosure_to_json(x->old, o);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_disclosure tmp;
    memset(&tmp, 0, sizeof(tmp));
    int r = j ? mnc_disclosure_from_json(x->nu, j, &tmp, &e) : -1;
    if (r == 0)
        mnc_disclosure_free(&tmp);
    else {
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&o->id, hex);
        snprintf(x->why, x->n, "object %s does not load under the new policy: %s", hex,
                 e.n ? e.msg[0] : "out of memory");
        x->bad = 1;
    }
    mnc_errors_free(&e);
    cJSON_Delete(j);
    return 0;
}

/* A principal name of the old policy that the new one must have, of the same class. */
static int same_principal(check_ctx *x, int id, const char *what)
{
    if (id < 0 || id >= x->old->n_principals)
        return 0;
    const mnc_principal *p = &x->old->principals[id];
    int nid = mnc_policy_principal(x->nu, p->name);
    if (nid >= 0 && x->nu->principals[nid].cls == p->cls)
        return 0;
    snprintf(x->why, x->n, "%s %s is not a %s of the new policy", what, p->name, mnc_sink_class_name(p->cls));
    x->bad = 1;
    return -1;
}

/* A memory entry "store/key": its store a memory sink of the new policy, its writer there. */
static int check_mem(mnc_hnode *h, void *arg)
{
    check_ctx *x = arg;
    const mncd_mem *m = MNC_HTAB_ENTRY(h, mncd_mem, h);
    char store[MNC_NAME_MAX];
    const char *sl = strchr(m->key, '/');
    size_t sn = sl ? (size_t)(sl - m->key) : 0;
    if (sn == 0 || sn >= sizeof(store))
        return 0;
    memcpy(store, m->key, sn);
    store[sn] = 0;
    int nid = mnc_policy_principal(x->nu, store);
    if (nid < 0 || x->nu->principals[nid].cls != MNC_SINK_MEMORY) {
        snprintf(x->why, x->n, "memory store %s is not a memory sink of the new policy", store);
        x->bad = 1;
        return -1;
    }
    return same_principal(x, m->writer, "a memory entry's writer");
}

static int check_store(const mncd *d, check_ctx *x)
{
    mnc_registry_each(&d->store.reg, check_object, x);
    if (x->bad)
        return -1;
    for (int a = 0; a < d->policy->n_principals; a++) {
        const mncd_inbox *in = d->store.inbox ? &d->store.inbox[a] : NULL;
        if (!in || in->n == 0)
            continue;
        if (same_principal(x, a, "inbox of") != 0)
            return -1;
        for (const mncd_msg *m = in->head; m; m = m->next)
            if (same_principal(x, m->from, "a queued message's sender") != 0)
                return -1;
    }
    return mnc_htab_each(&d->store.mem, check_mem, x);
}

int mncd_reload_check(mncd *d, char *why, size_t n)
{
    why[0] = 0;
    if (!d->argv) {
        snprintf(why, n, "no command line to restart with");
        return -1;
    }
    mncd_config nc;
    if (mncd_config_load(&nc, d->argc, d->argv) != 0) {
        mncd_config_free(&nc);
        snprintf(why, n, "the config or command line does not parse (see mncd's stderr)");
        return -1;
    }
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files((const char *const *)nc.policies, nc.n_policies, &e);
    int rc = -1;
    if (!p) {
        snprintf(why, n, "the policy does not load: %s", e.n ? e.msg[0] : "?");
        goto out;
    }
    for (int i = 0; i < nc.n_uids; i++)
        if (mnc_policy_agent(p, nc.uids[i].agent) < 0) {
            snprintf(why, n, "config: agents.%s: no such agent in the new policy", nc.uids[i].agent);
            goto out;
        }
    for (int i = 0; i < nc.n_cgroups; i++)
        if (mnc_policy_agent(p, nc.cgroups[i].agent) < 0) {
            snprintf(why, n, "config: cgroups[\"%s\"]: no such agent in the new policy", nc.cgroups[i].path);
            goto out;
        }
    check_ctx x = {d->policy, p, why, n, 0};
    if (check_store(d, &x) != 0)
        goto out;
    snprintf(why, n, "%d policy file(s), %d principals, %d contracts", nc.n_policies, p->n_principals, p->n_contracts);
    rc = 0;
out:
    mnc_errors_free(&e);
    mnc_policy_free(p);
    mncd_config_free(&nc);
    return rc;
}
