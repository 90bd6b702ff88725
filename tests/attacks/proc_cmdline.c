// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_cmdline - threat model (docs/threat-model.md): storage any process can read. The agent overwrites its own argv strings in memory with the
 * canary; /proc/PID/cmdline shows them to every user.
 * Verifier: uid 65534 scans /proc/N/cmdline while the agent waits.
 * Blocks it: hidepid=2 for other users' /proc (cmdline is in the agent's own memory).
 * Status: a documented remaining covert channel (/proc/PID/cmdline; docs/threat-model.md gives its bandwidth
 * and what would close it): runs only with MNC_ATTACKS_COVERT=1. */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    size_t room = strlen(c->argv[0]);
    if (room < strlen(c->secret)) {
        atk_note(c, "argv[0] too short");
        return 0;
    }
    memset(c->argv[0], ' ', room);
    memcpy(c->argv[0], c->secret, strlen(c->secret));
    atk_note(c, "argv[0] overwritten: OK");
    atk_sync(c, "named");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n) { return atk_scan_proc("cmdline", c->canary, out, n); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[256];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "uid 65534 read the canary in %s", out);
}

static const struct atk A = {
    "proc_cmdline", "command line (argv overwritten) read from /proc", ATK_COVERT, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
