// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_broker_failure - a tainted broker writes the canary into its broker.reply failure code,
 * which mncd hands the issuer of the request. Set-up as mncd_broker_receipt (the coordinator
 * is the broker of brokered_scope, worker -> bystander, failure delegate then abstain): the
 * agent receives the canary under attack_scope, waits at sync "brokered" while the worker
 * discloses under brokered_scope (nothing admissible: delegated), takes the request with
 * broker.next and answers {"failure": <canary>}. mncd keeps "broker failure: <code>" as the
 * request's detail, which disclose.status shows its issuer (the worker: another agent).
 * Verifier: the worker asks disclose.status for that request after the agent exited; the
 * canary in the answer is the leak.
 * Would block it: the failure code a fixed vocabulary (or not passed on), or a tainted broker's
 * reply refused (broker.reply judged like `disclose` by what the broker holds: flow.c). */
#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = atk_mncd(c);
    if (fd < 0) {
        atk_note(c, "mncd connection: %s", atk_errname(errno));
        return 0;
    }
    atk_sync(c, "brokered");
    char resp[65536], req[1024];
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
    snprintf(req, sizeof(req), "{\"verb\":\"broker.reply\",\"request\":\"%s\",\"failure\":\"%s\"}", rid, c->secret);
    if (atk_call(fd, req, resp, sizeof(resp)) < 0) {
        atk_note(c, "broker.reply: no answer");
        return 0;
    }
    atk_note(c, "broker.reply failure: %s", strstr(resp, "\"ok\":true") ? "ALLOWED" : "denied");
    close(fd);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "brokered") != 0)
        return;
    char resp[8192];
    if (atk_worker_request(
            c,
            "{\"verb\":\"disclose\",\"contract\":\"brokered_scope\",\"state\":{\"fields\":{\"slot_feasible\":"
            "\"true\",\"selected_slot\":\"Thu10\"}}}",
            resp, sizeof(resp)) < 0)
        return;
    const char *r = strstr(resp, "\"request\":\"d-");
    if (r)
        snprintf((char *)c->slot, sizeof(c->slot), "%.*s", (int)strcspn(r + 11, "\""), r + 11);
    size_t l = strlen(c->notes);
    snprintf(c->notes + l, sizeof(c->notes) - l, "%sworker's disclose: %s", l ? ", " : "",
             r ? "pending delegation" : "no request");
}

static void verify(struct atk_ctx *c)
{
    const char *rid = (const char *)c->slot;
    if (!rid[0])
        return;
    char req[256], resp[8192];
    snprintf(req, sizeof(req), "{\"verb\":\"disclose.status\",\"request\":\"%.40s\"}", rid);
    if (atk_worker_request(c, req, resp, sizeof(resp)) < 0)
        return;
    if (strstr(resp, c->canary))
        atk_evidence(c, "the worker (issuer) read the canary in disclose.status's detail");
    else {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%sdisclose.status: %.200s", l ? ", " : "", resp);
    }
}

static const struct atk A = {"mncd_broker_failure",
                             "a tainted broker's broker.reply failure code, shown to the issuer by disclose.status",
                             ATK_NO_CONTROL,
                             NULL,
                             agent,
                             on_sync,
                             verify,
                             NULL};
ATK_MAIN(A)
