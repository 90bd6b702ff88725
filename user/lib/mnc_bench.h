/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mnc_bench.h - test and benchmark knobs of libmnc: not API. They are in libmnc.a for the
 * benchmarks (tests/bench) and tests that link it statically, and not exported by libmnc.so
 * (its version script lists only the functions of the public headers). Internal to the mnc
 * tree (not installed). */
#ifndef MNC_BENCH_H
#define MNC_BENCH_H

#include "mnc/journal.h"
#include "mnc/ledger.h"

/* If non-zero, every append does its own write+fdatasync while holding the lock (no
 * batching): the baseline group commit is measured against. */
void mnc_journal_set_no_group_commit(mnc_journal *j, int on);

/* The same for a ledger's journal: fsync per record instead of group commit. */
void mnc_ledger_set_no_group_commit(mnc_ledger *l, int on);

#endif
