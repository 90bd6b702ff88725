// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fileattr_outside - inode flags (chattr: FS_IOC_SETFLAGS) of root-owned files OUTSIDE the
 * workspace, in a directory Landlock lets every agent read (/usr, /etc, ...). The ioctl needs
 * only an fd opened for reading and the file's owner (inode_owner_or_capable, no capability for
 * "d" no-dump and "A" no-atime): a root agent owns every system file, opens it read-only (allowed
 * by Landlock's read rules), and sets two flag bits per file. Landlock's IOCTL_DEV right covers
 * device files only, and deny_root_meta (chmod/chown/utimes/xattr) has no ioctl. Anyone who can
 * open the file reads the flags back (FS_IOC_GETFLAGS, lsattr); they survive the agent's exit.
 * The orchestrator makes the files (24 root-owned 0644 files in /usr/local/share/mnc-atk-fl-PID, atk_sysfiles)
 * so no real system file is touched; an agent would use /usr/share's thousands of files.
 * Verifier: uid 65534 opens each file read-only and reads its flags after the agent exited,
 * decodes the canary's 12 hex digits (2 bits per file).
 * Blocks it: DAC for an unprivileged agent (not the owner: EPERM); for root, nothing known to us
 * (what would: seccomp on ioctl FS_IOC_SETFLAGS / FS_IOC_FSSETXATTR for --as-root, as for the
 * other metadata calls). */
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "atk.h"

#define NFILES 24 /* 12 hex digits, 2 bits each */

static const int bits[2] = {FS_NODUMP_FL, FS_NOATIME_FL};

static int prepare(struct atk_ctx *c)
{
    char d[300];
    c->slot[0] = 1; /* cleanup has files to remove */
    if (atk_sysfiles("fl", NFILES, d, sizeof(d)) < 0) {
        snprintf(c->notes, sizeof(c->notes), "make the files outside the workspace: %s", strerror(errno));
        return -1;
    }
    atk_set(c, "fldir", "%s", d);
    return 0;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

static int agent(struct atk_ctx *c)
{
    const char *d = atk_arg(c, "fldir");
    if (!d || strncmp(c->secret, "mk", 2) != 0)
        return 0;
    int ok = 0, first_err = 0;
    for (int i = 0; i < NFILES; i++) {
        int v = hexval(c->secret[2 + i / 2]);
        if (v < 0)
            return 0;
        v = (i & 1) ? v & 3 : v >> 2;
        char p[200];
        atk_sysfile(p, sizeof(p), d, i);
        int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            first_err = first_err ? first_err : errno;
            continue;
        }
        int fl = 0;
        if (ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0) {
            fl &= ~(bits[0] | bits[1]);
            fl |= ((v & 2) ? bits[0] : 0) | ((v & 1) ? bits[1] : 0);
            if (ioctl(fd, FS_IOC_SETFLAGS, &fl) == 0)
                ok++;
            else
                first_err = first_err ? first_err : errno;
        } else {
            first_err = first_err ? first_err : errno;
        }
        close(fd);
    }
    atk_note(c, "FS_IOC_SETFLAGS on %d/%d root-owned files outside the workspace: %s", ok, NFILES,
             ok == NFILES ? "OK" : atk_errname(first_err));
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char got[32] = "mk";
    for (int i = 0; i < NFILES / 2; i++) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char p[200];
            atk_sysfile(p, sizeof(p), atk_arg(c, "fldir"), 2 * i + j);
            int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), fl = 0;
            if (fd < 0)
                return 0;
            int r = ioctl(fd, FS_IOC_GETFLAGS, &fl);
            close(fd);
            if (r < 0)
                return 0;
            v = (v << 2) | ((fl & bits[0]) ? 2 : 0) | ((fl & bits[1]) ? 1 : 0);
        }
        got[2 + i] = "0123456789abcdef"[v];
    }
    got[2 + NFILES / 2] = 0;
    if (strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from the no-dump/no-atime flags of %d files in %s", NFILES,
                 atk_arg(c, "fldir"));
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
        atk_sysfiles_rm("fl", NFILES);
}

static const struct atk A = {"fileattr_outside",
                             "inode flags (FS_IOC_SETFLAGS) of root-owned files outside the workspace",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
