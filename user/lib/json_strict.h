/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* json_strict.h - the strict JSON reader's internal helpers, shared by the policy loader
 * (policy*.c) and the state reader (state.c); the reader itself is public API in mnc/policy.h
 * (mnc_json_read_file, mnc_json_parse_strict, mnc_utf8_valid, mnc_name_valid).
 *
 * Contract: every message built here names a place as "FILE: JSON.PATH: message" (paths as
 * "$", "a.b", "a[3]", "$[\"odd key\"]"); untrusted strings are quoted with control and
 * non-ASCII bytes escaped and long strings cut, because messages end up on terminals and in
 * logs. Nothing here allocates except mnc_errors_add. Internal to libmnc (not installed).
 */
#ifndef MNC_JSON_STRICT_H
#define MNC_JSON_STRICT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "mnc/policy.h"

typedef struct mnc_qbuf {
    char s[160];
} mnc_qbuf;
/* s quoted for a message into b (see above); returns b->s. */
const char *mnc_json_quote(mnc_qbuf *b, const char *s);
/* The quoted string in a temporary buffer that lives until the end of the full expression. */
#define Q(s) mnc_json_quote(&(mnc_qbuf){{0}}, (s))

typedef struct jpath {
    char s[320];
} jpath;
/* parent.key, or key at the root ("$"); keys that are not plain names are quoted. Returns out->s. */
const char *mnc_jpath_key(jpath *out, const char *parent, const char *key);
/* parent[i]. Returns out->s. */
const char *mnc_jpath_idx(jpath *out, const char *parent, int i);
/* Adds "FILE: PATH: message" to e. */
void mnc_json_err(mnc_errors *e, const char *file, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "a string", "a number", ... "nothing" (j NULL): for "expected X, got Y" messages. */
const char *mnc_json_type(const cJSON *j);
/* snprintf for paths and messages: truncation is acceptable (the text is diagnostic only). */
void mnc_bprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
