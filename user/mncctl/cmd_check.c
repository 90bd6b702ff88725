// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_check.c - `mncctl check`: the monitor's decision on one operation, offline.
 *
 * OP.json: {"sender": AGENT, "receiver": PRINCIPAL, "purpose": P, "channel": CH,
 *           "time_ms": N (optional, default now), "fields": [F...] (optional),
 *           "object": <disclosure JSON as printed by `mncctl select`> | null}
 * Prints {"decision": "allow"|"deny", "reason": NAME}; exit 0 allow, 1 deny, 2 bad input.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/monitor.h"
#include "mncctl.h"
#include "util.h"

static int report(mnc_errors *e)
{
    for (int i = 0; i < e->n; i++)
        fprintf(stderr, "%s\n", e->msg[i]);
    return 2;
}

static int cmd_check(int argc, char **argv, const mncctl_global *g)
{
    (void)g;
    const char *policies[16];
    int np = 0;
    const char *op_path = NULL;
    static const struct option opts[] = {{"policy", required_argument, 0, 'p'},
                                         {"op", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == 'p' && np < 16)
            policies[np++] = optarg;
        else if (ch == 'o')
            op_path = optarg;
        else if (ch == 'h') {
            printf("usage: mncctl check --policy FILE --op OP.json\n"
                   "exit 0: allow; 1: deny; 2: bad input\n");
            return 0;
        } else
            return 2;
    }
    if (!np || !op_path || optind != argc) {
        mncctl_err("usage: mncctl check --policy FILE --op OP.json");
        return 2;
    }
    mnc_policy *p = mncctl_load_policies(policies, np);
    if (!p)
        return 2;
    int rc = 2;
    mnc_errors e;
    mnc_errors_init(&e);
    char *buf = NULL;
    size_t len = 0;
    cJSON *j = NULL;
    mnc_disclosure d;
    bool have_d = false;
    if (mnc_json_read_file(op_path, MNC_POLICY_FILE_MAX, &buf, &len, &e) != 0 ||
        !(j = mnc_json_parse_strict(op_path, buf, len, &e))) {
        rc = report(&e);
        goto done;
    }
    static const char *const keys[] = {"sender", "receiver", "purpose", "channel", "time_ms", "fields", "object", NULL};
    for (cJSON *it = j->child; cJSON_IsObject(j) && it; it = it->next) {
        bool ok = false;
        for (int k = 0; keys[k]; k++)
            ok |= strcmp(it->string, keys[k]) == 0;
        if (!ok)
            mnc_errors_add(&e, "%s: %s: unknown key", op_path, it->string);
    }
    cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "sender");
    cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "receiver");
    cJSON *pu = cJSON_GetObjectItemCaseSensitive(j, "purpose");
    cJSON *chn = cJSON_GetObjectItemCaseSensitive(j, "channel");
    cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ms");
    cJSON *fl = cJSON_GetObjectItemCaseSensitive(j, "fields");
    cJSON *ob = cJSON_GetObjectItemCaseSensitive(j, "object");
    if (!cJSON_IsObject(j))
        mnc_errors_add(&e, "%s: $: expected an object", op_path);
    if (!cJSON_IsString(s) || !cJSON_IsString(r) || !cJSON_IsString(pu) || !cJSON_IsString(chn))
        mnc_errors_add(&e, "%s: $: sender, receiver, purpose and channel are required strings", op_path);
    if (t && (!cJSON_IsNumber(t) || t->valuedouble < 0 || t->valuedouble != floor(t->valuedouble) ||
              t->valuedouble > 9007199254740992.0))
        mnc_errors_add(&e, "%s: time_ms: expected a non-negative integer", op_path);
    if (!ob)
        mnc_errors_add(&e, "%s: object: missing (use null for a non-existent object)", op_path);
    if (e.n) {
        rc = report(&e);
        goto done;
    }
    int chv = mnc_channel_from_name(chn->valuestring);
    if (chv < 0) {
        mnc_errors_add(&e, "%s: channel: unknown channel \"%s\"", op_path, chn->valuestring);
        rc = report(&e);
        goto done;
    }
    mnc_set fields;
    mnc_set_clear(&fields);
    if (fl) {
        int i = 0;
        for (cJSON *it = cJSON_IsArray(fl) ? fl->child : NULL; it; it = it->next, i++) {
            int f = cJSON_IsString(it) ? mnc_policy_field(p, it->valuestring) : -1;
            if (f < 0)
                mnc_errors_add(&e, "%s: fields[%d]: unknown field", op_path, i);
            else
                mnc_set_add(&fields, (unsigned)f);
        }
        if (!cJSON_IsArray(fl))
            mnc_errors_add(&e, "%s: fields: expected an array", op_path);
    }
    if (!cJSON_IsNull(ob)) {
        if (mnc_disclosure_from_json(p, ob, &d, &e) == 0)
            have_d = true;
    }
    if (e.n) {
        rc = report(&e);
        goto done;
    }
    mnc_op op = {
        .sender = mnc_policy_principal(p, s->valuestring),
        .receiver = mnc_policy_principal(p, r->valuestring),
        .purpose = pu->valuestring,
        .ch = (mnc_channel)chv,
        .fields = fl ? &fields : NULL,
        .now_ms = t ? (uint64_t)t->valuedouble : mnc_now_ms(),
    };
    mnc_reason dec = mnc_monitor_check(p, &op, have_d ? &d : NULL);
    cJSON *out = cJSON_CreateObject();
    if (!out)
        goto done;
    cJSON_AddStringToObject(out, "decision", dec == MNC_OK ? "allow" : "deny");
    cJSON_AddStringToObject(out, "reason", mnc_reason_name(dec));
    cJSON_AddStringToObject(out, "channel", mnc_channel_name(op.ch));
    rc = mncctl_print_json(out) != 0 ? 2 : dec == MNC_OK ? 0 : 1;
    cJSON_Delete(out);
done:
    if (have_d)
        mnc_disclosure_free(&d);
    cJSON_Delete(j);
    free(buf);
    mnc_errors_free(&e);
    mnc_policy_free(p);
    return rc;
}

MNCCTL_COMMAND(check_cmd, "check", "check --policy FILE --op OP.json", cmd_check)
