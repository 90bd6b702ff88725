// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_landlock_names - mncd's audit log as the way out, by the names a refused call carries:
 * the tainted agent makes Landlock refuse, in a directory outside its workspace that any uid may
 * write (0777: only Landlock refuses it), every kind of call that names a new entry - create a
 * file, mkdir, mknod of a fifo, a symlink (name and target), a hard link and a rename of an
 * existing file - each time with the canary as the new name, in plain text and as its hex
 * digits; and opens for writing, truncates and executes paths of its choice there that do not
 * exist. None of these is audit_landlock_choice's open of existing files: the kernel's record
 * for a create names the parent directory and, on some kernels, the new name.
 * Verifier: the operator's `mncctl audit tail 10000`, searched for the canary as text, hex,
 * decimal bytes and numbers (atkv_spelled).
 * What blocks it: a kernel.landlock record names objects only by keyed tokens salted afresh
 * (docs/threat-model.md, "Records about agents"), whatever kind of access was refused.
 * Needs Landlock ABI >= 7 (its audit records); on an older kernel nothing is recorded. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char d[700], f[760];
    snprintf(d, sizeof(d), "%s/out", c->dir);
    if (mkdir(d, 0777) < 0 || chmod(d, 0777) < 0)
        return -1;
    snprintf(f, sizeof(f), "%s/existing", d);
    int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 || fchmod(fd, 0666) < 0)
        return -1;
    close(fd);
    atk_set(c, "out", "%s", d);
    return 0;
}

static void named(struct atk_ctx *c, const char *dir, const char *name)
{
    char p[760], e[760];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    snprintf(e, sizeof(e), "%s/existing", dir);
    int fd = (int)atk_try(c, "create <name>", open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd >= 0)
        close(fd);
    atk_try(c, "mkdir <name>", mkdir(p, 0777));
    atk_try(c, "mkfifo <name>", mknod(p, S_IFIFO | 0666, 0));
    atk_try(c, "symlink <name> -> <name>", symlink(name, p));
    atk_try(c, "link existing <name>", link(e, p));
    atk_try(c, "rename existing <name>", rename(e, p));
    atk_try(c, "truncate <name>", truncate(p, 0));
    const char *argv[] = {p, NULL};
    atk_try(c, "execve <name>", execve(p, (char *const *)argv, NULL));
}

static int agent(struct atk_ctx *c)
{
    const char *dir = atk_arg(c, "out");
    char hex[64] = "";
    for (size_t i = 0; c->secret[i] && i < 24; i++)
        snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", (unsigned char)c->secret[i]);
    named(c, dir, c->secret);
    named(c, dir, hex);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    static const char *const tail[] = {"audit", "tail", "10000", NULL};
    atkv_admin_spelled(c, tail, "audit.out");
}

static const struct atk A = {"audit_landlock_names",
                             "Landlock-refused creates, links and renames named after the canary",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
