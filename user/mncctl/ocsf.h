/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ocsf.h - one audit record as an OCSF event (docs/siem.md has the mapping table).
 *
 * The events follow OCSF 1.8.0 (the schema files vendored in tests/siem/ocsf-1.8.0, against
 * which tests/integration/test_ocsf validates a real mncd's records). Every record kind (its
 * "op") maps to one event class and activity; the record's decision gives status_id, action_id
 * and disposition_id (security_control profile) and severity_id; its reason is status_code.
 * The whole record, members in their original order and the hash-chain members (seq, prev,
 * hash) included, is kept under unmapped.mnc, so a SIEM can recompute each record's hash from
 * the event (the body is those members but "hash", printed compactly, closing brace included)
 * and prove that no record is missing.
 */
#ifndef MNCCTL_OCSF_H
#define MNCCTL_OCSF_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#define MNC_OCSF_VERSION "1.8.0"

/* The class and activity of one record kind. known is false for an op the table lacks (it is
 * then exported as the Base Event, class 0, activity Other: still valid OCSF). */
typedef struct mnc_ocsf_class {
    int class_uid;
    int category_uid;
    int activity_id;
    const char *class_name;
    const char *category_name;
    bool known;
} mnc_ocsf_class;

mnc_ocsf_class mnc_ocsf_class_of(const char *op);

/* The OCSF event for one parsed audit record (an object with the members of mnc/audit.h).
 * host names the device (gethostname). Returns a new object the caller frees, or NULL if rec
 * is not an audit record (no op, seq or time) or memory ran out. */
cJSON *mnc_ocsf_event(const cJSON *rec, const char *host);

/* Calls fn for every op of the table (the test checks the table covers every op mncd writes). */
void mnc_ocsf_foreach_op(void (*fn)(const char *op, const mnc_ocsf_class *c, void *arg), void *arg);

#endif
