// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mnc_util.c - clock, bounded error text, file writes (see mnc_util.h). */
#include "mnc_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t mnc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int64_t mnc_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int mnc_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int mnc_write_file(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(s);
    ssize_t n = write(fd, s, len);
    int e = errno;
    close(fd);
    return n == (ssize_t)len ? 0 : -(n < 0 ? e : EIO);
}

int mnc_read_file(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t r = read(fd, buf, n - 1);
    int e = errno;
    close(fd);
    if (r < 0)
        return -e;
    buf[r] = 0;
    return 0;
}

static mnc_opener_fn opener;
static void *opener_arg;

void mnc_set_opener(mnc_opener_fn fn, void *arg)
{
    opener = fn;
    opener_arg = arg;
}

int mnc_open_ro(const char *path)
{
    if (opener)
        return opener(opener_arg, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    return fd >= 0 ? fd : -errno;
}

int mnc_grow(void **arr, int *cap, int n, size_t elem, int first)
{
    if (n < *cap)
        return 0;
    if (*cap > INT_MAX / 2 || first <= 0)
        return -1;
    int ncap = *cap ? *cap * 2 : first;
    void *na = realloc(*arr, (size_t)ncap * elem);
    if (!na)
        return -1;
    *arr = na;
    *cap = ncap;
    return 0;
}

size_t mnc_str_cat(char *buf, size_t n, const char *const *parts, size_t np)
{
    if (n == 0)
        return 0;
    size_t o = 0;
    for (size_t i = 0; i < np; i++) {
        size_t l = strlen(parts[i]);
        if (l > n - 1 - o) {
            memcpy(buf + o, parts[i], n - 1 - o);
            o = n - 1;
            break;
        }
        memcpy(buf + o, parts[i], l);
        o += l;
    }
    buf[o] = '\0';
    return o;
}

const char *mnc_ws_shown(const char *path, char *const *roots, int n, char *out, size_t outn)
{
    for (int i = 0; i < n; i++) {
        size_t rl = strlen(roots[i]);
        if (strncmp(path, roots[i], rl) != 0 || (path[rl] != '/' && rl > 1) || path[rl] == 0)
            continue;
        struct stat st;
        if (lstat(path, &st) == 0)
            snprintf(out, outn, "%s/<entry, inode %llu>", roots[i], (unsigned long long)st.st_ino);
        else
            snprintf(out, outn, "%s/<an entry>", roots[i]);
        return out;
    }
    return path;
}
