// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_labels.c - agent.register's read grants and inherited fds (run_labels.h). */
#include "run_labels.h"

#include "mncctl.h"

int run_labels_request(cJSON *req, char *const *rd, int n_read, const int *keep, int n_keep, bool stdio_pass)
{
    cJSON *reads = cJSON_AddArrayToObject(req, "reads");
    cJSON *fds = reads ? cJSON_AddArrayToObject(req, "fds") : NULL;
    bool ok = fds != NULL;
    for (int i = 0; ok && i < n_read; i++)
        ok = cJSON_AddItemToArray(reads, cJSON_CreateString(rd[i]));
    for (int i = 0; ok && i < (stdio_pass ? 3 : 1); i++)
        ok = cJSON_AddItemToArray(fds, cJSON_CreateNumber(i));
    for (int i = 0; ok && i < n_keep; i++)
        ok = cJSON_AddItemToArray(fds, cJSON_CreateNumber(keep[i]));
    return ok ? 0 : -1;
}

void run_labels_note(const cJSON *resp, const char *agent)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(resp, "labels_from"))
    {
        if (cJSON_IsString(it))
            mncctl_err("note: agent \"%s\" starts tainted: it can read data at rest that carries a label (%s)", agent,
                       it->valuestring);
    }
}
