/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* select.h - MNC-C: choose the lowest-risk admissible candidate.
 *
 *   d* = argmin_d ΔR(d; H)  subject to  valid_c(d) ∧ need(d, p, r) [∧ MNC-L caps]
 *
 * The candidate family comes from the contract's policy family; the application may add
 * submitted candidates (e.g. LLM text annotated with the fields it carries). Every candidate is
 * scored and gets a verdict; ties break deterministically: lower risk, then fewer fields, then
 * policy forms before submitted ones, then declaration order.
 */
#ifndef MNC_SELECT_H
#define MNC_SELECT_H

#include <stdbool.h>

#include "mnc/policy.h"
#include "mnc/reason.h"
#include "mnc/risk.h"
#include "mnc/state.h"

#define MNC_MAX_SUBMITTED 16
#define MNC_MAX_CANDIDATES (MNC_MAX_FORMS + MNC_MAX_SUBMITTED)

/* An application-submitted candidate. The text is used for validation only (direct-exposure
 * scan); a selected submitted candidate is released by contract-boundary assembly. */
typedef struct mnc_submitted {
    char name[MNC_NAME_MAX];
    mnc_set fields; /* fields the text claims to carry */
    const char *text;
} mnc_submitted;

typedef struct mnc_scored {
    char name[MNC_NAME_MAX];
    bool submitted;
    int index; /* form index in the family, or index into submitted[] */
    mnc_set fields;
    double risk;        /* ΔR given the history; NAN if it could not be computed */
    mnc_reason verdict; /* MNC_OK = admissible */
    char detail[160];   /* human-readable reason, e.g. "field reason not in contract" */
} mnc_scored;

typedef struct mnc_selection {
    int contract;
    int n;
    mnc_scored c[MNC_MAX_CANDIDATES];
    int chosen; /* index into c[], or -1: nothing admissible (MNC_R_NO_CANDIDATE) */
} mnc_selection;

/* MNC-L limits for one selection. spent = Σ ΔR so far; eps/budget < 0 disable the cap. */
typedef struct mnc_limits {
    double epsilon;
    double budget;
    double spent;
} mnc_limits;

typedef struct mnc_select_req {
    int contract;  /* index into policy->contracts */
    int recipient; /* r the caller intends (must match the contract) */
    const mnc_state *state;
    const mnc_submitted *submitted;
    int n_submitted;
    const mnc_obs *history;
    size_t n_history;         /* MNC-L; NULL/0 for MNC-C */
    const mnc_limits *limits; /* NULL = no caps */
} mnc_select_req;

/* valid_c(d): fields ⊆ F and recipient matches. Returns MNC_OK, MNC_R_CONTRACT_FIELDS or
 * MNC_R_WRONG_RECIPIENT. */
mnc_reason mnc_valid_c(const mnc_policy *p, const mnc_contract *c, const mnc_set *fields, int recipient);

/* need(d, p, r): the receiver's declared requirement for purpose p is ⊆ fields(d). A receiver
 * with no declared requirement needs nothing. Returns MNC_OK or MNC_R_INSUFFICIENT. */
mnc_reason mnc_need(const mnc_policy *p, const mnc_set *fields, const char *purpose, int recipient);

/* Direct exposure: returns the id of the first field not in `allowed` whose state value occurs
 * in `text`, or -1 if none. What counts as an occurrence (the scan's documented scope):
 *   - ASCII letters compare case-insensitively; other bytes compare exactly;
 *   - blank and invisible separators are ignored on both sides (ASCII whitespace, U+00A0,
 *     U+00AD soft hyphen, U+2000-U+200D, U+202F, U+205F, U+2060, U+3000, U+FEFF), so a value
 *     split across spaces or lines ("onco logy", "oncology\n appointment") is still found;
 *   - values with fewer than 3 visible bytes are not scanned (they would match everywhere); the
 *     policy author should not rely on such values being secret.
 * Out of scope (semantic exposure, not a literal scan): Unicode case folding, homoglyphs,
 * paraphrase, encodings (base64, hex, leetspeak) and values spread by other separators. */
int mnc_exposure_scan(const mnc_state *st, const mnc_set *allowed, const char *text);

/* Runs selection. Returns MNC_OK with out->chosen >= 0, MNC_R_NO_CANDIDATE with chosen == -1
 * (a distinct outcome, not an error; MNC-D decides what happens next), or MNC_R_INVALID /
 * MNC_R_INTERNAL for bad requests. out is always fully written. */
mnc_reason mnc_select(const mnc_policy *p, const mnc_select_req *req, mnc_selection *out);

#endif
