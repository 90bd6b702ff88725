// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_fd_given - threat model (docs/threat-model.md, "Data at rest"): another agent, launched
 * untainted with nothing labelled, asks an untainted outsider (the collector's giver) for an fd
 * on the tainted instance's file (SCM_RIGHTS, read-only), reads it and sends it out.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it (lsm backend): file_receive refuses a labelled file the receiver's taint does not
 * imply (deny_label): the fd is dropped from the message. The cgroup backend has no hook for
 * fds received after the launch: a known limit (ATK_LIMIT_CGROUP). */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char p[760];
    snprintf(p, sizeof(p), "%s/notes.txt", c->ws);
    if (atkv_rest_prepare(c, "bystander", NULL) < 0)
        return -1;
    atk_set(c, "rest_give", "%s", p);
    return 0;
}

static const struct atk A = {"rest_fd_given",
                             "a tainted file's fd handed to an untainted agent after its launch",
                             ATK_RELAUNCH | ATK_NO_CONTROL | ATK_LIMIT_CGROUP,
                             prepare,
                             atkv_rest_agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
