/* policy.c - the strict policy loader (format: docs/policy.md); lookups are in policy_lookup.c.
 *
 * Loading runs in passes so that every error in every file is reported in one run and nothing
 * is accepted unless all of it is valid:
 *   0. per file: read (size limit), check raw bytes, parse, reject duplicate keys, check the
 *      top level (version, name, risk, required arrays);
 *   1. agents, sinks and fields of every file, merged across files (an identical repeat is the
 *      same entity; a differing one is an error naming both files);
 *   2. ids: all agents (file order) then all sinks (file order) share ids 0..255; fields 0..255;
 *      then set-wide checks (a uid maps to one agent, workspaces stay clear of log/memory paths);
 *   3. families of every file (they may be referenced from any file), then requirements and
 *      contracts, whose names are resolved against the merged set.
 * Anything wrong is reported as "FILE: JSON.PATH: message" and the whole set is refused.
 */
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

#include "mnc/policy.h"
#include "mnc/risk_bayes.h"

/* Bounds for entities the header does not bound. Contract indices travel as uint16 in
 * disclosures, so the set must stay well below 65535; 1024 is far beyond any real policy. */
#define MAX_FAMILIES 1024
#define MAX_CONTRACTS 1024
#define MAX_REQUIREMENTS 4096
#define MAX_UID 4294967294.0   /* (uid_t)-1 is "no uid" */
#define LIFE_MAX 2147483647.0  /* 2^31 - 1 */

/* ------------------------------------------------------------------ messages and paths */

typedef struct qbuf { char s[160]; } qbuf;

/* Quotes an untrusted string for an error message: control and non-ASCII bytes are escaped
 * (messages end up on terminals and in logs) and long strings are cut. */
static const char *qs(qbuf *b, const char *s)
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
#define Q(s) qs(&(qbuf){{0}}, (s))

typedef struct jpath { char s[320]; } jpath;

/* snprintf for paths and messages: truncation is acceptable (the text is diagnostic only) */
static void bprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

const char *mnc_failure_name(mnc_failure f)
{
    switch (f) {
    case MNC_FAIL_DELEGATE:
        return "delegate";
    case MNC_FAIL_APPROVAL:
        return "approval";
    case MNC_FAIL_ABSTAIN:
        return "abstain";
    }
    return "abstain";
}

bool mnc_name_valid(const char *s)
{
    size_t n = 0;
    if (!s)
        return false;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == ':' || c == '-'))
            return false;
    }
    return n >= 1 && n < MNC_NAME_MAX;
}

/* parent.key, or key at the root ("$"). Keys that are not plain names are quoted. */
static const char *pkey(jpath *out, const char *parent, const char *key)
{
    bool root = !parent[0] || strcmp(parent, "$") == 0;
    if (mnc_name_valid(key))
        bprintf(out->s, sizeof(out->s), "%s%s%s", root ? "" : parent, root ? "" : ".", key);
    else
        bprintf(out->s, sizeof(out->s), "%s[%s]", root ? "$" : parent, Q(key));
    return out->s;
}

static const char *pidx(jpath *out, const char *parent, int i)
{
    bprintf(out->s, sizeof(out->s), "%s[%d]", parent, i);
    return out->s;
}

static void ferr(mnc_errors *e, const char *file, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ferr(mnc_errors *e, const char *file, const char *path, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mnc_errors_add(e, "%s: %s: %s", file, path, msg);
}

static const char *jtype(const cJSON *j)
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
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        ferr(errs, path, "$", "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        ferr(errs, path, "$", "cannot stat: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        ferr(errs, path, "$", "not a regular file");
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > limit) {
        ferr(errs, path, "$", "file is %llu bytes, over the %zu-byte limit",
             (unsigned long long)st.st_size, limit);
        close(fd);
        return -1;
    }
    /* read up to limit + 1 so that a file growing after fstat is still caught */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap + 1);
    if (!b) {
        ferr(errs, path, "$", "out of memory");
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
                ferr(errs, path, "$", "out of memory");
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
            ferr(errs, path, "$", "read error: %s", strerror(errno));
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
        ferr(errs, path, "$", "file is over the %zu-byte limit", limit);
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
            ferr(errs, name, "$", "NUL byte at line %zu, column %zu (byte %zu)", line, col, i);
            return -1;
        }
        if (c >= 0x80) {
            const char *why;
            size_t k = utf8_len(u + i, len - i, &why);
            if (!k) {
                line_col(buf, i, &line, &col);
                ferr(errs, name, "$", "%s at line %zu, column %zu (byte %zu)", why, line, col, i);
                return -1;
            }
            i += k;
            continue;
        }
        if (in_str) {
            if (c == '\\') {
                if (i + 5 < len && u[i + 1] == 'u' && memcmp(u + i + 2, "0000", 4) == 0) {
                    line_col(buf, i, &line, &col);
                    ferr(errs, name, "$", "\\u0000 escape in a string at line %zu, column %zu", line,
                         col);
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
                ferr(errs, name, "$", "nesting deeper than %d levels at line %zu, column %zu",
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

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reports duplicate keys in every object of the tree (cJSON keeps both, lookups see the
 * first: an author's second value would be silently ignored). Depth is bounded by scan_raw. */
static void dup_keys(const char *name, const cJSON *j, const char *path, mnc_errors *errs)
{
    if (cJSON_IsObject(j)) {
        size_t n = 0;
        for (const cJSON *c = j->child; c; c = c->next)
            n++;
        if (n > 1) {
            const char **keys = malloc(n * sizeof(*keys));
            if (!keys) {
                ferr(errs, name, path, "out of memory");
                return;
            }
            size_t k = 0;
            for (const cJSON *c = j->child; c; c = c->next)
                keys[k++] = c->string ? c->string : "";
            qsort(keys, n, sizeof(*keys), cmp_strp);
            for (size_t i = 1; i < n; i++)
                if (strcmp(keys[i], keys[i - 1]) == 0 && (i < 2 || strcmp(keys[i], keys[i - 2]) != 0))
                    ferr(errs, name, path, "duplicate key %s", Q(keys[i]));
            free(keys);
        }
        for (const cJSON *c = j->child; c; c = c->next) {
            jpath p;
            dup_keys(name, c, pkey(&p, path, c->string ? c->string : ""), errs);
        }
    } else if (cJSON_IsArray(j)) {
        int i = 0;
        for (const cJSON *c = j->child; c; c = c->next, i++) {
            if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
                jpath p;
                dup_keys(name, c, pidx(&p, path, i), errs);
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
        ferr(errs, name, "$", "empty file (expected a JSON value)");
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
            ferr(errs, name, "$", "syntax error: unexpected end of input at line %zu, column %zu "
                 "(truncated?)", line, col);
        } else {
            ferr(errs, name, "$", "syntax error at line %zu, column %zu", line, col);
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

/* ------------------------------------------------------------------ typed field readers */

typedef struct fctx {
    mnc_errors *errs;
    const char *file;
    int fi; /* file index */
} fctx;

#define E(c, path, ...) ferr((c)->errs, (c)->file, (path), __VA_ARGS__)

/* Reports keys of obj outside `allowed` and missing `required` ones (NULL-terminated lists). */
static void check_keys(fctx *c, const cJSON *obj, const char *path, const char *const *allowed,
                       const char *const *required)
{
    for (const cJSON *k = obj->child; k; k = k->next) {
        bool ok = false;
        for (int i = 0; allowed[i]; i++)
            if (k->string && strcmp(k->string, allowed[i]) == 0)
                ok = true;
        if (!ok)
            E(c, path, "unknown key %s", Q(k->string ? k->string : ""));
    }
    for (int i = 0; required && required[i]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(obj, required[i]))
            E(c, path, "missing required key %s", Q(required[i]));
}

static const cJSON *get(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A name at obj[key]. Returns 1 ok, 0 absent (not reported), -1 invalid (reported). */
static int get_name(fctx *c, const cJSON *obj, const char *key, const char *path, char out[MNC_NAME_MAX])
{
    const cJSON *v = get(obj, key);
    jpath p;
    out[0] = '\0';
    if (!v)
        return 0;
    pkey(&p, path, key);
    if (!cJSON_IsString(v)) {
        E(c, p.s, "expected a name (string), got %s", jtype(v));
        return -1;
    }
    if (!mnc_name_valid(v->valuestring)) {
        E(c, p.s, "invalid name %s (1-63 characters of A-Z a-z 0-9 _ . : -)", Q(v->valuestring));
        return -1;
    }
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return 1;
}

/* An integral number in [lo, hi]. Returns 0 or -1 (reported). 1.0 counts as an integer, as in
 * JSON Schema; 1e400 parses as infinity and is out of range. */
static int as_int(fctx *c, const cJSON *v, const char *path, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v)) {
        E(c, path, "expected an integer, got %s", jtype(v));
        return -1;
    }
    double d = v->valuedouble;
    if (!isfinite(d) || d < lo || d > hi) {
        E(c, path, "integer out of range (must be %.0f..%.0f)", lo, hi);
        return -1;
    }
    if (d != floor(d)) {
        E(c, path, "expected an integer, got %g", d);
        return -1;
    }
    *out = d;
    return 0;
}

/* A finite number; `positive` requires > 0, otherwise >= 0. */
static int as_number(fctx *c, const cJSON *v, const char *path, bool positive, double *out)
{
    if (!cJSON_IsNumber(v)) {
        E(c, path, "expected a number, got %s", jtype(v));
        return -1;
    }
    double d = v->valuedouble;
    if (!isfinite(d)) {
        E(c, path, "number is not finite");
        return -1;
    }
    if (positive ? !(d > 0) : !(d >= 0)) {
        E(c, path, "must be %s, got %g", positive ? "> 0" : ">= 0", d);
        return -1;
    }
    *out = d;
    return 0;
}

/* Checks an absolute path and stores it normalised (no repeated or trailing '/'). "." and ".."
 * components are refused rather than resolved: the loader cannot know the target host's
 * symlinks, and the component-wise containment test needs a canonical spelling. */
static int as_path(fctx *c, const cJSON *v, const char *path, char *out, size_t outsz)
{
    if (!cJSON_IsString(v)) {
        E(c, path, "expected an absolute path (string), got %s", jtype(v));
        return -1;
    }
    const char *s = v->valuestring;
    if (s[0] != '/') {
        E(c, path, "path %s is not absolute", Q(s));
        return -1;
    }
    size_t o = 0;
    for (const char *p = s; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t n = (size_t)(e - p);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
            E(c, path, "path %s has a \".\" or \"..\" component", Q(s));
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
                E(c, path, "path %s contains a control character", Q(s));
                return -1;
            }
        }
        if (o + 1 + n + 1 > outsz) {
            E(c, path, "path is too long (at most %zu bytes)", outsz - 1);
            return -1;
        }
        out[o++] = '/';
        memcpy(out + o, p, n);
        o += n;
        p = e;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return 0;
}

/* a is b or lies below b, compared component-wise (both normalised). */
static bool path_within(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (strcmp(b, "/") == 0)
        return true;
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

static int check_address(fctx *c, const cJSON *v, const char *path, char *out, size_t outsz)
{
    if (!cJSON_IsString(v)) {
        E(c, path, "expected an address (string), got %s", jtype(v));
        return -1;
    }
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n >= outsz) {
        E(c, path, "address is too long (at most %zu bytes)", outsz - 1);
        return -1;
    }
    if (strncmp(s, "unix:", 5) == 0) {
        if (s[5] != '/' || n - 5 >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
            E(c, path, "address %s: a unix socket needs an absolute path shorter than %zu bytes",
              Q(s), sizeof(((struct sockaddr_un *)0)->sun_path));
            return -1;
        }
        memcpy(out, s, n + 1);
        return 0;
    }
    char host[64];
    const char *colon = strrchr(s, ':');
    bool ok = false;
    if (colon && (size_t)(colon - s) < sizeof(host)) {
        size_t hl = (size_t)(colon - s);
        memcpy(host, s, hl);
        host[hl] = '\0';
        unsigned char tmp[16];
        if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
            host[hl - 1] = '\0';
            ok = inet_pton(AF_INET6, host + 1, tmp) == 1;
        } else {
            ok = inet_pton(AF_INET, host, tmp) == 1;
        }
        const char *pp = colon + 1;
        char *endp = NULL;
        errno = 0;
        unsigned long port = (*pp >= '0' && *pp <= '9') ? strtoul(pp, &endp, 10) : 0;
        if (errno || !endp || *endp || port < 1 || port > 65535)
            ok = false;
    }
    if (!ok) {
        E(c, path, "invalid address %s (want unix:/abs/path, IPv4:port or [IPv6]:port)", Q(s));
        return -1;
    }
    memcpy(out, s, n + 1);
    return 0;
}

/* ------------------------------------------------------------------ the set being built */

typedef struct pent {
    mnc_principal p;
    int file, index;  /* first definition: file and index in its agents[] / sinks[] */
    int last_file;    /* last file that defined it (detects in-file duplicates) */
    int last_index;   /* its index in that file */
} pent;

typedef struct fent {
    mnc_field f;
    int file, index, last_file, last_index;
} fent;

typedef struct fament {
    mnc_family fam;
    int file, index;
} fament;

typedef struct src {
    const char *name; /* as shown in messages */
    const char *path; /* file to read, or NULL for a buffer */
    const char *mem;
    size_t memlen;
    cJSON *root;      /* NULL if unreadable / unparsable */
} src;

typedef struct build {
    mnc_errors *errs;
    src *files;
    int n_files;
    pent agents[MNC_MAX_PRINCIPALS];
    int n_agents;
    pent sinks[MNC_MAX_PRINCIPALS];
    int n_sinks;
    fent fields[MNC_MAX_FIELDS];
    int n_fields;
    fament *fams;
    int n_fams, cap_fams;
    mnc_requirement *reqs;
    int *req_file;
    int n_reqs, cap_reqs;
    mnc_contract *cons;
    int *con_file;
    int n_cons, cap_cons;
    bool too_many_principals, too_many_fields;
    mnc_risk_kind risk;
    int risk_file; /* first file that declared a risk model, -1 if none */
    char *risk_model_path; /* bayes model_file resolved against its policy file; heap */
} build;

static void free_principal(mnc_principal *p)
{
    for (int i = 0; i < p->n_workspace; i++)
        free(p->workspace[i]);
    p->n_workspace = 0;
}

static void free_family(mnc_family *f)
{
    for (int i = 0; i < f->n_forms; i++) {
        free(f->forms[i].tmpl);
        f->forms[i].tmpl = NULL;
    }
    f->n_forms = 0;
}

static void build_free(build *b)
{
    for (int i = 0; i < b->n_agents; i++)
        free_principal(&b->agents[i].p);
    for (int i = 0; i < b->n_sinks; i++)
        free_principal(&b->sinks[i].p);
    for (int i = 0; i < b->n_fams; i++)
        free_family(&b->fams[i].fam);
    free(b->fams);
    free(b->reqs);
    free(b->req_file);
    free(b->cons);
    free(b->con_file);
}

/* Grows an array to hold n + 1 elements. Returns 0 or -1 on OOM. */
static int grow(void **arr, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 8;
    void *na = realloc(*arr, (size_t)ncap * elem);
    if (!na)
        return -1;
    *arr = na;
    *cap = ncap;
    return 0;
}

static pent *find_principal(build *b, const char *name, bool *is_agent)
{
    for (int i = 0; i < b->n_agents; i++)
        if (strcmp(b->agents[i].p.name, name) == 0) {
            if (is_agent)
                *is_agent = true;
            return &b->agents[i];
        }
    for (int i = 0; i < b->n_sinks; i++)
        if (strcmp(b->sinks[i].p.name, name) == 0) {
            if (is_agent)
                *is_agent = false;
            return &b->sinks[i];
        }
    return NULL;
}

/* id in the final set: agents first, then sinks */
static int principal_id(build *b, const char *name, bool *is_agent)
{
    bool ag = false;
    pent *e = find_principal(b, name, &ag);
    if (is_agent)
        *is_agent = ag;
    if (!e)
        return -1;
    return ag ? (int)(e - b->agents) : b->n_agents + (int)(e - b->sinks);
}

static bool same_principal(const mnc_principal *a, const mnc_principal *b)
{
    if (a->cls != b->cls || a->role != b->role || a->server != b->server ||
        a->confinement_none != b->confinement_none || strcmp(a->path, b->path) != 0 ||
        strcmp(a->address, b->address) != 0 || strcmp(a->stream, b->stream) != 0 || a->n_uids != b->n_uids ||
        a->n_workspace != b->n_workspace)
        return false;
    for (int i = 0; i < a->n_uids; i++)
        if (a->uids[i] != b->uids[i])
            return false;
    for (int i = 0; i < a->n_workspace; i++)
        if (strcmp(a->workspace[i], b->workspace[i]) != 0)
            return false;
    return true;
}

/* Adds or merges a parsed principal; takes ownership of p's heap strings. */
static void add_principal(build *b, fctx *c, mnc_principal *p, bool is_agent, int idx, const char *path)
{
    const char *kind = is_agent ? "agent" : "sink";
    const char *list = is_agent ? "agents" : "sinks";
    bool ex_agent = false;
    pent *ex = find_principal(b, p->name, &ex_agent);
    if (!ex) {
        if (b->n_agents + b->n_sinks >= MNC_MAX_PRINCIPALS) {
            if (!b->too_many_principals)
                E(c, path, "too many agents and sinks (at most %d in a policy set)", MNC_MAX_PRINCIPALS);
            b->too_many_principals = true;
            free_principal(p);
            return;
        }
        pent *n = is_agent ? &b->agents[b->n_agents++] : &b->sinks[b->n_sinks++];
        n->p = *p;
        n->file = n->last_file = c->fi;
        n->index = n->last_index = idx;
        return;
    }
    const char *exlist = ex_agent ? "agents" : "sinks";
    if (ex->last_file == c->fi) {
        if (ex_agent == is_agent)
            E(c, path, "duplicate %s name %s (also %s[%d])", kind, Q(p->name), exlist, ex->last_index);
        else
            E(c, path, "%s name %s clashes with %s[%d] (agents and sinks share one namespace)", kind,
              Q(p->name), exlist, ex->last_index);
    } else if (ex_agent != is_agent) {
        E(c, path, "%s name %s clashes with %s[%d] in %s (agents and sinks share one namespace)",
          kind, Q(p->name), exlist, ex->index, b->files[ex->file].name);
    } else if (!same_principal(&ex->p, p)) {
        E(c, path, "%s %s differs from its definition in %s (%s[%d])", kind, Q(p->name),
          b->files[ex->file].name, list, ex->index);
    }
    if (ex_agent == is_agent) {
        ex->last_file = c->fi;
        ex->last_index = idx;
    }
    free_principal(p);
}

/* ------------------------------------------------------------------ pass 1: agents, sinks, fields */

static void parse_agent(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2, p3;
    pidx(&path, "agents", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected an agent object, got %s", jtype(j));
        return;
    }
    static const char *const allowed[] = {"name", "uids", "workspace", "role", "server",
                                          "confinement", NULL};
    static const char *const required[] = {"name", NULL};
    check_keys(c, j, path.s, allowed, required);
    mnc_principal p;
    memset(&p, 0, sizeof(p));
    p.cls = MNC_SINK_AGENT;
    p.role = MNC_ROLE_AGENT;
    int named = get_name(c, j, "name", path.s, p.name);

    const cJSON *u = get(j, "uids");
    if (u) {
        pkey(&p2, path.s, "uids");
        if (!cJSON_IsArray(u)) {
            E(c, p2.s, "expected an array of uids, got %s", jtype(u));
        } else if (cJSON_GetArraySize(u) > MNC_MAX_UIDS) {
            E(c, p2.s, "too many uids (at most %d)", MNC_MAX_UIDS);
        } else {
            int i = 0;
            for (const cJSON *x = u->child; x; x = x->next, i++) {
                double d;
                pidx(&p3, p2.s, i);
                if (as_int(c, x, p3.s, 0, MAX_UID, &d) != 0)
                    continue;
                bool dup = false;
                for (int k = 0; k < p.n_uids; k++)
                    dup |= p.uids[k] == (uint32_t)d;
                if (dup)
                    E(c, p3.s, "duplicate uid %.0f", d);
                else
                    p.uids[p.n_uids++] = (uint32_t)d;
            }
        }
    }
    const cJSON *w = get(j, "workspace");
    if (w) {
        pkey(&p2, path.s, "workspace");
        if (!cJSON_IsArray(w)) {
            E(c, p2.s, "expected an array of absolute paths, got %s", jtype(w));
        } else if (cJSON_GetArraySize(w) > MNC_MAX_WORKSPACE) {
            E(c, p2.s, "too many workspace paths (at most %d)", MNC_MAX_WORKSPACE);
        } else {
            int i = 0;
            for (const cJSON *x = w->child; x; x = x->next, i++) {
                char norm[MNC_PATH_MAX];
                pidx(&p3, p2.s, i);
                if (as_path(c, x, p3.s, norm, sizeof(norm)) != 0)
                    continue;
                bool dup = false;
                for (int k = 0; k < p.n_workspace; k++)
                    dup |= strcmp(p.workspace[k], norm) == 0;
                if (dup) {
                    E(c, p3.s, "duplicate workspace path %s", Q(norm));
                    continue;
                }
                char *s = strdup(norm);
                if (!s) {
                    E(c, p3.s, "out of memory");
                    continue;
                }
                p.workspace[p.n_workspace++] = s;
            }
        }
    }
    const cJSON *sv = get(j, "server");
    if (sv) {
        pkey(&p2, path.s, "server");
        if (cJSON_IsBool(sv))
            p.server = cJSON_IsTrue(sv);
        else
            E(c, p2.s, "expected true or false, got %s", jtype(sv));
    }
    const cJSON *r = get(j, "role");
    if (r) {
        pkey(&p2, path.s, "role");
        if (cJSON_IsString(r) && strcmp(r->valuestring, "agent") == 0)
            p.role = MNC_ROLE_AGENT;
        else if (cJSON_IsString(r) && strcmp(r->valuestring, "broker") == 0)
            p.role = MNC_ROLE_BROKER;
        else if (cJSON_IsString(r))
            E(c, p2.s, "unknown role %s (want \"agent\" or \"broker\")", Q(r->valuestring));
        else
            E(c, p2.s, "expected \"agent\" or \"broker\", got %s", jtype(r));
    }
    /* "confinement": "kernel" (default: with a kernel layer on, mncd delivers to this agent only
     * while it runs in a cgroup that `mncctl run` registered) or "none" (the operator accepts
     * deliveries to it without kernel confinement; each one is audited). Anything else is an
     * error: a typo must not silently widen or narrow what the kernel layer demands. */
    const cJSON *cf = get(j, "confinement");
    if (cf) {
        pkey(&p2, path.s, "confinement");
        if (cJSON_IsString(cf) && strcmp(cf->valuestring, "kernel") == 0)
            p.confinement_none = false;
        else if (cJSON_IsString(cf) && strcmp(cf->valuestring, "none") == 0)
            p.confinement_none = true;
        else if (cJSON_IsString(cf))
            E(c, p2.s, "unknown confinement %s (want \"kernel\" or \"none\")",
              Q(cf->valuestring));
        else
            E(c, p2.s, "expected \"kernel\" or \"none\", got %s", jtype(cf));
    }
    if (named != 1) {
        free_principal(&p);
        return;
    }
    add_principal(b, c, &p, true, idx, path.s);
}

static void parse_sink(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2;
    pidx(&path, "sinks", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a sink object, got %s", jtype(j));
        return;
    }
    static const char *const allowed[] = {"name", "class", "path", "address", "stream", NULL};
    static const char *const required[] = {"name", "class", NULL};
    check_keys(c, j, path.s, allowed, required);
    mnc_principal p;
    memset(&p, 0, sizeof(p));
    int named = get_name(c, j, "name", path.s, p.name);
    const cJSON *cl = get(j, "class");
    if (cl) {
        pkey(&p2, path.s, "class");
        static const struct { const char *n; enum mnc_sink_class k; } classes[] = {
            {"log", MNC_SINK_LOG}, {"memory", MNC_SINK_MEMORY}, {"tool", MNC_SINK_TOOL},
            {"external", MNC_SINK_EXTERNAL}};
        if (!cJSON_IsString(cl)) {
            E(c, p2.s, "expected a sink class (string), got %s", jtype(cl));
        } else {
            for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
                if (strcmp(cl->valuestring, classes[i].n) == 0)
                    p.cls = classes[i].k;
            if (p.cls == MNC_SINK_NONE)
                E(c, p2.s, "unknown sink class %s (want log, memory, tool or external)",
                  Q(cl->valuestring));
        }
    }
    bool filesink = p.cls == MNC_SINK_LOG || p.cls == MNC_SINK_MEMORY;
    const cJSON *pa = get(j, "path");
    if (pa) {
        pkey(&p2, path.s, "path");
        if (p.cls != MNC_SINK_NONE && !filesink)
            E(c, p2.s, "only log and memory sinks have a path");
        else
            (void)as_path(c, pa, p2.s, p.path, sizeof(p.path));
    }
    const cJSON *ad = get(j, "address");
    if (ad) {
        pkey(&p2, path.s, "address");
        if (filesink)
            E(c, p2.s, "only tool and external sinks have an address");
        else
            (void)check_address(c, ad, p2.s, p.address, sizeof(p.address));
    }
    const cJSON *st = get(j, "stream");
    if (st) {
        /* an output stream of the agent (relayed by `mncctl run`): a log sink with no file; its
         * name is the stream's, so the launcher resolves it through the names map alone */
        pkey(&p2, path.s, "stream");
        if (!cJSON_IsString(st) || (strcmp(st->valuestring, "stdout") != 0 && strcmp(st->valuestring, "stderr") != 0 &&
                                    strcmp(st->valuestring, "console") != 0))
            E(c, p2.s, "expected \"stdout\", \"stderr\" or \"console\"");
        else if (p.cls != MNC_SINK_NONE && p.cls != MNC_SINK_LOG)
            E(c, p2.s, "only log sinks can be an output stream");
        else if (pa)
            E(c, p2.s, "an output stream sink has no path");
        else if (named == 1 && strcmp(p.name, st->valuestring) != 0)
            E(c, p2.s, "an output stream sink must be named after its stream (name %s, stream %s)", Q(p.name),
              Q(st->valuestring));
        else
            snprintf(p.stream, sizeof(p.stream), "%s", st->valuestring);
    } else if (named == 1 && p.cls == MNC_SINK_LOG &&
               (strcmp(p.name, "stdout") == 0 || strcmp(p.name, "stderr") == 0 || strcmp(p.name, "console") == 0)) {
        /* the launcher resolves stream sinks by these names: a file log sink must not take one */
        pkey(&p2, path.s, "name");
        E(c, p2.s, "log sink name %s is reserved for the output stream (add \"stream\": %s)", Q(p.name), Q(p.name));
    }
    if (named != 1 || p.cls == MNC_SINK_NONE)
        return;
    add_principal(b, c, &p, false, idx, path.s);
}

static void parse_field(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2;
    pidx(&path, "fields", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a field object, got %s", jtype(j));
        return;
    }
    static const char *const allowed[] = {"name", "weight", NULL};
    static const char *const required[] = {"name", NULL};
    check_keys(c, j, path.s, allowed, required);
    mnc_field f = {.weight = 1.0};
    int named = get_name(c, j, "name", path.s, f.name);
    const cJSON *w = get(j, "weight");
    if (w)
        (void)as_number(c, w, pkey(&p2, path.s, "weight"), false, &f.weight);
    if (named != 1)
        return;
    for (int i = 0; i < b->n_fields; i++) {
        fent *ex = &b->fields[i];
        if (strcmp(ex->f.name, f.name) != 0)
            continue;
        if (ex->last_file == c->fi)
            E(c, path.s, "duplicate field name %s (also fields[%d])", Q(f.name), ex->last_index);
        else if (ex->f.weight != f.weight)
            E(c, path.s, "field %s differs from its definition in %s (fields[%d])", Q(f.name),
              b->files[ex->file].name, ex->index);
        ex->last_file = c->fi;
        ex->last_index = idx;
        return;
    }
    if (b->n_fields >= MNC_MAX_FIELDS) {
        if (!b->too_many_fields)
            E(c, path.s, "too many fields (at most %d in a policy set)", MNC_MAX_FIELDS);
        b->too_many_fields = true;
        return;
    }
    b->fields[b->n_fields++] = (fent){.f = f, .file = c->fi, .index = idx, .last_file = c->fi,
                                      .last_index = idx};
}

/* Calls fn for each element of root[key], which must be an array (min_one: non-empty). */
typedef void (*item_fn)(build *b, fctx *c, const cJSON *j, int idx);
static void each(build *b, fctx *c, const cJSON *root, const char *key, item_fn fn)
{
    const cJSON *a = get(root, key);
    if (!cJSON_IsArray(a))
        return; /* reported by check_top */
    int i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++)
        fn(b, c, x, i);
}

/* ------------------------------------------------------------------ pass 3: references */

static int field_id(build *b, const char *name)
{
    for (int i = 0; i < b->n_fields; i++)
        if (strcmp(b->fields[i].f.name, name) == 0)
            return i;
    return -1;
}

enum ref { REF_FIELD, REF_AGENT, REF_PRINCIPAL };

/* Resolves the name in string v; returns the id or -1 (reported). */
static int resolve(build *b, fctx *c, const cJSON *v, const char *path, enum ref kind)
{
    if (!cJSON_IsString(v)) {
        E(c, path, "expected a name (string), got %s", jtype(v));
        return -1;
    }
    const char *s = v->valuestring;
    if (!mnc_name_valid(s)) {
        E(c, path, "invalid name %s", Q(s));
        return -1;
    }
    if (kind == REF_FIELD) {
        int id = field_id(b, s);
        if (id < 0)
            E(c, path, "unknown field %s", Q(s));
        return id;
    }
    bool ag = false;
    int id = principal_id(b, s, &ag);
    if (id < 0) {
        E(c, path, "unknown %s %s", kind == REF_AGENT ? "agent" : "sink", Q(s));
        return -1;
    }
    if (kind == REF_AGENT && !ag) {
        E(c, path, "%s is a sink, not an agent", Q(s));
        return -1;
    }
    return id;
}

/* obj[key] as a set of names. Returns 1 ok, 0 absent, -1 error (reported). */
static int name_set(build *b, fctx *c, const cJSON *obj, const char *key, const char *path,
                    bool nonempty, enum ref kind, mnc_set *out)
{
    jpath p2, p3;
    const cJSON *a = get(obj, key);
    mnc_set_clear(out);
    if (!a)
        return 0;
    pkey(&p2, path, key);
    if (!cJSON_IsArray(a)) {
        E(c, p2.s, "expected an array of names, got %s", jtype(a));
        return -1;
    }
    if (nonempty && !a->child) {
        E(c, p2.s, "must not be empty");
        return -1;
    }
    int i = 0, bad = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++) {
        pidx(&p3, p2.s, i);
        int id = resolve(b, c, x, p3.s, kind);
        if (id < 0) {
            bad = 1;
            continue;
        }
        if (mnc_set_has(out, (unsigned)id)) {
            E(c, p3.s, "duplicate name %s", Q(x->valuestring));
            bad = 1;
        }
        mnc_set_add(out, (unsigned)id);
    }
    return bad ? -1 : 1;
}

/* Checks "{field}" placeholders ("{{" / "}}" are literal braces) against the form's fields. */
static void check_template(build *b, fctx *c, const char *t, const mnc_set *fields, const char *path)
{
    for (size_t i = 0; t[i];) {
        if (t[i] == '{' && t[i + 1] == '{') {
            i += 2;
        } else if (t[i] == '}' && t[i + 1] == '}') {
            i += 2;
        } else if (t[i] == '}') {
            E(c, path, "unmatched \"}\" at offset %zu (write \"}}\" for a literal brace)", i);
            return;
        } else if (t[i] == '{') {
            const char *e = strchr(t + i + 1, '}');
            if (!e) {
                E(c, path, "unterminated placeholder at offset %zu", i);
                return;
            }
            char name[MNC_NAME_MAX];
            size_t n = (size_t)(e - (t + i + 1));
            if (n == 0 || n >= sizeof(name)) {
                E(c, path, "invalid placeholder at offset %zu", i);
                return;
            }
            memcpy(name, t + i + 1, n);
            name[n] = '\0';
            int id = mnc_name_valid(name) ? field_id(b, name) : -1;
            if (!mnc_name_valid(name))
                E(c, path, "invalid placeholder {%s}", Q(name));
            else if (id < 0)
                E(c, path, "template names unknown field %s", Q(name));
            else if (!mnc_set_has(fields, (unsigned)id))
                E(c, path, "template names field %s, which is not one of the form's fields", Q(name));
            i += n + 2;
        } else {
            i++;
        }
    }
}

static void parse_family(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2, p3;
    pidx(&path, "families", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a family object, got %s", jtype(j));
        return;
    }
    static const char *const allowed[] = {"name", "forms", NULL};
    static const char *const required[] = {"name", "forms", NULL};
    check_keys(c, j, path.s, allowed, required);
    mnc_family fam;
    memset(&fam, 0, sizeof(fam));
    int named = get_name(c, j, "name", path.s, fam.name);
    bool bad = named != 1;
    const cJSON *forms = get(j, "forms");
    if (forms) {
        pkey(&p2, path.s, "forms");
        if (!cJSON_IsArray(forms)) {
            E(c, p2.s, "expected an array of forms, got %s", jtype(forms));
            bad = true;
        } else if (!forms->child || cJSON_GetArraySize(forms) > MNC_MAX_FORMS) {
            E(c, p2.s, "a family has 1 to %d forms", MNC_MAX_FORMS);
            bad = true;
        } else {
            int i = 0;
            for (const cJSON *x = forms->child; x; x = x->next, i++) {
                pidx(&p3, p2.s, i);
                if (!cJSON_IsObject(x)) {
                    E(c, p3.s, "expected a form object, got %s", jtype(x));
                    bad = true;
                    continue;
                }
                static const char *const fa[] = {"name", "fields", "template", NULL};
                static const char *const fr[] = {"name", "fields", NULL};
                int before = c->errs->n;
                check_keys(c, x, p3.s, fa, fr);
                mnc_form *f = &fam.forms[fam.n_forms];
                memset(f, 0, sizeof(*f));
                if (get_name(c, x, "name", p3.s, f->name) == 1) {
                    for (int k = 0; k < fam.n_forms; k++)
                        if (strcmp(fam.forms[k].name, f->name) == 0) {
                            jpath pn;
                            E(c, pkey(&pn, p3.s, "name"), "duplicate form name %s (also forms[%d])",
                              Q(f->name), k);
                        }
                }
                (void)name_set(b, c, x, "fields", p3.s, true, REF_FIELD, &f->fields);
                const cJSON *t = get(x, "template");
                const char *tmpl = "";
                if (t) {
                    jpath pt;
                    pkey(&pt, p3.s, "template");
                    if (!cJSON_IsString(t))
                        E(c, pt.s, "expected a string, got %s", jtype(t));
                    else {
                        tmpl = t->valuestring;
                        check_template(b, c, tmpl, &f->fields, pt.s);
                    }
                }
                if (c->errs->n != before) {
                    bad = true;
                    continue;
                }
                f->tmpl = strdup(tmpl);
                if (!f->tmpl) {
                    E(c, p3.s, "out of memory");
                    bad = true;
                    continue;
                }
                fam.n_forms++;
            }
        }
    }
    /* register the name even if a form is bad, so that contracts naming it do not cascade */
    if (named == 1) {
        for (int k = 0; k < b->n_fams; k++) {
            if (strcmp(b->fams[k].fam.name, fam.name) != 0)
                continue;
            jpath pn;
            pkey(&pn, path.s, "name");
            if (b->fams[k].file == c->fi)
                E(c, pn.s, "duplicate family name %s (also families[%d])", Q(fam.name), b->fams[k].index);
            else
                E(c, pn.s, "family %s is already defined in %s (families[%d])", Q(fam.name),
                  b->files[b->fams[k].file].name, b->fams[k].index);
            bad = true;
            named = 0;
            break;
        }
    }
    if (named == 1 && b->n_fams >= MAX_FAMILIES) {
        E(c, path.s, "too many families (at most %d in a policy set)", MAX_FAMILIES);
        named = 0;
    }
    if (named == 1 && grow((void **)&b->fams, &b->cap_fams, b->n_fams, sizeof(*b->fams)) != 0) {
        E(c, path.s, "out of memory");
        named = 0;
    }
    if (named != 1) {
        free_family(&fam);
        return;
    }
    (void)bad; /* the errors are recorded; the entry only serves name resolution then */
    b->fams[b->n_fams++] = (fament){.fam = fam, .file = c->fi, .index = idx};
}

static void parse_requirement(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2;
    pidx(&path, "requirements", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a requirement object, got %s", jtype(j));
        return;
    }
    static const char *const allowed[] = {"agent", "purpose", "needs", NULL};
    static const char *const required[] = {"agent", "purpose", "needs", NULL};
    int before = c->errs->n;
    check_keys(c, j, path.s, allowed, required);
    mnc_requirement r;
    memset(&r, 0, sizeof(r));
    int agent = -1;
    const cJSON *a = get(j, "agent");
    if (a)
        agent = resolve(b, c, a, pkey(&p2, path.s, "agent"), REF_AGENT);
    (void)get_name(c, j, "purpose", path.s, r.purpose);
    (void)name_set(b, c, j, "needs", path.s, true, REF_FIELD, &r.needs);
    if (c->errs->n != before || agent < 0)
        return;
    r.agent = (uint16_t)agent;
    for (int k = 0; k < b->n_reqs; k++) {
        if (b->reqs[k].agent == r.agent && strcmp(b->reqs[k].purpose, r.purpose) == 0) {
            E(c, path.s, "second requirement for agent %s and purpose %s (one per agent and purpose; "
              "first in %s)", Q(a->valuestring), Q(r.purpose), b->files[b->req_file[k]].name);
            return;
        }
    }
    if (b->n_reqs >= MAX_REQUIREMENTS) {
        E(c, path.s, "too many requirements (at most %d)", MAX_REQUIREMENTS);
        return;
    }
    int cap = b->cap_reqs;
    if (grow((void **)&b->reqs, &cap, b->n_reqs, sizeof(*b->reqs)) != 0 ||
        grow((void **)&b->req_file, &b->cap_reqs, b->n_reqs, sizeof(*b->req_file)) != 0) {
        E(c, path.s, "out of memory");
        return;
    }
    b->reqs[b->n_reqs] = r;
    b->req_file[b->n_reqs++] = c->fi;
}

static void parse_lifetime(fctx *c, const cJSON *l, const char *path, mnc_lifetime *out)
{
    jpath p2;
    if (!cJSON_IsObject(l)) {
        E(c, path, "expected {\"seconds\": N} and/or {\"turns\": N}, got %s", jtype(l));
        return;
    }
    static const char *const allowed[] = {"seconds", "turns", NULL};
    check_keys(c, l, path, allowed, NULL);
    const cJSON *s = get(l, "seconds"), *t = get(l, "turns");
    double d;
    if (!s && !t)
        E(c, path, "a lifetime needs \"seconds\", \"turns\" or both");
    if (s && as_int(c, s, pkey(&p2, path, "seconds"), 1, LIFE_MAX, &d) == 0)
        out->seconds = (uint64_t)d;
    if (t && as_int(c, t, pkey(&p2, path, "turns"), 1, LIFE_MAX, &d) == 0)
        out->turns = (uint32_t)d;
}

static void parse_contract(build *b, fctx *c, const cJSON *j, int idx)
{
    jpath path, p2, p3;
    pidx(&path, "contracts", idx);
    if (!cJSON_IsObject(j)) {
        E(c, path.s, "expected a contract object, got %s", jtype(j));
        return;
    }
    static const char *const allowed[] = {"id", "purpose", "issuers", "recipient", "fields", "lifetime",
                                          "sinks", "memory", "family", "failure", "broker", "epsilon",
                                          "budget", NULL};
    static const char *const required[] = {"id", "purpose", "issuers", "recipient", "fields",
                                           "lifetime", "family", NULL};
    int before = c->errs->n;
    check_keys(c, j, path.s, allowed, required);
    mnc_contract k;
    memset(&k, 0, sizeof(k));
    k.broker = MNC_NO_ID;
    k.epsilon = -1;
    k.budget = -1;
    k.family = -1;
    int has_id = get_name(c, j, "id", path.s, k.id);
    (void)get_name(c, j, "purpose", path.s, k.purpose);
    (void)name_set(b, c, j, "issuers", path.s, true, REF_AGENT, &k.issuers);
    const cJSON *r = get(j, "recipient");
    int rid = -1;
    if (r) {
        pkey(&p2, path.s, "recipient");
        rid = resolve(b, c, r, p2.s, REF_AGENT);
        if (rid >= 0) {
            k.scope.recipient = (uint16_t)rid;
            if (mnc_set_has(&k.issuers, (unsigned)rid))
                E(c, p2.s, "recipient %s is also an issuer of this contract", Q(r->valuestring));
        }
    }
    (void)name_set(b, c, j, "fields", path.s, true, REF_FIELD, &k.scope.fields);
    const cJSON *l = get(j, "lifetime");
    if (l)
        parse_lifetime(c, l, pkey(&p2, path.s, "lifetime"), &k.scope.life);
    (void)name_set(b, c, j, "sinks", path.s, false, REF_PRINCIPAL, &k.scope.sinks);
    const cJSON *m = get(j, "memory");
    if (m) {
        if (cJSON_IsBool(m))
            k.scope.memory = cJSON_IsTrue(m);
        else
            E(c, pkey(&p2, path.s, "memory"), "expected a boolean, got %s", jtype(m));
    }
    char fam[MNC_NAME_MAX];
    if (get_name(c, j, "family", path.s, fam) == 1) {
        for (int i = 0; i < b->n_fams; i++)
            if (strcmp(b->fams[i].fam.name, fam) == 0)
                k.family = i;
        if (k.family < 0)
            E(c, pkey(&p2, path.s, "family"), "unknown family %s", Q(fam));
    }
    const cJSON *fl = get(j, "failure");
    bool delegate = false;
    if (!fl) {
        k.failure[0] = MNC_FAIL_ABSTAIN;
        k.n_failure = 1;
    } else {
        pkey(&p2, path.s, "failure");
        if (!cJSON_IsArray(fl)) {
            E(c, p2.s, "expected an array, got %s", jtype(fl));
        } else if (!fl->child) {
            E(c, p2.s, "must not be empty (omit it for [\"abstain\"])");
        } else {
            int i = 0;
            for (const cJSON *x = fl->child; x; x = x->next, i++) {
                pidx(&p3, p2.s, i);
                int v = -1;
                if (cJSON_IsString(x) && strcmp(x->valuestring, "abstain") == 0)
                    v = MNC_FAIL_ABSTAIN;
                else if (cJSON_IsString(x) && strcmp(x->valuestring, "delegate") == 0)
                    v = MNC_FAIL_DELEGATE;
                else if (cJSON_IsString(x) && strcmp(x->valuestring, "approval") == 0)
                    v = MNC_FAIL_APPROVAL;
                if (v < 0) {
                    E(c, p3.s, "expected \"delegate\", \"approval\" or \"abstain\"");
                    continue;
                }
                bool dup = false;
                for (int q = 0; q < k.n_failure; q++)
                    dup |= (int)k.failure[q] == v;
                if (dup) {
                    E(c, p3.s, "duplicate failure mode %s", Q(x->valuestring));
                    continue;
                }
                if (k.n_failure < MNC_MAX_FAILURE)
                    k.failure[k.n_failure++] = (mnc_failure)v;
                delegate |= v == MNC_FAIL_DELEGATE;
            }
        }
    }
    const cJSON *br = get(j, "broker");
    if (br) {
        pkey(&p2, path.s, "broker");
        int bid = resolve(b, c, br, p2.s, REF_AGENT);
        if (bid >= 0) {
            if (b->agents[bid].p.role != MNC_ROLE_BROKER)
                E(c, p2.s, "agent %s does not have role \"broker\"", Q(br->valuestring));
            else if (!delegate && fl)
                E(c, p2.s, "a broker is only allowed when failure has \"delegate\"");
            else if (!fl)
                E(c, p2.s, "a broker is only allowed when failure has \"delegate\" (failure defaults "
                  "to [\"abstain\"])");
            k.broker = (uint16_t)bid;
        }
    } else if (delegate) {
        E(c, path.s, "failure has \"delegate\" but no broker is given");
    }
    const cJSON *ep = get(j, "epsilon");
    if (ep)
        (void)as_number(c, ep, pkey(&p2, path.s, "epsilon"), true, &k.epsilon);
    const cJSON *bu = get(j, "budget");
    if (bu)
        (void)as_number(c, bu, pkey(&p2, path.s, "budget"), true, &k.budget);

    if (has_id == 1) {
        for (int i = 0; i < b->n_cons; i++) {
            if (strcmp(b->cons[i].id, k.id) != 0)
                continue;
            pkey(&p2, path.s, "id");
            if (b->con_file[i] == c->fi)
                E(c, p2.s, "duplicate contract id %s", Q(k.id));
            else
                E(c, p2.s, "contract id %s is already used in %s", Q(k.id), b->files[b->con_file[i]].name);
            return;
        }
    }
    if (c->errs->n != before || has_id != 1)
        return;
    if (b->n_cons >= MAX_CONTRACTS) {
        E(c, path.s, "too many contracts (at most %d in a policy set)", MAX_CONTRACTS);
        return;
    }
    int cap = b->cap_cons;
    if (grow((void **)&b->cons, &cap, b->n_cons, sizeof(*b->cons)) != 0 ||
        grow((void **)&b->con_file, &b->cap_cons, b->n_cons, sizeof(*b->con_file)) != 0) {
        E(c, path.s, "out of memory");
        return;
    }
    b->cons[b->n_cons] = k;
    b->con_file[b->n_cons++] = c->fi;
}

/* ------------------------------------------------------------------ pass 0: top level */

/* Checks the top-level object; returns false if the file cannot be read any further. */
static bool check_top(build *b, fctx *c, const cJSON *root)
{
    if (!cJSON_IsObject(root)) {
        E(c, "$", "expected a policy object at the top level, got %s", jtype(root));
        return false;
    }
    static const char *const allowed[] = {"mnc_policy", "name", "agents", "sinks", "fields",
                                          "families", "requirements", "contracts", "risk", NULL};
    static const char *const required[] = {"mnc_policy", "name", "agents", "fields", "families",
                                           "contracts", NULL};
    check_keys(c, root, "$", allowed, required);
    const cJSON *v = get(root, "mnc_policy");
    double ver;
    if (v && as_int(c, v, "mnc_policy", 0, 4294967295.0, &ver) == 0 && ver != 1)
        E(c, "mnc_policy", "unsupported format version %.0f (this build reads version 1)", ver);
    char name[MNC_NAME_MAX];
    (void)get_name(c, root, "name", "$", name);
    static const struct { const char *key; bool nonempty; } arrays[] = {
        {"agents", true}, {"sinks", false}, {"fields", true}, {"families", true},
        {"requirements", false}, {"contracts", true}};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        const cJSON *a = get(root, arrays[i].key);
        if (!a)
            continue;
        if (!cJSON_IsArray(a))
            E(c, arrays[i].key, "expected an array, got %s", jtype(a));
        else if (arrays[i].nonempty && !a->child)
            E(c, arrays[i].key, "must not be empty");
    }
    const cJSON *r = get(root, "risk");
    mnc_risk_kind kind = MNC_RISK_WEIGHTS;
    if (r) {
        if (!cJSON_IsObject(r)) {
            E(c, "risk", "expected an object, got %s", jtype(r));
        } else {
            static const char *const ra[] = {"model", "model_file", NULL};
            static const char *const rr[] = {"model", NULL};
            check_keys(c, r, "risk", ra, rr);
            const cJSON *m = get(r, "model"), *mf = get(r, "model_file");
            if (mf && !cJSON_IsString(mf))
                E(c, "risk.model_file", "expected a path (string), got %s", jtype(mf));
            if (m && !cJSON_IsString(m)) {
                E(c, "risk.model", "expected \"weights\" or \"bayes\", got %s", jtype(m));
            } else if (m && strcmp(m->valuestring, "weights") == 0) {
                if (mf)
                    E(c, "risk.model_file", "the \"weights\" model takes no model_file");
            } else if (m && strcmp(m->valuestring, "bayes") == 0) {
                kind = MNC_RISK_BAYES;
                /* The MNC-L work adds the model_file reader here. Until then a bayes policy
                 * must not load: silently ranking by weights would misstate the budget. */
                if (!mf) {
                    E(c, "risk.model", "\"bayes\" requires a model_file");
                } else if (cJSON_IsString(mf) && !b->risk_model_path) {
                    /* relative to the policy file's directory (to the cwd for buffers);
                     * loaded after the fields are known, see load_sources */
                    const char *base = b->files[c->fi].path;
                    const char *slash = base ? strrchr(base, '/') : NULL;
                    int dl = (mf->valuestring[0] != '/' && slash) ? (int)(slash - base + 1) : 0;
                    if (asprintf(&b->risk_model_path, "%.*s%s", dl, base ? base : "",
                                 mf->valuestring) < 0) {
                        b->risk_model_path = NULL;
                        E(c, "risk.model_file", "out of memory");
                    }
                }
            } else if (m) {
                E(c, "risk.model", "unknown risk model %s (want \"weights\" or \"bayes\")",
                  Q(m->valuestring));
            }
        }
    }
    if (b->risk_file < 0) {
        b->risk = kind;
        b->risk_file = c->fi;
    } else if (b->risk != kind) {
        E(c, "risk.model", "risk model differs from the one in %s", b->files[b->risk_file].name);
    }
    return true;
}

/* ------------------------------------------------------------------ pass 2: set-wide checks */

static void check_set(build *b)
{
    /* a uid identifies at most one agent */
    for (int i = 0; i < b->n_agents; i++) {
        const pent *a = &b->agents[i];
        for (int k = 0; k < a->p.n_uids; k++) {
            for (int j = 0; j < i; j++) {
                const pent *o = &b->agents[j];
                for (int m = 0; m < o->p.n_uids; m++) {
                    if (o->p.uids[m] != a->p.uids[k])
                        continue;
                    jpath p;
                    char sub[64];
                    bprintf(sub, sizeof(sub), "agents[%d].uids", a->index);
                    ferr(b->errs, b->files[a->file].name, pidx(&p, sub, k),
                         "uid %u already maps to agent %s (%s)", a->p.uids[k], Q(o->p.name),
                         b->files[o->file].name);
                }
            }
        }
    }
    /* Landlock grants the workspace; a log or memory path inside it (or around it) would let
     * the agent write the sink directly, bypassing mncd's per-object scope check */
    for (int i = 0; i < b->n_agents; i++) {
        const pent *a = &b->agents[i];
        for (int k = 0; k < a->p.n_workspace; k++) {
            const char *w = a->p.workspace[k];
            for (int s = 0; s < b->n_sinks; s++) {
                const mnc_principal *sk = &b->sinks[s].p;
                if ((sk->cls != MNC_SINK_LOG && sk->cls != MNC_SINK_MEMORY) || !sk->path[0])
                    continue;
                const char *cls = sk->cls == MNC_SINK_LOG ? "log" : "memory";
                jpath p;
                char sub[64];
                bprintf(sub, sizeof(sub), "agents[%d].workspace", a->index);
                pidx(&p, sub, k);
                if (path_within(sk->path, w))
                    ferr(b->errs, b->files[a->file].name, p.s,
                         "workspace %s contains the path of %s sink %s (%s)", Q(w), cls, Q(sk->name),
                         Q(sk->path));
                else if (path_within(w, sk->path))
                    ferr(b->errs, b->files[a->file].name, p.s,
                         "workspace %s is inside the path of %s sink %s (%s)", Q(w), cls, Q(sk->name),
                         Q(sk->path));
            }
        }
    }
}

/* ------------------------------------------------------------------ assembly */

static mnc_policy *assemble(build *b)
{
    mnc_policy *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    int np = b->n_agents + b->n_sinks;
    p->principals = calloc((size_t)np, sizeof(*p->principals));
    p->fields = calloc((size_t)b->n_fields, sizeof(*p->fields));
    p->families = calloc((size_t)b->n_fams, sizeof(*p->families));
    p->reqs = calloc((size_t)(b->n_reqs ? b->n_reqs : 1), sizeof(*p->reqs));
    p->contracts = calloc((size_t)b->n_cons, sizeof(*p->contracts));
    if (!p->principals || !p->fields || !p->families || !p->reqs || !p->contracts) {
        mnc_policy_free(p);
        return NULL;
    }
    /* ownership of heap strings moves from the builder to the policy */
    for (int i = 0; i < b->n_agents; i++) {
        p->principals[i] = b->agents[i].p;
        b->agents[i].p.n_workspace = 0;
    }
    for (int i = 0; i < b->n_sinks; i++) {
        p->principals[b->n_agents + i] = b->sinks[i].p;
        b->sinks[i].p.n_workspace = 0;
    }
    p->n_principals = np;
    for (int i = 0; i < b->n_fields; i++)
        p->fields[i] = b->fields[i].f;
    p->n_fields = b->n_fields;
    for (int i = 0; i < b->n_fams; i++) {
        p->families[i] = b->fams[i].fam;
        b->fams[i].fam.n_forms = 0;
    }
    p->n_families = b->n_fams;
    if (b->n_reqs)
        memcpy(p->reqs, b->reqs, (size_t)b->n_reqs * sizeof(*p->reqs));
    p->n_reqs = b->n_reqs;
    memcpy(p->contracts, b->cons, (size_t)b->n_cons * sizeof(*p->contracts));
    p->n_contracts = b->n_cons;
    p->risk = b->risk;
    p->risk_model = NULL;
    return p;
}

static mnc_policy *load_sources(src *files, int n, mnc_errors *errs)
{
    int before = errs->n;
    if (n <= 0) {
        mnc_errors_add(errs, "(none): $: no policy file given");
        return NULL;
    }
    build *b = calloc(1, sizeof(*b));
    if (!b) {
        mnc_errors_add(errs, "%s: $: out of memory", files[0].name);
        return NULL;
    }
    b->errs = errs;
    b->files = files;
    b->n_files = n;
    b->risk_file = -1;

    for (int i = 0; i < n; i++) {
        src *s = &files[i];
        char *owned = NULL;
        const char *buf = s->mem;
        size_t len = s->memlen;
        if (s->path) {
            if (mnc_json_read_file(s->path, MNC_POLICY_FILE_MAX, &owned, &len, errs) != 0)
                continue;
            buf = owned;
        } else if (len > MNC_POLICY_FILE_MAX) {
            mnc_errors_add(errs, "%s: $: document is %zu bytes, over the %u-byte limit", s->name, len,
                           MNC_POLICY_FILE_MAX);
            continue;
        } else {
            /* the parser needs buf[len] == '\0'; the caller's buffer need not have it */
            owned = malloc(len + 1);
            if (!owned) {
                mnc_errors_add(errs, "%s: $: out of memory", s->name);
                continue;
            }
            memcpy(owned, buf, len);
            owned[len] = '\0';
            buf = owned;
        }
        s->root = mnc_json_parse_strict(s->name, buf, len, errs);
        free(owned);
        if (!s->root)
            continue;
        fctx c = {errs, s->name, i};
        if (!check_top(b, &c, s->root)) {
            cJSON_Delete(s->root);
            s->root = NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "agents", parse_agent);
        each(b, &c, files[i].root, "sinks", parse_sink);
        each(b, &c, files[i].root, "fields", parse_field);
    }
    check_set(b);
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "families", parse_family);
    }
    for (int i = 0; i < n; i++) {
        if (!files[i].root)
            continue;
        fctx c = {errs, files[i].name, i};
        each(b, &c, files[i].root, "requirements", parse_requirement);
        each(b, &c, files[i].root, "contracts", parse_contract);
    }
    mnc_policy *p = NULL;
    if (errs->n == before) {
        p = assemble(b);
        if (!p)
            mnc_errors_add(errs, "%s: $: out of memory", files[0].name);
    }
    if (p && p->risk == MNC_RISK_BAYES) {
        /* all-or-nothing: a bayes policy without its model must not load. The model's own
         * errors are reported as "POLICYFILE: risk.model_file: MODEL ERROR". */
        const char *pf = files[b->risk_file >= 0 ? b->risk_file : 0].name;
        mnc_errors me;
        mnc_errors_init(&me);
        p->risk_model = b->risk_model_path ? mnc_bayes_load_file(b->risk_model_path, p, &me)
                                           : NULL;
        if (!p->risk_model) {
            if (me.n == 0)
                mnc_errors_add(errs, "%s: risk.model_file: missing", pf);
            for (int i = 0; i < me.n; i++)
                mnc_errors_add(errs, "%s: risk.model_file: %s", pf, me.msg[i]);
            mnc_policy_free(p);
            p = NULL;
        }
        mnc_errors_free(&me);
    }
    free(b->risk_model_path);
    for (int i = 0; i < n; i++) {
        cJSON_Delete(files[i].root);
        files[i].root = NULL;
    }
    build_free(b);
    free(b);
    return p;
}

mnc_policy *mnc_policy_load_files(const char *const *paths, int n, mnc_errors *errs)
{
    if (n < 0 || n > 4096) {
        mnc_errors_add(errs, "(args): $: bad number of policy files (%d)", n);
        return NULL;
    }
    src *files = calloc((size_t)(n ? n : 1), sizeof(*files));
    if (!files) {
        mnc_errors_add(errs, "(args): $: out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        files[i].name = paths[i];
        files[i].path = paths[i];
    }
    mnc_policy *p = load_sources(files, n, errs);
    free(files);
    return p;
}

mnc_policy *mnc_policy_load_buffer(const char *name, const char *json, size_t len, mnc_errors *errs)
{
    src s = {.name = name ? name : "(buffer)", .mem = json ? json : "", .memlen = json ? len : 0};
    return load_sources(&s, 1, errs);
}

void mnc_policy_free(mnc_policy *p)
{
    if (!p)
        return;
    if (p->principals)
        for (int i = 0; i < p->n_principals; i++)
            free_principal(&p->principals[i]);
    if (p->families)
        for (int i = 0; i < p->n_families; i++)
            free_family(&p->families[i]);
    free(p->principals);
    free(p->fields);
    free(p->families);
    free(p->reqs);
    free(p->contracts);
    mnc_bayes_free(p->risk_model); /* NULL for the weights model */
    free(p);
}
