/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* disclosure.h - scoped disclosure objects d = (id, contract, values, time, provenance).
 *
 * An object carries its own effective scope: a fresh object copies its contract's scope; a
 * derived object may only narrow its parent's (F' ⊆ F, φ' ⊆ φ, ℓ' ≤ ℓ, μ' ≤ μ). The values are
 * only ever the private-state values of the authorised fields, never free text.
 */
#ifndef MNC_DISCLOSURE_H
#define MNC_DISCLOSURE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "mnc/policy.h"
#include "mnc/reason.h"
#include "mnc/state.h"

#define MNC_OID_HEX 33 /* 32 hex chars + NUL */
#define MNC_TURNS_UNBOUNDED UINT32_MAX

typedef struct mnc_oid {
    uint8_t b[16];
} mnc_oid;

typedef struct mnc_value {
    uint16_t field;
    char *value; /* heap */
} mnc_value;

typedef struct mnc_disclosure {
    mnc_oid id;
    mnc_oid parent; /* all-zero when has_parent is false */
    bool has_parent;
    uint16_t contract;       /* index into policy->contracts */
    uint16_t origin;         /* agent that disclosed (or derived) it */
    char form[MNC_NAME_MAX]; /* candidate form name ("" for derived objects keeps parent's) */
    mnc_scope scope;         /* effective scope (narrowed for derived objects) */
    uint64_t issued_ms;      /* wall clock, ms since epoch */
    uint64_t expires_ms;     /* 0 = no time bound */
    uint32_t turns_left;     /* MNC_TURNS_UNBOUNDED = no turn bound */
    mnc_set holders;         /* agents holding it: origin + every agent it was delivered to */
    bool revoked;
    uint16_t n_values;
    mnc_value *values; /* sorted by field id, one per field in scope.fields ∩ form */
} mnc_disclosure;

/* Random 128-bit id (getrandom, fetched a page at a time: randbuf.h). Returns 0 or -1. */
int mnc_oid_random(mnc_oid *id);
void mnc_oid_hex(const mnc_oid *id, char out[MNC_OID_HEX]);
int mnc_oid_parse(const char *hex, mnc_oid *id); /* 0 or -1 */
bool mnc_oid_is_zero(const mnc_oid *id);

/* Creates a fresh object under contract `c` from `origin`, carrying the state's values of
 * `fields` (must be ⊆ the contract's F and present in the state). Expiry is computed from the
 * contract lifetime and now_ms. Returns 0, or a reason on refusal (object untouched). */
mnc_reason mnc_disclosure_issue(const mnc_policy *p, int contract, int origin, const char *form, const mnc_set *fields,
                                const mnc_state *st, uint64_t now_ms, mnc_disclosure *out);

/* The child scope requested by derive(); absent parts inherit from the parent. */
typedef struct mnc_narrowing {
    const mnc_set *fields;    /* F', or NULL = same */
    const mnc_set *sinks;     /* φ', or NULL = same */
    const mnc_lifetime *life; /* ℓ' relative to now, or NULL = same deadline */
    int memory;               /* 0, 1, or -1 = same */
} mnc_narrowing;

/* Checks that `child` narrows `parent`: F' ⊆ F, φ' ⊆ φ, μ' ≤ μ, same recipient, and the child's
 * deadlines (absolute expiry, turns) are no later than the parent's. Returns MNC_OK or the first
 * widening found (fields, sinks, lifetime, memory, recipient - in that order). */
mnc_reason mnc_scope_narrows(const mnc_scope *parent, uint64_t parent_expires_ms, uint32_t parent_turns,
                             const mnc_scope *child, uint64_t child_expires_ms, uint32_t child_turns);

/* derive(): a new object, holder `by`, narrowing `parent` as asked. Values outside F' are
 * dropped. Refuses any widening with its reason; on refusal *out is untouched. */
mnc_reason mnc_disclosure_derive(const mnc_disclosure *parent, int by, const mnc_narrowing *n, uint64_t now_ms,
                                 mnc_disclosure *out);

/* Deep copy; 0 or -1 (OOM). */
int mnc_disclosure_copy(mnc_disclosure *dst, const mnc_disclosure *src);
void mnc_disclosure_free(mnc_disclosure *d); /* frees values; d itself is caller's */

/* The value of a field in d, or NULL. */
const char *mnc_disclosure_value(const mnc_disclosure *d, int field);

/* Contract-boundary assembly: renders the form's template from the object's authorised
 * values only. Returns a heap string (caller frees) or NULL on OOM. */
char *mnc_disclosure_render(const mnc_policy *p, const mnc_disclosure *d);

/* Lossless JSON (names, not ids; times as integers). Caller frees with cJSON_Delete. */
cJSON *mnc_disclosure_to_json(const mnc_policy *p, const mnc_disclosure *d);
/* Inverse; strict (unknown keys, unknown names, bad types are errors). 0 or -1 with errs. */
int mnc_disclosure_from_json(const mnc_policy *p, const cJSON *j, mnc_disclosure *out, mnc_errors *errs);

#endif
