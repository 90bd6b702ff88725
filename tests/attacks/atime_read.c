// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atime_read - the access times of files OUTSIDE the workspace that every agent may read.
 * Reading a file updates its atime (relatime, the default: once while atime <= mtime, then once a
 * day), and any process that can stat the file sees it. An agent of any uid encodes one bit per
 * file by reading it or not; Landlock lets it read /usr, /etc, ... and the write rules do not
 * apply (a read is not a write). On a host, thousands of system files are eligible each day.
 * The orchestrator makes the files (48 root-owned 0644 files in /usr/local/share/mnc-atk-at-PID,
 * atime == mtime as created), so no real system file is touched.
 * Verifier: uid 65534 stat()s each file after the agent exited (bit = atime > mtime) and
 * decodes the canary's 12 hex digits.
 * Blocks it: a noatime mount of what agents read (or Landlock read rules limited to what the
 * agent needs); nothing in mnc that we know of. Flagged ATK_COVERT (a storage side channel like
 * /proc/locks, not in docs/threat-model.md's list): it runs with MNC_ATTACKS_COVERT=1. */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "atk_variants.h"

/* atime and mtime one minute in the past, equal: the next read moves atime (relatime) */
static int init_times(const char *path)
{
    struct timespec ts[2];
    if (clock_gettime(CLOCK_REALTIME, &ts[0]) < 0)
        return -1;
    ts[0].tv_sec -= 60;
    ts[0].tv_nsec = 0;
    ts[1] = ts[0];
    return utimensat(AT_FDCWD, path, ts, 0);
}

/* a 1 is a read of the file, a 0 is leaving it alone */
static int read_for_one(const char *path, unsigned v)
{
    if (!v)
        return 0;
    char b;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, &b, 1);
    int e = errno;
    close(fd);
    errno = e;
    return r == 1 ? 0 : -1;
}

static int atime_moved(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    return st.st_atim.tv_sec > st.st_mtim.tv_sec ||
           (st.st_atim.tv_sec == st.st_mtim.tv_sec && st.st_atim.tv_nsec > st.st_mtim.tv_nsec);
}

static const struct atkv_meta M = {"at",         1,          "read (1 bits only)", "the access times", init_times,
                                   read_for_one, atime_moved};

static int prepare(struct atk_ctx *c) { return atkv_meta_prepare(c, &M); }
static int agent(struct atk_ctx *c) { return atkv_meta_agent(c, &M); }
static void verify(struct atk_ctx *c) { atkv_meta_verify(c, &M); }
static void cleanup(struct atk_ctx *c) { atkv_meta_cleanup(c, &M); }

static const struct atk A = {"atime_read", "access times of readable files outside the workspace (read = 1 bit)",
                             ATK_COVERT,   prepare,
                             agent,        NULL,
                             verify,       cleanup};
ATK_MAIN(A)
