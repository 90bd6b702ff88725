// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_request.c - libFuzzer target for the mncd request parser (mnc_request_parse).
 * Any input must either parse into a request whose pointers are valid, or fail with a message;
 * never crash, leak or read out of bounds (built with -fsanitize=fuzzer,address,undefined). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mnc/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mnc_request r;
    cJSON *id = NULL;
    char err[256];
    if (mnc_request_parse((const char *)data, size, &r, &id, err, sizeof(err)) == 0) {
        /* Touch what the daemon touches. */
        volatile size_t n = strlen(mnc_verb_name(r.verb));
        if (r.object)
            n += strlen(r.object);
        if (r.to)
            n += strlen(r.to);
        (void)n;
        cJSON *resp = mnc_resp_new(r.id, true, "allow", MNC_OK);
        char *line = resp ? mnc_resp_line(resp, NULL) : NULL;
        cJSON_free(line);
        cJSON_Delete(resp);
        mnc_request_free(&r);
    } else {
        cJSON *resp = mnc_resp_error(id, MNC_R_INVALID, "%s", err);
        cJSON_Delete(resp);
        cJSON_Delete(id);
    }
    return 0;
}
