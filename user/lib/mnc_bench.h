/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mnc_bench.h - test and benchmark knobs of libmnc: not API. They are in libmnc.a for the
 * benchmarks (tests/bench) and tests that link it statically, and not exported by libmnc.so
 * (its version script lists only the functions of the public headers). Internal to the mnc
 * tree (not installed). */
#ifndef MNC_BENCH_H
#define MNC_BENCH_H

#include "mnc/journal.h"
#include "mnc/ledger.h"
#include "mnc/risk_bayes.h"

/* If non-zero, every append does its own write+fdatasync while holding the lock (no
 * batching): the baseline group commit is measured against. */
void mnc_journal_set_no_group_commit(mnc_journal *j, int on);

/* The same for a ledger's journal: fsync per record instead of group commit. */
void mnc_ledger_set_no_group_commit(mnc_ledger *l, int on);

/* If non-zero, mnc_bayes_charge evaluates a candidate the previous way: copy the history's
 * posterior, one pass over the whole secret domain per observation, then one for the sum and
 * maximum. It returns the same doubles bit for bit (tests/unit/test_qif.c checks that); the
 * benchmarks time it as their baseline. Set it before the model is shared between threads. */
void mnc_bayes_set_reference(mnc_bayes *m, int on);

#endif
