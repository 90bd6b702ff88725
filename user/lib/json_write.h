/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* json_write.h - helpers for JSON that libmnc and mncd write (records, audit lines). Kept out of
 * mnc_util.c, which the static VM test driver links without libcjson. Internal to the mnc tree
 * (not installed). */
#ifndef MNC_JSON_WRITE_H
#define MNC_JSON_WRITE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Adds v to object o as a JSON number member printed as plain integer digits. cJSON prints
 * every number above INT_MAX through "%1.15g" and checks it by parsing it back (sscanf), then
 * maybe "%1.17g": a few microseconds per millisecond timestamp, on every record mncd writes.
 * The text is the same as cJSON's for every integer below 10^15, and a reader gets the same
 * double (exact up to 2^53). The item is cJSON raw text, not a number: only for trees that are
 * printed, never for ones read in memory (cJSON_IsNumber is false for it). Returns the new
 * item, or NULL (OOM; o unchanged). */
cJSON *mnc_json_add_u64(cJSON *o, const char *name, uint64_t v);

/* Bytes mnc_json_put_str writes for s (quotes included); 4 for NULL ("null"). */
size_t mnc_json_str_len(const char *s);

/* Writes s as a JSON string into out, which has room for mnc_json_str_len(s) bytes (6 *
 * strlen(s) + 2 always suffice; no NUL is written), and returns the number of bytes written. The bytes are exactly what
 * cJSON_PrintUnformatted prints for cJSON_CreateString(s) (cJSON 1.7: '"' and '\\' escaped,
 * \b \f \n \r \t as such, other bytes below 0x20 as \u00xx, everything else - UTF-8
 * included - as is), and "null" for s == NULL as for cJSON_CreateNull: so a record written
 * without building a cJSON tree hashes the same as one that was. test_audit compares
 * the two over every byte value. */
size_t mnc_json_put_str(char *out, const char *s);

/* Writes v as decimal digits into out (room for 20 bytes, no NUL) and returns their number:
 * cJSON's text for the same value below 10^15 (see mnc_json_add_u64). */
size_t mnc_json_put_u64(char *out, uint64_t v);

/* A growable output buffer: p[0..len) is text (not NUL-terminated), cap bytes allocated with
 * malloc. Zero-initialised it is empty; the owner frees p. */
typedef struct mnc_jbuf {
    char *p;
    size_t len, cap;
} mnc_jbuf;

/* Makes room for n more bytes after b->len. 0, or -1 (out of memory or size overflow; b is
 * unchanged). */
int mnc_jbuf_reserve(mnc_jbuf *b, size_t n);

/* Appends item's text to b: exactly the bytes cJSON_PrintUnformatted(item) returns (cJSON 1.7:
 * its string escaping, see mnc_json_put_str, "" for a string item without text; its numbers:
 * NaN and infinities as null, else "%1.15g" unless that does not read back within DBL_EPSILON,
 * then "%1.17g"; the C locale's '.'; Debian's cJSON 1.7.15 prints -0.0 as "-0"), without
 * cJSON's intermediate buffers, and with integral numbers below 10^15 written as digits, which
 * is what "%1.15g" prints for them but costs a fraction of printf plus cJSON's sscanf check
 * (every millisecond timestamp in mncd's records and responses). test_audit compares the two
 * on generated trees. 0, or -1 (out of memory, or an item cJSON would not print either: an
 * invalid type, a raw item without text) with b->len as before (b->p may have grown). */
int mnc_json_print(mnc_jbuf *b, const cJSON *item);

/* Streaming writers: append to b the text mnc_json_print prints for the corresponding cJSON
 * item, so a record or an answer can be written without building a tree and prints the same
 * bytes. Each returns 0, or -1 (out of memory; b->len may have grown by a part: callers that
 * write several pieces reset b->len themselves on failure). */
int mnc_jbuf_put_grow(mnc_jbuf *b, const char *s, size_t n);         /* raw bytes, growing b */
static inline int mnc_jbuf_put(mnc_jbuf *b, const char *s, size_t n) /* raw bytes */
{
    if (n <= b->cap - b->len) { /* the common case inline: room already there */
        if (n)                  /* b->p may still be NULL */
            memcpy(b->p + b->len, s, n);
        b->len += n;
        return 0;
    }
    return mnc_jbuf_put_grow(b, s, n);
}
#define MNC_JBUF_LIT(b, lit) mnc_jbuf_put((b), (lit), sizeof(lit) - 1)
/* cJSON_CreateString(s): -1 for s == NULL (cJSON_CreateString(NULL) fails too) */
int mnc_jbuf_str(mnc_jbuf *b, const char *s);
/* cJSON_CreateNumber(v) */
int mnc_jbuf_num(mnc_jbuf *b, double v);
/* mnc_json_add_u64's raw digits */
int mnc_jbuf_u64(mnc_jbuf *b, uint64_t v);

/* Writes printf's "%.6g" of v into out (room for 32 bytes, NUL-terminated) and returns its
 * length: the digits audit details carry (charges, spent budgets), computed without printf
 * when |v| is 0 or in [1e-4, 1e6) and not within 1e-6 of a rounding tie (see json_write.c),
 * by snprintf otherwise. test_audit compares the two. */
size_t mnc_fmt_g6(char *out, double v);

/* Makes cJSON allocate through per-thread free lists of small blocks (cJSON_InitHooks): a
 * freed block of up to 2056 bytes is kept, up to 64 KiB of each glibc chunk size, and handed
 * to the next allocation that fits, instead of glibc's bins, whose consolidation of a freed
 * tree of ~60 items cost more than building it. Every block is one malloc returned, so memory
 * cJSON hands out may still be released with free() as with the default hooks. For a
 * program to call once at start, before any cJSON item exists (mncd); cJSON then prints
 * without realloc (its rule for custom hooks), which changes no byte it prints. */
void mnc_json_use_pool(void);

/* Appends the text of mnc_json_print(mnc_disclosure_to_json(p, d)) without building the tree
 * (disclosure.c; test_disclosure compares the two). 0, or -1 (out of memory, or a part
 * mnc_disclosure_to_json would fail on, e.g. a NULL value) with b->len as before. */
struct mnc_policy;
struct mnc_disclosure;
int mnc_disclosure_write_json(mnc_jbuf *b, const struct mnc_policy *p, const struct mnc_disclosure *d);

#endif
