// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_chain.c - the chain's hash and its check, line by line and file by file (mnc/audit.h
 * for the format): shared by the writer (audit.c) and the segments (audit_seg.c). */
#include "audit_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int mnc_audit__sha256_hex(const void *data, size_t len, const char *extra, size_t extra_len,
                          char out[MNC_AUDIT_HASH_HEX])
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

bool mnc_audit__is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* Checks one complete line (without its newline). prev: expected prev hash; seq: expected
 * seq. On success writes the line's hash to out and returns 0; else fills msg, returns -1. */
int mnc_audit__check_line(const char *line, size_t len, const char *prev, uint64_t seq, char out[MNC_AUDIT_HASH_HEX],
                          char *msg, size_t msglen)
{
    if (len < SUFFIX_LEN + 2 || line[0] != '{' || line[len - 1] != '}' || line[len - 2] != '"' ||
        memcmp(line + len - SUFFIX_LEN, HASH_KEY, HASH_KEY_LEN) != 0 ||
        !mnc_audit__is_hex64(line + len - SUFFIX_LEN + HASH_KEY_LEN)) {
        snprintf(msg, msglen, "not an audit record (no trailing \"hash\" member)");
        return -1;
    }
    size_t body_len = len - SUFFIX_LEN;
    char h[MNC_AUDIT_HASH_HEX];
    if (mnc_audit__sha256_hex(line, body_len, "}", 1, h) != 0) {
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

/* The seq, prev and time of a line that ends in a hash (the first line of a segment). 0, or -1
 * if it has none: check_line then reports what is wrong with it. */
static int line_start(const char *line, size_t len, uint64_t *seq, char prev[MNC_AUDIT_HASH_HEX], uint64_t *time_ms)
{
    cJSON *j = len <= MAX_LINE ? cJSON_ParseWithLength(line, len) : NULL;
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "seq");
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(j, "prev");
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(j, "time");
    int rc = -1;
    if (cJSON_IsNumber(js) && js->valuedouble >= 1 && cJSON_IsString(jp) && strlen(jp->valuestring) == 64 &&
        mnc_audit__is_hex64(jp->valuestring)) {
        *seq = (uint64_t)js->valuedouble;
        memcpy(prev, jp->valuestring, MNC_AUDIT_HASH_HEX);
        *time_ms = cJSON_IsNumber(jt) && jt->valuedouble > 0 ? (uint64_t)jt->valuedouble : 0;
        rc = 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* Shared by verify and open: walks the file. A segment (mnc_audit__walk's segment) may start
 * anywhere in a chain: its first line's seq and prev are taken as its base. */
int mnc_audit__walk_stream(FILE *f, mnc_audit_verify *v, bool segment)
{
    memset(v, 0, sizeof(*v));
    memcpy(v->head, ZERO_HASH, MNC_AUDIT_HASH_HEX);
    memcpy(v->base_prev, ZERO_HASH, MNC_AUDIT_HASH_HEX);
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
        if (lineno == 1 && segment) {
            uint64_t s0, t0;
            char p0[MNC_AUDIT_HASH_HEX];
            if (line_start(line, (size_t)n - 1, &s0, p0, &t0) == 0) {
                v->base_seq = s0 - 1;
                memcpy(v->base_prev, p0, sizeof(p0));
                memcpy(v->head, p0, sizeof(p0));
                v->first_time_ms = t0;
            }
        }
        if ((size_t)n - 1 > MAX_LINE) {
            snprintf(m, sizeof(m), "line longer than %d bytes", MAX_LINE);
        } else if (mnc_audit__check_line(line, (size_t)n - 1, v->head, v->base_seq + v->records + 1, h, m, sizeof(m)) ==
                   0) {
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

int mnc_audit__walk(const char *path, mnc_audit_verify *v, bool segment)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        memset(v, 0, sizeof(*v));
        snprintf(v->msg, sizeof(v->msg), "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = mnc_audit__walk_stream(f, v, segment);
    fclose(f);
    return rc;
}

int mnc_audit_verify_file(const char *path, mnc_audit_verify *v) { return mnc_audit__walk(path, v, false); }
