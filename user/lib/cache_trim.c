// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cache_trim.c - bounded page cache for append-only files; contract in cache_trim.h. */
#include "cache_trim.h"

#include <errno.h>
#include <fcntl.h>

static int stop(mnc_cache_trim *t, int e)
{
    t->err = e;
    errno = e;
    return -1;
}

/* Drops the clean cached pages of [from, to). POSIX_FADV_DONTNEED returns the error number
 * instead of setting errno. */
static int drop(int fd, off_t from, off_t to)
{
    int e = posix_fadvise(fd, from, to - from, POSIX_FADV_DONTNEED);
    if (e != 0)
        errno = e;
    return e ? -1 : 0;
}

int mnc_cache_trim_reset(int fd, mnc_cache_trim *t, off_t end)
{
    off_t at = end - end % MNC_CACHE_TRIM_STEP;
    *t = (mnc_cache_trim){.started = at, .dropped = at};
    /* len 0 = to the end of the file */
    int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return e ? stop(t, e) : 0;
}

int mnc_cache_trim_written(int fd, mnc_cache_trim *t, off_t end)
{
    if (t->err)
        return 0;
    off_t upto = end - end % MNC_CACHE_TRIM_STEP;
    if (upto <= t->started)
        return 0;
    if (sync_file_range(fd, t->started, upto - t->started, SYNC_FILE_RANGE_WRITE) != 0)
        return stop(t, errno);
    t->started = upto;
    off_t to = upto - MNC_CACHE_TRIM_KEEP;
    if (to <= t->dropped)
        return 0;
    /* DONTNEED skips pages that are dirty or under writeback, so wait for [dropped, to) first;
     * its writeback was started a few steps ago. */
    if (sync_file_range(fd, t->dropped, to - t->dropped,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0)
        return stop(t, errno);
    if (drop(fd, t->dropped, to) != 0)
        return stop(t, errno);
    t->dropped = to;
    return 0;
}
