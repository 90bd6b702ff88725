// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_policy.c - `mncctl policy check FILE...`: validate policy files offline.
 *
 * The files are loaded together, exactly as mncd would load them (one merged set), so
 * cross-file conflicts are found too. Output:
 *   valid:   "ok: N files, A agents, S sinks, F fields, C contracts" on stdout, exit 0;
 *   invalid: every error, one per line, "FILE: JSON.PATH: message" on stderr, exit 1.
 * With --json the result is one JSON object on stdout instead.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mnc/policy.h"
#include "mncctl.h"

static int print_json(const mnc_policy *p, const mnc_errors *errs, int nfiles, int agents, int sinks)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return -1;
    bool ok = cJSON_AddBoolToObject(o, "ok", p != NULL) != NULL;
    if (p) {
        ok &= cJSON_AddNumberToObject(o, "files", nfiles) != NULL;
        ok &= cJSON_AddNumberToObject(o, "agents", agents) != NULL;
        ok &= cJSON_AddNumberToObject(o, "sinks", sinks) != NULL;
        ok &= cJSON_AddNumberToObject(o, "fields", p->n_fields) != NULL;
        ok &= cJSON_AddNumberToObject(o, "contracts", p->n_contracts) != NULL;
    } else {
        cJSON *a = cJSON_AddArrayToObject(o, "errors");
        ok &= a != NULL;
        for (int i = 0; a && i < errs->n; i++) {
            cJSON *s = cJSON_CreateString(errs->msg[i]);
            if (!s || !cJSON_AddItemToArray(a, s)) {
                cJSON_Delete(s);
                ok = false;
            }
        }
    }
    char *txt = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!txt)
        return -1;
    puts(txt);
    cJSON_free(txt);
    return 0;
}

static int cmd_policy(int argc, char **argv, const mncctl_global *g)
{
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        mncctl_err("usage: mncctl policy check FILE...");
        return 2;
    }
    if (argc < 3) {
        mncctl_err("policy check: no file given (usage: mncctl policy check FILE...)");
        return 2;
    }
    int n = argc - 2;
    mnc_errors errs;
    mnc_errors_init(&errs);
    mnc_policy *p = mnc_policy_load_files((const char *const *)(argv + 2), n, &errs);
    int agents = 0, sinks = 0;
    for (int i = 0; p && i < p->n_principals; i++) {
        if (p->principals[i].cls == MNC_SINK_AGENT)
            agents++;
        else
            sinks++;
    }
    int rc = p ? 0 : 1;
    if (g->json) {
        if (print_json(p, &errs, n, agents, sinks) != 0) {
            mncctl_err("out of memory");
            rc = 1;
        }
    } else if (p) {
        printf("ok: %d files, %d agents, %d sinks, %d fields, %d contracts\n", n, agents, sinks, p->n_fields,
               p->n_contracts);
    } else {
        for (int i = 0; i < errs.n; i++)
            fprintf(stderr, "%s\n", errs.msg[i]);
        if (errs.n == 0) /* the loader promises at least one error; never print nothing */
            mncctl_err("policy rejected without an error message");
    }
    if (fflush(stdout) != 0)
        rc = 1;
    mnc_policy_free(p);
    mnc_errors_free(&errs);
    return rc;
}

MNCCTL_COMMAND(policy_cmd, "policy", "policy check FILE...   validate policy files (one merged set)", cmd_policy)
