// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* setdomainname - host-global kernel strings as storage (our addition): the NIS domain name
 * (root: CAP_SYS_ADMIN, no UTS namespace) set to the canary is readable by every process in
 * /proc/sys/kernel/domainname. The orchestrator restores the original afterwards.
 * Verifier: uid 65534 reads /proc/sys/kernel/domainname while the agent waits.
 * Blocks it: no CAP_SYS_ADMIN; seccomp (sethostname/setdomainname); a UTS namespace. */
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
    atk_try(c, "setdomainname", setdomainname(c->secret, strlen(c->secret)));
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
        fprintf(stderr, "setdomainname: could not restore \"%s\"\n", orig);
}

static const struct atk A = {"setdomainname", "the host's NIS domain name", 0, prepare, agent, on_sync, NULL, cleanup};
ATK_MAIN(A)
