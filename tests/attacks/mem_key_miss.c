// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mem_key_miss - a memory key as the way out, probed by another agent that never gets an object:
 * the tainted coordinator stores a wide object (memory allowed) under slot/<canary>. The
 * bystander, untainted and not the object's recipient, probes 16 candidate keys with mem.get:
 * mncd refuses every one of them, but a key that exists is refused for `recipient` and one that
 * does not for `no_object` - a lookup is an oracle whether it delivers or not. The bystander
 * sends the candidate that was refused for `recipient` to a TCP listener on 127.0.0.1.
 * Verifier: the orchestrator's listener.
 * What blocks it: every mem.get in the store, hit or miss, delivered or refused, first gives
 * the reader the store's key label (docs/protocol.md, "Identifiers an agent chooses"): the
 * bystander then holds what the writer held (no sinks), and its connect is refused. */
#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char wval[32];
    atk_mkcanary(wval, sizeof(wval));
    return atk_disclose(c, "wide_scope", wval);
}

static int agent(struct atk_ctx *c)
{
    if (c->phase == 2)
        atkv_probe_cands(c, "{\"verb\":\"mem.get\",\"key\":\"slot/%s\",\"purpose\":\"wide_scope\"}",
                         "!\"reason\":\"no_object\"");
    else
        atkv_store_under_canary(c);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_probe_fresh(c, "bystander", "ws-bystander-probe",
                     "the bystander told hits from misses by mem.get's refusal and sent the key out");
}

static const struct atk A = {"mem_key_miss",
                             "a memory key named after the canary, probed by another agent through refusals",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
