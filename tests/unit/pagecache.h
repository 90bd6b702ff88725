/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* pagecache.h - what of a file the kernel holds in its page cache (mincore on a mapping), for
 * the tests of cache_trim.h's users (test_journal, test_audit). Include after cmocka.h. */
#ifndef MNC_TEST_PAGECACHE_H
#define MNC_TEST_PAGECACHE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cache_trim.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* Cached pages of path's byte range [from, to) (page-aligned inward); -1 on error. Mapping
 * the file faults nothing in: mincore only reports. */
static inline long pc_cached_pages(const char *path, off_t from, off_t to)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    long pg = sysconf(_SC_PAGESIZE);
    size_t size = (size_t)st.st_size;
    void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    size_t np = (size + (size_t)pg - 1) / (size_t)pg;
    unsigned char *vec = malloc(np);
    long n = -1;
    if (vec && mincore(m, size, vec) == 0) {
        n = 0;
        for (size_t i = (size_t)((from + pg - 1) / pg); i < np && (off_t)((i + 1) * (size_t)pg) <= to; i++)
            n += vec[i] & 1;
    }
    free(vec);
    munmap(m, size);
    return n;
}

/* Asserts what cache_trim.h promises for a file of `end` bytes its writer trimmed: nothing more
 * than KEEP + STEP behind the end is cached, and the newest bytes are (so mincore sees the
 * cache at all). `what` names the file in the printed figures. */
static inline void pc_assert_trimmed(const char *what, const char *path, off_t end)
{
    long old = pc_cached_pages(path, 0, end - MNC_CACHE_TRIM_KEEP - MNC_CACHE_TRIM_STEP);
    long recent = pc_cached_pages(path, end - MNC_CACHE_TRIM_STEP / 2, end);
    printf("# %s of %lld bytes: %ld cached pages more than KEEP + STEP behind its end, %ld in "
           "its last 2 MiB\n",
           what, (long long)end, old, recent);
    assert_int_equal(old, 0);
    assert_true(recent > 0);
}

/* A directory for files whose page cache a test inspects: "/tmp/<prefix>XXXXXX", or under the
 * working directory (the repository) when /tmp is a tmpfs, where the cache is the file. */
static inline int pc_mkdtemp(char *dir, size_t n, const char *prefix)
{
    struct statfs sf;
    const char *base = statfs("/tmp", &sf) == 0 && sf.f_type == TMPFS_MAGIC ? "." : "/tmp";
    snprintf(dir, n, "%s/%sXXXXXX", base, prefix);
    return mkdtemp(dir) ? 0 : -1;
}

#endif
