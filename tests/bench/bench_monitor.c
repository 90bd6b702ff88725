// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_monitor.c - cost of one monitor decision (registry lookup + mnc_monitor_check) with 1,
 * 10^3 and 10^6 live disclosures, of MNC-C selection over an 8-candidate family, and memory
 * per live disclosure.
 *
 * Every figure is printed next to an in-run baseline: the bare registry lookup for the monitor,
 * so the ratio isolates the monitor's own work from the machine's speed. Figures are tails of
 * individually timed operations (see summarize). Target: decision p50 <= 1 us at the largest
 * object count.
 * Usage: bench_monitor [--quick]   (--quick: 10^5 instead of 10^6 objects, fewer samples)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mnc/monitor.h"
#include "mnc/registry.h"
#include "mnc/select.h"

static const char policy_json[] =
    "{\"mnc_policy\":1,\"name\":\"bench\","
    "\"agents\":[{\"name\":\"worker\"},{\"name\":\"coordinator\"},{\"name\":\"external\"}],"
    "\"sinks\":[{\"name\":\"log\",\"class\":\"log\"}],"
    "\"fields\":[{\"name\":\"f0\",\"weight\":0.8},{\"name\":\"f1\",\"weight\":0.7},{\"name\":\"f2\",\"weight\":0.6},"
    "{\"name\":\"f3\",\"weight\":0.5},{\"name\":\"f4\",\"weight\":0.4},{\"name\":\"f5\",\"weight\":0.3},"
    "{\"name\":\"f6\",\"weight\":0.2},{\"name\":\"f7\",\"weight\":0.1}],"
    "\"families\":[{\"name\":\"fam\",\"forms\":["
    "{\"name\":\"c0\",\"fields\":[\"f0\",\"f1\",\"f7\"]},{\"name\":\"c1\",\"fields\":[\"f1\",\"f2\",\"f7\"]},"
    "{\"name\":\"c2\",\"fields\":[\"f2\",\"f3\",\"f7\"]},{\"name\":\"c3\",\"fields\":[\"f3\",\"f7\"]},"
    "{\"name\":\"c4\",\"fields\":[\"f4\",\"f7\"],\"template\":\"{f4} {f7}\"},{\"name\":\"c5\",\"fields\":[\"f5\",\"f7\"]},"
    "{\"name\":\"c6\",\"fields\":[\"f6\",\"f7\"]},{\"name\":\"c7\",\"fields\":[\"f6\"]}]}],"
    "\"requirements\":[{\"agent\":\"coordinator\",\"purpose\":\"p\",\"needs\":[\"f7\"]}],"
    "\"contracts\":[{\"id\":\"c\",\"purpose\":\"p\",\"issuers\":[\"worker\"],\"recipient\":\"coordinator\","
    "\"fields\":[\"f2\",\"f3\",\"f4\",\"f5\",\"f6\",\"f7\"],\"lifetime\":{\"seconds\":3600},\"family\":\"fam\"}]}";

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Every operation is timed on its own: p50/p99/p99.9 are tails of individual operations (a
 * batch mean would hide a slow one among fast ones). Two clock reads cost tens of ns, a
 * noticeable share of a sub-µs operation, so the in-run cost of an empty timed interval (its
 * median, measured before the samples) is subtracted from every sample and printed. */
typedef struct stats {
    double p50, p99, p999;
} stats;

static uint64_t clock_cost_ns;

static void measure_clock_cost(void)
{
    enum { N = 100000 };
    static uint64_t t[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = now_ns();
        t[i] = now_ns() - t0;
    }
    qsort(t, N, sizeof(t[0]), cmp_u64);
    clock_cost_ns = t[N / 2];
}

/* One sample: the interval minus the clock's own cost, never below 0. */
static uint64_t net(uint64_t t0, uint64_t t1)
{
    uint64_t d = t1 - t0;
    return d > clock_cost_ns ? d - clock_cost_ns : 0;
}

static stats summarize(uint64_t *s, size_t n)
{
    qsort(s, n, sizeof(*s), cmp_u64);
    return (stats){.p50 = (double)s[n / 2], .p99 = (double)s[(n * 99) / 100],
                   .p999 = (double)s[(n * 999) / 1000]};
}

volatile int sink_v;
static int quick_run;

static void bench_monitor(const mnc_policy *p, const mnc_state *st, size_t live, size_t samples)
{
    mnc_registry reg;
    mnc_registry_init(&reg);
    int c = mnc_policy_contract(p, "c");
    int worker = mnc_policy_agent(p, "worker"), coord = mnc_policy_agent(p, "coordinator");
    mnc_set fields;
    mnc_set_clear(&fields);
    mnc_set_add(&fields, (unsigned)mnc_policy_field(p, "f7"));
    mnc_set_add(&fields, (unsigned)mnc_policy_field(p, "f6"));
    mnc_oid *ids = malloc(live * sizeof(*ids));
    if (!ids) {
        perror("malloc");
        exit(1);
    }
    long rss0 = rss_kib();
    for (size_t i = 0; i < live; i++) {
        mnc_disclosure *d = malloc(sizeof(*d));
        if (!d || mnc_disclosure_issue(p, c, worker, "c6", &fields, st, 1000, d) != MNC_OK ||
            mnc_registry_put(&reg, d) != 0) {
            fprintf(stderr, "setup failed at %zu\n", i);
            exit(1);
        }
        ids[i] = d->id;
    }
    long rss1 = rss_kib();

    uint64_t *t_mon = malloc(samples * sizeof(uint64_t)), *t_get = malloc(samples * sizeof(uint64_t));
    if (!t_mon || !t_get)
        exit(1);
    unsigned seed = 12345;
    mnc_op op = {.sender = worker, .receiver = coord, .purpose = "p", .ch = MNC_CH_MESSAGE, .now_ms = 2000};
    int ok = 0;
    for (size_t s = 0; s < samples; s++) {
        /* Separate random ids for the two operations, so neither warms the cache for the other. */
        size_t ia = (seed = seed * 1103515245u + 12345u) % live;
        size_t ib = (seed = seed * 1103515245u + 12345u) % live;
        uint64_t t0 = now_ns();
        ok += mnc_registry_get(&reg, &ids[ia]) != NULL;
        uint64_t t1 = now_ns();
        mnc_disclosure *d = mnc_registry_get(&reg, &ids[ib]);
        ok += d && mnc_monitor_check(p, &op, d) == MNC_OK;
        uint64_t t2 = now_ns();
        t_get[s] = net(t0, t1);
        t_mon[s] = net(t1, t2);
    }
    if (ok != (int)(2 * samples)) { /* every lookup hit and every check allowed */
        fprintf(stderr, "bench_monitor: unexpected decisions (%d of %zu)\n", ok, 2 * samples);
        exit(1);
    }
    sink_v += ok;
    stats m = summarize(t_mon, samples), g = summarize(t_get, samples);
    printf("monitor  live=%-8zu decision p50=%6.0f ns p99=%6.0f ns p99.9=%6.0f ns | lookup-only "
           "p50=%5.0f ns p99=%5.0f ns | ratio %.2fx (p50)",
           live, m.p50, m.p99, m.p999, g.p50, g.p99, g.p50 > 0 ? m.p50 / g.p50 : 0);
    if (live >= 100000) /* RSS is page-granular: only meaningful for many objects */
        printf(" | memory/object %.0f B", (double)(rss1 - rss0) * 1024.0 / (double)live);
    printf("\n");
    if (live >= 1000000 || (live >= 100000 && quick_run))
        printf("target decision p50 <= 1 us at %zu live objects: %s (%.0f ns)\n", live,
               m.p50 <= 1000 ? "met" : "missed", m.p50);
    free(t_mon);
    free(t_get);
    free(ids);
    mnc_registry_free(&reg);
}

static void bench_select(const mnc_policy *p, const mnc_state *st, size_t samples)
{
    int c = mnc_policy_contract(p, "c");
    int coord = mnc_policy_agent(p, "coordinator");
    mnc_select_req req = {.contract = c, .recipient = coord, .state = st};
    mnc_selection sel;
    uint64_t *t = malloc(samples * sizeof(uint64_t));
    if (!t)
        exit(1);
    for (size_t s = 0; s < samples; s++) {
        uint64_t t0 = now_ns();
        mnc_reason r = mnc_select(p, &req, &sel);
        t[s] = net(t0, now_ns());
        if (r != MNC_OK || strcmp(sel.c[sel.chosen].name, "c6") != 0) {
            fprintf(stderr, "bench_select: wrong selection\n");
            exit(1);
        }
    }
    stats r = summarize(t, samples);
    printf("select   8 candidates (weights)  p50=%6.0f ns p99=%6.0f ns p99.9=%6.0f ns\n", r.p50,
           r.p99, r.p999);
    free(t);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("bench", policy_json, sizeof(policy_json) - 1, &e);
    if (!p) {
        for (int i = 0; i < e.n; i++)
            fprintf(stderr, "%s\n", e.msg[i]);
        return 1;
    }
    mnc_errors_free(&e);
    mnc_state st;
    mnc_state_init(&st);
    for (int f = 0; f < p->n_fields; f++)
        if (mnc_state_set(&st, f, "some value") != 0)
            return 1;
    quick_run = quick;
    measure_clock_cost();
    printf("per-operation figures; clock cost %llu ns (median of an empty interval) subtracted\n",
           (unsigned long long)clock_cost_ns);
    size_t samples = quick ? 200000 : 2000000;
    bench_monitor(p, &st, 1, samples);
    bench_monitor(p, &st, 1000, samples);
    bench_monitor(p, &st, quick ? 100000 : 1000000, samples);
    bench_select(p, &st, quick ? 20000 : 200000);
    mnc_state_free(&st);
    mnc_policy_free(p);
    return 0;
}
