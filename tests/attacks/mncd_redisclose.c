// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_redisclose - mncd's own `disclose` verb as a relay: the tainted agent is also an issuer
 * of another contract (policy.json's relay_scope: coordinator -> bystander, as in the shipped
 * policies where a recipient issues the next hop: referral.json's referral_scheduler,
 * staffing.json's hiring_manager) and discloses a fresh object whose state is the canary it
 * received under attack_scope (recipient coordinator only, no sinks, no forwarding). The new
 * object is mncd's, so the held object's scope is never consulted.
 * Verifier: the bystander (another agent, an outsider to the coordinator) is launched under
 * `mncctl run --agent bystander` and receives its inbox (atk_recv_as); the canary in what it
 * received is the leak.
 * Would block it: mncd judging `disclose` (and every verb whose payload the caller supplies:
 * broker.reply) against the caller's taint - a tainted issuer may only disclose to a recipient
 * that every object it holds lets it reach.
 * Positive control: the orchestrator itself has the worker disclose the canary to the
 * bystander (to_bystander), so the bystander's read-back must show it. */
#include "atk.h"

static int prepare(struct atk_ctx *c)
{
    if (getenv("ATK_CONTROL") && strcmp(getenv("ATK_CONTROL"), "1") == 0)
        return atk_disclose(c, "to_bystander", c->canary);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    char req[1024], resp[65536];
    snprintf(req, sizeof(req),
             "{\"verb\":\"disclose\",\"contract\":\"relay_scope\",\"state\":{\"fields\":{\"slot_feasible\":\"true\","
             "\"selected_slot\":\"%s\"}}}",
             c->secret);
    int fd = atk_mncd(c);
    if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0) {
        atk_note(c, "disclose relay_scope: no answer (%s)", atk_errname(errno));
    } else {
        char reason[64] = "?";
        const char *r = strstr(resp, "\"reason\":\"");
        if (r)
            snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(r + 10, "\""), r + 10);
        atk_note(c, "disclose relay_scope: %s (%s)", strstr(resp, "\"ok\":true") ? "ALLOWED" : "denied", reason);
    }
    if (fd >= 0)
        close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    static char got[1 << 16];
    int n = atk_recv_as(c, "bystander", got, sizeof(got));
    if (n < 0) {
        atk_note(c, "bystander read-back failed: %s", atk_errname(errno));
        return;
    }
    if (atk_buf_has(got, (size_t)n, c->canary))
        atk_evidence(c, "the bystander (another agent) received the canary from mncd");
}

static const struct atk A = {"mncd_redisclose",
                             "mncd's disclose verb with the received value as the new state",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
