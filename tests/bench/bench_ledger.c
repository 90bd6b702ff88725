/* bench_ledger.c - durable MNC-L charges per second: group commit vs fsync per record.
 *
 * Each charge is a realistic ledger record (~170 bytes of JSON) appended durably (write +
 * fdatasync) before charge() returns. Compared in the same run on the same file system:
 *   group commit, 1 and 8 threads  vs  no group commit (fsync per record), 1 and 8 threads.
 * The ledger file goes to $MNC_BENCH_DIR (default: $BUILD, i.e. the build directory on the
 * real disk - never /tmp, which may be tmpfs where fsync is free).
 * --quick: fewer charges (CI). Target: >= 20k charges/s with 8 threads and group commit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "mnc/ledger.h"

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
        mnc_ledger_obs o[2] = {{"slot_feasible", "Tue 14:00 infeasible"},
                               {"selected_slot", "Thu 10:00"}};
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

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
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
    return 0;
}
