/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* answer.h - the answers of the hot verbs (send, recv) written as text, without a cJSON tree.
 *
 * Contract: each writer appends to b exactly the bytes mnc_json_print prints for the part of
 * the tree the verb used to build (mnc_resp_new's object - "id" (a copy of the request's),
 * "ok", "decision", "reason" - then the verb's members in the order they were added), so an
 * answer written here is byte-for-byte the answer printed from the tree;
 * tests/unit/test_answer.c compares the two over generated ids, names and texts. A finished
 * answer is handed to the loop as one cJSON raw item (mncd_ans_item), which respond() prints
 * as is. Writers return 0, or -1 (out of memory; b->len may have grown: callers reset it).
 * Depends on libmnc only (json_write.h), so the unit test links it alone.
 */
#ifndef MNCD_ANSWER_H
#define MNCD_ANSWER_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "json_write.h"

/* '{' "id" (when id != NULL), "ok", "decision", "reason": the object left open. */
int mncd_ans_head(mnc_jbuf *b, const cJSON *id, bool ok, const char *decision, const char *reason);
/* ,"name":"value" (value as cJSON_AddStringToObject adds it; value != NULL) */
int mncd_ans_str(mnc_jbuf *b, const char *name, const char *value);
/* One recv message {"from":..,"object":<obj, raw text>,"message":..}, after a ',' unless first. */
int mncd_ans_msg(mnc_jbuf *b, bool first, const char *from, const char *obj, size_t obj_len, const char *message);
/* One recv refusal {"from":..,"object":hex,"decision":..,"reason":..[,"error":..]} (error may be
 * NULL: no member), after a ',' unless first. */
int mncd_ans_refusal(mnc_jbuf *b, bool first, const char *from, const char *hex, const char *decision,
                     const char *reason, const char *error);
/* A disclose's MNC-L members (mncd_mncl_selected): ,"outcome":"selected", and when the release
 * was charged ,"charge", [,"replayed":true], ,"spent" (spent + charged) [,"epsilon"] [,"budget"]
 * (the last two only when >= 0). */
int mncd_ans_selected(mnc_jbuf *b, bool ledger, double charged, bool replayed, double spent, double epsilon,
                      double budget);
/* Closes the object ('}') and returns it as a raw item (a copy of b's text), or NULL (OOM). */
cJSON *mncd_ans_item(mnc_jbuf *b);

#endif
