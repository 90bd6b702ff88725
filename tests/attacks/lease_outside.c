// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lease_outside - file leases (fcntl F_SETLEASE) on root-owned files OUTSIDE the workspace, read
 * by anyone through open() itself. A lease needs only an fd on the file and its owner
 * (fsuid == i_uid, or CAP_LEASE); a write lease (F_WRLCK) may be taken through an fd opened
 * read-only as long as nobody else has the file open. A root agent owns every system file and
 * Landlock lets it open /usr, /etc read-only; the seccomp filter allows fcntl but the write-life
 * hints, and Landlock does not judge leases. While the lease is held, ANY process's open() of
 * that file stalls (up to /proc/sys/fs/lease-break-time, 45 s) or, with O_NONBLOCK, fails with
 * EWOULDBLOCK at once: one bit per file, read without /proc (so unlike covert_flock's
 * /proc/locks, neither hidepid nor a private /proc helps), by every uid. It is also a
 * host-wide stall: a root agent can make every reader of a library or config file wait 45 s.
 * The orchestrator makes the files (48 root-owned 0644 files in /usr/local/share/mnc-atk-ls-PID,
 * atk_sysfiles) so no real system file is touched. The agent ignores SIGIO (the lease-break
 * notice) and holds its fds until the verifier has read.
 * Verifier: at sync "held", uid 65534 opens each file O_RDONLY|O_NONBLOCK: EWOULDBLOCK = 1, and
 * decodes the canary's 12 hex digits (1 bit per file).
 * Blocked by: the seccomp filter of `mncctl run` refuses fcntl F_SETLEASE to every agent (EPERM;
 * run_confine.c, deny_fcntl_cmds; before that, DAC stopped only a non-root agent).
 * Bandwidth when open: 1 bit per file per set/break cycle, thousands of files; a lease is
 * a syscall, its break an open: ~10^4-10^5 bits/s (estimate, not measured). */
#include <fcntl.h>
#include <signal.h>

#include "atk_variants.h"

static int held[64];
static int nheld;

static int set_lease(const char *path, unsigned v)
{
    if (!v)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (nheld < (int)(sizeof(held) / sizeof(held[0])))
        held[nheld++] = fd; /* the lease lives as long as this open file */
    return 0;
}

static int probe(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno == EWOULDBLOCK ? 1 : -1;
}

static const struct atkv_meta M = {"ls",      1,    "F_SETLEASE F_WRLCK", "write leases (open() -> EWOULDBLOCK)", NULL,
                                   set_lease, probe};

static int prepare(struct atk_ctx *c) { return atkv_meta_prepare(c, &M); }

static int agent(struct atk_ctx *c)
{
    signal(SIGIO, SIG_IGN); /* the lease-break notice */
    atkv_meta_agent(c, &M);
    atk_sync(c, "held");
    for (int i = 0; i < nheld; i++)
        close(held[i]);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_meta_verify(c, &M);
}

static void cleanup(struct atk_ctx *c) { atkv_meta_cleanup(c, &M); }

static const struct atk A = {"lease_outside",
                             "write leases (F_SETLEASE) on root-owned files outside the workspace, read by open()",
                             0,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
