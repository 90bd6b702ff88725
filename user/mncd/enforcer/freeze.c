// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* freeze.c - the cgroup v2 freezer for the pre-taint sweep (contract in freeze.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "freeze.h"
#include "mnc_util.h"

#define FREEZE_TIMEOUT_MS 2000
/* mncd's nice while an agent is frozen by it (freeze.h) */
#define FROZEN_NICE -10

/* 1 frozen, 0 not (yet), -errno (a removed cgroup is -ENOENT); fd: its cgroup.events */
static int cg_frozen(int fd)
{
    char b[256];
    ssize_t n = pread(fd, b, sizeof(b) - 1, 0);
    if (n < 0)
        return errno == ENODEV ? -ENOENT : -errno; /* a removed cgroup's files say ENODEV */
    b[n] = 0;
    const char *f = strstr(b, "frozen ");
    return f ? f[7] == '1' : -EPROTO;
}

/* While it holds an agent frozen, mncd's thread runs at FROZEN_NICE, so that on a busy host the
 * agent is not kept waiting while mncd waits for a CPU (the work itself is short); restored at
 * the thaw of the last cgroup it froze. Best effort: without CAP_SYS_NICE nothing changes. */
static int boosts, saved_nice;

static void boost(bool on)
{
    if (on && boosts++ == 0) {
        errno = 0;
        int nv = getpriority(PRIO_PROCESS, 0);
        saved_nice = errno ? 0 : nv;
        if (saved_nice > FROZEN_NICE)
            (void)setpriority(PRIO_PROCESS, 0, FROZEN_NICE);
    } else if (!on && boosts > 0 && --boosts == 0) {
        (void)setpriority(PRIO_PROCESS, 0, saved_nice);
    }
}

void mncd_thaw(mncd_frozen *fz, int n)
{
    char p[PATH_MAX + 32];
    bool any = false;
    for (int i = 0; i < n; i++)
        any |= !fz[i].was_frozen;
    for (int i = 0; i < n; i++) {
        if (fz[i].was_frozen)
            continue;
        snprintf(p, sizeof(p), "%s/cgroup.freeze", fz[i].path);
        /* a failure leaves the agent stopped: fail closed, and the cgroup may be gone anyway */
        int r = mnc_write_file(p, "0");
        if (r != 0 && r != -ENOENT)
            fprintf(stderr, "mncd: sweep: cannot thaw %s: %s\n", fz[i].path, strerror(-r));
    }
    if (any)
        boost(false);
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
    bool any = false;
    for (int i = 0; i < *nfz; i++)
        any |= !fz[i].was_frozen;
    if (any)
        boost(true); /* undone by mncd_thaw, which the caller calls in every case */
    /* wait for the kernel to say frozen: cgroup.events notifies every change (POLLPRI) */
    long deadline = mnc_mono_us() + FREEZE_TIMEOUT_MS * 1000L;
    for (int i = 0; i < *nfz; i++) {
        snprintf(p, sizeof(p), "%s/cgroup.events", fz[i].path);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            continue; /* gone: nothing to wait for */
        if (fd < 0) {
            mnc_errf(err, errlen, 0, "open %s: %s", p, strerror(errno));
            return -1;
        }
        int r;
        while ((r = cg_frozen(fd)) == 0) {
            long left = (deadline - mnc_mono_us()) / 1000;
            if (left <= 0)
                break;
            struct pollfd pf = {.fd = fd, .events = POLLPRI};
            if (poll(&pf, 1, left > 50 ? 50 : (int)left + 1) < 0 && errno != EINTR) {
                r = -errno;
                break;
            }
        }
        close(fd);
        if (r == 1 || r == -ENOENT)
            continue;
        if (r < 0) {
            mnc_errf(err, errlen, 0, "read %s/cgroup.events: %s", fz[i].path, strerror(-r));
            return -1;
        }
        /* e.g. a task in uninterruptible sleep: judging a running agent would race */
        mnc_errf(err, errlen, 0, "%s did not freeze within %d ms", fz[i].path, FREEZE_TIMEOUT_MS);
        return -1;
    }
    return 0;
}
