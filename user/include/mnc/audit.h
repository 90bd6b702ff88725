/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
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
 *
 * Deferred mode (mnc_audit_set_deferred; used by mncd's event loop so that one fdatasync per
 * iteration makes both the state change and its audit records durable): appends build and
 * chain the line exactly as above but keep it in memory (mnc_audit_pending). The caller makes
 * those exact bytes durable elsewhere (mncd: inside the iteration's state-journal record), and
 * only then writes them to the file without fdatasync (mnc_audit_write_pending). After a crash
 * the file may lack a suffix of those lines, or end in a torn one; on the next start the caller
 * hands its durable copy to mnc_audit_reconcile, which re-appends the missing lines
 * byte-identically (so the chain continues unchanged) and refuses if a line the file already
 * has differs from the copy. The file itself never contains zero bytes or anything but
 * complete lines plus at most one torn last line.
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
    uint64_t records;              /* valid records in the (kept) prefix */
    long bad_line;                 /* 1-based first bad line, 0 if none */
    bool torn_tail;                /* last line had no newline (crash while appending) */
    size_t torn_bytes;             /* its length */
    uint64_t torn_offset;          /* file offset where the torn line starts */
    char head[MNC_AUDIT_HASH_HEX]; /* hash of the last valid record (64 zeros if none) */
    char msg[256];                 /* what is wrong with bad_line, or the torn-tail notice */
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

/* ---- deferred mode (see the top of this file) */

/* Turns deferred mode on or off. Turning it off requires no pending lines (-1, EBUSY
 * otherwise). Returns 0 or -1. */
int mnc_audit_set_deferred(mnc_audit *a, bool on);

/* The lines appended in deferred mode and not yet written: complete lines, each ending in
 * '\n', NUL-terminated, with consecutive seqs from *first_seq. Returns NULL (and *len = 0) if
 * there are none. The pointer stays valid until the next append/write/discard/close. */
const char *mnc_audit_pending(const mnc_audit *a, size_t *len, uint64_t *first_seq);

/* Writes the pending lines to the file with one write(2) (no fdatasync: the caller already
 * made them durable elsewhere) and clears them. Returns 0, or -1 (errno) after which the log is
 * poisoned: the file may hold a prefix of them, which reconcile repairs on the next start. */
int mnc_audit_write_pending(mnc_audit *a);

/* Drops the pending lines without writing them (their durable copy failed) and poisons the
 * log: seq/head already counted them, so nothing more may be appended by this handle. */
void mnc_audit_discard_pending(mnc_audit *a);

/* Reconciles the open log with a durable copy of its most recent lines: `lines` (len bytes,
 * complete lines each ending in '\n') hold consecutive records seq first_seq, first_seq+1, ...
 *   - a record the file already has (seq <= mnc_audit_seq) must be byte-identical to the
 *     file's line with that seq, else 1 is returned and err names the line ("line N differs");
 *   - the file must reach at least seq first_seq - 1 (else 1: the records in between are in
 *     neither copy);
 *   - the records beyond the file's end are checked as a continuation of the chain (hash,
 *     seq, prev; else 1 naming the record) and appended with one write;
 *   - the file is then fdatasync'd (also when nothing was appended: lines written by
 *     mnc_audit_write_pending may still be only in the page cache, and the caller is about to
 *     drop its copy).
 * Records in the file beyond the copy are left as they are. *appended (if not NULL) receives the
 * number of records appended. Returns 0, 1 (conflict: the caller must refuse to start), or -1 on
 * I/O error or OOM (message in err). Not allowed in deferred mode with pending lines. */
int mnc_audit_reconcile(mnc_audit *a, uint64_t first_seq, const char *lines, size_t len, uint64_t *appended, char *err,
                        size_t errlen);

/* Syncs and closes; NULL is a no-op. Pending (deferred, unwritten) lines are dropped: they are
 * not durable anywhere the file could be repaired from unless the caller made them so. */
void mnc_audit_close(mnc_audit *a);

/* ---- values an agent chose, as keyed hashes (docs/threat-model.md, "Records about agents")
 *
 * A record mncd writes about an agent never carries a value the agent chose (a path, an
 * address, a port, a key, a name) as it is. It carries "h:SSSSSSSS.MMMMMMMMMMMMMMMM": a fresh
 * random 32-bit salt S and the first 64 bits M of HMAC-SHA256(K, S || value), where K is a
 * per-host secret key mncd keeps in STATE_DIR/audit.key (32 random bytes, mode 0600, made at
 * the first start). Whoever holds K (root on the host: `mncctl audit find VALUE`) tests any
 * token against a value it suspects and finds every record that names it. Nobody else learns
 * anything from a token, not even whether two records name the same value: the salt is fresh
 * per token, so repeating a value (a preamble, then the same files in a chosen order) spells
 * nothing. Values are hashed in their text form: a number in decimal, an IP address as
 * inet_ntop prints it, a path as its bytes, an abstract UNIX name as its bytes.
 *
 * Identifiers mncd stores and looks up (memory keys, release ids) need the same value to give
 * the same hash: mnc_audit_hv, without salt, 128 bits; they are kept in root-only state files,
 * never in records. */
#define MNC_AUDIT_KEY_LEN 32
#define MNC_AUDIT_HV_MAX 67 /* "h:" + up to 64 hex digits + NUL; a salted token is 27 bytes */

/* Reads the key file at path (exactly MNC_AUDIT_KEY_LEN bytes, a regular file owned by the
 * caller's euid and not readable by group or others). create: if the file does not exist, makes
 * it (O_EXCL, 0600, getrandom, fsync'd). Returns 0, or -1 with err filled (never a weak key). */
int mnc_audit_key_load(const char *path, bool create, unsigned char key[MNC_AUDIT_KEY_LEN], char *err, size_t errlen);

/* out = "h:" + the first hexlen (2..64, even) hex digits of HMAC-SHA256(key, v[0..n)). Returns
 * out, or NULL (hexlen out of range, or libcrypto failed: out is then "h:?"). */
const char *mnc_audit_hv(const unsigned char key[MNC_AUDIT_KEY_LEN], const void *v, size_t n, int hexlen,
                         char out[MNC_AUDIT_HV_MAX]);

/* out = a record's token for v: "h:" + 8 hex digits of a fresh random salt + "." + 16 hex
 * digits of HMAC-SHA256(key, salt || v). Returns out, or NULL ("h:?" in out). */
const char *mnc_audit_hv_token(const unsigned char key[MNC_AUDIT_KEY_LEN], const void *v, size_t n,
                               char out[MNC_AUDIT_HV_MAX]);

/* Does token (at least the 27 bytes of one; the rest is ignored) name v under key? */
bool mnc_audit_hv_names(const unsigned char key[MNC_AUDIT_KEY_LEN], const char *token, const void *v, size_t n);

/* The last n (1..10000) complete records of the file at path, as a JSON array of objects
 * (oldest first). Returns NULL on I/O error or OOM. */
cJSON *mnc_audit_tail(const char *path, int n);

#endif
