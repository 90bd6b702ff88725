// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mem_key_probe - a memory key as the way out (docs/protocol.md, "Identifiers an agent
 * chooses"): the tainted coordinator holds the canary (attack_scope: no sinks, no memory) and a
 * wide object (wide_scope: memory allowed, may reach any external destination). It stores the
 * wide object under the key slot/<canary>: mem.put judges the object, the key is its choice.
 * It exits (its taint goes with its last cgroup). A fresh instance of the coordinator, on a
 * workspace of its own (untainted), probes 16 candidate keys with mem.get - one is right - and
 * sends the candidate that hit to a TCP listener on 127.0.0.1 (an unregistered destination,
 * which the wide object's scope allows).
 * Verifier: the orchestrator's listener (what the fresh instance sent).
 * What blocks it: every mem.get in the store, hit or miss, first gives the reader the store's
 * key label - the meet of the labels of every agent that wrote a key there - so the probe
 * taints the fresh instance with what the writer held (no sinks): its connect is refused. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>

#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char wval[32]; /* the wide object's value: not the canary */
    atk_mkcanary(wval, sizeof(wval));
    return atk_disclose(c, "wide_scope", wval);
}

static int probe(struct atk_ctx *c)
{
    char cands[1024], resp[1 << 16];
    snprintf(cands, sizeof(cands), "%s", atk_arg(c, "cands") ? atk_arg(c, "cands") : "");
    int port = (int)atk_argl(c, "lport");
    for (char *k = strtok(cands, ","); k; k = strtok(NULL, ",")) {
        char req[512];
        snprintf(req, sizeof(req), "{\"verb\":\"mem.get\",\"key\":\"slot/%s\",\"purpose\":\"wide_scope\"}", k);
        if (atkv_req(c, req, resp, sizeof(resp)) < 0 || !strstr(resp, "\"ok\":true"))
            continue;
        atk_note(c, "probe: a hit");
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
    int rc = atkv_run_fresh(c, "coordinator", "ws-probe", extra, 30);
    atkv_accept_read(l, 500, got, sizeof(got));
    close(l);
    if (strstr(got, c->canary))
        atk_evidence(c, "a fresh instance probed the memory keys and sent the hit out (127.0.0.1:%d)", port);
    if (rc != 0)
        atk_note(c, "probe instance exit %d", rc);
}

static const struct atk A = {"mem_key_probe",
                             "a memory key named after the canary, probed by a fresh instance of the agent",
                             ATK_NO_RECV | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
