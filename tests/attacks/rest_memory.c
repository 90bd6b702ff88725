// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_memory - threat model (docs/threat-model.md, "Data at rest"): the memory store. Run 1
 * (the coordinator) receives an object whose scope allows memory (no sinks) and stores it
 * (`mem.put`); run 2, a fresh instance on a fresh workspace that received nothing, reads it back
 * (`mem.get`) and sends the text out.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: a memory entry is an object with its scope; `mem.get` hands it out like `recv`:
 * the reader's taint first (connect EPERM, stdout withheld). */
#include <unistd.h>

#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    c->contract = "mem_scope";
    atk_set(c, "rest_key", "rest.%d", (int)getpid());
    return atkv_rest_prepare(c, NULL, NULL);
}

static int agent(struct atk_ctx *c)
{
    char req[600], resp[16384];
    int fd = atk_mncd(c);
    if (fd < 0) {
        atk_note(c, "connect mncd: %s", atk_errname(errno));
        return 0;
    }
    if (c->phase != 2) {
        snprintf(req, sizeof(req), "{\"verb\":\"mem.put\",\"key\":\"%s\",\"object\":\"%s\"}", atk_arg(c, "rest_key"),
                 c->object);
        if (atk_call(fd, req, resp, sizeof(resp)) < 0 || !strstr(resp, "\"ok\":true"))
            atk_note(c, "mem.put refused: %.120s", resp);
        return 0;
    }
    snprintf(req, sizeof(req), "{\"verb\":\"mem.get\",\"key\":\"%s\"}", atk_arg(c, "rest_key"));
    if (atk_call(fd, req, resp, sizeof(resp)) < 0 ||
        !atkv_rest_find(resp, strlen(resp), c->secret, sizeof(c->secret))) {
        atk_note(c, "mem.get: no text: %.120s", resp);
        return 0;
    }
    atkv_rest_out(c, "mem.get");
    return 0;
}

static const struct atk A = {"rest_memory",
                             "a fresh instance reads the memory store back and sends it out",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
