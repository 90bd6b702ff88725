/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* reason.h - decision and refusal codes shared by every libmnc module.
 *
 * A reason is both the verdict and its explanation: MNC_OK means allow / admissible, every
 * other value is a specific denial. Codes are stable (they appear in audit logs and in the
 * protocol) - append new ones, never renumber.
 */
#ifndef MNC_REASON_H
#define MNC_REASON_H

typedef enum mnc_reason {
    MNC_OK = 0,
    /* monitor (operation checks) */
    MNC_R_NO_OBJECT = 1,      /* object does not exist */
    MNC_R_REVOKED = 2,        /* object was revoked */
    MNC_R_EXPIRED = 3,        /* lifetime (seconds or turns) is over */
    MNC_R_NOT_HOLDER = 4,     /* sender does not hold the object */
    MNC_R_RECIPIENT = 5,      /* first hop must go to the contract recipient */
    MNC_R_SINK = 6,           /* onward receiver / sink not in φ */
    MNC_R_PURPOSE = 7,        /* operation purpose differs from the contract purpose */
    MNC_R_FIELDS = 8,         /* operation carries fields outside F */
    MNC_R_MEMORY = 9,         /* memory write without μ */
    MNC_R_LOG = 10,           /* log sink not in φ (or not a log sink) */
    MNC_R_CHANNEL = 11,       /* channel/receiver class mismatch or unknown channel */
    MNC_R_UNKNOWN_AGENT = 12, /* sender or receiver is not a known principal */
    /* derive (narrowing) */
    MNC_R_WIDEN_FIELDS = 20,
    MNC_R_WIDEN_SINKS = 21,
    MNC_R_WIDEN_LIFETIME = 22,
    MNC_R_WIDEN_MEMORY = 23,
    MNC_R_WIDEN_RECIPIENT = 24, /* a derived object keeps its parent's recipient */
    /* selection (per candidate) */
    MNC_R_CONTRACT_FIELDS = 30, /* valid_c: fields(d) ⊄ F */
    MNC_R_WRONG_RECIPIENT = 31, /* valid_c: recipient mismatch */
    MNC_R_INSUFFICIENT = 32,    /* need(d,p,r) fails */
    MNC_R_DIRECT_EXPOSURE = 33, /* submitted text contains a forbidden literal value */
    MNC_R_MISSING_VALUE = 34,   /* private state lacks a field the form projects */
    MNC_R_OVER_EPSILON = 35,    /* MNC-L: ΔR > ε */
    MNC_R_OVER_BUDGET = 36,     /* MNC-L: Σ + ΔR > B */
    MNC_R_NOT_ISSUER = 37,      /* caller may not disclose under this contract */
    MNC_R_NO_CANDIDATE = 38,    /* nothing admissible (outcome, not an error) */
    /* daemon */
    MNC_R_NOT_CONFINED = 40,       /* kernel layer on, recipient not kernel-confined (not in a
                                  * cgroup `mncctl run` registered): no delivery */
    MNC_R_LEDGER_UNAVAILABLE = 41, /* the shared ledger (fleet mode) cannot decide now: a
                                    * charged disclosure is refused (fail closed) */
    /* generic */
    MNC_R_INVALID = 90,  /* malformed input */
    MNC_R_INTERNAL = 91, /* resource failure; always fails closed */
} mnc_reason;

/* Stable snake_case name of a reason ("expired", "widen_fields", ...). Never NULL. */
const char *mnc_reason_name(mnc_reason r);

/* Parses a name produced by mnc_reason_name(); returns -1 if unknown. */
int mnc_reason_from_name(const char *name);

#endif
