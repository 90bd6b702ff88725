// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_policy.c - libFuzzer target for the policy loader (mnc_policy_load_buffer) and, when a
 * document loads, for the private-state reader over the same bytes' policy.
 * Policy files are authority-written, but they are also the place where a typo, a truncated copy
 * or a hostile file in a config directory would land: any input must load completely or be
 * refused with at least one error; never crash, leak, read out of bounds or half-load. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/policy.h"
#include "mnc/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the loader's contract: buf[len] must be '\0' */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("fuzz", buf, size, &e);
    if (!p && e.n == 0)
        __builtin_trap(); /* a refusal must say why */
    if (p) {
        /* touch what later checks touch: names, sets, requirements */
        char names[256];
        for (int i = 0; i < p->n_families; i++)
            for (int k = 0; k < p->families[i].n_forms; k++)
                mnc_policy_fieldset_str(p, &p->families[i].forms[k].fields, names, sizeof(names));
        for (int c = 0; c < p->n_contracts; c++) {
            if (mnc_policy_contract(p, p->contracts[c].id) < 0)
                __builtin_trap();
            (void)mnc_policy_requirement(p, p->contracts[c].scope.recipient, p->contracts[c].purpose);
        }
        /* the same bytes as a private state under the policy just loaded */
        struct cJSON *j = mnc_json_parse_strict("fuzz", buf, size, &e);
        if (j) {
            mnc_state st;
            if (mnc_state_from_json(p, j, &st, "fuzz", &e) == 0)
                mnc_state_free(&st);
            cJSON_Delete(j);
        }
        mnc_policy_free(p);
    }
    mnc_errors_free(&e);
    free(buf);
    return 0;
}
