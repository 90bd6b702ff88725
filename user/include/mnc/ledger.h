/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ledger.h - the MNC-L leakage ledger: durable, per protected subject, built on journal.h.
 *
 * Each realised release charges ΔR (bits, from risk.h) to its subject, and to the subject's
 * per-recipient account. A charge is one journal record (JSON payload):
 *     {"v":1,"t":MS,"subject":S,"recipient":R,"release":ID,"delta":X,"obs":[[FIELD,VALUE],...]}
 * Fields are stored by name (not policy id) so a ledger survives policy reloads that renumber
 * fields. The observations are the realised values, i.e. the history H that br(H) is computed
 * from. charge() returns only after the record is durable (group commit) - or, in deferred
 * mode (mnc_ledger_set_deferred), after it is counted and queued, durable at the next flush:
 * callers release the disclosure only once the charge is durable - a crash then can lose an
 * unreleased charge (harmless: nothing left) but never a released one.
 *
 * Idempotency: a release id is charged at most once. A second charge() with the same id
 * returns MNC_LEDGER_DUPLICATE without writing; records with an id already seen are ignored on
 * replay (counted once).
 *
 * Budgets: check()/charge() implement MNC-L: ΔR ≤ ε and Σ + ΔR ≤ B, where Σ is the subject's
 * total over all recipients (the safe default: recipients may collude) or, with
 * per_recipient, that recipient's account. ε or B < 0 disables that cap. charge() checks and
 * reserves atomically, so concurrent charges to one subject cannot overshoot B together.
 *
 * Recovery (journal.h): a torn tail is truncated and reported in `notice`; a corrupt record in
 * the middle, or a CRC-valid record that is not a well-formed charge, makes open() fail with
 * an error naming the record. Callers (mncd) must then refuse to start: a reset budget is a
 * leak.
 *
 * Thread safety: every function may be called concurrently on one handle.
 */
#ifndef MNC_LEDGER_H
#define MNC_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc/policy.h"
#include "mnc/risk.h"

#define MNC_LEDGER_SUBJECT_MAX 256 /* bytes incl. NUL, for subjects, recipients, release ids */
#define MNC_LEDGER_VALUE_MAX 4096  /* bytes incl. NUL, for an observed value */
#define MNC_LEDGER_OBS_MAX 256     /* observations per charge */

typedef struct mnc_ledger mnc_ledger;

typedef struct mnc_ledger_obs {
    const char *field; /* field name */
    const char *value;
} mnc_ledger_obs;

typedef enum mnc_ledger_rc {
    MNC_LEDGER_ERROR = -1,       /* bad argument, OOM or I/O error (errno set) */
    MNC_LEDGER_OK = 0,           /* charged and durable */
    MNC_LEDGER_DUPLICATE = 1,    /* release id already charged; nothing written */
    MNC_LEDGER_OVER_EPSILON = 2, /* ΔR > ε; nothing written */
    MNC_LEDGER_OVER_BUDGET = 3,  /* Σ + ΔR > B; nothing written */
    MNC_LEDGER_UNAVAILABLE = 4,  /* a shared backend cannot decide now (ledger_backend.h);
                                  * never returned by this file's functions */
} mnc_ledger_rc;

typedef struct mnc_ledger_limits {
    double epsilon;     /* < 0: no per-release cap */
    double budget;      /* < 0: no total budget */
    bool per_recipient; /* Σ is the recipient's account instead of the subject's total */
} mnc_ledger_limits;

/* One charge as replayed/recorded (for show). Pointers valid during the callback only. */
typedef struct mnc_ledger_entry {
    uint64_t seq;
    uint64_t time_ms;
    const char *subject, *recipient, *release;
    double delta;
    const mnc_ledger_obs *obs;
    size_t n_obs;
} mnc_ledger_entry;

/* Opens (creating, 0600) and replays the ledger; takes the journal's exclusive lock.
 * notice: "" or the torn-tail recovery message. err: reason on failure (names the record for
 * corruption). NULL on failure. */
mnc_ledger *mnc_ledger_open(const char *path, char *notice, size_t notice_len, char *err, size_t err_len);

/* Read-only view (no lock, no truncation): for `mncctl ledger show/verify` while mncd runs.
 * A torn tail is reported in notice and ignored. charge() on it fails (EROFS). */
mnc_ledger *mnc_ledger_open_ro(const char *path, char *notice, size_t notice_len, char *err, size_t err_len);

/* Closes; 0, or -1 if the journal had an I/O error. NULL is a no-op. */
int mnc_ledger_close(mnc_ledger *l);

/* For a process about to exit: closes l's journal as mnc_ledger_close does (everything
 * appended is durable; 0, or -1 on an I/O error), but leaves the in-memory tables for the
 * exit to reclaim. Freeing 10^5 subjects one by one costs ~0.3 s of CPU on the development VM.
 * l must not be used again; it stays reachable from the caller, so leak checkers do not
 * report it. NULL is a no-op. */
int mnc_ledger_close_at_exit(mnc_ledger *l);

/* Σ charged to subject (recipient NULL) or to subject's account for recipient. An unknown
 * subject/recipient has spent 0. Returns 0 or -1 (bad arguments). */
int mnc_ledger_spent(mnc_ledger *l, const char *subject, const char *recipient, double *out);

/* MNC-L admission for a prospective charge (includes charges in flight). Returns
 * MNC_LEDGER_OK, MNC_LEDGER_OVER_EPSILON, MNC_LEDGER_OVER_BUDGET, or MNC_LEDGER_ERROR for bad
 * arguments (including a non-finite or negative delta). */
mnc_ledger_rc mnc_ledger_check(mnc_ledger *l, const char *subject, const char *recipient, double delta,
                               const mnc_ledger_limits *lim);

/* Checks (lim may be NULL = no caps), then durably records the charge. See mnc_ledger_rc.
 * On MNC_LEDGER_ERROR from I/O the charge is not counted in memory and the handle refuses
 * further charges; the record may still be on disk (a restart then counts it - the safe
 * direction). */
mnc_ledger_rc mnc_ledger_charge(mnc_ledger *l, const char *subject, const char *recipient, const char *release_id,
                                const mnc_ledger_obs *obs, size_t n_obs, double delta, const mnc_ledger_limits *lim);

/* Same with policy field ids (names taken from p->fields). */
mnc_ledger_rc mnc_ledger_charge_ids(mnc_ledger *l, const mnc_policy *p, const char *subject, const char *recipient,
                                    const char *release_id, const mnc_obs *obs, size_t n_obs, double delta,
                                    const mnc_ledger_limits *lim);

/* Deferred durability, for a caller that acknowledges nothing until it flushes anyway (mncd:
 * once per event-loop iteration, so one fdatasync covers every charge of the iteration). While
 * on, charge() counts the charge in memory (later checks and charges see it) and queues its
 * record (mnc_journal_queue) instead of waiting for it: MNC_LEDGER_OK then means "counted,
 * durable after the next successful mnc_ledger_flush()". The caller must not release anything
 * a charge covers before that flush returned 0. Turning it off flushes. Returns 0, or -1
 * (bad handle, read-only view, or the flush failed). */
int mnc_ledger_set_deferred(mnc_ledger *l, bool on);

/* Makes every charge counted so far durable (one fdatasync, nothing if none is pending).
 * Returns 0, or -1 with errno: the charges since the last flush may be lost, and the handle
 * refuses further charges (a restart replays the file). */
int mnc_ledger_flush(mnc_ledger *l);

/* True if release_id has been charged (durably; in deferred mode: counted, durable after the
 * next flush). */
bool mnc_ledger_has_release(mnc_ledger *l, const char *release_id);

/* The subject's realised history (all recipients, in charge order, each distinct (field,
 * value) observation once - a repeat reveals nothing new) as policy observations for br(H):
 * *out is one heap block (observations followed by their strings; free() it). Kept up to date
 * on every charge: the cost is O(size of the result), whatever the number of releases.
 * Returns 0 (an unknown subject gives *n = 0, *out = NULL) or -1: a recorded field that
 * the policy does not know (fail closed: the history cannot be evaluated), bad args, OOM. */
int mnc_ledger_history(mnc_ledger *l, const mnc_policy *p, const char *subject, mnc_obs **out, size_t *n);

/* Calls cb once with the charge of release_id (the same entry mnc_ledger_foreach would give)
 * and returns cb's value; -1 if release_id has not been charged (durably) or on bad args.
 * O(log charges of its subject), unlike a foreach over the subject. */
int mnc_ledger_find_release(mnc_ledger *l, const char *release_id, int (*cb)(void *arg, const mnc_ledger_entry *e),
                            void *arg);

/* Calls cb for each charge of subject (NULL = every subject) in order; stops at a non-zero
 * return and returns it. Returns 0 when all were visited. */
int mnc_ledger_foreach(mnc_ledger *l, const char *subject, int (*cb)(void *arg, const mnc_ledger_entry *e), void *arg);

/* true if s is a valid subject, recipient or release id: 1..max-1 bytes, no control
 * characters (the check every charge's strings pass). */
bool mnc_ledger_str_ok(const char *s, size_t max);

/* Number of charges recorded for subject (0 for an unknown one): the version of its history
 * (ledger_backend.h). */
uint64_t mnc_ledger_subject_charges(mnc_ledger *l, const char *subject);

/* Number of distinct subjects and charges counted. */
void mnc_ledger_stats(mnc_ledger *l, size_t *subjects, size_t *charges);

#endif
