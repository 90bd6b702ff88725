// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* freeze.c - the cgroup v2 freezer for the pre-taint sweep (contract in freeze.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "freeze.h"
#include "mnc_util.h"

#define FREEZE_TIMEOUT_MS 2000

/* 1 frozen, 0 not (yet), -errno (a removed cgroup is -ENOENT) */
static int cg_frozen(const char *cg)
{
    char p[PATH_MAX + 32], b[256];
    snprintf(p, sizeof(p), "%s/cgroup.events", cg);
    int r = mnc_read_file(p, b, sizeof(b));
    if (r)
        return r;
    const char *f = strstr(b, "frozen ");
    return f ? f[7] == '1' : -EPROTO;
}

void mncd_thaw(mncd_frozen *fz, int n)
{
    char p[PATH_MAX + 32];
    for (int i = 0; i < n; i++) {
        if (fz[i].was_frozen)
            continue;
        snprintf(p, sizeof(p), "%s/cgroup.freeze", fz[i].path);
        /* a failure leaves the agent stopped: fail closed, and the cgroup may be gone anyway */
        int r = mnc_write_file(p, "0");
        if (r != 0 && r != -ENOENT)
            fprintf(stderr, "mncd: sweep: cannot thaw %s: %s\n", fz[i].path, strerror(-r));
    }
}

int mncd_freeze(const mncd_sweep_cg *cgs, int ncg, mncd_frozen *fz, int *nfz, char *err, size_t errlen)
{
    char p[PATH_MAX + 32], b[16];
    *nfz = 0;
    for (int i = 0; i < ncg; i++) {
        mncd_frozen *f = &fz[*nfz];
        snprintf(f->path, sizeof(f->path), "%s", cgs[i].path);
        snprintf(p, sizeof(p), "%s/cgroup.freeze", cgs[i].path);
        int r = mnc_read_file(p, b, sizeof(b));
        if (r == -ENOENT)
            continue; /* the cgroup went away (agent exited): nothing to sweep there */
        if (r) {
            mnc_errf(err, errlen, 0, "read %s: %s", p, strerror(-r));
            return -1;
        }
        f->was_frozen = b[0] == '1';
        if (!f->was_frozen && (r = mnc_write_file(p, "1")) != 0) {
            if (r == -ENOENT)
                continue;
            mnc_errf(err, errlen, 0, "freeze %s: %s", cgs[i].path, strerror(-r));
            return -1;
        }
        (*nfz)++;
    }
    long deadline = mnc_mono_us() + FREEZE_TIMEOUT_MS * 1000L;
    for (int i = 0; i < *nfz; i++) {
        for (;;) {
            int r = cg_frozen(fz[i].path);
            if (r == 1 || r == -ENOENT)
                break;
            if (r < 0) {
                mnc_errf(err, errlen, 0, "read %s/cgroup.events: %s", fz[i].path, strerror(-r));
                return -1;
            }
            if (mnc_mono_us() > deadline) {
                /* e.g. a task in uninterruptible sleep: judging a running agent would race */
                mnc_errf(err, errlen, 0, "%s did not freeze within %d ms", fz[i].path, FREEZE_TIMEOUT_MS);
                return -1;
            }
            struct timespec ts = {0, 200 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}
