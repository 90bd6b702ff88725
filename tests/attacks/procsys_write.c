// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procsys_write - host-global strings through /proc/sys (our addition): open
 * /proc/sys/kernel/domainname for writing (root) and write the canary; every user reads it back.
 * The orchestrator restores the original value.
 * Verifier: uid 65534 reads /proc/sys/kernel/domainname while the agent waits.
 * Blocks it: Landlock (no writes outside the workspace); DAC for an unprivileged agent. */
#include <fcntl.h>

#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int fd =
        (int)atk_try(c, "open /proc/sys/kernel/domainname for writing", open("/proc/sys/kernel/domainname", O_WRONLY));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    atk_sync(c, "set");
    return 0;
}

static const struct atk A = {"procsys_write",
                             "write /proc/sys/kernel/domainname",
                             0,
                             atkv_domainname_prepare,
                             agent,
                             atkv_domainname_on_sync,
                             NULL,
                             atkv_domainname_cleanup};
ATK_MAIN(A)
