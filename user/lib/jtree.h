/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* jtree.h - cJSON's tree for plain JSON, built in one pass (internal to libmnc).
 *
 * Contract: mnc_jtree_parse(s, len, &end) returns either NULL - "not plain: ask cJSON" - or
 * the tree cJSON_ParseWithLengthOpts(s, len, &end, false) would return, item for item: the
 * same types, keys, strings, valueint/valuedouble, child order and prev links (cJSON 1.7.15
 * links the first child's prev to the last), allocated through cJSON's hooks so cJSON_Delete
 * frees it, and end set as cJSON sets it (just after the value). Plain means: a top-level
 * object of objects, arrays, strings of bytes >= 0x20 without a backslash, true, false and
 * null, nested at most 64 deep, with only space, tab, CR and LF between tokens. Anything else
 * - a number, an escape, a control byte, a BOM, malformed text, running out of memory -
 * returns NULL, and the caller parses with cJSON, which also reports every error. The request
 * parser (protocol.c) uses it for a disclose's line (its state object); test_protocol and
 * fuzz_request compare it with cJSON. */
#ifndef MNC_JTREE_H
#define MNC_JTREE_H

#include <stddef.h>

#include <cjson/cJSON.h>

cJSON *mnc_jtree_parse(const char *s, size_t len, const char **end);

#endif
