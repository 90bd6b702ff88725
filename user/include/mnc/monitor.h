/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* monitor.h - the reference monitor: a pure function over one operation.
 *
 * e = (s, r, p, ch, d, t). No side effects: the caller applies the consequences of an allow
 * (consume a turn, add a holder, write the audit record). Used by mncd for every verb and by
 * `mncctl check`.
 */
#ifndef MNC_MONITOR_H
#define MNC_MONITOR_H

#include <stdint.h>

#include "mnc/disclosure.h"
#include "mnc/policy.h"
#include "mnc/reason.h"

typedef enum mnc_channel {
    MNC_CH_MESSAGE = 0,      /* first hop: holder -> contract recipient */
    MNC_CH_TOOL = 1,         /* holder -> tool sink in φ */
    MNC_CH_FORWARD = 2,      /* onward: holder -> agent or external sink in φ */
    MNC_CH_LOG = 3,          /* holder -> log sink in φ */
    MNC_CH_MEMORY_WRITE = 4, /* holder -> memory store; needs μ */
    MNC_CH_MEMORY_READ = 5,  /* reader <- memory store; repeats recipient, purpose, lifetime */
    MNC_CH_RECV = 6,         /* recipient takes delivery from its inbox; repeats the checks */
} mnc_channel;

#define MNC_CH_COUNT 7

const char *mnc_channel_name(mnc_channel ch);
int mnc_channel_from_name(const char *name); /* -1 if unknown */

typedef struct mnc_op {
    int sender;          /* s: principal id of the acting agent (the reader for reads) */
    int receiver;        /* r: principal id of the receiving agent or sink */
    const char *purpose; /* p */
    mnc_channel ch;
    const mnc_set *fields; /* fields the operation carries; NULL = the object's own */
    uint64_t now_ms;       /* t */
} mnc_op;

/* Returns MNC_OK (allow) or the first failing check, in this order:
 *   unknown principal, existence (d == NULL), revocation, expiry (time for every channel;
 *   turns for recv and memory_read, since a turn is one delivery to the recipient),
 *   holder (s ∈ holders; for memory_read/recv s must be the recipient r of the scope),
 *   purpose, fields ⊆ F, then the channel rule:
 *     message: receiver == scope recipient
 *     tool: receiver is a tool in φ
 *     forward: receiver is an agent or external sink in φ
 *     log: receiver is a log sink in φ
 *     memory_write: μ and the receiver is a memory store
 *     memory_read / recv: reader == scope recipient
 */
mnc_reason mnc_monitor_check(const mnc_policy *p, const mnc_op *op, const mnc_disclosure *d);

#endif
