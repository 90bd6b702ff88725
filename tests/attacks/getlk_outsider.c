// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* getlk_outsider - byte-range lock offsets on a file every process can read (/etc/hostname, or
 * /bin/busybox where there is none: the qemu guest),
 * read back WITHOUT /proc: the agent takes one read lock whose l_start carries the canary's 48
 * bits (l_start = 2^52 + value); any outsider that can open the file read-only asks
 * fcntl(F_GETLK) for a write lock over [2^52, EOF) and the kernel returns the conflicting lock's
 * l_start, l_len and l_pid. F_GETLK checks no open mode, so an O_RDONLY fd suffices.
 * Unlike covert_flock this needs no /proc/locks: hiding /proc/locks (its suggested fix) or
 * hidepid does not close it.
 * Verifier: uid 65534 opens the same file O_RDONLY, F_GETLK, decodes l_start while the agent
 * waits at a sync.
 * Closes it: on the lsm backend, lsm/file_lock refuses a tainted agent every lock operation
 * (mnc_lock_verdict). On the cgroup backend nothing does (no cgroup hook sees locks; the
 * seccomp filter cannot tell a tainted agent from a clean one, and refusing locks at launch
 * would break SQLite in every agent).
 * Bandwidth: 2 x 63 bits per lock (l_start, l_len); an outsider walks many locks by restarting
 * F_GETLK past each one found: thousands of locks per second, ~10^5 B/s (estimate, not measured).
 * Result (host, cgroup backend): LEAKED user and root; control: verified. lsm backend (guest):
 * blocked, F_SETLK refused with EPERM (deny_lock).
 * Status: a known limit of the cgroup backend ([limit:cgroup]; docs/threat-model.md, locks on
 * files others can open; the /proc/locks variant is covert_flock). */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

#define BASE (1L << 52)

/* a file every uid can open for reading, the same for the agent and the outsider */
static const char *target(void) { return access("/etc/hostname", R_OK) == 0 ? "/etc/hostname" : "/bin/busybox"; }

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "open the target", open(target(), O_RDONLY));
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
    int fd = open(target(), O_RDONLY);
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
        snprintf(out, n, "uid 65534 decoded the canary from F_GETLK l_start on %s (pid %d)", target(), (int)fl.l_pid);
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[200];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static const struct atk A = {"getlk_outsider",
                             "canary in a lock offset read by an outsider's F_GETLK (no /proc)",
                             ATK_LIMIT_CGROUP,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
