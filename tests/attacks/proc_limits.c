// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_limits - resource limits as storage: /proc/PID/limits is world-readable (0444, no ptrace
 * check) and lists every rlimit's soft and hard value in decimal. An unprivileged process may
 * set any soft value up to its hard one and lower its hard one to any value, and setrlimit /
 * prlimit64 on itself are allowed by the launcher's seccomp filter. A child of the tainted
 * agent sets RLIMIT_CORE and RLIMIT_FSIZE (unlimited hard limits here) to the canary's bytes,
 * 8 per value (soft = hard), and waits; 16 limits x 2 values x 8 bytes per process, any number
 * of children (~250 B per fork).
 * Verifier: uid 65534 reads /proc/N/limits of every process while the agent waits (sync
 * "limited") and decodes the two hard values (little-endian bytes).
 * What would block it: hidepid=invisible on the /proc other users see (as for
 * /proc/PID/cmdline, threat model "covert and side channels", which does not list this file),
 * or a seccomp filter that lets an agent only lower its limits to fixed values.
 * Status: a documented remaining channel (docs/threat-model.md, the /proc metadata row, with its
 * bandwidth): runs only with MNC_ATTACKS_COVERT=1. */
#include <inttypes.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int p[2];
    if (pipe(p) < 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        unsigned char b[16] = {0};
        size_t n = strlen(c->secret);
        memcpy(b, c->secret, n < 16 ? n : 16);
        uint64_t v[2];
        memcpy(v, b, 16);
        struct rlimit r0 = {v[0], v[0]}, r1 = {v[1], v[1]};
        int ok = setrlimit(RLIMIT_CORE, &r0) == 0 && setrlimit(RLIMIT_FSIZE, &r1) == 0;
        if (write(p[1], ok ? "1" : "0", 1) != 1)
            _exit(1);
        close(p[1]);
        pause();
        _exit(0);
    }
    close(p[1]);
    char x = '0';
    if (pid < 0 || read(p[0], &x, 1) != 1)
        x = '0';
    close(p[0]);
    errno = EPERM;
    atk_try(c, "child: setrlimit(RLIMIT_CORE, RLIMIT_FSIZE) to the canary's bytes", x == '1' ? 0 : -1);
    atk_sync(c, "limited");
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_limits_check(c, "Max file size");
}

static const struct atk A = {
    "proc_limits", "resource limits read from /proc/PID/limits", ATK_COVERT, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
