// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* util.c - helpers shared by mncctl subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mncctl.h"
#include "util.h"

mnc_policy *mncctl_load_policies(const char *const *paths, int n)
{
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files(paths, n, &e);
    for (int i = 0; i < e.n; i++)
        fprintf(stderr, "%s\n", e.msg[i]);
    if (!p && e.n == 0)
        mncctl_err("cannot load policy (no detail)");
    mnc_errors_free(&e);
    return p;
}

int mncctl_print_json(const cJSON *j)
{
    char *s = cJSON_Print(j);
    if (!s) {
        mncctl_err("out of memory rendering JSON");
        return -1;
    }
    int rc = puts(s) < 0 ? -1 : 0;
    free(s);
    return rc;
}
