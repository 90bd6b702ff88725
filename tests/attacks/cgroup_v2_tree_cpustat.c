// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_v2_tree_cpustat - the canary as CPU time, read in the PARENT of the agent's 0700 v2
 * cgroup (red team, stop 33): the agent's cgroup `<tree>/<agent>.<pid>` is 0700
 * (cgroup_thread_count), but mncd makes the tree itself 0755 (loader/kern_load.c, mkdir_p(tree,
 * 0755)), and every v2 cgroup has a `cpu.stat` (0444) whose `usage_usec` is the CPU time of its
 * whole subtree (the core rstat counters exist without the cpu controller, so also on this hybrid
 * host whose v2 hierarchy has only hugetlb). The agent spends d * 4 ms of CPU per hex digit d of
 * the canary and says `sync dN`; nothing else runs in the tree during the attack.
 * Verifier: at each sync uid 65534 reads usage_usec of `<cgroup2 mount>/<tree>/cpu.stat` (the
 * tree's name is the pin root's last component here: run-attacks uses mnc-atk-$$ for both) and
 * decodes round(delta / 4 ms).
 * Blocks it: mnc_kern_attach makes the tree 0700 (and sets an existing one to 0700): uid 65534
 * cannot open <tree>/cpu.stat (0711 would not do: a search bit is enough to open a 0444 file by
 * its path). The root cgroup's cpu.stat is host-wide, as /proc/stat. */
#include <time.h>

#include "atk.h"
#include "atk_variants.h"

#define DIGITS 12
#define UNIT_NS 4000000L

static long cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "base");
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (int i = 0; i < DIGITS; i++) {
        char h[2] = {c->secret[2 + i], 0};
        long d = strtol(h, NULL, 16);
        long end = cpu_ns() + d * UNIT_NS;
        while (cpu_ns() < end)
            ;
        char tag[16];
        snprintf(tag, sizeof(tag), "d%d", i);
        atk_sync(c, tag);
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    atk_note(c, "12 digits in %.1f ms (syncs included)",
             (w1.tv_sec - w0.tv_sec) * 1e3 + (w1.tv_nsec - w0.tv_nsec) / 1e6);
    return 0;
}

static char stat_path[600];

static int read_usage(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    FILE *f = fopen(stat_path, "re");
    char k[64];
    long long v, r = -1;
    while (f && fscanf(f, "%63s %lld", k, &v) == 2)
        if (strcmp(k, "usage_usec") == 0) {
            r = v;
            break;
        }
    if (f)
        fclose(f);
    snprintf(out, n, "%lld", r);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (!stat_path[0]) {
        const char *pin = getenv("MNC_PIN_ROOT");
        const char *tree = pin ? strrchr(pin, '/') : NULL;
        char cg2[256] = "";
        FILE *m = fopen("/proc/mounts", "re");
        char dev[256], mnt[256], fs[64];
        while (m && fscanf(m, "%255s %255s %63s %*[^\n]", dev, mnt, fs) == 3)
            if (strcmp(fs, "cgroup2") == 0) {
                snprintf(cg2, sizeof(cg2), "%s", mnt);
                break;
            }
        if (m)
            fclose(m);
        if (!tree || !cg2[0]) {
            atk_note(c, "no tree or no cgroup2 mount");
            return;
        }
        snprintf(stat_path, sizeof(stat_path), "%s%s/cpu.stat", cg2, tree);
    }
    char out[64];
    if (atk_as_uid(c, ATK_NOBODY, read_usage, out, sizeof(out)) < 0)
        return;
    long long us = atoll(out);
    if (us < 0) {
        c->slot[2] = 1;
        atk_note(c, "uid 65534 cannot read %s", stat_path);
        return;
    }
    /* in units of 4 ms, rounded, so atkv_counter_digits sees the digit as the increment */
    long long prev = c->slot[3];
    if (strcmp(tag, "base") == 0) {
        c->slot[3] = us;
        c->slot[4] = 0;
        atkv_counter_digits(c, tag, "0", DIGITS, "");
        return;
    }
    long long units = (us - prev + UNIT_NS / 2000) / (UNIT_NS / 1000);
    c->slot[3] = us;
    c->slot[4] += units;
    char r[32];
    snprintf(r, sizeof(r), "%ld", c->slot[4]);
    char ev[800];
    snprintf(ev, sizeof(ev),
             "uid 65534 decoded the canary from usage_usec of %s (the agents' tree, 0755; cpu time per digit)",
             stat_path);
    atkv_counter_digits(c, tag, r, DIGITS, ev);
}

static const struct atk A = {
    "cgroup_v2_tree_cpustat",
    "CPU time in the agents' cgroup v2 tree's cpu.stat (parent of the 0700 agent cgroup; world-readable)",
    0,
    NULL,
    agent,
    on_sync,
    NULL,
    NULL};
ATK_MAIN(A)
