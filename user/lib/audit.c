/* audit.c - hash-chained JSON-lines audit log (see mnc/audit.h for the format). */
#include "mnc/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
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
};

static int sha256_hex(const void *data, size_t len, const char *extra, size_t extra_len,
                      char out[MNC_AUDIT_HASH_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx)
        return -1;
    int ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, data, len) == 1 &&
             (extra_len == 0 || EVP_DigestUpdate(ctx, extra, extra_len) == 1) &&
             EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
    EVP_MD_CTX_free(ctx);
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
static int check_line(const char *line, size_t len, const char *prev, uint64_t seq,
                      char out[MNC_AUDIT_HASH_HEX], char *msg, size_t msglen)
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
        snprintf(msg, msglen, "seq %.0f where %" PRIu64 " was expected: a record was removed, "
                 "inserted or reordered", js->valuedouble, seq);
    } else if (strcmp(jp->valuestring, prev) != 0) {
        snprintf(msg, msglen, "prev does not match the previous record's hash: a record was "
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
                     "appending; the %" PRIu64 " records before it verify", lineno, n,
                     v->records);
            break;
        }
        char h[MNC_AUDIT_HASH_HEX];
        char m[200];
        if ((size_t)n - 1 > MAX_LINE) {
            snprintf(m, sizeof(m), "line longer than %d bytes", MAX_LINE);
        } else if (check_line(line, (size_t)n - 1, v->head, v->records + 1, h, m, sizeof(m)) ==
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
    a->fd = fd;
    a->seq = v.records;
    memcpy(a->head, v.head, sizeof(a->head));
    return a;
}

static int add_str(cJSON *o, const char *k, const char *v)
{
    cJSON *x = v ? cJSON_CreateString(v) : cJSON_CreateNull();
    if (!x)
        return -1;
    cJSON_AddItemToObject(o, k, x);
    return 0;
}

int mnc_audit_append(mnc_audit *a, const mnc_audit_rec *r)
{
    if (a->poisoned) {
        errno = EIO;
        return -1;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        errno = ENOMEM;
        return -1;
    }
    int bad = !cJSON_AddNumberToObject(o, "seq", (double)(a->seq + 1)) ||
              !cJSON_AddNumberToObject(o, "time", (double)r->time_ms);
    bad |= add_str(o, "op", r->op) | add_str(o, "sender", r->sender) |
           add_str(o, "receiver", r->receiver) | add_str(o, "object", r->object) |
           add_str(o, "decision", r->decision) | add_str(o, "reason", r->reason);
    if (r->detail)
        bad |= add_str(o, "detail", r->detail);
    bad |= add_str(o, "prev", a->head);
    char *body = bad ? NULL : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!body) {
        errno = ENOMEM;
        return -1;
    }
    size_t bl = strlen(body); /* ends with '}' */
    char h[MNC_AUDIT_HASH_HEX];
    char *line = NULL;
    int rc = -1;
    if (bl < 2 || body[bl - 1] != '}' || sha256_hex(body, bl, NULL, 0, h) != 0) {
        errno = EIO;
        goto out;
    }
    size_t ll = bl - 1 + SUFFIX_LEN + 1;
    line = malloc(ll + 1);
    if (!line) {
        errno = ENOMEM;
        goto out;
    }
    memcpy(line, body, bl - 1);
    snprintf(line + bl - 1, ll - (bl - 1) + 1, HASH_KEY "%s\"}\n", h);
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
    rc = 0;
out:
    free(line);
    cJSON_free(body);
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

void mnc_audit_close(mnc_audit *a)
{
    if (!a)
        return;
    (void)mnc_audit_sync(a);
    close(a->fd);
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
