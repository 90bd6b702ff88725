// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_disclosure.c - libFuzzer target for the disclosure-object JSON reader
 * (mnc_disclosure_from_json), which reads objects back from mncd's journal and `mncctl check`.
 * Properties checked on every input, besides memory safety:
 *   - an accepted object lies inside its contract (scope ⊆ contract scope, bounded when the
 *     contract is bounded), so a file can never hand back a wider object than issue() makes;
 *   - an accepted object round-trips: to_json -> from_json accepts it again, unchanged;
 *   - rendering, the monitor and derive run on it without faults. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mnc/disclosure.h"
#include "mnc/monitor.h"

/* Same shape as the worked example, plus every sink class. */
static const char POLICY[] =
    "{\"mnc_policy\": 1, \"name\": \"fz\","
    " \"agents\": [{\"name\": \"w\"}, {\"name\": \"a\"}, {\"name\": \"b\"}],"
    " \"sinks\": [{\"name\": \"log1\", \"class\": \"log\", \"path\": \"/var/log/fz\"},"
    "  {\"name\": \"mem1\", \"class\": \"memory\", \"path\": \"/var/lib/fz\"},"
    "  {\"name\": \"tool1\", \"class\": \"tool\"}, {\"name\": \"ext1\", \"class\": \"external\"}],"
    " \"fields\": [{\"name\": \"f0\", \"weight\": 1}, {\"name\": \"f1\", \"weight\": 0.5}, {\"name\": \"f2\", "
    "\"weight\": 0.1}],"
    " \"families\": [{\"name\": \"fam\", \"forms\": [{\"name\": \"r\", \"fields\": [\"f1\", \"f2\"],"
    "   \"template\": \"{f1} and {f2} {{x}}\"}]}],"
    " \"contracts\": ["
    "  {\"id\": \"k0\", \"purpose\": \"p0\", \"issuers\": [\"w\"], \"recipient\": \"a\", \"fields\": [\"f1\", \"f2\"],"
    "   \"lifetime\": {\"seconds\": 60, \"turns\": 2}, \"sinks\": [\"b\", \"log1\", \"tool1\"], \"memory\": true, "
    "\"family\": \"fam\"},"
    "  {\"id\": \"k1\", \"purpose\": \"p1\", \"issuers\": [\"w\"], \"recipient\": \"b\", \"fields\": [\"f2\"],"
    "   \"lifetime\": {\"turns\": 1}, \"sinks\": [\"ext1\"], \"memory\": false, \"family\": \"fam\"}]}";

static mnc_policy *pol;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mnc_errors e;
    mnc_errors_init(&e);
    pol = mnc_policy_load_buffer("fz", POLICY, strlen(POLICY), &e);
    mnc_errors_free(&e);
    if (!pol)
        __builtin_trap();
    return 0;
}

static void check_within(const mnc_disclosure *d)
{
    const mnc_contract *c = &pol->contracts[d->contract];
    if (!mnc_set_subset(&d->scope.fields, &c->scope.fields) || !mnc_set_subset(&d->scope.sinks, &c->scope.sinks) ||
        (d->scope.memory && !c->scope.memory) || d->scope.recipient != c->scope.recipient ||
        (c->scope.life.seconds && !d->expires_ms) || (c->scope.life.turns && d->turns_left > c->scope.life.turns))
        __builtin_trap();
    for (int i = 0; i < d->n_values; i++)
        if (!mnc_set_has(&d->scope.fields, d->values[i].field))
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    if (!j)
        return 0;
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_disclosure d;
    if (mnc_disclosure_from_json(pol, j, &d, &e) == 0) {
        check_within(&d);
        cJSON *out = mnc_disclosure_to_json(pol, &d);
        if (out) {
            mnc_disclosure back;
            if (mnc_disclosure_from_json(pol, out, &back, &e) != 0)
                __builtin_trap(); /* what we print we must read back */
            if (back.n_values != d.n_values || back.expires_ms != d.expires_ms || back.turns_left != d.turns_left ||
                !mnc_set_eq(&back.scope.sinks, &d.scope.sinks))
                __builtin_trap();
            mnc_disclosure_free(&back);
            cJSON_Delete(out);
        }
        char *m = mnc_disclosure_render(pol, &d);
        free(m);
        for (int ch = 0; ch <= MNC_CH_COUNT; ch++) {
            mnc_op op = {.sender = d.scope.recipient,
                         .receiver = (int)(size % 8),
                         .purpose = pol->contracts[d.contract].purpose,
                         .ch = (mnc_channel)ch,
                         .now_ms = d.issued_ms};
            (void)mnc_monitor_check(pol, &op, &d);
        }
        mnc_narrowing n = {.memory = -1};
        mnc_disclosure child;
        int by = mnc_set_next(&d.holders, -1);
        if (by >= 0 && mnc_disclosure_derive(&d, by, &n, d.issued_ms, &child) == MNC_OK) {
            check_within(&child);
            mnc_disclosure_free(&child);
        }
        mnc_disclosure_free(&d);
    }
    mnc_errors_free(&e);
    cJSON_Delete(j);
    return 0;
}
