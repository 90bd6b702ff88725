// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_broker_receipt - a tainted broker writes the canary into its MNC-D receipt. The
 * coordinator is the policy's broker of brokered_scope (worker -> bystander, failure
 * delegate; the bystander needs selected_slot and slot_feasible, which the receipt form alone
 * cannot give, so nothing is admissible and the request is delegated). The agent receives the
 * canary under attack_scope (no sinks, recipient coordinator only), keeps an mncd connection
 * open (a connected broker), and waits at sync "brokered" while the orchestrator has the worker
 * disclose under brokered_scope (a state that carries no canary). The agent then takes the
 * request with broker.next and answers broker.reply with the receipt
 * {"selected_slot": <canary>, "slot_feasible": "true"}: mncd validates the receipt against the
 * brokered contract (fields, need, no private value of the request's own state, risk) but not
 * against what the broker holds (flow.c judges `disclose` only), and releases it as an object
 * to the bystander. A `failure` code goes to the issuer the same way (disclose.status "detail").
 * Verifier: the bystander (another agent, an outsider to the coordinator) receives its inbox
 * (atk_recv_as) after the agent exited; the canary in it is the leak.
 * Would block it: broker.reply judged like `disclose` by what the broker holds (mncd_flow_check
 * for the brokered contract's recipient), or a tainted broker's reply refused, failure codes
 * included. */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = atk_mncd(c);
    if (fd < 0) {
        atk_note(c, "mncd connection: %s", atk_errname(errno));
        return 0;
    }
    char resp[65536], req[1024];
    atk_sync(c, "brokered");
    if (atk_call(fd, "{\"verb\":\"broker.next\"}", resp, sizeof(resp)) < 0) {
        atk_note(c, "broker.next: no answer");
        return 0;
    }
    const char *id = strstr(resp, "\"id\":\"d-");
    if (!id) {
        atk_note(c, "broker.next: no request (%.160s)", resp);
        return 0;
    }
    char rid[64];
    snprintf(rid, sizeof(rid), "%.*s", (int)strcspn(id + 6, "\""), id + 6);
    snprintf(req, sizeof(req),
             "{\"verb\":\"broker.reply\",\"request\":\"%s\",\"receipt\":{\"selected_slot\":\"%s\","
             "\"slot_feasible\":\"true\"}}",
             rid, c->secret);
    if (atk_call(fd, req, resp, sizeof(resp)) < 0) {
        atk_note(c, "broker.reply: no answer");
        return 0;
    }
    const char *r = strstr(resp, "\"error\":\"");
    atk_note(c, "broker.reply receipt: %s%s%.120s", strstr(resp, "\"ok\":true") ? "ALLOWED" : "denied", r ? " " : "",
             r ? r + 9 : "");
    close(fd);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "brokered") != 0)
        return;
    /* pending delegation is not "ok": atk_disclose notes the answer, which is expected */
    size_t l = strlen(c->notes);
    if (atk_disclose(c, "brokered_scope", "Thu10") == 0)
        snprintf(c->notes + l, sizeof(c->notes) - l, "%sbrokered disclose released at once", l ? ", " : "");
}

static void verify(struct atk_ctx *c)
{
    static char out[1 << 16];
    int n = atk_recv_as(c, "bystander", out, sizeof(out));
    if (n > 0 && strstr(out, c->canary)) {
        atk_evidence(c, "the bystander received the canary in a delegated receipt (mnc-d:delegated)");
        return;
    }
    size_t l = strlen(c->notes);
    snprintf(c->notes + l, sizeof(c->notes) - l, "%sbystander's inbox (%d bytes, canary %s): %.300s", l ? ", " : "", n,
             c->canary, n > 0 && strstr(out, "\"values\"") ? strstr(out, "\"values\"") : "");
}

static const struct atk A = {"mncd_broker_receipt",
                             "a tainted broker's broker.reply receipt carrying the canary to the brokered recipient",
                             ATK_NO_CONTROL,
                             NULL,
                             agent,
                             on_sync,
                             verify,
                             NULL};
ATK_MAIN(A)
