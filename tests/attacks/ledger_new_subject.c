// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger_new_subject - the ledger's subject as the way out: the coordinator, holding the canary
 * under ledger_scope, discloses under its onward contract ledger_relay (allowed) with
 * state.subject = the canary. A charged release writes the subject into the ledger (shared in
 * PostgreSQL in fleet mode, shown by `mncctl ledger show`, named in the ledger.charge record and
 * the approval queue), and every issuer of that subject reads its history back.
 * Verifier: the admin's `mncctl audit tail 10000` and `approvals`, and the ledger file
 * (STATE_DIR/ledger).
 * What blocks it: a tainted issuer may charge only a subject the ledger already has (docs/
 * protocol.md, "Identifiers an agent chooses"); records name subjects by salted tokens. */
#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    c->contract = "ledger_scope";
    return atkv_reset_coordinator(c);
}

static int agent(struct atk_ctx *c)
{
    char req[512], resp[1 << 16];
    atkv_recv_one(c);
    snprintf(req, sizeof(req),
             "{\"verb\":\"disclose\",\"contract\":\"ledger_relay\",\"state\":{\"subject\":\"%s\",\"fields\":"
             "{\"selected_slot\":\"y\"}}}",
             c->secret);
    int r = atkv_req(c, req, resp, sizeof(resp));
    atk_note(c, "disclose with subject <canary>: %s", r == 0 && strstr(resp, "\"ok\":true") ? "charged" : resp);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    static const char *const tail[] = {"audit", "tail", "10000", NULL};
    static const char *const appr[] = {"call", "{\"verb\":\"approvals\",\"max\":1000}", NULL};
    atkv_admin_spelled(c, tail, "admin0.out");
    atkv_admin_spelled(c, appr, "admin1.out");
    char path[700];
    const char *st = getenv("ATK_STATE");
    if (st) {
        snprintf(path, sizeof(path), "%s/ledger", st);
        if (atk_file_has(path, c->canary) == 1)
            atk_evidence(c, "the ledger holds the canary as a subject");
    }
}

static const struct atk A = {"ledger_new_subject",
                             "the canary as a ledger subject of an allowed onward disclose",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
