// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core.c - what every part of mncd shares: the audit record writer and principal names
 * (see mncd.h, "core"). Everything above it (verbs, kernel layer, MNC-L, store, quarantine,
 * Landlock audit) calls down into it, never the other way round. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mncd.h"

const char *mncd_peer_name(const mncd *d, long id)
{
    return id >= 0 && id < d->policy->n_principals ? d->policy->principals[id].name : NULL;
}

void mncd_audit_named(mncd *d, const char *op, const char *sender, const char *receiver, const mnc_oid *obj,
                      const char *decision, const char *reason, const char *detail)
{
    char hex[MNC_OID_HEX];
    if (obj)
        mnc_oid_hex(obj, hex);
    mnc_audit_rec r = {.time_ms = mnc_now_ms(),
                       .op = op,
                       .sender = sender,
                       .receiver = receiver,
                       .object = obj ? hex : NULL,
                       .decision = decision,
                       .reason = reason,
                       .detail = detail};
    if (mnc_audit_append(d->audit, &r) != 0) {
        fprintf(stderr, "mncd: audit append failed: %s; refusing to continue\n", strerror(errno));
        d->fatal = true;
    }
}

void mncd_audit(mncd *d, const char *op, int sender, int receiver, const mnc_oid *obj, const char *decision,
                mnc_reason reason, const char *detail)
{
    /* An object id a refused request named but no object has is the caller's choice of 128 bits
     * (attack audit_chosen_name): recorded only for an object that exists. An allowed operation
     * names a real object (a revoke's is already gone, and is kept). */
    if (obj && strcmp(decision, "allow") != 0 && !mnc_registry_get(&d->store.reg, obj))
        obj = NULL;
    mncd_audit_named(d, op, mncd_peer_name(d, sender), mncd_peer_name(d, receiver), obj, decision,
                     mnc_reason_name(reason), detail);
}
