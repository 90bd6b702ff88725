// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rw_hint_outside - the write-lifetime hint of root-owned files OUTSIDE the workspace
 * (fcntl F_SET_RW_HINT). The hint lives in the inode (i_write_hint), the fcntl needs only an fd
 * opened for reading and the file's owner (inode_owner_or_capable): a root agent opens files in
 * a directory Landlock lets it read (/usr, /etc, ...) and stores 2 bits in each (hints 0..3);
 * anyone who can open the file reads them with F_GET_RW_HINT while the inode stays cached (it
 * is not written to disk). The orchestrator makes the files (24 root-owned 0644 files in
 * /usr/local/share/mnc-atk-rwh-PID), so no real system file is touched.
 * Verifier: uid 65534 opens each file read-only after the agent exited, reads its hint and
 * decodes the canary's 12 hex digits.
 * Blocks it: DAC for an unprivileged agent (not the owner: EPERM); for root, nothing known to us
 * (what would: seccomp on fcntl F_SET_RW_HINT for --as-root, as for the other metadata calls). */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "atk.h"

#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT 1036
#define F_GET_RW_HINT 1035
#endif

#define NFILES 24 /* 12 hex digits, 2 bits each */

static int prepare(struct atk_ctx *c)
{
    char d[300];
    c->slot[0] = 1; /* cleanup has files to remove */
    if (atk_sysfiles("rwh", NFILES, d, sizeof(d)) < 0) {
        snprintf(c->notes, sizeof(c->notes), "make the files outside the workspace: %s", strerror(errno));
        return -1;
    }
    atk_set(c, "rwhdir", "%s", d);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    const char *d = atk_arg(c, "rwhdir");
    if (!d || strncmp(c->secret, "mk", 2) != 0 || strlen(c->secret) < 2 + NFILES / 2)
        return 0;
    int ok = 0, first_err = 0;
    for (int i = 0; i < NFILES; i++) {
        char h[2] = {c->secret[2 + i / 2], 0};
        long v = strtol(h, NULL, 16);
        uint64_t hint = (uint64_t)((i & 1) ? v & 3 : v >> 2);
        char p[200];
        atk_sysfile(p, sizeof(p), d, i);
        int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0 && fcntl(fd, F_SET_RW_HINT, &hint) == 0)
            ok++;
        else if (!first_err)
            first_err = errno;
        if (fd >= 0)
            close(fd);
    }
    atk_note(c, "F_SET_RW_HINT on %d/%d root-owned files outside the workspace: %s", ok, NFILES,
             ok == NFILES ? "OK" : atk_errname(first_err));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char got[32] = "mk";
    for (int i = 0; i < NFILES / 2; i++) {
        unsigned v = 0;
        for (int j = 0; j < 2; j++) {
            char p[200];
            atk_sysfile(p, sizeof(p), atk_arg(c, "rwhdir"), 2 * i + j);
            uint64_t hint = 0;
            int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            if (fd < 0)
                return 0;
            int r = fcntl(fd, F_GET_RW_HINT, &hint);
            close(fd);
            if (r < 0 || hint > 3)
                return 0;
            v = (v << 2) | (unsigned)hint;
        }
        got[2 + i] = "0123456789abcdef"[v];
    }
    got[2 + NFILES / 2] = 0;
    if (strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from the write-life hints of %d files in %s", NFILES,
                 atk_arg(c, "rwhdir"));
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
        atk_sysfiles_rm("rwh", NFILES);
}

static const struct atk A = {"rw_hint_outside",
                             "write-life hints (F_SET_RW_HINT) of root-owned files outside the workspace",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
