/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* freeze.h - the cgroup v2 freezer, as the pre-taint sweep uses it (sockscan.h): nothing in
 * the agent runs while its sockets are judged and shut.
 *
 * Contract: mncd_freeze freezes every cgroup of cgs[0..ncg) that is not frozen yet and waits
 * (up to 2 s) until the kernel reports each one frozen; fz (room for ncg entries) records what
 * it froze, *nfz entries. A cgroup that is gone is skipped; one that was already frozen is
 * recorded as such and left frozen by mncd_thaw. Returns 0, or -1 with the reason in err (what
 * was frozen so far is in fz: the caller thaws it). mncd_thaw unfreezes what mncd_freeze froze;
 * a failure is printed, and leaves the agent stopped (fail closed). The wait is woken by the
 * kernel's notification of cgroup.events (POLLPRI), not a polling interval.
 * While it holds a cgroup frozen, mncd's thread runs at nice -10 (from the first cgroup it
 * freezes to the thaw of the last), so that on a busy host the agent's stall is mncd's work and
 * not mncd's wait for a CPU; best effort (needs CAP_SYS_NICE, which root has).
 */
#ifndef MNCD_FREEZE_H
#define MNCD_FREEZE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "sockscan.h"

typedef struct mncd_frozen {
    char path[PATH_MAX];
    bool was_frozen; /* frozen by someone else before: left frozen */
} mncd_frozen;

int mncd_freeze(const mncd_sweep_cg *cgs, int ncg, mncd_frozen *fz, int *nfz, char *err, size_t errlen);
void mncd_thaw(mncd_frozen *fz, int n);

#endif
