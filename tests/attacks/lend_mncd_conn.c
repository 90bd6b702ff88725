// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lend_mncd_conn - threat model (docs/threat-model.md): identity: a lent mncd connection. The agent connects to mncd (so mncd fixes the identity
 * "coordinator" at accept) and passes that connected fd to an outsider with SCM_RIGHTS, before
 * anything was delivered. The outsider sends `recv` on it and gets the object; only the agent's
 * cgroup is tainted. The agent itself never receives.
 * Verifier: the collector's fd receiver sends {"verb":"recv"} on the lent fd and records the answer.
 * Blocks it: per-request identity (SO_PASSCRED/SO_PASSPIDFD per message): the outsider is not the
 * agent. */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int m = (int)atk_try(c, "connect mncd", atk_mncd(c));
    int s = (int)atk_try(c, "connect outsider", atk_unix(SOCK_STREAM, atk_arg(c, "c_fd")));
    if (m < 0 || s < 0)
        return 0;
    atk_try(c, "lend the mncd fd (SCM_RIGHTS)", atk_send_fds(s, 'L', &m, 1));
    sleep(2); /* keep the agent (and so its registration) alive while the outsider uses the fd */
    return 0;
}

/* say what mncd answered the outsider on the lent connection (the verdict is the collector's) */
static void verify(struct atk_ctx *c)
{
    char gp[700], buf[8192];
    snprintf(gp, sizeof(gp), "%s/got", c->dir);
    FILE *f = fopen(gp, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *r = strstr(buf, "[lent-mncd-conn] ");
    const char *reason = r ? strstr(r, "\"reason\":\"") : NULL;
    if (reason)
        atk_note(c, "mncd answered the outsider's recv on the lent fd with reason %.*s",
                 (int)strcspn(reason + 10, "\""), reason + 10);
    else
        atk_note(c, "the outsider got no answer on the lent fd");
}

static const struct atk A = {"lend_mncd_conn",
                             "lend the agent's mncd connection to an outsider (SCM_RIGHTS)",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             NULL,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
