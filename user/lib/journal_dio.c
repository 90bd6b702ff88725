// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* journal_dio.c - direct I/O of the journal's batches (journal_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal_int.h"

/* ---- direct I/O ------------------------------------------------------------------------
 * Why: a batch written through the page cache is copied into freshly allocated pages, charged
 * to the memory cgroup, written back by fdatasync and dropped again by cache_trim - for bytes
 * nobody reads until the next start. Written O_DIRECT from an aligned buffer it goes to the
 * device in one request and fdatasync only flushes the device's cache: 3.5-4x less CPU per
 * 1.4 MB batch on this project's VMs (docs/mncd.md, "The journal writes O_DIRECT").
 *
 * A direct write covers whole DIO_BLOCKs: it starts at the block boundary below the logical
 * end, rewriting the durable bytes before it unchanged (j->tail), and ends with zeros up to the
 * next boundary - zeros past the logical end are the clean end in this format, so a torn
 * direct write looks exactly like a torn buffered one: identical old bytes, then part of the
 * new batch or zeros. */

static void *dio_alloc(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, DIO_BLOCK, n) == 0 ? p : NULL;
}

void mnc_jd_close(mnc_journal *j)
{
    if (j->dfd >= 0)
        close(j->dfd);
    j->dfd = -1;
}

/* Opens the O_DIRECT descriptor of j->fd's file (the same inode: through /proc/self/fd, so a
 * rename over the path cannot swap it) and loads the tail bytes below j->end. Leaves j->dfd
 * -1, the page-cache path, when any step fails: the filesystem has no O_DIRECT (tmpfs before
 * 6.6, some FUSE), no /proc, or the read fails. Not an error. */
void mnc_jd_setup(mnc_journal *j)
{
    mnc_jd_close(j);
    if (j->direct_off)
        return;
    if (!j->tail && !(j->tail = dio_alloc(DIO_BLOCK)))
        return;
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", j->fd);
    int dfd = open(p, O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (dfd < 0)
        return;
    size_t tl = (size_t)(j->end % DIO_BLOCK);
    if (tl > 0 && pread(j->fd, j->tail, tl, j->end - (off_t)tl) != (ssize_t)tl) {
        close(dfd);
        return;
    }
    j->dfd = dfd;
}

/* After a batch of blen bytes at p went to the file at off by any path: j->tail becomes the
 * file's bytes from the block boundary below the new end up to it. A batch that ends in the
 * old tail's block extends the tail; else the new tail is the batch's last bytes. */
void mnc_jd_tail_after(mnc_journal *j, const uint8_t *p, size_t blen, off_t off)
{
    off_t need = off + (off_t)blen, na = need - need % DIO_BLOCK;
    if (na >= off)
        memcpy(j->tail, p + (na - off), (size_t)(need - na));
    else /* na is the boundary below off too: the old tail [na, off) stays in front */
        memcpy(j->tail + (off - na), p, blen);
}

/* One direct pwrite of n bytes (n and off multiples of DIO_BLOCK, p aligned). Returns the
 * bytes written - fewer than n when the filesystem ran out of space part way (the rest cannot
 * be continued: it would be unaligned) - or -1 with errno. */
static ssize_t dio_write(int fd, const uint8_t *p, size_t n, off_t off)
{
    ssize_t w;
    do
        w = pwrite(fd, p, n, off);
    while (w < 0 && errno == EINTR);
    return w;
}

/* Writes the batch (blen bytes at p, to go at file offset off) direct, together with the zeros
 * of a preallocation round up to `target` (0: none) in the same request - one request rather
 * than one per chunk of zeros: on a VM each request is a notification of the host (a VM exit)
 * and a sleep until it completes. Returns 0 and sets *reached (the file's new allocated end),
 * or -1 with errno; *fallback then says nothing was written and the page-cache path may take
 * the batch (the filesystem refused the direct write itself, or no memory for the buffer). */
int mnc_jd_batch(mnc_journal *j, const uint8_t *p, size_t blen, off_t off, off_t target, off_t *reached, bool *fallback)
{
    *fallback = false;
    off_t a = off - (off % DIO_BLOCK);
    size_t tl = (size_t)(off - a);
    size_t n = tl + blen, wn = (n + DIO_BLOCK - 1) / DIO_BLOCK * DIO_BLOCK;
    size_t zn = target > a + (off_t)wn ? (size_t)(target - a) : wn; /* target is a block multiple */
    if (zn > j->stage_cap) {
        size_t nc = j->stage_cap ? j->stage_cap : (size_t)64 << 10;
        while (nc < zn)
            nc *= 2;
        uint8_t *ns = dio_alloc(nc);
        if (!ns) {
            *fallback = true;
            errno = ENOMEM;
            return -1;
        }
        free(j->stage);
        j->stage = ns;
        j->stage_cap = nc;
    }
    memcpy(j->stage, j->tail, tl);
    memcpy(j->stage + tl, p, blen);
    memset(j->stage + n, 0, zn - n);
    ssize_t w = dio_write(j->dfd, j->stage, zn, a);
    if (zn > wn && (w < 0 ? errno == ENOSPC || errno == EDQUOT || errno == EFBIG : (size_t)w < wn)) {
        /* As with the page cache, the zeros are for speed only, and a full disk is no reason
         * to fail the records: write them alone. (A failed or short direct write leaves what
         * the format reads as before: old bytes, then new ones or zeros.) */
        zn = wn;
        w = dio_write(j->dfd, j->stage, zn, a);
    }
    if (w < 0) {
        /* EINVAL: this filesystem (or its alignment rules) does not take direct writes after
         * all, and nothing was written */
        *fallback = errno == EINVAL;
        return -1;
    }
    if ((size_t)w < wn) { /* the records did not fit */
        errno = ENOSPC;
        return -1;
    }
    /* the zeros may have fallen short: the file is allocated as far as they reached */
    *reached = a + (off_t)((size_t)w / DIO_BLOCK * DIO_BLOCK);
    mnc_jd_tail_after(j, p, blen, off);
    return 0;
}
