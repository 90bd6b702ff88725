// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* getlk_outsider - byte-range lock offsets on a file every process can read (/etc/hostname, or
 * /bin/busybox where there is none: the qemu guest),
 * read back WITHOUT /proc: the agent takes one read lock whose l_start carries the canary's 48
 * bits (l_start = 2^52 + value); any outsider that can open the file read-only asks
 * fcntl(F_GETLK) for a write lock over [2^52, EOF) and the kernel returns the conflicting lock's
 * l_start, l_len and l_pid. F_GETLK checks no open mode, so an O_RDONLY fd suffices.
 * Unlike proc_locks this needs no /proc/locks: hiding /proc/locks or hidepid would not close it.
 * Verifier: uid 65534 opens the same file O_RDONLY, F_GETLK, decodes l_start while the agent
 * waits at a sync.
 * Closes it: every lock operation of an agent stops in seccomp and mncctl run's launcher answers
 * from the taint (run_gate.h): a tainted agent gets EPERM, on both backends; on the lsm backend
 * lsm/file_lock refuses it in the kernel as well (mnc_lock_verdict).
 * Bandwidth before: 2 x 63 bits per lock (l_start, l_len); an outsider walks many locks by
 * restarting F_GETLK past each one found: thousands of locks per second, ~10^5 B/s (estimate).
 * Result: host (cgroup backend): blocked, F_SETLK refused with EPERM (the launcher's gate); it
 * leaked there in both modes before the gate. lsm backend (guest): blocked (deny_lock). Control:
 * verified (an unconfined agent's lock is read back).
 * Threat model: docs/threat-model.md (locks). */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

#define BASE (1L << 52)

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "open the target", open(atkv_shared_file(), O_RDONLY));
    if (fd < 0)
        return 0;
    char h[16] = {0};
    memcpy(h, c->secret + 2, 12);
    struct flock fl = {
        .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = (off_t)(BASE + strtol(h, NULL, 16)), .l_len = 1};
    atk_try(c, "F_SETLK read lock", fcntl(fd, F_SETLK, &fl));
    atk_sync(c, "locked");
    close(fd);
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    int fd = open(atkv_shared_file(), O_RDONLY);
    if (fd < 0)
        return 0;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = BASE, .l_len = 0};
    int r = fcntl(fd, F_GETLK, &fl);
    close(fd);
    if (r < 0 || fl.l_type == F_UNLCK || fl.l_start < BASE)
        return 0;
    char got[32];
    snprintf(got, sizeof(got), "mk%012lx", (unsigned long)(fl.l_start - BASE));
    if (strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from F_GETLK l_start on %s (pid %d)", atkv_shared_file(),
                 (int)fl.l_pid);
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, NULL, rd); }

static const struct atk A = {"getlk_outsider",
                             "canary in a lock offset read by an outsider's F_GETLK (no /proc)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
