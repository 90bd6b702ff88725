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

#include "atk_variants.h"

#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT 1036
#define F_GET_RW_HINT 1035
#endif

static int set_hint(const char *path, unsigned v)
{
    uint64_t hint = v;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    int rc = fcntl(fd, F_SET_RW_HINT, &hint), e = errno;
    close(fd);
    errno = e;
    return rc < 0 ? -1 : 0;
}

static int get_hint(const char *path)
{
    uint64_t hint = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    int r = fcntl(fd, F_GET_RW_HINT, &hint);
    close(fd);
    return r < 0 || hint > 3 ? -1 : (int)hint;
}

static const struct atkv_meta M = {"rwh", 2, "F_SET_RW_HINT", "the write-life hints", NULL, set_hint, get_hint};

static int prepare(struct atk_ctx *c) { return atkv_meta_prepare(c, &M); }
static int agent(struct atk_ctx *c) { return atkv_meta_agent(c, &M); }
static void verify(struct atk_ctx *c) { atkv_meta_verify(c, &M); }
static void cleanup(struct atk_ctx *c) { atkv_meta_cleanup(c, &M); }

static const struct atk A = {"rw_hint_outside",
                             "write-life hints (F_SET_RW_HINT) of root-owned files outside the workspace",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
