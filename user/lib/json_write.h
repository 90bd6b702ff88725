/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* json_write.h - helpers for JSON that libmnc and mncd write (records, audit lines). Kept out of
 * mnc_util.c, which the static VM test driver links without libcjson. Internal to the mnc tree
 * (not installed). */
#ifndef MNC_JSON_WRITE_H
#define MNC_JSON_WRITE_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* Adds v to object o as a JSON number member printed as plain integer digits. cJSON prints
 * every number above INT_MAX through "%1.15g" and checks it by parsing it back (sscanf), then
 * maybe "%1.17g": a few microseconds per millisecond timestamp, on every record mncd writes.
 * The text is the same as cJSON's for every integer below 10^15, and a reader gets the same
 * double (exact up to 2^53). The item is cJSON raw text, not a number: only for trees that are
 * printed, never for ones read in memory (cJSON_IsNumber is false for it). Returns the new
 * item, or NULL (OOM; o unchanged). */
cJSON *mnc_json_add_u64(cJSON *o, const char *name, uint64_t v);

#endif
