/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* reqscan.h - the request parser's fast path for the hot verbs (send, recv), internal to libmnc.
 *
 * Contract: mnc_reqscan either returns 1 with *out exactly what mnc_request_parse_tree (the
 * full cJSON parser, protocol.c) returns for the same line - the same verb, the same strings,
 * the same integers and defaults, an "id" node equal to cJSON's - or returns 0 and touches
 * nothing the caller keeps (out is left zeroed), and the caller runs the full parser. It never
 * produces an error itself: every line it is not sure about (another verb, an escape, a byte
 * outside printable ASCII, unknown or duplicate keys, a value the full parser would refuse,
 * whitespace other than space/tab/CR, a fraction or exponent in "max", an allocation failure)
 * goes to the full parser, so error messages are the full parser's. Accepted lines are a
 * subset of what the full parser accepts; tests/unit/test_protocol.c and tests/fuzz/
 * fuzz_request.c compare the two on generated and fuzzed lines.
 *
 * Ownership: out->root is one cJSON node that owns everything out points to: its valuestring
 * is a single block holding the request's strings (NUL-terminated, one after the other) and
 * its child, if any, is the "id" node. mnc_request_free (cJSON_Delete) frees it; nothing else
 * may look into out->root (it is not the request object).
 */
#ifndef MNC_REQSCAN_H
#define MNC_REQSCAN_H

#include <stddef.h>

#include "mnc/protocol.h"

/* 1: parsed, *out filled (free with mnc_request_free); 0: use the full parser. */
int mnc_reqscan(const char *line, size_t len, mnc_request *out);

/* The full parser (protocol.c): mnc_request_parse without the fast path, for the tests that
 * compare the two. Same contract as mnc_request_parse. */
int mnc_request_parse_tree(const char *line, size_t len, mnc_request *out, cJSON **id_out, char *err, size_t errlen);

#endif
