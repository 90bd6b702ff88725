/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* journal_int.h - internal to the journal (mnc/journal.h): its handle and the functions its three
 * files share. Bottom up: journal_rec.c (the record format, recovery, whole-file writes),
 * journal_dio.c (direct I/O of a batch), journal.c (open, group commit, compaction, close).
 * Not installed; not exported by libmnc.so.
 */
#ifndef MNC_JOURNAL_INT_H
#define MNC_JOURNAL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache_trim.h"
#include "mnc/journal.h"

struct mnc_journal {
    int fd;
    char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint8_t *buf; /* records queued for the next batch */
    size_t len, cap;
    uint8_t *spare; /* buffer the current leader writes from (swapped with buf) */
    size_t spare_cap;
    uint64_t next_seq;
    uint64_t cur_batch;  /* id of the batch accumulating in buf */
    uint64_t done_batch; /* highest batch id known durable */
    bool flushing;       /* a leader is writing */
    int poisoned;        /* errno of the first I/O failure, 0 if none */
    uint64_t syncs;
    off_t end;        /* logical end: bytes covered by durable batches */
    off_t alloc_end;  /* file size; [end, alloc_end) holds zero bytes (preallocated) */
    size_t prealloc;  /* chunk for zero preallocation, 0 = grow the file per batch */
    uint64_t extends; /* preallocation rounds (statistic) */
    int no_gc;
    /* Gathering (see gather()): how many threads are inside append() now, the most seen since
     * the last batch began, and the records queued in buf. */
    int appenders, peak;
    size_t queued;
    bool gathering;        /* a leader is waiting for the other appenders' records */
    size_t gather_target;  /* ... until `queued` reaches this */
    pthread_cond_t arrive; /* signalled when it does (CLOCK_MONOTONIC) */
    int64_t last_sync_us;  /* the last batch's write + fdatasync */
    mnc_cache_trim trim;   /* the file's page cache behind end (cache_trim.h); leader-owned */
    /* Direct I/O (see flush_batch): a second descriptor of the same file opened O_DIRECT, or
     * -1 (the filesystem refuses it, it failed once, or mnc_journal_set_direct(j, 0)). tail
     * holds the file's bytes from the DIO_BLOCK boundary below `end` up to `end` (a direct
     * write starts at that boundary and rewrites them unchanged); stage is the aligned buffer a
     * direct write is assembled in. All leader-owned. */
    int dfd;
    bool direct_off; /* mnc_journal_set_direct(j, 0) */
    uint8_t *tail;   /* DIO_BLOCK bytes, aligned */
    uint8_t *stage;
    size_t stage_cap;
    uint64_t direct_batches; /* statistic */
};

/* Alignment and granularity of direct writes: the page size, which covers every logical block
 * size a Linux filesystem uses for O_DIRECT (512 or 4096). */
#define DIO_BLOCK 4096u

/* ---- journal_rec.c: the record format and whole-file operations */

/* One record (header + payload) at out: MNC_JOURNAL_HDR + len bytes. */
void mnc_jr_encode(uint8_t *out, uint64_t seq, const void *payload, uint32_t len);
/* printf into b (n bytes) when b is not NULL. */
void mnc_jr_msg(char *b, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* pwrite of all n bytes at off. 0, or -1 with errno. */
int mnc_jr_write_all(int fd, const uint8_t *p, size_t n, off_t off);
/* Writes zero bytes over [from, to) (real zeros, not fallocate: see journal_rec.c). Returns the
 * offset reached: to, or less with errno. */
off_t mnc_jr_write_zeros(int fd, off_t from, off_t to);
/* fsync of the directory holding path. 0, or -1 with errno. */
int mnc_jr_fsync_dir(const char *path);
/* Grows *b to hold need bytes (doubling). 0, or -1 (no memory). */
int mnc_jr_grow(uint8_t **b, size_t *cap, size_t need);

typedef struct mnc_jr_parse_out {
    size_t valid_end; /* logical end: bytes of valid records */
    bool torn;        /* a torn tail starts at valid_end (else only zero bytes follow it) */
    uint64_t n;
    uint64_t next_seq; /* 1 for an empty file */
} mnc_jr_parse_out;

/* Parses (and replays through cb) the journal open at fd. copy: read it rather than map it (a
 * reader without the lock). 0, or -1 with err; *size_out gets the bytes looked at. */
int mnc_jr_map_and_parse(int fd, const char *path, bool copy, mnc_journal_replay_fn cb, void *arg, mnc_jr_parse_out *po,
                         size_t *size_out, char *notice, size_t nn, char *err, size_t en);
/* "PATH.tmp" (heap), or NULL. */
char *mnc_jr_tmp_name(const char *path);
/* Writes tmp with the records and fsyncs it. Returns the open fd (the caller renames), or -1
 * with errno (tmp removed). */
int mnc_jr_write_tmp(const char *tmp, uint64_t first_seq, const void *const *payloads, const size_t *lens, size_t n,
                     off_t *size_out);

/* ---- journal_dio.c: direct I/O of a batch */

/* Closes the O_DIRECT descriptor (the page cache from now on). */
void mnc_jd_close(mnc_journal *j);
/* Opens it, unless direct I/O is off or the filesystem refuses; loads the tail below j->end. */
void mnc_jd_setup(mnc_journal *j);
/* After a batch went to the file at off: the tail becomes the file's bytes below its new end. */
void mnc_jd_tail_after(mnc_journal *j, const uint8_t *p, size_t blen, off_t off);
/* Writes the batch direct with the zeros of a preallocation round up to target (0: none). 0
 * and *reached, or -1 with errno; *fallback: nothing was written, the page cache may take it. */
int mnc_jd_batch(mnc_journal *j, const uint8_t *p, size_t blen, off_t off, off_t target, off_t *reached,
                 bool *fallback);

#endif
