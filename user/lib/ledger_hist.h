/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ledger_hist.h - a subject's realised history as a set: each distinct (field name, value)
 * observation once, in the order it was first seen. Shared by both ledger backends (ledger.c
 * keeps one per subject, updated on every charge; ledger_pg.c keeps one per cached subject).
 *
 * A repeated identical disclosure reveals nothing new (both risk models count it once), so a
 * history is bounded by the subject's distinct facts, not by its number of releases; this set
 * keeps adding and pricing a repeated observation O(length of the observation): a hash lookup
 * instead of a scan of the history, and field ids are resolved once per entry and policy.
 *
 * Strings returned by mnc_hist_add stay valid (same address) until mnc_hist_fini: callers may
 * keep pointers to them (ledger.c's charges do). Not thread-safe: callers hold their lock.
 * Internal to libmnc (not installed).
 */
#ifndef MNC_LEDGER_HIST_H
#define MNC_LEDGER_HIST_H

#include <stdbool.h>
#include <stddef.h>

#include "mnc/policy.h"
#include "mnc/risk.h"
#include "mnc_htab.h"

typedef struct mnc_hist_ent mnc_hist_ent;

typedef struct mnc_hist {
    mnc_htab seen;      /* mnc_hist_ent by "field\x01value" (field names have no control chars) */
    mnc_hist_ent **ord; /* the listed entries, in first-seen order */
    size_t n, cap;
    size_t vbytes; /* sum of strlen(value) + 1 over the listed entries */
} mnc_hist;

/* An empty set; allocates nothing. */
void mnc_hist_init(mnc_hist *h);

/* Frees every entry (strings handed out become invalid) and leaves an empty set. */
void mnc_hist_fini(mnc_hist *h);

/* Adds (field, value) at the end of the order unless it is listed already. field must pass
 * mnc_ledger_str_ok(field, MNC_NAME_MAX) and value be shorter than MNC_LEDGER_VALUE_MAX (the
 * callers validated both). *field_out / *value_out (either may be NULL) get the set's own
 * copies. Returns 0, or -1 (bad argument, OOM: nothing changed). */
int mnc_hist_add(mnc_hist *h, const char *field, const char *value, const char **field_out, const char **value_out);

/* Empties the order but keeps the entries (and the strings handed out): the caller then adds
 * the observations again in the order it wants (ledger.c, after a charge that completed out
 * of sequence order). Entries not added again stay allocated but are not in the history. */
void mnc_hist_unlist(mnc_hist *h);

/* The listed observations as one heap block for br(H): *out holds n mnc_obs (field ids of p)
 * followed by their value strings; free() it. n == 0 gives *out = NULL. Returns 0, or -1: an
 * observed field p does not know (fail closed: the history cannot be evaluated), OOM. */
int mnc_hist_block(mnc_hist *h, const mnc_policy *p, mnc_obs **out, size_t *n);

#endif
