// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* process_vm_writev - write the canary straight into an outsider's memory (our addition).
 * Verifier: the collector reports its buffer at the end.
 * Blocks it: the same ptrace access check as ptrace (PTRACE_MODE_ATTACH): other uid, no
 * CAP_SYS_PTRACE, Yama, Landlock domain. */
#include <sys/uio.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    pid_t pid = (pid_t)atk_argl(c, "cpid");
    void *addr = (void *)strtoul(atk_arg(c, "vmaddr"), NULL, 16);
    struct iovec l = {.iov_base = c->secret, .iov_len = strlen(c->secret)};
    struct iovec r = {.iov_base = addr, .iov_len = strlen(c->secret)};
    atk_try(c, "process_vm_writev", process_vm_writev(pid, &l, 1, &r, 1, 0));
    return 0;
}

static const struct atk A = {
    "process_vm_writev", "process_vm_writev into an outsider", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
