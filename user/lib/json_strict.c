// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* json_strict.c - strict JSON input (mnc/policy.h: mnc_json_read_file, mnc_json_parse_strict,
 * mnc_utf8_valid, mnc_name_valid) and the message and path helpers of json_strict.h. Strict
 * means: a size limit, valid UTF-8, no NUL bytes, no duplicate keys, one value; every problem is
 * reported with its line and column or JSON path, and nothing half-parsed is returned. Used by
 * the policy loader and the state reader alike. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/un.h>

#include <cjson/cJSON.h>

#include "json_strict.h"
#include "mnc_util.h"

/* ------------------------------------------------------------------ messages and paths */
/* Quotes an untrusted string for an error message: control and non-ASCII bytes are escaped
 * (messages end up on terminals and in logs) and long strings are cut. */
const char *mnc_json_quote(mnc_qbuf *b, const char *s)
{
    size_t o = 0, cap = sizeof(b->s);
    b->s[o++] = '"';
    for (size_t i = 0; s && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (o + 8 >= cap) {
            memcpy(b->s + o, "...", 3);
            o += 3;
            break;
        }
        if (ch == '"' || ch == '\\') {
            b->s[o++] = '\\';
            b->s[o++] = (char)ch;
        } else if (ch < 0x20 || ch >= 0x7f) {
            o += (size_t)snprintf(b->s + o, cap - o, "\\x%02x", ch);
        } else {
            b->s[o++] = (char)ch;
        }
    }
    b->s[o++] = '"';
    b->s[o] = '\0';
    return b->s;
}

/* snprintf for paths and messages: truncation is acceptable (the text is diagnostic only) */
void mnc_bprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mnc_bprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

bool mnc_name_valid(const char *s)
{
    size_t n = 0;
    if (!s)
        return false;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return false;
    }
    return n >= 1 && n < MNC_NAME_MAX;
}

/* parent.key, or key at the root ("$"). Keys that are not plain names are quoted. */
const char *mnc_jpath_key(jpath *out, const char *parent, const char *key)
{
    bool root = !parent[0] || strcmp(parent, "$") == 0;
    if (mnc_name_valid(key))
        mnc_bprintf(out->s, sizeof(out->s), "%s%s%s", root ? "" : parent, root ? "" : ".", key);
    else
        mnc_bprintf(out->s, sizeof(out->s), "%s[%s]", root ? "$" : parent, Q(key));
    return out->s;
}

const char *mnc_jpath_idx(jpath *out, const char *parent, int i)
{
    mnc_bprintf(out->s, sizeof(out->s), "%s[%d]", parent, i);
    return out->s;
}

void mnc_json_err(mnc_errors *e, const char *file, const char *path, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mnc_errors_add(e, "%s: %s: %s", file, path, msg);
}

const char *mnc_json_type(const cJSON *j)
{
    if (!j)
        return "nothing";
    if (cJSON_IsString(j))
        return "a string";
    if (cJSON_IsNumber(j))
        return "a number";
    if (cJSON_IsBool(j))
        return "a boolean";
    if (cJSON_IsNull(j))
        return "null";
    if (cJSON_IsArray(j))
        return "an array";
    if (cJSON_IsObject(j))
        return "an object";
    return "an invalid value";
}

/* ------------------------------------------------------------------ strict JSON input */

int mnc_json_read_file(const char *path, size_t limit, char **buf, size_t *len, mnc_errors *errs)
{
    *buf = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO must not hang the loader; it is refused below as not regular */
    int fd = mnc_open_ro(path);
    if (fd < 0) {
        mnc_json_err(errs, path, "$", "cannot open: %s", strerror(-fd));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        mnc_json_err(errs, path, "$", "cannot stat: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        mnc_json_err(errs, path, "$", "not a regular file");
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > limit) {
        mnc_json_err(errs, path, "$", "file is %llu bytes, over the %zu-byte limit", (unsigned long long)st.st_size,
                     limit);
        close(fd);
        return -1;
    }
    /* read up to limit + 1 so that a file growing after fstat is still caught */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap + 1);
    if (!b) {
        mnc_json_err(errs, path, "$", "out of memory");
        close(fd);
        return -1;
    }
    for (;;) {
        if (n == cap) {
            if (cap > limit)
                break;
            size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            char *nb = realloc(b, ncap + 1);
            if (!nb) {
                mnc_json_err(errs, path, "$", "out of memory");
                free(b);
                close(fd);
                return -1;
            }
            b = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            mnc_json_err(errs, path, "$", "read error: %s", strerror(errno));
            free(b);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > limit) {
        mnc_json_err(errs, path, "$", "file is over the %zu-byte limit", limit);
        free(b);
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

static void line_col(const char *buf, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (buf[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 with *why set. */
static size_t utf8_len(const unsigned char *s, size_t n, const char **why)
{
    unsigned char c = s[0];
    size_t need;
    *why = "invalid UTF-8";
    if (c < 0x80)
        return 1;
    if (c < 0xc0)
        return 0; /* stray continuation byte */
    if (c < 0xc2) {
        *why = "overlong UTF-8 encoding";
        return 0;
    }
    if (c < 0xe0)
        need = 2;
    else if (c < 0xf0)
        need = 3;
    else if (c < 0xf5)
        need = 4;
    else
        return 0;
    if (n < need) {
        *why = "truncated UTF-8 sequence";
        return 0;
    }
    for (size_t i = 1; i < need; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xf0 && s[1] < 0x90)) {
        *why = "overlong UTF-8 encoding";
        return 0;
    }
    if (c == 0xed && s[1] >= 0xa0) {
        *why = "UTF-8 encoded surrogate";
        return 0;
    }
    if (c == 0xf4 && s[1] >= 0x90) {
        *why = "UTF-8 code point above U+10FFFF";
        return 0;
    }
    return need;
}

bool mnc_utf8_valid(const char *str, size_t n)
{
    const unsigned char *u = (const unsigned char *)str;
    const char *why;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(u + i, n - i, &why);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* The raw checks that cJSON does not do; stops at the first problem (the file is refused). */
static int scan_raw(const char *name, const char *buf, size_t len, mnc_errors *errs, bool *unclosed)
{
    const unsigned char *u = (const unsigned char *)buf;
    bool in_str = false;
    int depth = 0;
    size_t line, col;
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        if (c == 0) {
            line_col(buf, i, &line, &col);
            mnc_json_err(errs, name, "$", "NUL byte at line %zu, column %zu (byte %zu)", line, col, i);
            return -1;
        }
        if (c >= 0x80) {
            const char *why;
            size_t k = utf8_len(u + i, len - i, &why);
            if (!k) {
                line_col(buf, i, &line, &col);
                mnc_json_err(errs, name, "$", "%s at line %zu, column %zu (byte %zu)", why, line, col, i);
                return -1;
            }
            i += k;
            continue;
        }
        if (in_str) {
            if (c == '\\') {
                if (i + 5 < len && u[i + 1] == 'u' && memcmp(u + i + 2, "0000", 4) == 0) {
                    line_col(buf, i, &line, &col);
                    mnc_json_err(errs, name, "$", "\\u0000 escape in a string at line %zu, column %zu", line, col);
                    return -1;
                }
                /* skip the escaped character unless it needs checking itself */
                i += (i + 1 < len && u[i + 1] != 0 && u[i + 1] < 0x80) ? 2 : 1;
                continue;
            }
            if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > MNC_JSON_DEPTH_MAX) {
                line_col(buf, i, &line, &col);
                mnc_json_err(errs, name, "$", "nesting deeper than %d levels at line %zu, column %zu",
                             MNC_JSON_DEPTH_MAX, line, col);
                return -1;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
        i++;
    }
    /* an open string or bracket at the end means the input was cut short */
    *unclosed = in_str || depth > 0;
    return 0;
}

static int cmp_strp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Reports duplicate keys in every object of the tree (cJSON keeps both, lookups see the
 * first: an author's second value would be silently ignored). Depth is bounded by scan_raw. */
static void dup_keys(const char *name, const cJSON *j, const char *path, mnc_errors *errs)
{
    if (cJSON_IsObject(j)) {
        size_t n = 0;
        for (const cJSON *c = j->child; c; c = c->next)
            n++;
        if (n > 1) {
            const char *small[16]; /* most objects are small: no allocation for them */
            const char **keys = n <= 16 ? small : malloc(n * sizeof(*keys));
            if (!keys) {
                mnc_json_err(errs, name, path, "out of memory");
                return;
            }
            size_t k = 0;
            for (const cJSON *c = j->child; c; c = c->next)
                keys[k++] = c->string ? c->string : "";
            qsort(keys, n, sizeof(*keys), cmp_strp);
            for (size_t i = 1; i < n; i++)
                if (strcmp(keys[i], keys[i - 1]) == 0 && (i < 2 || strcmp(keys[i], keys[i - 2]) != 0))
                    mnc_json_err(errs, name, path, "duplicate key %s", Q(keys[i]));
            if (keys != small)
                free(keys);
        }
        /* only containers can hold keys: a scalar member needs no path (formatting one per
         * member was most of the cost of checking a small message) */
        for (const cJSON *c = j->child; c; c = c->next) {
            if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
                jpath p;
                dup_keys(name, c, mnc_jpath_key(&p, path, c->string ? c->string : ""), errs);
            }
        }
    } else if (cJSON_IsArray(j)) {
        int i = 0;
        for (const cJSON *c = j->child; c; c = c->next, i++) {
            if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
                jpath p;
                dup_keys(name, c, mnc_jpath_idx(&p, path, i), errs);
            }
        }
    }
}

cJSON *mnc_json_parse_strict(const char *name, const char *buf, size_t len, mnc_errors *errs)
{
    bool unclosed = false;
    if (scan_raw(name, buf, len, errs, &unclosed) != 0)
        return NULL;
    size_t ws = 0;
    while (ws < len && (buf[ws] == ' ' || buf[ws] == '\t' || buf[ws] == '\n' || buf[ws] == '\r'))
        ws++;
    if (ws == len) {
        mnc_json_err(errs, name, "$", "empty file (expected a JSON value)");
        return NULL;
    }
    const char *end = NULL;
    /* length includes the terminating NUL: with require_null_terminated cJSON checks that the
     * value is followed by it, which rejects trailing garbage */
    cJSON *j = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
    if (!j) {
        size_t off = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : len;
        size_t line, col;
        line_col(buf, off, &line, &col);
        if (off >= len || unclosed) {
            line_col(buf, len, &line, &col);
            mnc_json_err(errs, name, "$",
                         "syntax error: unexpected end of input at line %zu, column %zu "
                         "(truncated?)",
                         line, col);
        } else {
            mnc_json_err(errs, name, "$", "syntax error at line %zu, column %zu", line, col);
        }
        return NULL;
    }
    int before = errs->n;
    dup_keys(name, j, "$", errs);
    if (errs->n != before) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}
