/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* journal.h - a durable, append-only record file with group commit.
 *
 * Used for everything mncd must not lose across a crash: the MNC-L leakage ledger
 * (ledger.h), the memory store and the object registry. Payloads are opaque bytes (callers
 * store JSON); the journal only guarantees order, integrity and durability.
 *
 * On-disk format (all integers little-endian), a plain sequence of records, no file header,
 * optionally followed by zero bytes (preallocation, below):
 *
 *     offset  size  field
 *     0       4     magic   0x4A434E4D ("MNCJ" in file byte order)
 *     4       4     length  payload bytes, 0 < length <= MNC_JOURNAL_MAX_PAYLOAD
 *     8       8     seq     sequence number; consecutive (+1) from the file's first record
 *     16      4     crc     CRC-32 (zlib's crc32) over bytes 0..15 of the header, then the payload
 *     20      len   payload
 *
 * Preallocation: while a journal is open, the file is grown in chunks of real zero bytes
 * (MNC_JOURNAL_PREALLOC_DEFAULT, see mnc_journal_set_prealloc) and records overwrite those
 * zeros in place, so the fdatasync after a batch flushes data only instead of also committing
 * the new file size and extents (the slow part on ext4). The *logical end* of the journal is
 * where the records stop: after the last valid record comes either EOF or a region of zero
 * bytes up to EOF. A record never starts with a zero byte (the magic's first byte is 0x4D),
 * so zeros can never be mistaken for a record. close() truncates the zeros away, so a cleanly
 * closed journal has the legacy layout (records only); a crashed one may end in zeros. Files
 * written without preallocation (older versions, rewrite(), compact()) are read unchanged.
 *
 * Recovery (done by mnc_journal_open and mnc_journal_scan), judged at the first offset O
 * where no valid record (magic, length, CRC, sequence number) starts:
 *   - *Clean end*: O is EOF, or every byte from O to EOF is zero (preallocated space, or an
 *     extension or batch whose data never reached the disk). No notice; open() keeps the
 *     zeros as preallocated space and the next append overwrites them from O.
 *   - A *torn tail* is what an interrupted append can leave: the bytes from O are not all
 *     zero and no valid record follows anywhere in the file. Typically a last record that is
 *     shorter than its header says (or a header shorter than 20 bytes), or a last record whose
 *     CRC fails - ending at EOF, or followed only by zeros (a torn write inside the
 *     preallocated region). open() truncates the file to O (and fsyncs; the next append
 *     preallocates again) and reports it in `notice`; scan() only reports it. The notice
 *     counts the bytes up to the last non-zero one and says "zero bytes follow" if the torn
 *     bytes sit in preallocated zeros. Nothing that was acknowledged can be in a torn tail:
 *     append() returns only after fdatasync.
 *   - Anything else that does not parse - a bad magic, CRC, length or sequence number that is
 *     followed by more bytes, in particular by a valid record - is *corruption in the middle*.
 *     It is a hard error naming the record (expected sequence number and byte offset): the
 *     caller must refuse to start, because silently dropping records (e.g. ledger charges)
 *     would reset a privacy budget. This includes zero bytes followed by a valid record: a
 *     valid record after a zero gap is refused, never skipped. (Consequence: a power loss that
 *     persisted a later sector of an unacknowledged multi-sector batch but not an earlier one
 *     is refused, not recovered - the fail-safe direction; a process crash cannot cause it,
 *     the page cache survives. Growing the file, ext4 data=ordered hid such a batch behind
 *     the old size; over preallocated zeros it is visible. See docs/risk.md.)
 *
 * Concurrency: append() may be called from many threads. Appenders are batched by a
 * leader/follower group commit: the first waiting appender becomes the leader, writes every
 * record queued so far with one write() and one fdatasync(), and wakes the followers whose
 * records were in that batch. When several threads were appending as the last batch began,
 * the leader first waits until as many records are queued, or for at most half the last
 * write + fdatasync (capped at 1 ms), whichever comes first: so threads that append again as
 * soon as their record is durable fill each batch (8 threads: ~8 records per fdatasync instead
 * of ~4, bench_ledger), at the cost of up to that wait in latency. A lone appender, flush()
 * and queue() never wait. Records are written in sequence order. A failed write or sync
 * poisons the handle (every later append fails): after an I/O error the file's state is
 * unknown and continuing could acknowledge records that are not durable.
 *
 * One process at a time: open() takes an exclusive flock on the file and fails if another
 * process holds it. scan() takes no lock and never modifies the file.
 */
#ifndef MNC_JOURNAL_H
#define MNC_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#define MNC_JOURNAL_MAGIC 0x4A434E4Du
#define MNC_JOURNAL_HDR 20
#define MNC_JOURNAL_MAX_PAYLOAD (16u << 20)     /* 16 MiB: bounds allocation on replay */
#define MNC_JOURNAL_PREALLOC_DEFAULT (1u << 20) /* 1 MiB of zeros per preallocation round */

typedef struct mnc_journal mnc_journal;

/* Replay callback: called once per valid record, in file order. Returning non-zero stops the
 * replay and makes open()/scan() fail with "replay callback refused record N" (the callback
 * may have written a more precise message into its own state). payload is only valid during
 * the call. */
typedef int (*mnc_journal_replay_fn)(void *arg, uint64_t seq, const void *payload, size_t len);

/* Opens (creating with mode 0600, O_CLOEXEC) the journal at `path`, replays every record
 * through `cb` (may be NULL), truncates a torn tail and takes an exclusive lock. Zero bytes
 * after the last record are kept as preallocated space (clean end, no notice).
 *   notice/notice_len: if non-NULL, receives "" or a one-line description of a recovered
 *                      torn tail ("truncated torn tail at offset N (M bytes): ...").
 *   err/err_len:       on failure, a one-line reason naming the file and, for corruption,
 *                      the record ("corrupt record #SEQ at offset OFF: crc mismatch ...").
 * Returns a handle, or NULL on any error (nothing on disk changed except a torn-tail
 * truncation that was reported). */
mnc_journal *mnc_journal_open(const char *path, mnc_journal_replay_fn cb, void *arg, char *notice, size_t notice_len,
                              char *err, size_t err_len);

/* Read-only check of the file at `path`: same parsing and callbacks as open(), but takes no
 * lock and never truncates; a torn tail is only described in `notice`. Reads the file into
 * memory (not mmap), so a lock holder truncating it meanwhile cannot crash the reader. Returns 0 if the file
 * is valid (possibly with a torn tail, see notice), -1 with `err` otherwise. A missing file is
 * an error. *n_records (if non-NULL) receives the count of valid records. */
int mnc_journal_scan(const char *path, mnc_journal_replay_fn cb, void *arg, uint64_t *n_records, char *notice,
                     size_t notice_len, char *err, size_t err_len);

/* Appends one record and returns only after it is durable (written and fdatasync'ed, possibly
 * as part of a batch with other threads' records). 0 < len <= MNC_JOURNAL_MAX_PAYLOAD.
 * *seq_out (if non-NULL) receives the record's sequence number. Returns 0, or -1 with errno
 * set (EINVAL bad length, EIO/ENOSPC/... from the write or sync; the handle is then
 * poisoned and later appends fail with EIO). A -1 return means the record may or may not be
 * on disk: callers must treat the operation as failed (e.g. not release). */
int mnc_journal_append(mnc_journal *j, const void *payload, size_t len, uint64_t *seq_out);

/* Queues one record for the next batch and returns at once: the record is NOT durable (not
 * even written) until a later mnc_journal_flush() - or any thread's append() - has written and
 * synced its batch. For callers that acknowledge nothing until a flush they do anyway (mncd
 * flushes once per event-loop iteration: one fdatasync for all of that iteration's records).
 * Records keep sequence order with appended ones; close() writes any still queued (a record
 * nobody acknowledged may then be durable: for the ledger, a charge whose release never left -
 * the safe direction). Same arguments and errors as append(), except that I/O errors surface
 * at the flush. */
int mnc_journal_queue(mnc_journal *j, const void *payload, size_t len, uint64_t *seq_out);

/* Makes every record queued or appended before the call durable (one write + fdatasync for
 * all of them, or nothing if none is pending). Returns 0, or -1 with errno (the handle is then
 * poisoned, as for append()). */
int mnc_journal_flush(mnc_journal *j);

/* Sequence number the next append will get. */
uint64_t mnc_journal_next_seq(mnc_journal *j);

/* Number of write+fdatasync rounds so far (a group-commit statistic for benchmarks). */
uint64_t mnc_journal_syncs(mnc_journal *j);

/* Preallocation chunk for later appends (default MNC_JOURNAL_PREALLOC_DEFAULT): a batch that
 * would grow the file writes zeros up to the next multiple of `chunk` beyond it, in the same
 * fdatasync. 0 turns preallocation off (every batch grows the file, the legacy behaviour the
 * benchmark compares against). Zeros already in the file stay usable either way. */
void mnc_journal_set_prealloc(mnc_journal *j, size_t chunk);

/* Direct I/O (on by default where the filesystem takes it): with preallocation on, each batch
 * is written O_DIRECT from an aligned buffer - whole 4 KiB blocks from the block holding the
 * logical end, the durable bytes before the end rewritten unchanged, zeros after the batch -
 * instead of through the page cache, and fdatasync then only flushes the device's cache. The
 * file's format and recovery rules are the same either way. Where O_DIRECT cannot be opened
 * (tmpfs, some FUSE filesystems) or the first direct write is refused (EINVAL), the handle
 * uses the page cache, silently: it is a speed choice, not a durability one.
 * mnc_journal_set_direct(j, 0) turns it off (benchmarks compare the two), 1 on again where
 * possible; it waits for a batch in flight. mnc_journal_direct() says whether batches now go
 * direct; mnc_journal_direct_batches() counts those that did. */
void mnc_journal_set_direct(mnc_journal *j, int on);
int mnc_journal_direct(mnc_journal *j);
uint64_t mnc_journal_direct_batches(mnc_journal *j);

/* Number of batches that also preallocated a chunk (statistic for tests and benchmarks). */
uint64_t mnc_journal_prealloc_rounds(mnc_journal *j);

/* Logical end: bytes of durable records (the file may be longer by preallocated zeros). */
uint64_t mnc_journal_size(mnc_journal *j);

/* Atomically replaces the journal's contents with `n` records (payloads[i], lens[i]),
 * numbered from the handle's next sequence number (numbering stays monotone across
 * compactions): writes PATH.tmp (0600), fsyncs it, renames it over PATH, fsyncs the
 * directory, then switches the handle to the new file. Concurrent appends wait. Returns 0,
 * or -1 with errno (the old file is then untouched and the handle still usable). */
int mnc_journal_compact(mnc_journal *j, const void *const *payloads, const size_t *lens, size_t n);

/* Same for a path that is not open: writes a fresh journal file atomically, records numbered
 * from first_seq (>= 1). */
int mnc_journal_rewrite(const char *path, uint64_t first_seq, const void *const *payloads, const size_t *lens,
                        size_t n);

/* Waits for in-flight appends, truncates the preallocated zeros (not an error if that fails:
 * the file is valid either way), closes the file. Returns 0, or -1 if the handle had been
 * poisoned by an I/O error or close failed. NULL is a no-op returning 0. */
int mnc_journal_close(mnc_journal *j);

#endif
