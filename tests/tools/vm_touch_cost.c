// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* vm_touch_cost.c - how much touching new memory costs on this machine, per 256 MiB.
 *
 * The measurement behind docs/mncd.md, "Flat cost at 10^6": on the development VM, memory the
 * guest has not touched recently is slow to touch (the host backs it on first touch), so a
 * writer whose page cache only grows gets slower past a few GB. Two loops:
 *   write DIR MiB   3.5 KB pwrite()s into DIR/touch.dat (no fsync), CPU per write per 256 MiB
 *   memset MiB      malloc + memset of 256 MiB blocks, GB/s per block
 * Not built by make (a measuring tool, not a test):
 *   cc -O2 -o /tmp/vm_touch_cost tests/tools/vm_touch_cost.c
 *   /tmp/vm_touch_cost write /tmp 4000; /tmp/vm_touch_cost memset 6144
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (256L << 20)

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int write_loop(const char *dir, long total)
{
    char path[4096], buf[3500];
    snprintf(path, sizeof(path), "%s/touch.dat", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    memset(buf, 'x', sizeof(buf));
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    long n = 0;
    for (long off = 0; off < total; off += (long)sizeof(buf), n++) {
        if (pwrite(fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf)) {
            perror("pwrite");
            close(fd);
            unlink(path);
            return 1;
        }
        if ((off + (long)sizeof(buf)) / BLOCK != off / BLOCK) {
            double t = clock_s(CLOCK_MONOTONIC), c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            printf("%6ld MiB written: %.2f us wall, %.2f us CPU per write\n", (off + (long)sizeof(buf)) >> 20,
                   (t - t0) / (double)n * 1e6, (c - c0) / (double)n * 1e6);
            fflush(stdout);
            t0 = t;
            c0 = c;
            n = 0;
        }
    }
    close(fd);
    unlink(path);
    return 0;
}

static int memset_loop(long total)
{
    for (long done = 0; done < total; done += BLOCK) {
        double t0 = clock_s(CLOCK_MONOTONIC);
        char *p = malloc(BLOCK);
        if (!p) {
            perror("malloc");
            return 1;
        }
        memset(p, 1, BLOCK);
        double s = clock_s(CLOCK_MONOTONIC) - t0;
        printf("%6ld MiB touched: %.0f ms (%.2f GB/s)\n", (done + BLOCK) >> 20, s * 1e3, (double)BLOCK / s / 1e9);
        fflush(stdout);
        /* kept: the next block must be new memory */
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "write") == 0)
        return write_loop(argv[2], atol(argv[3]) << 20);
    if (argc == 3 && strcmp(argv[1], "memset") == 0)
        return memset_loop(atol(argv[2]) << 20);
    fprintf(stderr, "usage: vm_touch_cost write DIR MiB | vm_touch_cost memset MiB\n");
    return 2;
}
