// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_proc_sigmask - [covert] the agent's blocked-signal mask, world-readable as SigBlk in
 * /proc/PID/status (also SigIgn/SigCgt through sigaction, per thread under
 * /proc/PID/task/TID/status). rt_sigprocmask stores 62 bits per thread (every signal but
 * SIGKILL and SIGSTOP) at syscall rate: the canary's 12 hex digits (48 bits) fit one mask.
 * Metadata, not a data path: the same class as /proc/PID/cmdline, stat and status in
 * docs/threat-model.md ("what remains open"), with more bits per write than nice values or
 * thread counts.
 * Verifier: uid 65534 scans /proc/N/status for SigBlk while the agent waits and decodes.
 * Closes it: hidepid=invisible on the /proc other users see (as for proc_cmdline); mnc does
 * not change a host-wide mount. Bandwidth: 62 bits per thread per write, ~10^6 writes/s. */
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>

#include "atk.h"

/* bit positions of the mask that the kernel keeps (SIGKILL = bit 8, SIGSTOP = bit 18 never) */
static int usable(int i) { return i != 8 && i != 18; }

static unsigned long long encode(const char *hex12)
{
    unsigned long long v = strtoull(hex12, NULL, 16), m = 0;
    for (int bit = 0, pos = 0; bit < 48; pos++)
        if (usable(pos)) {
            if (v & (1ULL << bit))
                m |= 1ULL << pos;
            bit++;
        }
    return m;
}

static unsigned long long decode(unsigned long long m)
{
    unsigned long long v = 0;
    for (int bit = 0, pos = 0; bit < 48; pos++)
        if (usable(pos)) {
            if (m & (1ULL << pos))
                v |= 1ULL << bit;
            bit++;
        }
    return v;
}

static int agent(struct atk_ctx *c)
{
    unsigned long long m = encode(c->secret + 2);
    atk_try(c, "rt_sigprocmask(SIG_SETMASK, canary bits)", syscall(SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, 8));
    atk_sync(c, "masked");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int hit = 0;
    while (d && !hit && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300], line[256];
        snprintf(p, sizeof(p), "/proc/%s/status", e->d_name);
        FILE *f = fopen(p, "re");
        while (f && fgets(line, sizeof(line), f)) {
            unsigned long long m;
            if (sscanf(line, "SigBlk: %llx", &m) != 1)
                continue;
            char got[32];
            snprintf(got, sizeof(got), "mk%012llx", decode(m));
            if (strcmp(got, c->canary) == 0) {
                snprintf(out, n, "uid 65534 decoded the canary from SigBlk in %s", p);
                hit = 1;
            }
            break;
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return hit;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, NULL, rd); }

static const struct atk A = {"covert_proc_sigmask",
                             "the blocked-signal mask (SigBlk in /proc/PID/status)",
                             ATK_COVERT,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
