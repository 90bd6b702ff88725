// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* randbuf.c - getrandom a page at a time (contract: randbuf.h). A disclose takes 16 bytes for
 * its object id; one getrandom per disclose was ~3.6% of mncd's CPU under bench_mncd. */
#include "randbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#define PAGE 4096

typedef struct pool {
    size_t avail; /* unused bytes at the end of b (0 after a fork: the page is wiped) */
    unsigned char b[PAGE - 64];
} pool;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pool *pl;   /* the wipe-on-fork page, or NULL */
static bool tried; /* set up once; a refusal is not retried */

static int fill(void *out, size_t n)
{
    unsigned char *p = out;
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static void setup(void)
{
    tried = true;
    void *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    if (madvise(m, PAGE, MADV_WIPEONFORK) != 0) { /* without it a child would repeat our bytes */
        munmap(m, PAGE);
        return;
    }
    pl = m;
}

int mnc_random_bytes(void *out, size_t n)
{
    if (n > sizeof(pl->b) / 4)
        return fill(out, n);
    if (pthread_mutex_lock(&lock) != 0)
        return fill(out, n);
    if (!tried)
        setup();
    int rc = 0;
    if (!pl) {
        rc = fill(out, n);
    } else {
        if (pl->avail < n) {
            if (fill(pl->b, sizeof(pl->b)) != 0) {
                pl->avail = 0;
                rc = -1;
            } else {
                pl->avail = sizeof(pl->b);
            }
        }
        if (rc == 0) {
            unsigned char *src = pl->b + sizeof(pl->b) - pl->avail;
            memcpy(out, src, n);
            memset(src, 0, n); /* taken: not kept */
            pl->avail -= n;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
