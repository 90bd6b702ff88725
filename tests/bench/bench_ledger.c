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
 * Third part, journal level: batches written direct (O_DIRECT, the default where the file system
 * takes it) against through the page cache (mnc_journal_set_direct(j, 0)), mncd-sized batches,
 * CPU per batch and its ratio.
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
#include <sys/resource.h>
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

/* ---- journal level: direct I/O against the page cache ------------------------------------
 * The batches mncd writes: one thread queues `per` records of 1.36 KB (a disclose's share of
 * the state journal) and flushes them, as an event-loop iteration does. The two modes run
 * interleaved on the same file system; the figure that holds on a shared VM is the CPU
 * (getrusage, this process: the writer is this thread) per batch, and its ratio. */

static double cpu_now_us(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

/* Writes `batches` batches of `per` records; CPU us per batch, or -1 if the mode is not
 * available (direct on a filesystem without O_DIRECT). Exits on an I/O error or lost record. */
static double dio_run(const char *path, int direct, int per, int batches, double *wall_per_batch)
{
    static char rec[1360];
    memset(rec, 'r', sizeof(rec));
    char notice[256], err[256];
    unlink(path);
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    if (!j) {
        fprintf(stderr, "bench_ledger: %s\n", err);
        exit(1);
    }
    mnc_journal_set_direct(j, direct);
    if (mnc_journal_direct(j) != direct) {
        mnc_journal_close(j);
        unlink(path);
        return -1;
    }
    double c0 = cpu_now_us(), t0 = now();
    for (int b = 0; b < batches; b++) {
        for (int i = 0; i < per; i++)
            if (mnc_journal_queue(j, rec, sizeof(rec), NULL) != 0) {
                perror("queue");
                exit(1);
            }
        if (mnc_journal_flush(j) != 0) {
            perror("flush");
            exit(1);
        }
    }
    double cpu = (cpu_now_us() - c0) / batches;
    *wall_per_batch = (now() - t0) / batches * 1e6;
    if (mnc_journal_next_seq(j) != (uint64_t)per * (uint64_t)batches + 1 ||
        mnc_journal_direct_batches(j) != (direct ? (uint64_t)batches : 0) || mnc_journal_close(j) != 0) {
        fprintf(stderr, "bench_ledger: direct-I/O run lost records, batches or its close\n");
        exit(1);
    }
    unlink(path);
    return cpu;
}

static void direct_compare(const char *path, int quick)
{
    static const int per[2] = {1000, 16};
    int batches[2] = {quick ? 20 : 60, quick ? 200 : 600};
    enum { REPS = 3 };
    printf("journal batches, direct I/O (default) vs through the page cache (median of %d interleaved runs; "
           "CPU = this process's getrusage per batch):\n",
           REPS);
    for (int k = 0; k < 2; k++) {
        double cd[REPS], cp[REPS], wd[REPS], wp[REPS];
        for (int r = 0; r < REPS; r++) {
            cp[r] = dio_run(path, 0, per[k], batches[k], &wp[r]);
            cd[r] = dio_run(path, 1, per[k], batches[k], &wd[r]);
            if (cd[r] < 0) {
                printf("  direct I/O is not available on this file system (O_DIRECT refused): the page cache only\n");
                return;
            }
        }
        qsort(cd, REPS, sizeof(double), cmp_d);
        qsort(cp, REPS, sizeof(double), cmp_d);
        qsort(wd, REPS, sizeof(double), cmp_d);
        qsort(wp, REPS, sizeof(double), cmp_d);
        printf("  %4d x 1.36 KB per batch: page cache %7.1f us CPU, %7.1f us wall;  direct %7.1f us CPU, %7.1f us "
               "wall;  CPU ratio %.2fx less\n",
               per[k], cp[1], wp[1], cd[1], wd[1], cp[1] / cd[1]);
    }
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
    direct_compare(path, quick);
    if (prims)
        primitives(path, quick ? 500 : 3000);
    return 0;
}
