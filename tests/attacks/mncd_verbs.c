// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_verbs - ask mncd itself to move the object where the scope forbids: forward to another
 * agent, log to ops_log, mem.put, tool call, derive and send the child (held: docs/threat-model.md).
 * Verifier: the log sink and memory dir; the bystander's inbox is checked by an outsider recv is
 * not possible (it is an agent), so an ok forward counts as a leak.
 * Blocks it: the monitor (scope: no sinks, no memory, recipient coordinator only, one turn). */
#include <dirent.h>

#include "atk.h"

static void call(struct atk_ctx *c, const char *what, const char *fmt)
{
    char req[512], resp[65536];
    snprintf(req, sizeof(req), fmt, c->object);
    int fd = atk_mncd(c);
    if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0) {
        atk_note(c, "%s: no answer", what);
    } else {
        char reason[64] = "?";
        const char *r = strstr(resp, "\"reason\":\"");
        if (r)
            snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(r + 10, "\""), r + 10);
        atk_note(c, "%s: %s (%s)", what, strstr(resp, "\"ok\":true") ? "ALLOWED" : "denied", reason);
        if (strstr(resp, "\"ok\":true") && strstr(resp, c->secret))
            atk_say(c, "mncd-allowed %s", what);
    }
    if (fd >= 0)
        close(fd);
}

static int agent(struct atk_ctx *c)
{
    call(c, "forward to bystander", "{\"verb\":\"forward\",\"object\":\"%s\",\"to\":\"bystander\"}");
    call(c, "send to bystander", "{\"verb\":\"send\",\"object\":\"%s\",\"to\":\"bystander\"}");
    call(c, "log ops_log", "{\"verb\":\"log\",\"object\":\"%s\",\"sink\":\"ops_log\"}");
    call(c, "mem.put", "{\"verb\":\"mem.put\",\"key\":\"atk\",\"object\":\"%s\"}");
    call(c, "tool calendar", "{\"verb\":\"tool\",\"object\":\"%s\",\"tool\":\"calendar\"}");
    call(c, "recv again", "{\"verb\":\"recv\",\"object\":\"%s\"}");
    return 0;
}

static void verify(struct atk_ctx *c)
{
    const char *log = getenv("ATK_LOG"), *mem = getenv("ATK_MEM");
    if (log && atk_file_has(log, c->canary) == 1)
        atk_evidence(c, "canary in the log sink");
    if (strstr(c->notes, "forward to bystander: ALLOWED") || strstr(c->notes, "send to bystander: ALLOWED"))
        atk_evidence(c, "mncd queued the object to another agent");
    if (strstr(c->notes, "mem.put: ALLOWED"))
        atk_evidence(c, "mncd stored the object in memory");
    DIR *d = mem ? opendir(mem) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[1200];
        snprintf(p, sizeof(p), "%s/%s", mem, e->d_name);
        if (e->d_name[0] != '.' && atk_file_has(p, c->canary) == 1)
            atk_evidence(c, "canary in the memory sink");
    }
    if (d)
        closedir(d);
}

static const struct atk A = {"mncd_verbs",   "mncd's own verbs (forward, send, log, mem.put, tool, re-recv)",
                             ATK_NO_CONTROL, NULL,
                             agent,          NULL,
                             verify,         NULL};
ATK_MAIN(A)
