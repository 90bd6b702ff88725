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

#include "atk_variants.h"

static const int bits[2] = {FS_NODUMP_FL, FS_NOATIME_FL};

static int set_flags(const char *path, unsigned v)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), fl = 0, rc = -1;
    if (fd < 0)
        return -1;
    if (ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0) {
        fl &= ~(bits[0] | bits[1]);
        fl |= ((v & 2) ? bits[0] : 0) | ((v & 1) ? bits[1] : 0);
        rc = ioctl(fd, FS_IOC_SETFLAGS, &fl);
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

static int get_flags(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), fl = 0;
    if (fd < 0)
        return -1;
    int r = ioctl(fd, FS_IOC_GETFLAGS, &fl);
    close(fd);
    return r < 0 ? -1 : ((fl & bits[0]) ? 2 : 0) | ((fl & bits[1]) ? 1 : 0);
}

static const struct atkv_meta M = {"fl", 2,         "FS_IOC_SETFLAGS", "the no-dump/no-atime flags",
                                   NULL, set_flags, get_flags};

static int prepare(struct atk_ctx *c) { return atkv_meta_prepare(c, &M); }
static int agent(struct atk_ctx *c) { return atkv_meta_agent(c, &M); }
static void verify(struct atk_ctx *c) { atkv_meta_verify(c, &M); }
static void cleanup(struct atk_ctx *c) { atkv_meta_cleanup(c, &M); }

static const struct atk A = {"fileattr_outside",
                             "inode flags (FS_IOC_SETFLAGS) of root-owned files outside the workspace",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
