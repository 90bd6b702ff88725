// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* derive_choice - the numbers of a derived object as the way out: the tainted coordinator holds
 * the canary (attack_scope: no sinks) and a wide object whose sinks include the bystander. It
 * derives 12 copies of the wide object, copy i with a lifetime of d_i + 1 turns and d_i + 1
 * seconds (d_i the canary's i-th hex digit: derive lets any narrower lifetime through), and
 * forwards each to the bystander, which the wide object's scope allows. The copies carry no
 * byte of the canary, but their numbers do.
 * Verifier: the bystander's inbox (atk_recv_as): the turns and lifetimes of what it received,
 * in order, decoded as digits.
 * What blocks it: a derived object's scope is cut to the deriver's label (everything it holds:
 * here, no sinks), so the forwards are refused; and its lifetime is a step of mncd's ladder,
 * not the number asked for (docs/protocol.md, "Identifiers an agent chooses"). */
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
    char wide[40], req[512], resp[8192];
    if (atkv_recv_contract(c, "wide_scope", wide, sizeof(wide)) < 0) {
        atk_note(c, "no wide_scope object");
        return 0;
    }
    int derived = 0, forwarded = 0;
    for (int i = 0; i < 12; i++) {
        char h = c->secret[2 + i];
        int d = h <= '9' ? h - '0' : h - 'a' + 10;
        snprintf(req, sizeof(req),
                 "{\"verb\":\"derive\",\"object\":\"%s\",\"sinks\":[\"bystander\"],\"lifetime\":{\"turns\":%d,"
                 "\"seconds\":%d}}",
                 wide, d + 1, d + 1 + 60);
        char child[40] = "";
        const char *id = atkv_req(c, req, resp, sizeof(resp)) == 0 ? strstr(resp, "\"object\":{\"id\":\"") : NULL;
        if (!id)
            continue;
        derived++;
        snprintf(child, sizeof(child), "%.32s", id + 16);
        snprintf(req, sizeof(req), "{\"verb\":\"forward\",\"object\":\"%s\",\"to\":\"bystander\"}", child);
        if (atkv_req(c, req, resp, sizeof(resp)) == 0 && strstr(resp, "\"ok\":true"))
            forwarded++;
    }
    atk_note(c, "%d copies derived, %d forwarded to the bystander", derived, forwarded);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    static char out[1 << 18];
    if (atk_recv_as(c, "bystander", out, sizeof(out)) < 0)
        return;
    /* the turns of each received copy, in order: "lifetime":{"seconds":S,"turns":T} */
    char dec[64] = "", dec2[64] = "";
    int k = 0, k2 = 0;
    for (const char *p = strstr(out, "\"lifetime\":{"); p; p = strstr(p + 1, "\"lifetime\":{")) {
        const char *tu = strstr(p, "\"turns\":"), *se = strstr(p, "\"seconds\":");
        if (tu && k < 60) {
            long v = atol(tu + 8);
            if (v >= 1 && v <= 16)
                dec[k++] = "0123456789abcdef"[v - 1];
        }
        if (se && k2 < 60) {
            long v = atol(se + 10) - 61;
            if (v >= 0 && v <= 15)
                dec2[k2++] = "0123456789abcdef"[v];
        }
    }
    dec[k] = dec2[k2] = 0;
    if (strstr(dec, c->canary + 2) || strstr(dec2, c->canary + 2))
        atk_evidence(c, "the bystander's copies carry the canary in their lifetimes (turns %s, seconds %s)", dec, dec2);
}

static const struct atk A = {"derive_choice",
                             "the lifetimes of derived copies forwarded to another agent",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
