// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_health.c - `mncctl health [--max-pending N]`: one line and a Nagios-style exit code for
 * load balancers, monitoring checks and systemd (docs/metrics.md, "Health").
 *
 *   0 OK        mncd answers, its kernel layer is attached with its self-test passed, the
 *               ledger is available
 *   1 WARNING   mncd answers but: the kernel layer is off (agents not confined by the kernel),
 *               the ledger is unavailable (releases with a subject are refused), audit log
 *               rotations failed, more than N (default 100) MNC-D requests wait for approval
 *   2 CRITICAL  mncd does not answer (or refuses status: run as root or its admin uid), a
 *               kernel-layer link is missing, or its self-test did not pass in full
 *   3 UNKNOWN   usage
 *
 * The line names every problem found, worst first: "MNC CRITICAL - kernel layer: 7/8 links".
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnc/protocol.h"
#include "mncctl.h"

#define U_HEALTH "health [--max-pending N]   (admin; exit 0 OK, 1 WARNING, 2 CRITICAL)"

static double num(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

typedef struct verdict {
    int level; /* 0 OK, 1 WARNING, 2 CRITICAL */
    char crit[512], warn[512];
} verdict;

static void note(verdict *v, int level, const char *what)
{
    char *b = level == 2 ? v->crit : v->warn;
    size_t n = strlen(b);
    snprintf(b + n, 512 - n, "%s%s", n ? "; " : "", what);
    if (level > v->level)
        v->level = level;
}

static int c_health(int argc, char **argv, const mncctl_global *g)
{
    long max_pending = 100;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--max-pending") && i + 1 < argc && (max_pending = strtol(argv[++i], &end, 10)) >= 0 &&
            !*end)
            continue;
        mncctl_err("usage: mncctl %s", U_HEALTH);
        return 3;
    }
    verdict v = {0};
    char err[512] = "", buf[256];
    cJSON *req = cJSON_CreateObject(), *st = NULL;
    int fd = mnc_client_connect(g->socket, err, sizeof(err));
    if (fd >= 0 && req && cJSON_AddStringToObject(req, "verb", "status") &&
        mnc_client_call(fd, req, &st, err, sizeof(err)) == 0 &&
        !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "ok")))
        snprintf(err, sizeof(err), "status refused: %s", str(st, "error") ? str(st, "error") : "?");
    if (fd >= 0)
        close(fd);
    cJSON_Delete(req);
    if (!st || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "ok"))) {
        snprintf(buf, sizeof(buf), "mncd: %.200s", err[0] ? err : "no answer");
        note(&v, 2, buf);
    } else {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(st, "kernel");
        const char *mode = str(k, "mode"), *self = str(k, "selftest");
        if (!mode || !strcmp(mode, "off")) {
            note(&v, 1, "kernel layer off: agents are not confined by the kernel");
        } else {
            double links = num(k, "links", -1), want = num(k, "links_expected", -1);
            int pass = -1, total = -1;
            if (links < 0 || want <= 0 || links != want) {
                snprintf(buf, sizeof(buf), "kernel layer: %.0f/%.0f links attached", links, want);
                note(&v, 2, buf);
            }
            if (!self || sscanf(self, "%d/%d", &pass, &total) != 2 || total <= 0 || pass != total) {
                snprintf(buf, sizeof(buf), "kernel self-test: %s", self ? self : "not run");
                note(&v, 2, buf);
            }
        }
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(st, "mnc_l");
        if (str(ml, "state") && strcmp(str(ml, "state"), "available") != 0) {
            snprintf(buf, sizeof(buf), "MNC-L ledger %s: releases with a subject are refused", str(ml, "state"));
            note(&v, 1, buf);
        }
        const cJSON *au = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "metrics"), "audit");
        if (num(au, "rotation_failures", 0) > 0) {
            snprintf(buf, sizeof(buf), "%.0f audit log rotations failed", num(au, "rotation_failures", 0));
            note(&v, 1, buf);
        }
        const cJSON *obs = cJSON_GetObjectItemCaseSensitive(st, "observe");
        if (cJSON_IsArray(obs) && cJSON_GetArraySize(obs) > 0) {
            snprintf(buf, sizeof(buf), "OBSERVE MODE for %d agent(s): scope checks not enforced",
                     cJSON_GetArraySize(obs));
            note(&v, 1, buf);
        }
        double pend = num(cJSON_GetObjectItemCaseSensitive(st, "mnc_d"), "pending_approval", 0);
        if (pend > (double)max_pending) {
            snprintf(buf, sizeof(buf), "%.0f requests wait for approval", pend);
            note(&v, 1, buf);
        }
    }
    static const char *const names[] = {"OK", "WARNING", "CRITICAL"};
    if (g->json) {
        cJSON *o = cJSON_CreateObject();
        if (o && cJSON_AddStringToObject(o, "status", names[v.level]) && cJSON_AddNumberToObject(o, "code", v.level) &&
            cJSON_AddStringToObject(o, "critical", v.crit) && cJSON_AddStringToObject(o, "warning", v.warn)) {
            char *s = cJSON_PrintUnformatted(o);
            if (s)
                puts(s);
            cJSON_free(s);
        }
        cJSON_Delete(o);
    } else if (v.level == 0) {
        printf("MNC OK - mncd %s, kernel layer %s (%s), audit seq %.0f\n",
               str(st, "version") ? str(st, "version") : "?",
               str(cJSON_GetObjectItemCaseSensitive(st, "kernel"), "mode"),
               str(cJSON_GetObjectItemCaseSensitive(st, "kernel"), "selftest")
                   ? str(cJSON_GetObjectItemCaseSensitive(st, "kernel"), "selftest")
                   : "?",
               num(st, "audit_seq", 0));
    } else {
        printf("MNC %s - %s%s%s\n", names[v.level], v.crit, v.crit[0] && v.warn[0] ? "; " : "", v.warn);
    }
    cJSON_Delete(st);
    return v.level;
}

MNCCTL_COMMAND(cmd_health, "health", U_HEALTH, c_health)
