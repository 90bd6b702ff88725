/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mncl_int.h - internal to MNC-L and MNC-D in mncd (mncl_gate.c, mncd_failure.c): their
 * shared state. MNC-D (mncd_failure.c) calls the gate to charge a release it makes; the gate
 * never calls MNC-D.
 */
#ifndef MNCD_MNCL_INT_H
#define MNCD_MNCL_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "mnc/journal.h"
#include "mnc/ledger.h"
#include "mnc/ledger_backend.h"
#include "mncd.h"

#define MAX_PENDING 4096 /* pending MNC-D requests; beyond this a request abstains */
#define KEEP_DONE 1024   /* finished requests kept in memory for disclose.status */
#define RID_LEN 24       /* "d-" + 16 hex + NUL, rounded */

typedef enum rstatus {
    RS_DELEGATING = 0,
    RS_APPROVAL,
    RS_DELEGATED,
    RS_APPROVED,
    RS_TIMEOUT, /* approval denied by timeout */
    RS_ABSTAINED,
    RS_DENIED, /* approval denied by an approver */
    RS_COUNT
} rstatus;

static const char *const rs_name[RS_COUNT] = {"pending_delegation", "pending_approval", "delegated", "approved",
                                              "approval_timeout",   "abstained",        "denied"};

typedef struct dreq {
    char id[RID_LEN];
    int contract;
    int issuer;
    cJSON *state; /* the disclose's state document (private values; trusted boundary) */
    int step;     /* index into the contract's failure order */
    rstatus st;
    uint64_t created_ms, deadline_ms;
    bool handed;             /* broker.next gave it out (not persisted: re-offered after restart) */
    char cand[MNC_NAME_MAX]; /* best approvable candidate, "" if none */
    mnc_set cand_fields;
    double cand_risk;
    cJSON *approvable;        /* [{name, fields, risk, verdict, detail}] shown to the approver */
    char object[MNC_OID_HEX]; /* released object, "" if none */
    char detail[512];
    struct dreq *prev, *next;
} dreq;

typedef struct counters {
    uint64_t selected, charges, charge_failed, over_epsilon, over_budget, unavailable, replayed;
    double bits;
    uint64_t delegated, pending_delegation, pending_approval, approved, approval_timeout, abstained, broker_unavailable,
        broker_timeout, broker_failure, receipt_rejected, approval_skipped, denied;
} counters;

struct mncd_mncl {
    mnc_lbackend *ledger; /* journal (STATE_DIR/ledger) or postgres (fleet.c) */
    char ledger_path[PATH_MAX];
    mnc_journal *j;
    char jpath[PATH_MAX];
    dreq *head, *tail;
    size_t n_pending, n_done;
    int conns[MNC_MAX_PRINCIPALS];
    counters c;
    const mnc_policy *p; /* for replay */
    char err[512];
    /* Test hook (fault injection for tests/integration/test_fleet): with
     * MNCD_TEST_KILL_AFTER_CHARGE=N in the environment, mncd SIGKILLs itself right after its
     * N-th charge is committed and before anything is answered - the window in which a client
     * loses the reply to a charged release and retries it. Read once at open. */
    long kill_after_charge;
};

/* ---- mncd_dreq.c: MNC-D's request table and its journal */
static inline bool dq_pending(const dreq *r) { return r->st == RS_DELEGATING || r->st == RS_APPROVAL; }
void dq_free(dreq *r);
/* Links r into m's table (newest last) and counts it. */
void dq_link(struct mncd_mncl *m, dreq *r);
/* The request with id, or NULL. */
dreq *dq_find(struct mncd_mncl *m, const char *id);
/* Moves r to a final status (keeps the pending/done counts right). */
void dq_finish(struct mncd_mncl *m, dreq *r, rstatus st);
/* Forgets the oldest finished requests beyond the table's bound (the journal keeps them). */
void dq_prune(struct mncd_mncl *m);
/* The field names of s, as a JSON array (NULL: out of memory). */
cJSON *dq_fields_json(const mnc_policy *p, const mnc_set *s);
/* Appends r's snapshot to the MNC-D journal (durable on return). 0 or -1. */
int dq_persist(mncd *d, const dreq *r);

/* Durably charges release `o` (its values are the observations) for subject under release id
 * `release` (NULL: the object id). delta must be finite and >= 0, priced against history
 * `version` (the backend re-prices with the risk model if the history moved since); lim NULL =
 * no caps (approval override). Audits the charge or its refusal (op ledger.charge) and counts
 * it. Returns the ledger rc; *res gets the charged delta and the spend; *why a message on
 * failure. A DUPLICATE with res->same is a retried request whose release is already charged:
 * the caller may hand it out again uncharged. */
mnc_ledger_rc mncd_mncl_charge_release(mncd *d, const mnc_disclosure *o, const char *subject, const char *release,
                                       double delta, uint64_t version, const mnc_ledger_limits *lim, mnc_lb_result *res,
                                       char *why, size_t n);

#endif
