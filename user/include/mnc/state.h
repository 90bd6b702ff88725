/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* state.h - a subject's private state: field -> literal value.
 *
 * The state is what a legitimately informed agent knows (e.g. "reason" = "oncology
 * appointment"). Candidate forms are projections of it; transforms (a redacted reason class,
 * a task-derived fact) are supplied by the application as derived fields of the state.
 */
#ifndef MNC_STATE_H
#define MNC_STATE_H

#include <cjson/cJSON.h>

#include "mnc/policy.h"

typedef struct mnc_state {
    char subject[MNC_NAME_MAX];  /* protected subject (ledger key); "" if not given */
    char *value[MNC_MAX_FIELDS]; /* indexed by field id; NULL = absent; heap strings */
    mnc_set present;
} mnc_state;

void mnc_state_init(mnc_state *s);
void mnc_state_free(mnc_state *s);

/* Parses {"subject": "...", "fields": {"name": value, ...}}. Values may be strings, numbers or
 * booleans (stored as their JSON text). Unknown fields are an error. `where` prefixes errors.
 * Returns 0, or -1 with errors in *errs (s is then empty). */
int mnc_state_from_json(const mnc_policy *p, const cJSON *j, mnc_state *s, const char *where, mnc_errors *errs);
int mnc_state_load_file(const mnc_policy *p, const char *path, mnc_state *s, mnc_errors *errs);

/* Sets one field's value (copied). Returns 0 or -1 on OOM / bad id. */
int mnc_state_set(mnc_state *s, int field, const char *value);

#endif
