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
#include "pagecount.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* Asserts that of the file's first `to` bytes at most 1% are cached. Not none: valgrind reads
 * the start of every file a program maps (looking for ELF debug info), so under valgrind the
 * first 16 KiB are cached by pc_cached_pages itself. An untrimmed file keeps all of it. */
static inline void pc_assert_dropped(const char *path, off_t to)
{
    long old = pc_cached_pages(path, 0, to);
    long span = (long)(to / sysconf(_SC_PAGESIZE));
    printf("#   %ld of its first %ld pages are cached\n", old, span);
    assert_true(old >= 0 && span > 100 && old <= span / 100);
}

/* Asserts what cache_trim.h promises for a file of `end` bytes its writer trimmed: what lies
 * more than KEEP + STEP behind the end is not cached (pc_assert_dropped), and the newest bytes
 * are (so mincore sees the cache at all). `what` names the file in the printed figures. */
static inline void pc_assert_trimmed(const char *what, const char *path, off_t end)
{
    long recent = pc_cached_pages(path, end - MNC_CACHE_TRIM_STEP / 2, end);
    printf("# %s of %lld bytes: %ld cached pages in its last 2 MiB; more than KEEP + STEP behind "
           "its end:\n",
           what, (long long)end, recent);
    assert_true(recent > 0);
    pc_assert_dropped(path, end - MNC_CACHE_TRIM_KEEP - MNC_CACHE_TRIM_STEP);
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
