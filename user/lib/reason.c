// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* reason.c - stable names for mnc_reason codes. */
#include <string.h>

#include "mnc/reason.h"

static const struct {
    mnc_reason r;
    const char *name;
} names[] = {
    {MNC_OK, "ok"},
    {MNC_R_NO_OBJECT, "no_object"},
    {MNC_R_REVOKED, "revoked"},
    {MNC_R_EXPIRED, "expired"},
    {MNC_R_NOT_HOLDER, "not_holder"},
    {MNC_R_RECIPIENT, "recipient"},
    {MNC_R_SINK, "sink_not_allowed"},
    {MNC_R_PURPOSE, "purpose"},
    {MNC_R_FIELDS, "fields"},
    {MNC_R_MEMORY, "memory_not_allowed"},
    {MNC_R_LOG, "log_not_allowed"},
    {MNC_R_CHANNEL, "channel"},
    {MNC_R_UNKNOWN_AGENT, "unknown_agent"},
    {MNC_R_WIDEN_FIELDS, "widen_fields"},
    {MNC_R_WIDEN_SINKS, "widen_sinks"},
    {MNC_R_WIDEN_LIFETIME, "widen_lifetime"},
    {MNC_R_WIDEN_MEMORY, "widen_memory"},
    {MNC_R_WIDEN_RECIPIENT, "widen_recipient"},
    {MNC_R_CONTRACT_FIELDS, "contract_fields"},
    {MNC_R_WRONG_RECIPIENT, "wrong_recipient"},
    {MNC_R_INSUFFICIENT, "insufficient"},
    {MNC_R_DIRECT_EXPOSURE, "direct_exposure"},
    {MNC_R_MISSING_VALUE, "missing_value"},
    {MNC_R_OVER_EPSILON, "over_epsilon"},
    {MNC_R_OVER_BUDGET, "over_budget"},
    {MNC_R_LEDGER_UNAVAILABLE, "ledger_unavailable"},
    {MNC_R_NOT_ISSUER, "not_issuer"},
    {MNC_R_NO_CANDIDATE, "no_candidate"},
    {MNC_R_NOT_CONFINED, "not_confined"},
    {MNC_R_INVALID, "invalid"},
    {MNC_R_INTERNAL, "internal"},
};

const char *mnc_reason_name(mnc_reason r)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].r == r)
            return names[i].name;
    return "unknown_reason";
}

int mnc_reason_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(names[i].name, name) == 0)
            return (int)names[i].r;
    return -1;
}
