// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* monitor.c - the reference monitor: one pure check per operation (see monitor.h). */
#include <string.h>

#include "mnc/monitor.h"

static const char *const channel_names[MNC_CH_COUNT] = {
    "message", "tool", "forward", "log", "memory_write", "memory_read", "recv",
};

const char *mnc_channel_name(mnc_channel ch) { return (unsigned)ch < MNC_CH_COUNT ? channel_names[ch] : "unknown"; }

int mnc_channel_from_name(const char *name)
{
    for (int i = 0; i < MNC_CH_COUNT; i++)
        if (name && strcmp(name, channel_names[i]) == 0)
            return i;
    return -1;
}

static bool valid_principal(const mnc_policy *p, int id) { return id >= 0 && id < p->n_principals; }

static enum mnc_sink_class cls_of(const mnc_policy *p, int id) { return p->principals[id].cls; }

mnc_reason mnc_monitor_check(const mnc_policy *p, const mnc_op *op, const mnc_disclosure *d)
{
    if (!p || !op)
        return MNC_R_INVALID;
    if (!valid_principal(p, op->sender) || cls_of(p, op->sender) != MNC_SINK_AGENT || !valid_principal(p, op->receiver))
        return MNC_R_UNKNOWN_AGENT;
    if ((unsigned)op->ch >= MNC_CH_COUNT)
        return MNC_R_CHANNEL;
    if (!d)
        return MNC_R_NO_OBJECT;
    if (d->revoked)
        return MNC_R_REVOKED;
    if (d->expires_ms && op->now_ms >= d->expires_ms)
        return MNC_R_EXPIRED;
    /* Turns count deliveries to the recipient, so they bound its reads. An onward operation
     * by a holder is judged by the scope (φ, μ) and the clock, so its denial names the real
     * reason (sink_not_allowed, not expired). */
    bool is_read = op->ch == MNC_CH_MEMORY_READ || op->ch == MNC_CH_RECV;
    if (is_read && d->turns_left == 0)
        return MNC_R_EXPIRED;

    const mnc_scope *sc = &d->scope;
    /* Reads are by the scope's recipient only: a memory read repeats the recipient check. */
    if (is_read ? op->sender != sc->recipient : !mnc_set_has(&d->holders, (unsigned)op->sender))
        return is_read ? MNC_R_RECIPIENT : MNC_R_NOT_HOLDER;
    if (d->contract >= p->n_contracts || !op->purpose || strcmp(op->purpose, p->contracts[d->contract].purpose) != 0)
        return MNC_R_PURPOSE;
    if (op->fields && !mnc_set_subset(op->fields, &sc->fields))
        return MNC_R_FIELDS;

    enum mnc_sink_class rc = cls_of(p, op->receiver);
    bool in_phi = mnc_set_has(&sc->sinks, (unsigned)op->receiver);
    switch (op->ch) {
    case MNC_CH_MESSAGE:
        return op->receiver == sc->recipient ? MNC_OK : MNC_R_RECIPIENT;
    case MNC_CH_TOOL:
        if (rc != MNC_SINK_TOOL)
            return MNC_R_CHANNEL;
        return in_phi ? MNC_OK : MNC_R_SINK;
    case MNC_CH_FORWARD:
        if (rc != MNC_SINK_AGENT && rc != MNC_SINK_EXTERNAL)
            return MNC_R_CHANNEL;
        return in_phi ? MNC_OK : MNC_R_SINK;
    case MNC_CH_LOG:
        if (rc != MNC_SINK_LOG)
            return MNC_R_CHANNEL;
        return in_phi ? MNC_OK : MNC_R_LOG;
    case MNC_CH_MEMORY_WRITE:
        if (rc != MNC_SINK_MEMORY)
            return MNC_R_CHANNEL;
        return sc->memory ? MNC_OK : MNC_R_MEMORY;
    case MNC_CH_MEMORY_READ:
        if (rc != MNC_SINK_MEMORY)
            return MNC_R_CHANNEL;
        return MNC_OK; /* recipient, purpose and lifetime were re-checked above */
    case MNC_CH_RECV:
        return op->receiver == sc->recipient ? MNC_OK : MNC_R_RECIPIENT;
    }
    return MNC_R_CHANNEL;
}
