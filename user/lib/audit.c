// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit.c - hash-chained JSON-lines audit log (see mnc/audit.h for the format). */
#include "mnc/audit.h"
#include "mnc_util.h"
#include "cache_trim.h"
#include "json_write.h"
#include "randbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    uint64_t seq;
    char head[MNC_AUDIT_HASH_HEX];
    bool dirty;
    bool poisoned;
    /* deferred mode: lines appended but not yet written (see audit.h) */
    bool deferred;
    char *pend; /* NUL-terminated */
    size_t pend_len, pend_cap;
    uint64_t pend_first; /* seq of the first pending line */
    off_t size;          /* bytes in the file: where the next O_APPEND write lands */
    mnc_cache_trim trim; /* its page cache behind size (cache_trim.h) */
};

/* EVP_sha256() makes every EVP_DigestInit_ex look the digest up again in OpenSSL 3 (an
 * implicit fetch under a lock, "Performance" in crypto(7)); fetch it once per process. */
static EVP_MD *sha256_md;
/* One digest context per thread, initialised again for every record instead of allocated and
 * freed (EVP_MD_CTX_new/free and the provider context behind it were about half of
 * libcrypto's time in mncd under bench_mncd: zalloc, cleanse, free per audit record). */
static pthread_key_t sha256_ctx_key;
static bool sha256_key_ok;

static void sha256_ctx_free(void *ctx) { EVP_MD_CTX_free(ctx); }

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    sha256_key_ok = pthread_key_create(&sha256_ctx_key, sha256_ctx_free) == 0;
}

static int sha256_hex(const void *data, size_t len, const char *extra, size_t extra_len, char out[MNC_AUDIT_HASH_HEX])
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (pthread_once(&once, sha256_fetch) != 0 || !sha256_md)
        return -1;
    EVP_MD_CTX *ctx = sha256_key_ok ? pthread_getspecific(sha256_ctx_key) : NULL;
    bool kept = ctx != NULL;
    if (!ctx && !(ctx = EVP_MD_CTX_new()))
        return -1;
    int ok = EVP_DigestInit_ex(ctx, sha256_md, NULL) == 1 && EVP_DigestUpdate(ctx, data, len) == 1 &&
             (extra_len == 0 || EVP_DigestUpdate(ctx, extra, extra_len) == 1) &&
             EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
    if (ok && !kept && sha256_key_ok && pthread_setspecific(sha256_ctx_key, ctx) == 0)
        kept = true;
    if (!ok || !kept) { /* a context that failed is not used again */
        if (kept && sha256_key_ok)
            pthread_setspecific(sha256_ctx_key, NULL);
        EVP_MD_CTX_free(ctx);
    }
    if (!ok)
        return -1;
    static const char hx[] = "0123456789abcdef";
    for (unsigned i = 0; i < 32; i++) {
        out[2 * i] = hx[md[i] >> 4];
        out[2 * i + 1] = hx[md[i] & 15];
    }
    out[64] = '\0';
    return 0;
}

static bool is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* Checks one complete line (without its newline). prev: expected prev hash; seq: expected
 * seq. On success writes the line's hash to out and returns 0; else fills msg, returns -1. */
static int check_line(const char *line, size_t len, const char *prev, uint64_t seq, char out[MNC_AUDIT_HASH_HEX],
                      char *msg, size_t msglen)
{
    if (len < SUFFIX_LEN + 2 || line[0] != '{' || line[len - 1] != '}' || line[len - 2] != '"' ||
        memcmp(line + len - SUFFIX_LEN, HASH_KEY, HASH_KEY_LEN) != 0 ||
        !is_hex64(line + len - SUFFIX_LEN + HASH_KEY_LEN)) {
        snprintf(msg, msglen, "not an audit record (no trailing \"hash\" member)");
        return -1;
    }
    size_t body_len = len - SUFFIX_LEN;
    char h[MNC_AUDIT_HASH_HEX];
    if (sha256_hex(line, body_len, "}", 1, h) != 0) {
        snprintf(msg, msglen, "sha256 failed");
        return -1;
    }
    if (memcmp(h, line + len - SUFFIX_LEN + HASH_KEY_LEN, 64) != 0) {
        snprintf(msg, msglen, "hash mismatch: record was edited");
        return -1;
    }
    /* The hash covers the body, so the body is what the writer wrote; now check its place in
     * the chain. */
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!j) {
        snprintf(msg, msglen, "invalid JSON");
        return -1;
    }
    int rc = -1;
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "seq");
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(j, "prev");
    if (!cJSON_IsNumber(js) || !cJSON_IsString(jp) || strlen(jp->valuestring) != 64) {
        snprintf(msg, msglen, "missing seq or prev");
    } else if ((uint64_t)js->valuedouble != seq) {
        snprintf(msg, msglen,
                 "seq %.0f where %" PRIu64 " was expected: a record was removed, "
                 "inserted or reordered",
                 js->valuedouble, seq);
    } else if (strcmp(jp->valuestring, prev) != 0) {
        snprintf(msg, msglen,
                 "prev does not match the previous record's hash: a record was "
                 "removed, inserted or reordered");
    } else {
        memcpy(out, h, MNC_AUDIT_HASH_HEX);
        rc = 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* Shared by verify and open: walks the file. */
static int walk(FILE *f, mnc_audit_verify *v)
{
    memset(v, 0, sizeof(*v));
    memcpy(v->head, ZERO_HASH, MNC_AUDIT_HASH_HEX);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    uint64_t off = 0;
    int rc = 0;
    errno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        bool has_nl = line[n - 1] == '\n';
        if (!has_nl) {
            /* Only a last line can lack its newline: a crash while appending. */
            v->torn_tail = true;
            v->torn_bytes = (size_t)n;
            v->torn_offset = off;
            snprintf(v->msg, sizeof(v->msg),
                     "line %ld: torn last record (%zd bytes, no newline): crash while "
                     "appending; the %" PRIu64 " records before it verify",
                     lineno, n, v->records);
            break;
        }
        char h[MNC_AUDIT_HASH_HEX];
        char m[200];
        if ((size_t)n - 1 > MAX_LINE) {
            snprintf(m, sizeof(m), "line longer than %d bytes", MAX_LINE);
        } else if (check_line(line, (size_t)n - 1, v->head, v->records + 1, h, m, sizeof(m)) == 0) {
            memcpy(v->head, h, sizeof(h));
            v->records++;
            off += (uint64_t)n;
            continue;
        }
        v->bad_line = lineno;
        snprintf(v->msg, sizeof(v->msg), "line %ld: %s", lineno, m);
        rc = 1;
        break;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(v->msg, sizeof(v->msg), "read error: %s", strerror(errno));
        rc = -1;
    }
    free(line);
    return rc;
}

int mnc_audit_verify_file(const char *path, mnc_audit_verify *v)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        memset(v, 0, sizeof(*v));
        snprintf(v->msg, sizeof(v->msg), "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = walk(f, v);
    fclose(f);
    return rc;
}

mnc_audit *mnc_audit_open(const char *path, size_t *torn_bytes, char *err, size_t errlen)
{
    if (torn_bytes)
        *torn_bytes = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    int dfd = dup(fd);
    FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        close(fd);
        return NULL;
    }
    mnc_audit_verify v;
    int rc = walk(f, &v);
    fclose(f);
    if (rc != 0) {
        snprintf(err, errlen, "%s: audit chain does not verify: %s", path, v.msg);
        close(fd);
        return NULL;
    }
    if (v.torn_tail) {
        /* Drop the torn record: it was never acknowledged (acks wait for the fsync). */
        if (ftruncate(fd, (off_t)v.torn_offset) != 0 || fsync(fd) != 0) {
            snprintf(err, errlen, "%s: cannot truncate torn tail: %s", path, strerror(errno));
            close(fd);
            return NULL;
        }
        if (torn_bytes)
            *torn_bytes = v.torn_bytes;
    }
    mnc_audit *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: fstat: %s", path, strerror(errno));
        free(a);
        close(fd);
        return NULL;
    }
    a->fd = fd;
    a->seq = v.records;
    memcpy(a->head, v.head, sizeof(a->head));
    a->size = st.st_size;
    /* The walk above read the whole log; the writer never reads it. Advisory (cache_trim.h). */
    (void)mnc_cache_trim_reset(fd, &a->trim, a->size);
    return a;
}

/* The record's fields in the order of the chain's format (docs/audit.md): seq, time, op, sender,
 * receiver, object, decision, reason, detail (only if set), prev, then the hash of everything
 * before it. Written straight into the line's buffer with json_write.h's helpers, which print
 * the bytes cJSON_PrintUnformatted printed for the same tree when the record was built as one:
 * a cJSON tree, its printout and a copy per record were most of an append's cost. */
#define REC_FIELDS 8
static const char *const rec_keys[REC_FIELDS] = {
    ",\"op\":",       ",\"sender\":", ",\"receiver\":", ",\"object\":",
    ",\"decision\":", ",\"reason\":", ",\"detail\":",   ",\"prev\":",
};

/* Room the line for r needs at most, newline included. */
static size_t rec_len(const mnc_audit_rec *r, const char *const v[REC_FIELDS])
{
    size_t n = sizeof("{\"seq\":") - 1 + 20 + sizeof(",\"time\":") - 1 + 20;
    for (int i = 0; i < REC_FIELDS; i++)
        if (i != 6 || r->detail)
            n += strlen(rec_keys[i]) + (v[i] ? 6 * strlen(v[i]) + 2 : 4); /* room for the worst case */
    return n + SUFFIX_LEN + 1;
}

/* Writes the line into out (room for rec_len bytes) and returns its length, or 0 if hashing
 * failed. h receives the new head. */
static size_t rec_write(const mnc_audit *a, const mnc_audit_rec *r, const char *const v[REC_FIELDS], char *out,
                        char h[MNC_AUDIT_HASH_HEX])
{
    char *o = out;
    memcpy(o, "{\"seq\":", 7);
    o += 7;
    o += mnc_json_put_u64(o, a->seq + 1);
    memcpy(o, ",\"time\":", 8);
    o += 8;
    o += mnc_json_put_u64(o, r->time_ms);
    for (int i = 0; i < REC_FIELDS; i++) {
        if (i == 6 && !r->detail)
            continue;
        size_t kl = strlen(rec_keys[i]);
        memcpy(o, rec_keys[i], kl);
        o += kl;
        o += mnc_json_put_str(o, v[i]);
    }
    /* The hash covers the body as printed whole, closing brace included (walk() checks it so). */
    if (sha256_hex(out, (size_t)(o - out), "}", 1, h) != 0)
        return 0;
    memcpy(o, HASH_KEY, HASH_KEY_LEN);
    o += HASH_KEY_LEN;
    memcpy(o, h, 64);
    o += 64;
    memcpy(o, "\"}\n", 3);
    o += 3;
    return (size_t)(o - out);
}

int mnc_audit_append(mnc_audit *a, const mnc_audit_rec *r)
{
    if (a->poisoned) {
        errno = EIO;
        return -1;
    }
    const char *const v[REC_FIELDS] = {r->op,       r->sender, r->receiver, r->object,
                                       r->decision, r->reason, r->detail,   a->head};
    size_t room = rec_len(r, v);
    char h[MNC_AUDIT_HASH_HEX];
    if (a->deferred) {
        /* Keep the exact bytes; the caller makes them durable before they are written. The
         * line is written in place after the pending ones and counted only once complete. */
        if (a->pend_len + room + 1 > a->pend_cap) {
            size_t nc = a->pend_cap ? a->pend_cap : 4096;
            while (nc < a->pend_len + room + 1)
                nc *= 2;
            char *np = realloc(a->pend, nc);
            if (!np) {
                errno = ENOMEM;
                return -1; /* nothing changed: seq/head still match the pending lines */
            }
            a->pend = np;
            a->pend_cap = nc;
        }
        size_t ll = rec_write(a, r, v, a->pend + a->pend_len, h);
        if (ll == 0) {
            if (a->pend_len < a->pend_cap)
                a->pend[a->pend_len] = '\0';
            errno = EIO;
            return -1;
        }
        if (a->pend_len == 0)
            a->pend_first = a->seq + 1;
        a->pend_len += ll;
        a->pend[a->pend_len] = '\0';
        a->seq++;
        memcpy(a->head, h, sizeof(h));
        return 0;
    }
    char *line = malloc(room);
    if (!line) {
        errno = ENOMEM;
        return -1;
    }
    size_t ll = rec_write(a, r, v, line, h);
    int rc = -1;
    if (ll == 0) {
        errno = EIO;
        goto out;
    }
    /* One write of the whole line; O_APPEND makes it land at the end. A short write would
     * leave a torn record in the middle of the chain, so poison the log instead of retrying
     * into an unknown state. */
    ssize_t w;
    do {
        w = write(a->fd, line, ll);
    } while (w < 0 && errno == EINTR);
    if (w != (ssize_t)ll) {
        if (w >= 0)
            errno = EIO;
        a->poisoned = true;
        goto out;
    }
    a->seq++;
    memcpy(a->head, h, sizeof(h));
    a->dirty = true;
    a->size += (off_t)ll;
    (void)mnc_cache_trim_written(a->fd, &a->trim, a->size);
    rc = 0;
out:
    free(line);
    return rc;
}

int mnc_audit_sync(mnc_audit *a)
{
    if (a->poisoned) {
        errno = EIO;
        return -1;
    }
    if (!a->dirty)
        return 0;
    if (fdatasync(a->fd) != 0) {
        a->poisoned = true;
        return -1;
    }
    a->dirty = false;
    return 0;
}

uint64_t mnc_audit_seq(const mnc_audit *a) { return a->seq; }
const char *mnc_audit_head(const mnc_audit *a) { return a->head; }

/* write(2) of all n bytes, retrying partial writes and EINTR. 0 or -1 (errno). */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int mnc_audit_set_deferred(mnc_audit *a, bool on)
{
    if (!on && a->pend_len > 0) {
        errno = EBUSY;
        return -1;
    }
    a->deferred = on;
    return 0;
}

const char *mnc_audit_pending(const mnc_audit *a, size_t *len, uint64_t *first_seq)
{
    *len = a->pend_len;
    if (first_seq)
        *first_seq = a->pend_len ? a->pend_first : 0;
    return a->pend_len ? a->pend : NULL;
}

int mnc_audit_write_pending(mnc_audit *a)
{
    if (a->poisoned) {
        errno = EIO;
        return -1;
    }
    if (a->pend_len == 0)
        return 0;
    /* O_APPEND: the bytes land at the end. A failure leaves an unknown prefix of them in the
     * file; the caller's durable copy repairs that on the next start, this handle stops. */
    if (write_all(a->fd, a->pend, a->pend_len) != 0) {
        a->poisoned = true;
        return -1;
    }
    a->size += (off_t)a->pend_len;
    (void)mnc_cache_trim_written(a->fd, &a->trim, a->size);
    a->pend_len = 0;
    a->pend[0] = '\0';
    /* Not needed for durability (the caller's copy is durable), but a later mnc_audit_sync or
     * close then also flushes these lines, so a clean shutdown leaves the file complete. */
    a->dirty = true;
    return 0;
}

void mnc_audit_discard_pending(mnc_audit *a)
{
    if (a->pend_len > 0)
        a->poisoned = true; /* seq/head include them: the chain would have a hole */
    a->pend_len = 0;
    if (a->pend)
        a->pend[0] = '\0';
}

#define RC_CHUNK 65536

/* Offset of the start of the m-th line from the end of the file (m >= 1). The file holds
 * complete lines only (open() truncated a torn tail). Reads backwards in bounded chunks. */
static int nth_line_from_end(int fd, off_t size, uint64_t m, off_t *start, char *err, size_t errlen)
{
    char *buf = malloc(RC_CHUNK);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t count = 0; /* newlines seen from the end; the last byte is the 1st */
    off_t pos = size;
    int rc = -1;
    while (pos > 0) {
        size_t want = pos > RC_CHUNK ? RC_CHUNK : (size_t)pos;
        off_t at = pos - (off_t)want;
        ssize_t r = pread(fd, buf, want, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)want) {
            snprintf(err, errlen, "read: %s", r < 0 ? strerror(errno) : "short read");
            goto out;
        }
        for (size_t i = want; i-- > 0;)
            if (buf[i] == '\n' && ++count == m + 1) {
                *start = at + (off_t)i + 1;
                rc = 0;
                goto out;
            }
        pos = at;
    }
    if (count == m) { /* the m-th line from the end is the first line */
        *start = 0;
        rc = 0;
    } else {
        snprintf(err, errlen, "the file has %" PRIu64 " lines, fewer than its chain says", count);
    }
out:
    free(buf);
    return rc;
}

int mnc_audit_reconcile(mnc_audit *a, uint64_t first_seq, const char *lines, size_t len, uint64_t *appended, char *err,
                        size_t errlen)
{
    if (appended)
        *appended = 0;
    if (a->poisoned || a->pend_len > 0) {
        snprintf(err, errlen, "%s", a->poisoned ? "audit log handle is poisoned" : "pending deferred lines");
        return -1;
    }
    if (len == 0)
        return 0;
    if (first_seq == 0 || lines[len - 1] != '\n' || memchr(lines, '\0', len)) {
        snprintf(err, errlen,
                 "the durable copy of the audit records (from seq %" PRIu64
                 ") is not a sequence of complete text lines",
                 first_seq);
        return 1;
    }
    if (first_seq > a->seq + 1) {
        snprintf(err, errlen,
                 "the log ends at record %" PRIu64 " but the durable copy starts "
                 "at record %" PRIu64 ": records %" PRIu64 "..%" PRIu64 " are in neither",
                 a->seq, first_seq, a->seq + 1, first_seq - 1);
        return 1;
    }
    /* 1. Records the file has: byte-identical, compared in bounded chunks. */
    size_t done = 0;          /* bytes of `lines` matched so far */
    uint64_t seq = first_seq; /* seq of the line at lines + done */
    if (a->seq >= first_seq) {
        struct stat st;
        off_t at;
        if (fstat(a->fd, &st) != 0) {
            snprintf(err, errlen, "fstat: %s", strerror(errno));
            return -1;
        }
        if (nth_line_from_end(a->fd, st.st_size, a->seq - first_seq + 1, &at, err, errlen) != 0)
            return -1;
        char *buf = malloc(RC_CHUNK);
        if (!buf) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        int rc = 0;
        while (done < len && seq <= a->seq) {
            size_t want = len - done < RC_CHUNK ? len - done : RC_CHUNK;
            ssize_t r = pread(a->fd, buf, want, at);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                snprintf(err, errlen, "read: %s", strerror(errno));
                rc = -1;
                break;
            }
            size_t i = 0;
            for (; i < (size_t)r && seq <= a->seq; i++) {
                if (buf[i] != lines[done + i])
                    break;
                if (lines[done + i] == '\n')
                    seq++;
            }
            if (seq > a->seq || done + i == len) {
                done += i;
                break;
            }
            if (i < (size_t)r || r == 0) { /* a differing byte, or the file ended early */
                snprintf(err, errlen,
                         "line %" PRIu64 " (record seq %" PRIu64 ") differs from "
                         "its durable copy",
                         seq, seq);
                rc = 1;
                break;
            }
            done += i;
            at += r;
        }
        free(buf);
        if (rc != 0)
            return rc;
    }
    /* 2. Records beyond the file's end: must continue the chain; one write, then sync. */
    char head[MNC_AUDIT_HASH_HEX];
    memcpy(head, a->head, sizeof(head));
    uint64_t n_new = 0;
    for (size_t p = done; p < len;) {
        const char *nl = memchr(lines + p, '\n', len - p);
        char h[MNC_AUDIT_HASH_HEX], m[200];
        size_t ln = (size_t)(nl - (lines + p));
        if (ln > MAX_LINE || check_line(lines + p, ln, head, a->seq + n_new + 1, h, m, sizeof(m)) != 0) {
            snprintf(err, errlen,
                     "durable copy of record seq %" PRIu64 " does not continue "
                     "the chain: %s",
                     a->seq + n_new + 1, ln > MAX_LINE ? "line too long" : m);
            return 1;
        }
        memcpy(head, h, sizeof(h));
        n_new++;
        p += ln + 1;
    }
    if (n_new > 0 && write_all(a->fd, lines + done, len - done) != 0) {
        snprintf(err, errlen, "write: %s", strerror(errno));
        a->poisoned = true;
        return -1;
    }
    if (fdatasync(a->fd) != 0) {
        snprintf(err, errlen, "fdatasync: %s", strerror(errno));
        a->poisoned = true;
        return -1;
    }
    a->seq += n_new;
    memcpy(a->head, head, sizeof(head));
    a->dirty = false;
    if (n_new > 0)
        a->size += (off_t)(len - done);
    if (appended)
        *appended = n_new;
    return 0;
}

void mnc_audit_close(mnc_audit *a)
{
    if (!a)
        return;
    /* Pending lines are not written: nobody made them durable (a failed commit). */
    a->pend_len = 0;
    (void)mnc_audit_sync(a);
    close(a->fd);
    free(a->pend);
    free(a);
}

cJSON *mnc_audit_tail(const char *path, int n)
{
    if (n < 1 || n > 10000)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    /* Records are far below 4 KiB; read back enough for n of them plus one partial line. */
    off_t want = (off_t)n * 4096 + 1;
    off_t start = st.st_size > want ? st.st_size - want : 0;
    size_t len = (size_t)(st.st_size - start);
    char *buf = malloc(len + 1);
    cJSON *arr = buf ? cJSON_CreateArray() : NULL;
    size_t got = 0;
    while (arr && got < len) {
        ssize_t r = pread(fd, buf + got, len - got, start + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!arr) {
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    /* Collect complete lines; skip a leading partial line if we did not start at 0. */
    char *p = buf;
    if (start > 0) {
        char *nl = memchr(p, '\n', got);
        p = nl ? nl + 1 : buf + got;
    }
    int total = 0;
    for (char *q = p; (q = memchr(q, '\n', (size_t)(buf + got - q))); q++)
        total++;
    int skip = total > n ? total - n : 0;
    while (p < buf + got) {
        char *nl = memchr(p, '\n', (size_t)(buf + got - p));
        if (!nl)
            break;
        if (skip > 0) {
            skip--;
        } else {
            cJSON *rec = cJSON_ParseWithLength(p, (size_t)(nl - p));
            if (rec)
                cJSON_AddItemToArray(arr, rec);
        }
        p = nl + 1;
    }
    free(buf);
    return arr;
}

/* ---- keyed hashes of agent-chosen values (audit.h) */

static int key_read(int fd, const char *path, unsigned char key[MNC_AUDIT_KEY_LEN], char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) || st.st_size != MNC_AUDIT_KEY_LEN) {
        snprintf(err, errlen,
                 "%s: not a %d-byte regular file of uid %u with mode 0600 (a key others may read or "
                 "replace keys nothing)",
                 path, MNC_AUDIT_KEY_LEN, (unsigned)geteuid());
        return -1;
    }
    size_t got = 0;
    while (got < MNC_AUDIT_KEY_LEN) {
        ssize_t r = pread(fd, key + got, MNC_AUDIT_KEY_LEN - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(err, errlen, "%s: %s", path, r < 0 ? strerror(errno) : "short read");
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int mnc_audit_key_load(const char *path, bool create, unsigned char key[MNC_AUDIT_KEY_LEN], char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        unsigned char k[MNC_AUDIT_KEY_LEN];
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST) /* made by someone else meanwhile: read theirs */
            return mnc_audit_key_load(path, false, key, err, errlen);
        if (fd < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
        if (mnc_random_bytes(k, sizeof(k)) != 0 || write_all(fd, (const char *)k, sizeof(k)) != 0 || fsync(fd) != 0) {
            snprintf(err, errlen, "%s: cannot write a new key: %s", path, strerror(errno ? errno : EIO));
            close(fd);
            (void)unlink(path);
            return -1;
        }
        memset(k, 0, sizeof(k));
    } else if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = key_read(fd, path, key, err, errlen);
    close(fd);
    return rc;
}

const char *mnc_audit_hv(const unsigned char key[MNC_AUDIT_KEY_LEN], const void *v, size_t n, int hexlen,
                         char out[MNC_AUDIT_HV_MAX])
{
    static const char hx[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    memcpy(out, "h:?", 4);
    if (hexlen < 2 || hexlen > 64 || hexlen % 2)
        return NULL;
    if (!HMAC(EVP_sha256(), key, MNC_AUDIT_KEY_LEN, v ? v : (const void *)"", n, md, &mdlen) || mdlen < 32)
        return NULL;
    for (int i = 0; i < hexlen / 2; i++) {
        out[2 + 2 * i] = hx[md[i] >> 4];
        out[3 + 2 * i] = hx[md[i] & 15];
    }
    out[2 + hexlen] = '\0';
    return out;
}

#define TOKEN_LEN 27 /* "h:" 8 "." 16 */

static int token_of(const unsigned char key[MNC_AUDIT_KEY_LEN], const unsigned char salt[4], const void *v, size_t n,
                    char out[MNC_AUDIT_HV_MAX])
{
    static const char hx[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE], buf[4 + 4096];
    unsigned int mdlen = 0;
    if (n > sizeof(buf) - 4)
        n = sizeof(buf) - 4; /* values are paths and names: far below; a longer one is cut */
    memcpy(buf, salt, 4);
    if (n)
        memcpy(buf + 4, v, n);
    if (!HMAC(EVP_sha256(), key, MNC_AUDIT_KEY_LEN, buf, 4 + n, md, &mdlen) || mdlen < 32)
        return -1;
    out[0] = 'h';
    out[1] = ':';
    for (int i = 0; i < 4; i++) {
        out[2 + 2 * i] = hx[salt[i] >> 4];
        out[3 + 2 * i] = hx[salt[i] & 15];
    }
    out[10] = '.';
    for (int i = 0; i < 8; i++) {
        out[11 + 2 * i] = hx[md[i] >> 4];
        out[12 + 2 * i] = hx[md[i] & 15];
    }
    out[TOKEN_LEN] = '\0';
    return 0;
}

const char *mnc_audit_hv_token(const unsigned char key[MNC_AUDIT_KEY_LEN], const void *v, size_t n,
                               char out[MNC_AUDIT_HV_MAX])
{
    unsigned char salt[4];
    memcpy(out, "h:?", 4);
    if (mnc_random_bytes(salt, sizeof(salt)) != 0 || token_of(key, salt, v, n, out) != 0) {
        memcpy(out, "h:?", 4);
        return NULL;
    }
    return out;
}

bool mnc_audit_hv_names(const unsigned char key[MNC_AUDIT_KEY_LEN], const char *token, const void *v, size_t n)
{
    unsigned char salt[4];
    if (strncmp(token, "h:", 2) != 0 || token[10] != '.')
        return false;
    for (int i = 0; i < 4; i++) {
        int hi = token[2 + 2 * i], lo = token[3 + 2 * i];
        if (!((hi >= '0' && hi <= '9') || (hi >= 'a' && hi <= 'f')) ||
            !((lo >= '0' && lo <= '9') || (lo >= 'a' && lo <= 'f')))
            return false;
        salt[i] =
            (unsigned char)(((hi <= '9' ? hi - '0' : hi - 'a' + 10) << 4) | (lo <= '9' ? lo - '0' : lo - 'a' + 10));
    }
    char want[MNC_AUDIT_HV_MAX];
    return token_of(key, salt, v, n, want) == 0 && strncmp(want, token, TOKEN_LEN) == 0;
}
