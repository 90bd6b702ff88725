/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* audit_int.h - what audit.c (the chain) and audit_seg.c (its rotated segments) share. */
#ifndef MNC_AUDIT_INT_H
#define MNC_AUDIT_INT_H

#include "mnc/audit.h"
#include "cache_trim.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#define HASH_KEY ",\"hash\":\""
#define HASH_KEY_LEN 9
/* suffix of every line: ,"hash":"<64 hex>"} */
#define SUFFIX_LEN (HASH_KEY_LEN + 64 + 2)
#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
/* A record line can never legitimately be this long: mncd writes names (<64 B), ids and a
 * short detail. Bounding it keeps the verifier's memory bounded on hostile files. */
#define MAX_LINE (64 * 1024)

struct mnc_audit {
    int fd;
    char *path; /* the active file; rotated segments sit beside it (audit_seg.c) */
    uint64_t seq;
    char head[MNC_AUDIT_HASH_HEX];
    /* the record before the active file's first one: 0 and 64 zeros when the file starts the
     * chain, else the end of the newest rotated segment */
    uint64_t base_seq;
    char base_prev[MNC_AUDIT_HASH_HEX];
    bool dirty;
    bool poisoned;
    /* deferred mode: lines appended but not yet written (see audit.h) */
    bool deferred;
    char *pend; /* NUL-terminated */
    size_t pend_len, pend_cap;
    uint64_t pend_first; /* seq of the first pending line */
    off_t size;          /* bytes in the file: where the next O_APPEND write lands */
    mnc_cache_trim trim; /* its page cache behind size (cache_trim.h) */
    /* rotation (mnc_audit_set_rotation) */
    uint64_t seg_start_ms; /* time of the active file's first record (0: none yet) */
    uint64_t rot_bytes, rot_age_ms;
    unsigned rot_keep;
    mnc_audit_rotation rot; /* counters and the last failure */
};

/* audit_chain.c: SHA-256 of data then extra, as 64 lower-case hex + NUL. 0 or -1. */
int mnc_audit__sha256_hex(const void *data, size_t len, const char *extra, size_t extra_len,
                          char out[MNC_AUDIT_HASH_HEX]);
bool mnc_audit__is_hex64(const char *s);
/* Checks one complete line (no newline) continuing the chain at (seq, prev); writes its hash to
 * out. 0, or -1 with msg filled. */
int mnc_audit__check_line(const char *line, size_t len, const char *prev, uint64_t seq, char out[MNC_AUDIT_HASH_HEX],
                          char *msg, size_t msglen);
/* Walks an open stream as mnc_audit__walk does. */
int mnc_audit__walk_stream(FILE *f, mnc_audit_verify *v, bool segment);

/* Walks the file at path (audit_chain.c): segment false requires the chain's start (seq 1, prev
 * zeros); true takes the first line's seq and prev as the base (v->base_seq, v->base_prev). */
int mnc_audit__walk(const char *path, mnc_audit_verify *v, bool segment);

typedef struct mnc_audit_seg_base {
    uint64_t seq;
    char head[MNC_AUDIT_HASH_HEX];
} mnc_audit_seg_base;

/* Where the active file at path (open as fd, walked into v) starts (audit_seg.c): the chain's
 * start, or the end of the newest segment beside it, which must verify and be what the file's
 * first record continues. Undoes a rotation a crash interrupted (the segment's name still
 * linked to the active file; a half-made new file). 0, or -1 with a message in err. */
int mnc_audit__seg_base(const char *path, int fd, const mnc_audit_verify *v, mnc_audit_seg_base *base, char *err,
                        size_t errlen);

/* Rotates the active file if a limit is reached (audit_seg.c). A failure is kept in a->rot; a
 * failed fdatasync poisons the log as mnc_audit_sync's does. */
void mnc_audit__maybe_rotate(mnc_audit *a);

#endif
