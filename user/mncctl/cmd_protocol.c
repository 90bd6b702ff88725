// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_protocol.c - `mncctl protocol`: the request table of mncd's protocol (user/lib/protocol.c,
 * docs/protocol.md), every verb with its members and their kinds; --json prints it as data
 * (tests/integration/test_canary_sinks derives every field it fills from it). Offline. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "mnc/protocol.h"
#include "mncctl.h"

static int c_protocol(int argc, char **argv, const mncctl_global *g)
{
    (void)argv;
    if (argc != 1) {
        mncctl_err("usage: protocol");
        return 2;
    }
    cJSON *t = mnc_protocol_table();
    if (!t) {
        mncctl_err("out of memory");
        return 1;
    }
    if (g->json) {
        char *s = cJSON_PrintUnformatted(t);
        if (s)
            printf("%s\n", s);
        cJSON_free(s);
        cJSON_Delete(t);
        return s ? 0 : 1;
    }
    const cJSON *verbs = cJSON_GetObjectItemCaseSensitive(t, "verbs");
    for (const cJSON *v = verbs ? verbs->child : NULL; v; v = v->next) {
        printf("%-16s%s", v->string, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "admin")) ? " (admin)" : "");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(v, "args");
        for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(a, "required");
            printf(" %s%s:%s%s", cJSON_IsTrue(r) ? "" : "[", cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring,
                   cJSON_GetObjectItemCaseSensitive(a, "kind")->valuestring, cJSON_IsTrue(r) ? "" : "]");
        }
        printf("\n");
    }
    cJSON_Delete(t);
    return 0;
}

MNCCTL_COMMAND(cmd_protocol, "protocol", "protocol                  (the request table: verbs, members, kinds)",
               c_protocol)
