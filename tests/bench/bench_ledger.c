// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_ledger.c - durable MNC-L charges per second: group commit vs fsync per record.
 *
 * Each charge is a realistic ledger record (~170 bytes of JSON) appended durably (write +
 * fdatasync) before charge() returns. Compared in the same run on the same file system:
 *   group commit, 1 and 8 threads  vs  no group commit (fsync per record), 1 and 8 threads.
 * The ledger file goes to $MNC_BENCH_DIR (default: $BUILD, i.e. the build directory on the
 * real disk - never /tmp, which may be tmpfs where fsync is free).
 * --quick: fewer charges (CI). Target: >= 20k charges/s with 8 threads and group commit.
 *
 * Second part, journal level (same payload size, 8 threads, group commit): preallocation of
 * zero bytes (default, see journal.h) against growing the file per batch
 * (mnc_journal_set_prealloc(j, 0), the previous behaviour), interleaved, 3 runs each, median.
 * --primitives: also time the raw sync primitives on one 1.6 KiB write (8 records' worth):
 * fdatasync on a growing file vs on preallocated zeros vs O_DSYNC vs fsync vs fallocate'd
 * (unwritten) space, and sync_file_range, which is NOT durable (no disk cache flush, no
 * metadata) and is shown only to bound what a data-only flush can cost.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "mnc/journal.h"
#include "mnc/ledger.h"
#include "mnc_bench.h"

static mnc_ledger *L;
static int per_thread;
static int run_id;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < per_thread; i++) {
        char id[64], subj[32];
        snprintf(id, sizeof(id), "run%d-t%d-%d", run_id, t, i);
        snprintf(subj, sizeof(subj), "subject-%d", i % 64);
        mnc_ledger_obs o[2] = {{"slot_feasible", "Tue 14:00 infeasible"}, {"selected_slot", "Thu 10:00"}};
        if (mnc_ledger_charge(L, subj, "coordinator", id, o, 2, 0.0123456789, NULL) != MNC_LEDGER_OK) {
            perror("charge");
            exit(1);
        }
    }
    return NULL;
}

static double run(const char *path, int threads, int n_total, int no_gc)
{
    char notice[256], err[256];
    unlink(path);
    L = mnc_ledger_open(path, notice, sizeof(notice), err, sizeof(err));
    if (!L) {
        fprintf(stderr, "bench_ledger: %s\n", err);
        exit(1);
    }
    mnc_ledger_set_no_group_commit(L, no_gc);
    per_thread = n_total / threads;
    run_id++;
    pthread_t th[64];
    double t0 = now();
    for (int t = 0; t < threads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
            exit(1);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    double dt = now() - t0;
    size_t nc;
    mnc_ledger_stats(L, NULL, &nc);
    if (mnc_ledger_close(L) != 0 || nc != (size_t)(per_thread * threads)) {
        fprintf(stderr, "bench_ledger: close failed or lost charges\n");
        exit(1);
    }
    unlink(path);
    return (double)nc / dt;
}

/* ---- journal level: preallocation on/off ---------------------------------------------- */

static mnc_journal *J;
static int j_per_thread;
static char j_payload[171];

static void *j_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < j_per_thread; i++)
        if (mnc_journal_append(J, j_payload, sizeof(j_payload) - 1, NULL) != 0) {
            perror("append");
            exit(1);
        }
    return NULL;
}

static double j_run(const char *path, int threads, int n_total, size_t prealloc, double *per_sync)
{
    char notice[256], err[256];
    unlink(path);
    J = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    if (!J) {
        fprintf(stderr, "bench_ledger: %s\n", err);
        exit(1);
    }
    mnc_journal_set_prealloc(J, prealloc);
    j_per_thread = n_total / threads;
    pthread_t th[64];
    double t0 = now();
    for (int t = 0; t < threads; t++)
        if (pthread_create(&th[t], NULL, j_worker, NULL) != 0)
            exit(1);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    double dt = now() - t0;
    uint64_t syncs = mnc_journal_syncs(J);
    if (mnc_journal_next_seq(J) != (uint64_t)(j_per_thread * threads) + 1 || mnc_journal_close(J) != 0) {
        fprintf(stderr, "bench_ledger: journal close failed or lost records\n");
        exit(1);
    }
    unlink(path);
    if (per_sync)
        *per_sync = syncs ? dt / (double)syncs * 1e6 : 0;
    return (double)(j_per_thread * threads) / dt;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void journal_compare(const char *path, int n)
{
    memset(j_payload, 'x', sizeof(j_payload) - 1);
    enum { REPS = 3 };
    double off8[REPS], on8[REPS], off1[REPS], on1[REPS], us_off[REPS], us_on[REPS], rb_off[REPS], rb_on[REPS];
    for (int r = 0; r < REPS; r++) {
        off8[r] = j_run(path, 8, n, 0, &us_off[r]);
        on8[r] = j_run(path, 8, n, MNC_JOURNAL_PREALLOC_DEFAULT, &us_on[r]);
        /* records per write + fdatasync: how full the group commit's batches are */
        rb_off[r] = off8[r] * us_off[r] / 1e6;
        rb_on[r] = on8[r] * us_on[r] / 1e6;
        off1[r] = j_run(path, 1, n / 4, 0, NULL);
        on1[r] = j_run(path, 1, n / 4, MNC_JOURNAL_PREALLOC_DEFAULT, NULL);
    }
    qsort(off8, REPS, sizeof(double), cmp_d);
    qsort(on8, REPS, sizeof(double), cmp_d);
    qsort(off1, REPS, sizeof(double), cmp_d);
    qsort(on1, REPS, sizeof(double), cmp_d);
    qsort(us_off, REPS, sizeof(double), cmp_d);
    qsort(us_on, REPS, sizeof(double), cmp_d);
    qsort(rb_off, REPS, sizeof(double), cmp_d);
    qsort(rb_on, REPS, sizeof(double), cmp_d);
    printf("journal appends/s (170 B, group commit, median of %d interleaved runs):\n", REPS);
    printf("  grow per batch (prealloc off): 1 thread %9.0f   8 threads %9.0f   %6.1f us/batch, %.1f records/batch\n",
           off1[1], off8[1], us_off[1], rb_off[1]);
    printf("  preallocated zeros (default):  1 thread %9.0f   8 threads %9.0f   %6.1f us/batch, %.1f records/batch\n",
           on1[1], on8[1], us_on[1], rb_on[1]);
    printf("  preallocation speed-up: 1 thread %.2fx, 8 threads %.2fx\n", on1[1] / off1[1], on8[1] / off8[1]);
}

/* ---- raw sync primitives (--primitives) ---------------------------------------------- */

enum { PRIM_GROW, PRIM_ZERO, PRIM_ODSYNC, PRIM_FSYNC, PRIM_FALLOC, PRIM_SFR, PRIM_N };

static double prim_run(const char *path, int mode, int n)
{
    const size_t R = 1600;
    char buf[1600];
    memset(buf, 'x', sizeof(buf));
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    size_t total = (size_t)n * R;
    if (mode == PRIM_ZERO || mode == PRIM_ODSYNC || mode == PRIM_FSYNC || mode == PRIM_SFR) {
        char *z = calloc(1, total);
        if (!z || pwrite(fd, z, total, 0) != (ssize_t)total || fsync(fd) != 0) {
            perror("zero fill");
            exit(1);
        }
        free(z);
    } else if (mode == PRIM_FALLOC) {
        if (fallocate(fd, 0, 0, (off_t)total) != 0 || fsync(fd) != 0) {
            perror("fallocate");
            exit(1);
        }
    }
    if (mode == PRIM_ODSYNC) {
        close(fd);
        fd = open(path, O_RDWR | O_DSYNC | O_CLOEXEC);
        if (fd < 0) {
            perror(path);
            exit(1);
        }
    }
    double t0 = now();
    for (int i = 0; i < n; i++) {
        off_t off = (off_t)i * (off_t)R;
        int rc = pwrite(fd, buf, R, off) == (ssize_t)R ? 0 : -1;
        if (rc == 0 && (mode == PRIM_GROW || mode == PRIM_ZERO || mode == PRIM_FALLOC))
            rc = fdatasync(fd);
        else if (rc == 0 && mode == PRIM_FSYNC)
            rc = fsync(fd);
        else if (rc == 0 && mode == PRIM_SFR)
            rc = sync_file_range(fd, off, (off_t)R,
                                 SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        if (rc != 0) {
            perror("sync");
            exit(1);
        }
    }
    double dt = now() - t0;
    close(fd);
    unlink(path);
    return dt / n * 1e6;
}

static void primitives(const char *path, int n)
{
    static const char *name[PRIM_N] = {"write past EOF + fdatasync (grow)", "overwrite zeros + fdatasync",
                                       "overwrite zeros, O_DSYNC write",    "overwrite zeros + fsync",
                                       "overwrite fallocate'd + fdatasync", "sync_file_range (NOT durable)"};
    enum { REPS = 3 };
    double us[PRIM_N][REPS];
    for (int r = 0; r < REPS; r++)
        for (int m = 0; m < PRIM_N; m++)
            us[m][r] = prim_run(path, m, n);
    printf("sync primitives, one 1600-byte write each (median of %d interleaved runs of %d):\n", REPS, n);
    for (int m = 0; m < PRIM_N; m++) {
        qsort(us[m], REPS, sizeof(double), cmp_d);
        printf("  %-36s %7.1f us\n", name[m], us[m][1]);
    }
}

int main(int argc, char **argv)
{
    int quick = 0, prims = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--primitives") == 0)
            prims = 1;
        else {
            fprintf(stderr, "usage: bench_ledger [--quick] [--primitives]\n");
            return 2;
        }
    }
    const char *dir = getenv("MNC_BENCH_DIR");
    if (!dir || !*dir)
        dir = getenv("BUILD");
    if (!dir || !*dir)
        dir = ".";
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench-ledger.journal", dir);
    struct statfs sf;
    if (statfs(dir, &sf) == 0 && sf.f_type == 0x01021994)
        printf("warning: %s is tmpfs: fsync costs nothing there, figures are not durable-disk figures\n", dir);
    int n_gc = quick ? 4000 : 40000, n_base = quick ? 400 : 4000;
    printf("ledger file: %s\n", path);
    double b1 = run(path, 1, n_base, 1);
    double b8 = run(path, 8, n_base, 1);
    double g1 = run(path, 1, n_base, 0);
    double g8 = run(path, 8, n_gc, 0);
    printf("durable charges/s  fsync-per-record: 1 thread %9.0f   8 threads %9.0f\n", b1, b8);
    printf("durable charges/s  group commit:     1 thread %9.0f   8 threads %9.0f\n", g1, g8);
    printf("group commit speed-up with 8 threads: %.1fx over fsync-per-record\n", g8 / b8);
    printf("target >= 20000/s with 8 threads: %s\n", g8 >= 20000 ? "met" : "NOT met");
    journal_compare(path, quick ? 4000 : 24000);
    if (prims)
        primitives(path, quick ? 500 : 3000);
    return 0;
}
