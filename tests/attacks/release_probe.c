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

#define RELAY                                                                                                          \
    "{\"verb\":\"disclose\",\"contract\":\"ledger_relay\",\"release\":\"r-%s\",\"state\":{\"subject\":\"" SUBJ         \
    "\",\"fields\":{\"selected_slot\":\"y\"}}}"

static int agent(struct atk_ctx *c)
{
    if (c->phase == 2) {
        atkv_probe_cands(c, RELAY, "\"replayed\":true");
        return 0;
    }
    char req[512], resp[1 << 16];
    atkv_recv_one(c);
    snprintf(req, sizeof(req), RELAY, c->secret);
    int r = atkv_req(c, req, resp, sizeof(resp));
    atk_note(c, "disclose with release r-<canary>: %s", r == 0 && strstr(resp, "\"ok\":true") ? "released" : resp);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_probe_fresh(c, "coordinator", "ws-probe", "a fresh instance probed release ids and sent the replayed one out");
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
