// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_audit.c - `mncctl audit verify FILE` (offline) and `mncctl audit tail [N]` (via mncd).
 *
 * verify exit codes: 0 the chain verifies (a torn last line from a crash is reported as a
 * notice and the prefix must verify), 1 a record was edited, removed, inserted or reordered
 * (the first bad line is named), 2 usage or the file cannot be read.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/audit.h"
#include "mncctl.h"

int mncctl_call_print(const mncctl_global *g, cJSON *req); /* cmd_client.c */

#define U_AUDIT "audit verify FILE | audit tail [N]   (tail: admin)"

static int verify(const char *path, const mncctl_global *g)
{
    mnc_audit_verify v;
    int rc = mnc_audit_verify_file(path, &v);
    if (g->json) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return 1;
        cJSON_AddBoolToObject(o, "ok", rc == 0);
        cJSON_AddNumberToObject(o, "records", (double)v.records);
        cJSON_AddStringToObject(o, "head", v.head);
        cJSON_AddNumberToObject(o, "bad_line", (double)v.bad_line);
        cJSON_AddBoolToObject(o, "torn_tail", v.torn_tail);
        cJSON_AddStringToObject(o, "message", v.msg);
        char *s = cJSON_PrintUnformatted(o);
        if (s)
            puts(s);
        cJSON_free(s);
        cJSON_Delete(o);
    } else if (rc == 0) {
        printf("%s: OK, %llu records, head %s\n", path, (unsigned long long)v.records, v.head);
        if (v.torn_tail)
            printf("notice: %s (mncd truncates it on its next start)\n", v.msg);
    } else if (rc == 1) {
        printf("%s: TAMPERED: %s\n", path, v.msg);
    } else {
        mncctl_err("%s", v.msg);
    }
    return rc == 0 ? 0 : rc == 1 ? 1 : 2;
}

static int c_audit(int argc, char **argv, const mncctl_global *g)
{
    if (argc == 3 && !strcmp(argv[1], "verify"))
        return verify(argv[2], g);
    if ((argc == 2 || argc == 3) && !strcmp(argv[1], "tail")) {
        cJSON *req = cJSON_CreateObject();
        if (!req || !cJSON_AddStringToObject(req, "verb", "audit")) {
            cJSON_Delete(req);
            return 1;
        }
        if (argc == 3) {
            int n = atoi(argv[2]);
            if (n < 1 || n > 10000) {
                cJSON_Delete(req);
                mncctl_err("audit tail: N must be 1..10000");
                return 2;
            }
            cJSON_AddNumberToObject(req, "max", n);
        }
        return mncctl_call_print(g, req);
    }
    mncctl_err("usage: mncctl %s", U_AUDIT);
    return 2;
}

MNCCTL_COMMAND(cmd_audit, "audit", U_AUDIT, c_audit)
