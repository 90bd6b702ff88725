/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cache_trim.h - keeps the page cache of an append-only file from growing with its history.
 *
 * mncd's state journal, its ledger and audit.jsonl are written once and read back only when
 * the next mncd starts (replay, chain verification). Left alone, the kernel keeps every page
 * of them cached: ~2.4 KB per disclose, so a million discloses pin ~2.4 GB of page cache that
 * nobody reads, and every new page is one more to allocate (docs/mncd.md, "Where flat cost
 * breaks now"). A writer that calls mnc_cache_trim_written after each write keeps at most
 * MNC_CACHE_TRIM_KEEP + MNC_CACHE_TRIM_STEP bytes of the file cached (behind its end), as
 * PostgreSQL does for its WAL. Readers that tail the file recently (a log shipper on
 * audit.jsonl) still find the newest KEEP bytes in memory; older bytes come from the disk.
 *
 * Contract: advisory only. Nothing it does changes the file's bytes or when they are durable
 * for the caller's purposes (the caller's own fdatasync is still what acknowledges). Not
 * thread-safe: one writer owns a mnc_cache_trim (the journal's leader, the audit log's
 * holder). Internal to the mnc tree.
 */
#ifndef MNC_CACHE_TRIM_H
#define MNC_CACHE_TRIM_H

#include <stdbool.h>
#include <sys/types.h>

#define MNC_CACHE_TRIM_STEP (4 << 20)  /* work is done once per 4 MiB written */
#define MNC_CACHE_TRIM_KEEP (16 << 20) /* the newest 16 MiB stay cached */

typedef struct mnc_cache_trim {
    off_t started; /* writeback was started for [0, started) */
    off_t dropped; /* the cached pages of [0, dropped) were dropped */
    int err;       /* errno of the first failed call; trimming then stops (0: none) */
} mnc_cache_trim;

/* Forgets the file's cached pages and starts tracking it at `end` (its current size): for a
 * file just read in full (replay, verification) or just replaced (compaction). Pages that are
 * dirty stay. Returns 0, or -1 with errno (t->err set; later calls do nothing). */
int mnc_cache_trim_reset(int fd, mnc_cache_trim *t, off_t end);

/* Call after the file's bytes up to `end` were written. Once per STEP of growth: starts the
 * writeback of the step just completed (sync_file_range WRITE, which does not wait for it),
 * then waits for the writeback of what lies more than KEEP behind `end` (started at least
 * KEEP - STEP bytes earlier, so normally done) and drops those pages (POSIX_FADV_DONTNEED).
 * Returns 0 (also when there was nothing to do, or trimming had stopped), or -1 with errno on
 * the call that failed (t->err set; later calls do nothing). A failure is no reason to fail
 * the caller's write: the file is unaffected. */
int mnc_cache_trim_written(int fd, mnc_cache_trim *t, off_t end);

#endif
