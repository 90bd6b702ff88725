// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* journal.c - durable append-only record file with leader/follower group commit: open, append,
 * compaction, close. Format, recovery rules and contracts: see mnc/journal.h; the record format
 * and recovery are journal_rec.c's, direct I/O journal_dio.c's (journal_int.h). */
#include "journal_int.h"
#include "mnc_bench.h"
#include "mnc_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

mnc_journal *mnc_journal_open(const char *path, mnc_journal_replay_fn cb, void *arg, char *notice, size_t notice_len,
                              char *err, size_t err_len)
{
    if (notice && notice_len)
        notice[0] = '\0';
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        mnc_jr_msg(err, err_len, "%s: open: %s", path, strerror(errno));
        return NULL;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        mnc_jr_msg(err, err_len, "%s: %s", path,
                   errno == EWOULDBLOCK ? "journal is in use by another process" : strerror(errno));
        close(fd);
        return NULL;
    }
    mnc_jr_parse_out po;
    size_t size;
    if (mnc_jr_map_and_parse(fd, path, false, cb, arg, &po, &size, notice, notice_len, err, err_len) != 0)
        goto fail;
    if (po.torn) {
        /* ftruncate rather than zeroing in place: it is one metadata operation, crash-safe
         * either way (a crash before it is durable leaves the same torn tail, which the next
         * open recovers again), and the next append re-preallocates with fresh zeros. */
        if (ftruncate(fd, (off_t)po.valid_end) != 0 || fsync(fd) != 0) {
            mnc_jr_msg(err, err_len, "%s: truncating torn tail: %s", path, strerror(errno));
            goto fail;
        }
        if (notice && notice_len) {
            size_t l = strlen(notice);
            snprintf(notice + l, notice_len - l, "; truncated to %zu bytes", po.valid_end);
        }
    }
    /* The file may have just been created: make its directory entry durable too, otherwise an
     * acknowledged record could vanish with the entry. */
    if (mnc_jr_fsync_dir(path) != 0) {
        mnc_jr_msg(err, err_len, "%s: fsync directory: %s", path, strerror(errno));
        goto fail;
    }
    mnc_journal *j = calloc(1, sizeof(*j));
    if (!j || !(j->path = strdup(path))) {
        free(j);
        mnc_jr_msg(err, err_len, "%s: out of memory", path);
        goto fail;
    }
    j->fd = fd;
    j->next_seq = po.next_seq;
    j->end = (off_t)po.valid_end;
    /* Without a torn tail, [valid_end, size) is all zero: keep it as preallocated space. */
    j->alloc_end = po.torn ? (off_t)po.valid_end : (off_t)size;
    j->prealloc = MNC_JOURNAL_PREALLOC_DEFAULT;
    /* replay has read the whole file; none of it is read again while it is open */
    (void)mnc_cache_trim_reset(fd, &j->trim, j->end);
    j->dfd = -1;
    mnc_jd_setup(j);
    j->cur_batch = 1;
    j->done_batch = 0;
    /* the leader's gather waits on `arrive` with an absolute CLOCK_MONOTONIC deadline */
    pthread_condattr_t ca;
    int ca_rc = pthread_condattr_init(&ca), mu_rc = -1, cv_rc = -1, ar_rc = -1;
    if (ca_rc == 0 && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0) {
        mu_rc = pthread_mutex_init(&j->mu, NULL);
        cv_rc = pthread_cond_init(&j->cv, NULL);
        ar_rc = pthread_cond_init(&j->arrive, &ca);
    }
    if (ca_rc == 0)
        pthread_condattr_destroy(&ca);
    if (mu_rc != 0 || cv_rc != 0 || ar_rc != 0) {
        if (mu_rc == 0)
            pthread_mutex_destroy(&j->mu);
        if (cv_rc == 0)
            pthread_cond_destroy(&j->cv);
        if (ar_rc == 0)
            pthread_cond_destroy(&j->arrive);
        mnc_jd_close(j);
        free(j->tail);
        free(j->path);
        free(j);
        mnc_jr_msg(err, err_len, "%s: pthread init failed", path);
        goto fail;
    }
    return j;
fail:
    close(fd);
    return NULL;
}

/* ---- append with group commit ------------------------------------------------------- */

/* Leader step, called with j->mu held and !j->flushing and j->len > 0. Writes the queued
 * batch; drops the lock during I/O unless no_gc (the baseline holds it, which serialises).
 *
 * Preallocation: a batch that fits below alloc_end overwrites zero bytes that are already
 * allocated and counted in i_size, so its fdatasync flushes data only (no journal commit of
 * i_size/extents on ext4 - measured ~1.4x faster per sync on this host, see bench_ledger).
 * A batch that would mnc_jr_grow the file also writes zeros up to the next chunk boundary beyond it,
 * so the one metadata commit that growing costs anyway covers the next chunk as well. The
 * leader owns end/alloc_end while `flushing` (compact and close wait for it). */
static void flush_batch(mnc_journal *j, bool drop_lock)
{
    j->flushing = true;
    uint8_t *tb = j->spare;
    size_t tcap = j->spare_cap;
    j->spare = j->buf;
    j->spare_cap = j->cap;
    j->buf = tb;
    j->cap = tcap;
    size_t blen = j->len;
    j->len = 0;
    j->queued = 0;
    j->peak = j->appenders; /* who is in append() now: the next batch's expected size */
    uint64_t id = j->cur_batch++;
    off_t off = j->end;
    off_t need = off + (off_t)blen;
    off_t alloc = j->alloc_end;
    off_t chunk = (off_t)j->prealloc;
    if (drop_lock)
        pthread_mutex_unlock(&j->mu);
    int64_t t0 = mnc_mono_us();
    int rc = 0;
    off_t new_alloc = need > alloc ? need : alloc;
    bool extended = false, written = false;
    /* Direct only with preallocation on (with it off every batch grows the file by exactly
     * its records: the legacy layout stays exact) and chunks of whole blocks. */
    if (j->dfd >= 0 && chunk > 0 && chunk % DIO_BLOCK == 0) {
        off_t target = need > alloc ? (need / chunk + 1) * chunk : 0, reached = need;
        bool fallback;
        rc = mnc_jd_batch(j, j->spare, blen, off, target, &reached, &fallback);
        if (rc == 0) {
            written = true;
            extended = target > 0 && reached > need;
            if (reached > new_alloc)
                new_alloc = reached;
            j->direct_batches++;
        } else if (fallback) {
            mnc_jd_close(j); /* the page cache from now on; nothing of this batch was written */
            rc = 0;
        } else {
            written = true; /* an I/O error: the batch fails below */
        }
    }
    if (!written) {
        rc = mnc_jr_write_all(j->fd, j->spare, blen, off);
        if (rc == 0 && chunk > 0 && need > alloc) {
            /* A failure here (e.g. ENOSPC) is not an error for this batch: the zeros are not
             * needed for correctness, only for speed. Keep whatever part was written - zero
             * bytes past the logical end are a clean end - and let fdatasync decide the batch's
             * fate. */
            off_t target = (need / chunk + 1) * chunk;
            off_t reached = mnc_jr_write_zeros(j->fd, need, target);
            extended = reached > need;
            new_alloc = reached;
        }
        /* a later batch may go direct (preallocation back on): it starts with these bytes */
        if (rc == 0 && j->dfd >= 0)
            mnc_jd_tail_after(j, j->spare, blen, off);
    }
    if (rc == 0)
        rc = fdatasync(j->fd);
    int e = errno;
    int64_t took = mnc_mono_us() - t0;
    /* The synced bytes are clean: let go of the pages more than KEEP behind the end (replay
     * reads the file from disk anyway). Advisory; a failure stops trimming, nothing else. */
    if (rc == 0)
        (void)mnc_cache_trim_written(j->fd, &j->trim, need);
    if (drop_lock)
        pthread_mutex_lock(&j->mu);
    j->last_sync_us = took;
    if (rc == 0) {
        j->end = need;
        j->alloc_end = new_alloc;
        j->extends += extended;
        j->done_batch = id;
        j->syncs++;
    } else if (!j->poisoned) {
        j->poisoned = e ? e : EIO;
    }
    j->flushing = false;
    pthread_cond_broadcast(&j->cv);
}

/* Queues one record for the next batch; lock held. 0, or -1 with errno. */
static int enqueue(mnc_journal *j, const void *payload, size_t len, uint64_t *seq, uint64_t *batch)
{
    if (!payload || len == 0 || len > MNC_JOURNAL_MAX_PAYLOAD) {
        errno = EINVAL;
        return -1;
    }
    if (j->poisoned) {
        errno = EIO;
        return -1;
    }
    if (mnc_jr_grow(&j->buf, &j->cap, j->len + MNC_JOURNAL_HDR + len) != 0) {
        errno = ENOMEM;
        return -1;
    }
    *seq = j->next_seq++;
    mnc_jr_encode(j->buf + j->len, *seq, payload, (uint32_t)len);
    j->len += MNC_JOURNAL_HDR + len;
    j->queued++;
    *batch = j->cur_batch;
    if (j->gathering && j->queued >= j->gather_target)
        pthread_cond_signal(&j->arrive);
    return 0;
}

/* Before a leader writes a batch for concurrent appenders, it waits a little for the ones that
 * are on their way. Why: in a closed loop (each thread appends again as soon as its record is
 * durable) the threads a batch released come back one by one, and the first of them would
 * otherwise lead at once with its own record and one or two more; the rest then queue behind
 * that sync, and batches alternate between small and medium (~4 records per fdatasync with 8
 * threads in bench_ledger). The same idea as PostgreSQL's commit_delay/commit_siblings: the
 * leader waits until as many records are queued as there were threads in append() when the
 * last batch began (`peak`; a lone appender, mncd's flush and queue() never wait), and at most
 * half the last write + fdatasync, capped at 1 ms, so a thread that stopped appending costs at
 * most one such wait. Called with the lock held and nothing in flight; drops the lock while it
 * waits. Returns true if it waited (the caller must look at the state again). */
static bool gather(mnc_journal *j)
{
    if (j->no_gc || j->peak <= 1 || j->queued >= (size_t)j->peak || j->last_sync_us <= 1)
        return false;
    int64_t d = (j->last_sync_us / 2) * 1000; /* ns */
    if (d > 1000000)
        d = 1000000;
    struct timespec until;
    if (clock_gettime(CLOCK_MONOTONIC, &until) != 0)
        return false;
    until.tv_nsec += (long)d;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    j->gathering = true;
    j->gather_target = (size_t)j->peak;
    while (j->queued < j->gather_target && !j->poisoned)
        if (pthread_cond_timedwait(&j->arrive, &j->mu, &until) != 0)
            break; /* ETIMEDOUT; any other error must not turn this into a spin */
    j->gathering = false;
    return true;
}

/* Waits until batch `mine` is durable, leading a flush when nobody is; lock held. may_gather:
 * the caller is an appender, and as a leader may first gather() the others. 0, or -1 with
 * errno (the handle is poisoned). */
static int wait_durable(mnc_journal *j, uint64_t mine, bool may_gather)
{
    while (j->done_batch < mine && !j->poisoned) {
        if (j->flushing || j->gathering)
            pthread_cond_wait(&j->cv, &j->mu);
        else if (j->len > 0) {
            /* once per turn: after waiting, the state is looked at again (another thread,
             * compact() say, may have written the batch meanwhile) */
            if (may_gather && gather(j)) {
                may_gather = false;
                continue;
            }
            flush_batch(j, !j->no_gc);
        } else
            break; /* nothing queued, nothing in flight: cannot happen while mine is pending */
    }
    if (j->done_batch >= mine)
        return 0;
    errno = j->poisoned ? j->poisoned : EIO;
    return -1;
}

int mnc_journal_append(mnc_journal *j, const void *payload, size_t len, uint64_t *seq_out)
{
    if (!j) {
        errno = EINVAL;
        return -1;
    }
    uint64_t seq, mine;
    pthread_mutex_lock(&j->mu);
    if (++j->appenders > j->peak)
        j->peak = j->appenders;
    int rc = enqueue(j, payload, len, &seq, &mine);
    if (rc == 0)
        rc = wait_durable(j, mine, true);
    int e = errno;
    j->appenders--;
    pthread_mutex_unlock(&j->mu);
    errno = e;
    if (rc == 0 && seq_out)
        *seq_out = seq;
    return rc;
}

int mnc_journal_queue(mnc_journal *j, const void *payload, size_t len, uint64_t *seq_out)
{
    if (!j) {
        errno = EINVAL;
        return -1;
    }
    uint64_t seq, mine;
    pthread_mutex_lock(&j->mu);
    int rc = enqueue(j, payload, len, &seq, &mine);
    int e = errno;
    pthread_mutex_unlock(&j->mu);
    errno = e;
    if (rc == 0 && seq_out)
        *seq_out = seq;
    return rc;
}

int mnc_journal_flush(mnc_journal *j)
{
    if (!j) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&j->mu);
    /* everything queued so far: the accumulating batch if it has records, else the one a
     * leader is writing, else nothing is pending */
    uint64_t mine = j->len > 0 ? j->cur_batch : j->flushing ? j->cur_batch - 1 : j->done_batch;
    int rc = j->poisoned ? (errno = j->poisoned, -1) : wait_durable(j, mine, false);
    int e = errno;
    pthread_mutex_unlock(&j->mu);
    errno = e;
    return rc;
}

/* One uint64_t field of j, read under j's lock (the getters below). */
static uint64_t read_locked(mnc_journal *j, const uint64_t *field)
{
    pthread_mutex_lock(&j->mu);
    uint64_t v = *field;
    pthread_mutex_unlock(&j->mu);
    return v;
}

uint64_t mnc_journal_next_seq(mnc_journal *j) { return read_locked(j, &j->next_seq); }

uint64_t mnc_journal_syncs(mnc_journal *j) { return read_locked(j, &j->syncs); }

void mnc_journal_set_prealloc(mnc_journal *j, size_t chunk)
{
    pthread_mutex_lock(&j->mu);
    j->prealloc = chunk;
    pthread_mutex_unlock(&j->mu);
}

void mnc_journal_set_direct(mnc_journal *j, int on)
{
    pthread_mutex_lock(&j->mu);
    while (j->flushing || j->gathering) /* dfd, tail and stage are the leader's */
        pthread_cond_wait(&j->cv, &j->mu);
    j->direct_off = !on;
    mnc_jd_setup(j); /* closes it when off */
    pthread_mutex_unlock(&j->mu);
}

int mnc_journal_direct(mnc_journal *j)
{
    pthread_mutex_lock(&j->mu);
    int d = j->dfd >= 0;
    pthread_mutex_unlock(&j->mu);
    return d;
}

uint64_t mnc_journal_direct_batches(mnc_journal *j) { return read_locked(j, &j->direct_batches); }

uint64_t mnc_journal_prealloc_rounds(mnc_journal *j) { return read_locked(j, &j->extends); }

uint64_t mnc_journal_size(mnc_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t s = (uint64_t)j->end;
    pthread_mutex_unlock(&j->mu);
    return s;
}

void mnc_journal_set_no_group_commit(mnc_journal *j, int on)
{
    pthread_mutex_lock(&j->mu);
    j->no_gc = on;
    pthread_mutex_unlock(&j->mu);
}

/* ---- compaction --------------------------------------------------------------------- */

int mnc_journal_compact(mnc_journal *j, const void *const *payloads, const size_t *lens, size_t n)
{
    if (!j || (n && (!payloads || !lens))) {
        errno = EINVAL;
        return -1;
    }
    char *tmp = mnc_jr_tmp_name(j->path);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    pthread_mutex_lock(&j->mu);
    /* Drain: records already queued carry sequence numbers below next_seq and belong to the
     * old file; write them before switching. */
    while (!j->poisoned && (j->flushing || j->len > 0)) {
        if (!j->flushing)
            flush_batch(j, false);
        else
            pthread_cond_wait(&j->cv, &j->mu);
    }
    int rc = -1, e = EIO;
    if (j->poisoned)
        goto out;
    off_t size;
    int fd = mnc_jr_write_tmp(tmp, j->next_seq, payloads, lens, n, &size);
    if (fd < 0) {
        e = errno;
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(tmp, j->path) != 0) {
        e = errno;
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (mnc_jr_fsync_dir(j->path) != 0) {
        /* The rename happened but may not be durable: the new file is in place and valid
         * either way, so switch to it; report the error. */
        e = errno;
        close(j->fd);
        j->fd = fd;
        j->end = size;
        j->alloc_end = size;
        j->next_seq += n;
        (void)mnc_cache_trim_reset(fd, &j->trim, size);
        mnc_jd_setup(j);
        goto out;
    }
    close(j->fd);
    j->fd = fd;
    j->end = size;
    j->alloc_end = size;
    j->next_seq += n;
    (void)mnc_cache_trim_reset(fd, &j->trim, size);
    mnc_jd_setup(j);
    rc = 0;
out:
    pthread_mutex_unlock(&j->mu);
    free(tmp);
    if (rc != 0)
        errno = e;
    return rc;
}

int mnc_journal_close(mnc_journal *j)
{
    if (!j)
        return 0;
    pthread_mutex_lock(&j->mu);
    while (j->flushing || j->gathering)
        pthread_cond_wait(&j->cv, &j->mu);
    if (j->len > 0 && !j->poisoned)
        flush_batch(j, false);
    int rc = j->poisoned ? -1 : 0;
    /* Give back the preallocated zeros so a cleanly closed journal is exactly its records
     * (the legacy layout; tools and people that look at the size see the logical end).
     * Crash-safe: only zero bytes past the last durable record are cut, and a crash before
     * the truncation is durable leaves zeros, which open() treats as the clean end - so no
     * sync is needed. A failure is deliberately not an error: the file is valid with or
     * without the zeros. Skipped after an I/O error: open() will judge what is there. */
    if (!j->poisoned && j->alloc_end > j->end && ftruncate(j->fd, j->end) != 0) {
        /* ignored, see above */
    }
    pthread_mutex_unlock(&j->mu);
    mnc_jd_close(j);
    if (close(j->fd) != 0)
        rc = -1;
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    pthread_cond_destroy(&j->arrive);
    free(j->buf);
    free(j->spare);
    free(j->tail);
    free(j->stage);
    free(j->path);
    free(j);
    return rc;
}
