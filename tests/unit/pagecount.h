/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* pagecount.h - how many pages of a file the kernel holds in its page cache (mincore on a
 * mapping). No test framework: pagecache.h's assertions and bench_mncd's "state dir cached"
 * figure both count with it. */
#ifndef MNC_TEST_PAGECOUNT_H
#define MNC_TEST_PAGECOUNT_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

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

#endif
