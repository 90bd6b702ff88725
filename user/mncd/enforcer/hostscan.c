// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* hostscan.c - the pass over processes outside a tainted agent (contract in hostscan.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostscan.h"

typedef struct hctx {
    mncd_hostscan *hs;
    const uint32_t *interest;
    int ninterest;
} hctx;

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool has(const uint32_t *v, int n, uint32_t x)
{
    return n > 0 && bsearch(&x, v, (size_t)n, sizeof(*v), cmp_u32);
}

/* "socket:[12345]" -> 12345; 0 if not a socket */
uint32_t mncd_socket_ino(const char *link)
{
    unsigned long v;
    char tail;
    if (sscanf(link, "socket:[%lu%c", &v, &tail) != 2 || tail != ']' || v == 0 || v > UINT32_MAX)
        return 0;
    return (uint32_t)v;
}

static int add_holder(mncd_hostscan *hs, uint32_t ino, pid_t pid, int fd)
{
    if (hs->nh == hs->ch) {
        int n = hs->ch ? hs->ch * 2 : 64;
        mncd_holder *t = realloc(hs->h, (size_t)n * sizeof(*t));
        if (!t)
            return -ENOMEM;
        hs->h = t;
        hs->ch = n;
    }
    hs->h[hs->nh++] = (mncd_holder){ino, pid, fd};
    return 0;
}

static int scan_fd_dir(hctx *c, pid_t pid)
{
    char dp[64];
    snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dp);
    if (!d)
        return errno == ENOENT || errno == ESRCH ? 1 : -errno;
    int dfd = dirfd(d), rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char link[PATH_MAX];
        ssize_t n = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
        if (n < 0)
            continue; /* closed meanwhile */
        link[n] = 0;
        c->hs->fds++;
        uint32_t ino = mncd_socket_ino(link);
        if (ino && has(c->interest, c->ninterest, ino) && (rc = add_holder(c->hs, ino, pid, atoi(e->d_name))) != 0)
            break;
    }
    closedir(d);
    return rc;
}

int mncd_hostscan_run(mncd_hostscan *hs, const uint32_t *skip, int nskip, const uint32_t *interest, int ninterest,
                      char *err, size_t errlen)
{
    long t0 = now_us();
    memset(hs, 0, sizeof(*hs));
    hctx c = {.hs = hs, .interest = interest, .ninterest = ninterest};
    DIR *d = opendir("/proc");
    if (!d) {
        snprintf(err, errlen, "list /proc: %s", strerror(errno));
        return -1;
    }
    pid_t self = getpid();
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) && !rc;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid > INT_MAX || pid == self || has(skip, nskip, (uint32_t)pid))
            continue;
        int r = scan_fd_dir(&c, (pid_t)pid);
        if (r == 1)
            continue; /* exited */
        if (r == -EACCES || r == -EPERM) {
            snprintf(err, errlen, "list /proc/%ld/fd: %s", pid, strerror(-r));
            rc = -1;
            break;
        }
        if (r) {
            snprintf(err, errlen, "host scan of pid %ld: %s", pid, strerror(-r));
            rc = -1;
            break;
        }
        hs->pids++;
    }
    closedir(d);
    if (hs->nh)
        qsort(hs->h, (size_t)hs->nh, sizeof(*hs->h), cmp_u32); /* ino is the first member */
    hs->us = now_us() - t0;
    return rc;
}

const mncd_holder *mncd_hostscan_holder(const mncd_hostscan *hs, uint32_t ino)
{
    mncd_holder key = {.ino = ino};
    return hs->nh ? bsearch(&key, hs->h, (size_t)hs->nh, sizeof(*hs->h), cmp_u32) : NULL;
}

void mncd_hostscan_free(mncd_hostscan *hs)
{
    free(hs->h);
    hs->h = NULL;
    hs->nh = hs->ch = 0;
}
