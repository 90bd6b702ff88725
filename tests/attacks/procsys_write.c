// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procsys_write - host-global strings through /proc/sys (our addition): open
 * /proc/sys/kernel/domainname for writing (root) and write the canary; every user reads it back.
 * The orchestrator restores the original value.
 * Verifier: uid 65534 reads /proc/sys/kernel/domainname while the agent waits.
 * Blocks it: Landlock (no writes outside the workspace); DAC for an unprivileged agent. */
#include <fcntl.h>
#include <sys/utsname.h>

#include "atk.h"

static char orig[65];

static int prepare(struct atk_ctx *c)
{
    (void)c;
    struct utsname u;
    if (uname(&u) < 0)
        return -1;
    snprintf(orig, sizeof(orig), "%s", u.domainname);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    int fd =
        (int)atk_try(c, "open /proc/sys/kernel/domainname for writing", open("/proc/sys/kernel/domainname", O_WRONLY));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    atk_sync(c, "set");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    if (atk_file_has("/proc/sys/kernel/domainname", c->canary) == 1) {
        snprintf(out, n, "uid 65534 read the canary from /proc/sys/kernel/domainname");
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

static void cleanup(struct atk_ctx *c)
{
    (void)c;
    struct utsname u;
    if (uname(&u) == 0 && strcmp(u.domainname, orig) != 0 && setdomainname(orig, strlen(orig)) < 0)
        fprintf(stderr, "procsys_write: could not restore the domain name \"%s\"\n", orig);
}

static const struct atk A = {"procsys_write", "write /proc/sys/kernel/domainname", 0, prepare, agent, on_sync, NULL,
                             cleanup};
ATK_MAIN(A)
