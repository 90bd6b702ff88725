// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* uid_identified - threat model (docs/threat-model.md): agents with no kernel confinement. An agent identified by uid (mncd's config "agents" maps
 * uid 64123 to "uidagent") rather than by a cgroup `mncctl run` registered: it runs with no
 * kernel confinement. mncd taints a map entry no program consults, and delivers anyway; the
 * "agent" then sends the canary anywhere.
 * Verifier: the collector's unix-stream listener.
 * Blocks it: with a kernel layer on, mncd refuses to deliver to an agent that is not
 * kernel-confined (not_confined, audited). */
#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "uid_agent", "%s", getenv("ATK_UID_AGENT") ? getenv("ATK_UID_AGENT") : "64123");
    return atk_disclose(c, "to_uidagent", c->canary);
}

static int agent(struct atk_ctx *c)
{
    char why[256];
    if (atk_recv_soft(c, why, sizeof(why)) < 0) {
        atk_note(c, "recv refused: %.120s", why);
        atk_say(c, "recv ok"); /* refusing the delivery IS the block: not an error of the attack */
        return 0;
    }
    atk_note(c, "recv delivered %zu bytes", strlen(c->secret));
    int fd = (int)atk_try(c, "connect", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {"uid_identified",
                             "uid-identified agent with no kernel confinement gets deliveries",
                             ATK_UNCONFINED | ATK_USER_ONLY | ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
