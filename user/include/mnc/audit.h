/* audit.h - the append-only, hash-chained audit log (JSON lines).
 *
 * One record per decision. Each line is a JSON object whose last member is "hash":
 *
 *   {"seq":7,"time":1764403200123,"op":"send","sender":"worker","receiver":"coordinator",
 *    "object":"9f..","decision":"allow","reason":"ok","prev":"<64 hex>","hash":"<64 hex>"}
 *
 * The *body* of a line is the line without its `,"hash":"..."` member (i.e. the exact bytes
 * before `,"hash":"` followed by `}`). hash = SHA-256(body) in lower-case hex, and body.prev is
 * the previous line's hash (64 zeros for the first line). seq starts at 1 and increases by one.
 * So an edited line breaks its own hash, a removed or reordered line breaks the next line's
 * prev/seq, and a verifier names the first line where that happens.
 *
 * What the chain cannot show on its own: truncation of whole records at the end of the file
 * (the remaining prefix is a valid chain). mncd reports the head (seq, hash) in `status` so an
 * operator can anchor it elsewhere.
 *
 * Crash safety: a record is written with one write(2) of the whole line (O_APPEND) and made
 * durable by mnc_audit_sync (fdatasync). A crash can leave at most a torn last line without its
 * newline; mnc_audit_open truncates it (reporting how many bytes) and the verifier reports it
 * as a notice, not as tampering, and verifies the kept prefix.
 */
#ifndef MNC_AUDIT_H
#define MNC_AUDIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MNC_AUDIT_HASH_HEX 65 /* 64 hex + NUL */

typedef struct mnc_audit mnc_audit;

/* One decision. Strings may be NULL (written as JSON null); detail is optional free text
 * written by mncd itself (never agent-supplied content). */
typedef struct mnc_audit_rec {
    uint64_t time_ms;
    const char *op;       /* verb or event, e.g. "send", "recv", "daemon.start" */
    const char *sender;   /* acting principal name */
    const char *receiver; /* receiving principal / sink name */
    const char *object;   /* object id hex */
    const char *decision; /* "allow", "deny", "delegate", "approval", "abstain", "error" */
    const char *reason;   /* mnc_reason_name() */
    const char *detail;
} mnc_audit_rec;

/* Result of verifying a file. */
typedef struct mnc_audit_verify {
    uint64_t records;          /* valid records in the (kept) prefix */
    long bad_line;             /* 1-based first bad line, 0 if none */
    bool torn_tail;            /* last line had no newline (crash while appending) */
    size_t torn_bytes;         /* its length */
    uint64_t torn_offset;      /* file offset where the torn line starts */
    char head[MNC_AUDIT_HASH_HEX]; /* hash of the last valid record (64 zeros if none) */
    char msg[256];             /* what is wrong with bad_line, or the torn-tail notice */
} mnc_audit_verify;

/* Verifies the chain in `path`. Returns 0 if every complete line verifies (a torn tail is
 * allowed and reported in v->torn_tail / v->msg), 1 if a line is bad (v->bad_line, v->msg),
 * -1 on I/O error (v->msg). A missing file is an I/O error. */
int mnc_audit_verify_file(const char *path, mnc_audit_verify *v);

/* Opens (creating with mode 0600 if absent) the log at `path` for appending. An existing file
 * is verified first: on a bad line it refuses (returns NULL, message in err). A torn tail is
 * truncated away (fsync'd); *torn_bytes (if not NULL) receives how many bytes were dropped so
 * the caller can record the recovery. Returns NULL with a message in err on any failure. */
mnc_audit *mnc_audit_open(const char *path, size_t *torn_bytes, char *err, size_t errlen);

/* Appends one record (a single write of the whole line; not yet durable). Returns 0 or -1
 * (errno set). After a failed write the log is poisoned: every later append fails, so the
 * caller fails closed instead of producing a chain with a hole. */
int mnc_audit_append(mnc_audit *a, const mnc_audit_rec *r);

/* fdatasync if anything was appended since the last sync. 0 or -1. */
int mnc_audit_sync(mnc_audit *a);

/* Head of the chain: number of records and the last hash. */
uint64_t mnc_audit_seq(const mnc_audit *a);
const char *mnc_audit_head(const mnc_audit *a);

/* Syncs and closes; NULL is a no-op. */
void mnc_audit_close(mnc_audit *a);

/* The last n (1..10000) complete records of the file at path, as a JSON array of objects
 * (oldest first). Returns NULL on I/O error or OOM. */
cJSON *mnc_audit_tail(const char *path, int n);

#endif
