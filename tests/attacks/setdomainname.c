// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* setdomainname - host-global kernel strings as storage (our addition): the NIS domain name
 * (root: CAP_SYS_ADMIN, no UTS namespace) set to the canary is readable by every process in
 * /proc/sys/kernel/domainname. The orchestrator restores the original afterwards.
 * Verifier: uid 65534 reads /proc/sys/kernel/domainname while the agent waits.
 * Blocks it: no CAP_SYS_ADMIN; seccomp (sethostname/setdomainname); a UTS namespace. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    atk_try(c, "setdomainname", setdomainname(c->secret, strlen(c->secret)));
    atk_sync(c, "set");
    return 0;
}

static const struct atk A = {"setdomainname", "the host's NIS domain name", 0,    atkv_domainname_prepare,
                             agent,           atkv_domainname_on_sync,      NULL, atkv_domainname_cleanup};
ATK_MAIN(A)
