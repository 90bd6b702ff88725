// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* json_write.c - see json_write.h. */
#include "json_write.h"

#include <stdio.h>

cJSON *mnc_json_add_u64(cJSON *o, const char *name, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return cJSON_AddRawToObject(o, name, buf);
}
