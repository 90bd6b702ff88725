// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* protocol.c - request parsing/validation and response building (see mnc/protocol.h). */
#include "mnc/protocol.h"
#include "json_write.h"
#include "jtree.h"
#include "reqscan.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *const verb_names[MNC_V_COUNT] = {
    [MNC_V_DISCLOSE] = "disclose",
    [MNC_V_SEND] = "send",
    [MNC_V_RECV] = "recv",
    [MNC_V_FORWARD] = "forward",
    [MNC_V_DERIVE] = "derive",
    [MNC_V_LOG] = "log",
    [MNC_V_MEM_PUT] = "mem.put",
    [MNC_V_MEM_GET] = "mem.get",
    [MNC_V_TOOL] = "tool",
    [MNC_V_WHOAMI] = "whoami",
    [MNC_V_STATUS] = "status",
    [MNC_V_LIST] = "list",
    [MNC_V_REVOKE] = "revoke",
    [MNC_V_APPROVE] = "approve",
    [MNC_V_AUDIT] = "audit",
    [MNC_V_AGENT_REGISTER] = "agent.register",
    [MNC_V_TAINT_RESET] = "taint.reset",
    [MNC_V_DISCLOSE_STATUS] = "disclose.status",
    [MNC_V_BROKER_NEXT] = "broker.next",
    [MNC_V_BROKER_REPLY] = "broker.reply",
    [MNC_V_APPROVALS] = "approvals",
    [MNC_V_WORKSPACE_CLEAR] = "workspace.clear",
    [MNC_V_QUARANTINE_PUT] = "quarantine.put",
};

const char *mnc_verb_name(mnc_verb v) { return (unsigned)v < MNC_V_COUNT ? verb_names[v] : "?"; }

int mnc_verb_from_name(const char *name)
{
    for (int i = 0; i < MNC_V_COUNT; i++)
        if (strcmp(verb_names[i], name) == 0)
            return i;
    return -1;
}

bool mnc_verb_is_admin(mnc_verb v) { return v >= MNC_V_STATUS && v < MNC_V_COUNT; }

/* Argument kinds. K_CONTENT is an object whose member values are content (a private state, a
 * broker's receipt): they may be released, as objects' values, to a recipient in scope; its
 * member names and everything else a request carries are identifiers (docs/protocol.md). */
enum kind {
    K_NAME,
    K_OID,
    K_KEY,
    K_OBJECT,
    K_ARRAY,
    K_INT,
    K_BOOL,
    K_CHANNEL,
    K_TEXT,
    K_UID,
    K_PATH,
    K_B64,
    K_CONTENT
};
static const char *const kind_names[] = {"name",    "oid",  "key", "object", "array", "int",    "bool",
                                         "channel", "text", "uid", "path",   "b64",   "content"};

typedef struct arg {
    const char *key;
    enum kind kind;
    bool required;
    size_t off; /* offset of the destination member in mnc_request */
} arg;

#define A(k, kind, req, member)                                                                                        \
    {                                                                                                                  \
        k, kind, req, offsetof(mnc_request, member)                                                                    \
    }
#define MAX_ARGS 10

static const arg verb_args[MNC_V_COUNT][MAX_ARGS] = {
    [MNC_V_DISCLOSE] = {A("contract", K_NAME, false, contract), A("purpose", K_NAME, false, purpose),
                        A("recipient", K_NAME, false, recipient), A("state", K_CONTENT, true, state),
                        A("candidates", K_ARRAY, false, candidates), A("release", K_NAME, false, release)},
    [MNC_V_SEND] = {A("object", K_OID, true, object), A("to", K_NAME, true, to),
                    A("channel", K_CHANNEL, false, channel), A("purpose", K_NAME, false, purpose)},
    [MNC_V_RECV] = {A("object", K_OID, false, object), A("max", K_INT, false, max),
                    A("purpose", K_NAME, false, purpose)},
    [MNC_V_FORWARD] = {A("object", K_OID, true, object), A("to", K_NAME, true, to),
                       A("purpose", K_NAME, false, purpose)},
    [MNC_V_DERIVE] = {A("object", K_OID, true, object), A("fields", K_ARRAY, false, fields),
                      A("sinks", K_ARRAY, false, sinks), A("lifetime", K_OBJECT, false, lifetime),
                      A("memory", K_BOOL, false, memory)},
    [MNC_V_LOG] = {A("object", K_OID, true, object), A("sink", K_NAME, true, sink),
                   A("purpose", K_NAME, false, purpose)},
    [MNC_V_MEM_PUT] = {A("key", K_KEY, true, key), A("object", K_OID, true, object), A("store", K_NAME, false, store),
                       A("purpose", K_NAME, false, purpose)},
    [MNC_V_MEM_GET] = {A("key", K_KEY, true, key), A("store", K_NAME, false, store),
                       A("purpose", K_NAME, false, purpose)},
    [MNC_V_TOOL] = {A("object", K_OID, true, object), A("tool", K_NAME, true, tool),
                    A("purpose", K_NAME, false, purpose)},
    [MNC_V_WHOAMI] = {{0}},
    [MNC_V_STATUS] = {{0}},
    [MNC_V_LIST] = {A("max", K_INT, false, max)},
    [MNC_V_REVOKE] = {A("object", K_OID, true, object)},
    [MNC_V_APPROVE] = {A("request", K_TEXT, true, request_id), A("deny", K_BOOL, false, deny)},
    [MNC_V_AUDIT] = {A("max", K_INT, false, max)},
    [MNC_V_AGENT_REGISTER] = {A("agent", K_NAME, true, agent), A("cgroup", K_TEXT, true, cgroup),
                              A("uid", K_UID, false, uid), A("root", K_BOOL, false, run_as_root),
                              A("workspaces", K_ARRAY, false, workspaces),
                              A("tainted_dirs", K_ARRAY, false, tainted_dirs), A("stdio", K_NAME, false, stdio),
                              A("reads", K_ARRAY, false, reads), A("fds", K_ARRAY, false, fds)},
    [MNC_V_TAINT_RESET] = {A("agent", K_NAME, true, agent)},
    [MNC_V_DISCLOSE_STATUS] = {A("request", K_TEXT, true, request_id)},
    [MNC_V_BROKER_NEXT] = {{0}},
    [MNC_V_BROKER_REPLY] = {A("request", K_TEXT, true, request_id), A("receipt", K_CONTENT, false, receipt),
                            A("failure", K_NAME, false, failure)},
    [MNC_V_APPROVALS] = {A("max", K_INT, false, max)},
    [MNC_V_WORKSPACE_CLEAR] = {A("path", K_PATH, true, path)},
    [MNC_V_QUARANTINE_PUT] = {A("agent", K_NAME, true, agent), A("stream", K_NAME, true, stream),
                              A("data", K_B64, true, data), A("lost", K_UID, false, lost)},
};

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return false;
    }
    return true;
}

static bool valid_key(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > MNC_PROTO_MAX_KEY)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-' || c == '/'))
            return false;
    }
    return true;
}

static bool valid_oid(const char *s)
{
    if (strlen(s) != 32)
        return false;
    for (int i = 0; i < 32; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
            return false;
    return true;
}

static int check_arg(const arg *a, const cJSON *v, mnc_request *r, char *err, size_t errlen)
{
    char *dst = (char *)r + a->off;
    switch (a->kind) {
    case K_NAME:
    case K_OID:
    case K_KEY:
    case K_CHANNEL:
    case K_TEXT: {
        if (!cJSON_IsString(v)) {
            snprintf(err, errlen, "\"%s\" must be a string", a->key);
            return -1;
        }
        const char *s = v->valuestring;
        bool ok = a->kind == K_NAME      ? valid_name(s)
                  : a->kind == K_OID     ? valid_oid(s)
                  : a->kind == K_KEY     ? valid_key(s)
                  : a->kind == K_CHANNEL ? (strcmp(s, "message") == 0 || strcmp(s, "tool") == 0)
                                         : (strlen(s) >= 1 && strlen(s) <= 255);
        if (!ok) {
            const char *want = a->kind == K_NAME      ? "a name ([A-Za-z0-9_.:-]{1,63})"
                               : a->kind == K_OID     ? "an object id (32 hex digits)"
                               : a->kind == K_KEY     ? "a key ([A-Za-z0-9_.:/-]{1,255})"
                               : a->kind == K_CHANNEL ? "\"message\" or \"tool\""
                                                      : "a string of 1..255 bytes";
            snprintf(err, errlen, "\"%s\" must be %s", a->key, want);
            return -1;
        }
        *(const char **)dst = s;
        return 0;
    }
    case K_OBJECT:
    case K_CONTENT:
        if (!cJSON_IsObject(v)) {
            snprintf(err, errlen, "\"%s\" must be an object", a->key);
            return -1;
        }
        *(const cJSON **)dst = v;
        return 0;
    case K_ARRAY:
        if (!cJSON_IsArray(v)) {
            snprintf(err, errlen, "\"%s\" must be an array", a->key);
            return -1;
        }
        *(const cJSON **)dst = v;
        return 0;
    case K_INT: {
        double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
        int hi = a->off == offsetof(mnc_request, max) && r->verb == MNC_V_AUDIT ? 10000 : MNC_PROTO_MAX_BATCH;
        /* Range first: casting an out-of-range double (1e20) to int is undefined behaviour. */
        if (!cJSON_IsNumber(v) || !(d >= 1 && d <= hi) || d != (double)(int)d) {
            snprintf(err, errlen, "\"%s\" must be an integer 1..%d", a->key, hi);
            return -1;
        }
        *(int *)dst = (int)d;
        return 0;
    }
    case K_UID: {
        /* a uid: 0..2^32-2 ((uid_t)-1 means "no change" to the kernel, never a real uid) */
        double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
        if (!cJSON_IsNumber(v) || !(d >= 0 && d <= 4294967294.0) || d != (double)(long long)d) {
            snprintf(err, errlen, "\"%s\" must be a uid (an integer 0..4294967294)", a->key);
            return -1;
        }
        *(long long *)dst = (long long)d;
        return 0;
    }
    case K_PATH: {
        /* an absolute path that fits PATH_MAX (4096 with its NUL) */
        size_t n = cJSON_IsString(v) ? strlen(v->valuestring) : 0;
        if (!cJSON_IsString(v) || n < 1 || n > 4095 || v->valuestring[0] != '/') {
            snprintf(err, errlen, "\"%s\" must be an absolute path (1..4095 bytes)", a->key);
            return -1;
        }
        *(const char **)dst = v->valuestring;
        return 0;
    }
    case K_B64: {
        /* base64 (RFC 4648, padded), any length the line allows; decoded by the verb */
        if (!cJSON_IsString(v)) {
            snprintf(err, errlen, "\"%s\" must be a string", a->key);
            return -1;
        }
        const char *s = v->valuestring;
        size_t n = strlen(s);
        bool ok = n % 4 == 0;
        for (size_t i = 0; ok && i < n; i++) {
            char ch = s[i];
            bool pad = ch == '=' && i >= n - 2 && (i == n - 1 || s[n - 1] == '=');
            ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '+' ||
                 ch == '/' || pad;
        }
        if (!ok) {
            snprintf(err, errlen, "\"%s\" must be base64", a->key);
            return -1;
        }
        *(const char **)dst = s;
        return 0;
    }
    case K_BOOL:
        if (!cJSON_IsBool(v)) {
            snprintf(err, errlen, "\"%s\" must be true or false", a->key);
            return -1;
        }
        *(int *)dst = cJSON_IsTrue(v) ? 1 : 0;
        return 0;
    }
    snprintf(err, errlen, "internal: bad argument kind");
    return -1;
}

void mnc_request_free(mnc_request *r)
{
    if (r->root)
        cJSON_Delete(r->root);
    memset(r, 0, sizeof(*r));
}

/* The hot verbs' plain lines are read without a tree (reqscan.h); every other line, and every
 * error, goes through the full parser below. */
int mnc_request_parse(const char *line, size_t len, mnc_request *out, cJSON **id_out, char *err, size_t errlen)
{
    if (id_out)
        *id_out = NULL;
    if (mnc_reqscan(line, len, out) == 1)
        return 0;
    return mnc_request_parse_tree(line, len, out, id_out, err, errlen);
}

int mnc_request_parse_tree(const char *line, size_t len, mnc_request *out, cJSON **id_out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->memory = -1;
    out->max = -1;
    out->uid = -1;
    out->run_as_root = -1;
    out->lost = -1;
    out->deny = -1;
    if (id_out)
        *id_out = NULL;
    if (len > MNC_PROTO_MAX_LINE) {
        snprintf(err, errlen, "request longer than %u bytes", MNC_PROTO_MAX_LINE);
        return -1;
    }
    /* cJSON would stop at an embedded NUL and accept the prefix; a NUL is never valid here. */
    if (memchr(line, '\0', len)) {
        snprintf(err, errlen, "malformed JSON: NUL byte in request");
        return -1;
    }
    const char *end = NULL;
    /* plain JSON (a disclose's state) in one pass; anything else, and every error, by cJSON */
    cJSON *root = mnc_jtree_parse(line, len, &end);
    if (!root)
        root = cJSON_ParseWithLengthOpts(line, len, &end, false);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long pos = at && at >= line && at <= line + len ? (long)(at - line) : -1;
        snprintf(err, errlen, "malformed JSON (near byte %ld)", pos);
        return -1;
    }
    /* Only whitespace may follow the object. */
    for (const char *p = end; p && p < line + len; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r') {
            snprintf(err, errlen, "malformed JSON: trailing bytes after the request object");
            cJSON_Delete(root);
            return -1;
        }
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "a request must be a JSON object");
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    if (id && !cJSON_IsString(id) && !cJSON_IsNumber(id)) {
        snprintf(err, errlen, "\"id\" must be a string or a number");
        cJSON_Delete(root);
        return -1;
    }
    if (id && cJSON_IsString(id) && strlen(id->valuestring) > 255) {
        snprintf(err, errlen, "\"id\" longer than 255 bytes");
        cJSON_Delete(root);
        return -1;
    }
    if (id && id_out)
        *id_out = cJSON_Duplicate(id, false);
    const cJSON *verb = cJSON_GetObjectItemCaseSensitive(root, "verb");
    if (!cJSON_IsString(verb)) {
        snprintf(err, errlen, "missing \"verb\" (a string)");
        cJSON_Delete(root);
        return -1;
    }
    int v = mnc_verb_from_name(verb->valuestring);
    if (v < 0) {
        snprintf(err, errlen, "unknown verb \"%.64s\"", verb->valuestring);
        cJSON_Delete(root);
        return -1;
    }
    out->verb = (mnc_verb)v;
    out->id = id;
    const arg *args = verb_args[v];
    /* Every key must be a common key or one of the verb's; duplicates are ambiguous. */
    for (const cJSON *it = root->child; it; it = it->next) {
        const char *k = it->string ? it->string : "";
        for (const cJSON *jt = it->next; jt; jt = jt->next)
            if (jt->string && strcmp(jt->string, k) == 0) {
                snprintf(err, errlen, "duplicate key \"%.64s\"", k);
                goto fail;
            }
        if (strcmp(k, "verb") == 0 || strcmp(k, "id") == 0)
            continue;
        if (strcmp(k, "as") == 0) {
            if (!cJSON_IsString(it) || !valid_name(it->valuestring)) {
                snprintf(err, errlen, "\"as\" must be a name ([A-Za-z0-9_.:-]{1,63})");
                goto fail;
            }
            out->as = it->valuestring;
            continue;
        }
        const arg *a = NULL;
        for (int i = 0; i < MAX_ARGS && args[i].key; i++)
            if (strcmp(args[i].key, k) == 0)
                a = &args[i];
        if (!a) {
            snprintf(err, errlen, "unknown field \"%.64s\" for verb %s", k, verb_names[v]);
            goto fail;
        }
        out->root = root; /* so check_arg can compute against out */
        if (check_arg(a, it, out, err, errlen) != 0)
            goto fail;
    }
    for (int i = 0; i < MAX_ARGS && args[i].key; i++)
        if (args[i].required && !cJSON_GetObjectItemCaseSensitive(root, args[i].key)) {
            snprintf(err, errlen, "verb %s needs \"%s\"", verb_names[v], args[i].key);
            goto fail;
        }
    if (v == MNC_V_BROKER_REPLY && (out->receipt != NULL) == (out->failure != NULL)) {
        snprintf(err, errlen, "broker.reply needs exactly one of \"receipt\" and \"failure\"");
        goto fail;
    }
    if (v == MNC_V_DISCLOSE) {
        bool by_contract = out->contract != NULL;
        bool by_purpose = out->purpose != NULL || out->recipient != NULL;
        if (by_contract == by_purpose || (by_purpose && !(out->purpose && out->recipient))) {
            snprintf(err, errlen,
                     "disclose needs either \"contract\" or both \"purpose\" and "
                     "\"recipient\"");
            goto fail;
        }
    }
    out->root = root;
    if (id_out && *id_out) { /* only error paths hand the id copy out */
        cJSON_Delete(*id_out);
        *id_out = NULL;
    }
    return 0;
fail:
    cJSON_Delete(root);
    memset(out, 0, sizeof(*out));
    return -1; /* *id_out (if any) is the caller's, for the error response */
}

static cJSON *resp_base(const cJSON *id, bool ok, const char *decision, mnc_reason reason)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (id) {
        cJSON *c = cJSON_Duplicate(id, false);
        if (!c) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, "id", c);
    }
    if (!cJSON_AddBoolToObject(o, "ok", ok) || !cJSON_AddStringToObject(o, "decision", decision) ||
        !cJSON_AddStringToObject(o, "reason", mnc_reason_name(reason))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *mnc_resp_new(const cJSON *id, bool ok, const char *decision, mnc_reason reason)
{
    return resp_base(id, ok, decision, reason);
}

static cJSON *resp_msg(const cJSON *id, const char *decision, mnc_reason reason, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    cJSON *o = resp_base(id, false, decision, reason);
    if (o && !cJSON_AddStringToObject(o, "error", msg)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *mnc_resp_error(const cJSON *id, mnc_reason reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cJSON *o = resp_msg(id, "error", reason, fmt, ap);
    va_end(ap);
    return o;
}

cJSON *mnc_resp_deny(const cJSON *id, mnc_reason reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cJSON *o = resp_msg(id, "deny", reason, fmt, ap);
    va_end(ap);
    return o;
}

/* Printed by json_write.h's mnc_json_print (cJSON's bytes, without its intermediate buffers and
 * printf per number) into a buffer that ends with the newline and a NUL. */
char *mnc_resp_line(const cJSON *resp, size_t *len)
{
    mnc_jbuf b = {0};
    if (mnc_json_print(&b, resp) != 0 || mnc_jbuf_reserve(&b, 2) != 0) {
        free(b.p);
        return NULL;
    }
    b.p[b.len++] = '\n';
    b.p[b.len] = '\0';
    if (len)
        *len = b.len;
    return b.p;
}

int mnc_client_connect(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errlen, "socket path too long: %s", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        snprintf(err, errlen, "cannot connect to mncd at %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

#define CLIENT_MAX_RESP (64u << 20)

bool mnc_spin_readable(int fd, long spin_ns)
{
    struct timespec t0, t;
    if (clock_gettime(CLOCK_MONOTONIC, &t0) != 0)
        return false;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 0);
        if (r > 0)
            return true;
        if ((r < 0 && errno != EINTR) || clock_gettime(CLOCK_MONOTONIC, &t) != 0)
            return false; /* the blocking read that follows reports the fd's trouble */
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= spin_ns)
            return false;
    }
}

/* Blocks until fd is readable, has hung up or has an error (the read that follows tells which).
 * False with errno only if poll itself fails. */
static bool wait_readable(int fd)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, -1);
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
}

int mnc_client_call(int fd, const cJSON *req, cJSON **resp, char *err, size_t errlen)
{
    return mnc_client_call_spin(fd, req, 0, resp, err, errlen);
}

int mnc_client_call_spin(int fd, const cJSON *req, long spin_ns, cJSON **resp, char *err, size_t errlen)
{
    *resp = NULL;
    size_t len;
    char *line = mnc_resp_line(req, &len);
    if (!line) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errlen, "write to mncd: %s", strerror(errno));
            free(line);
            return -1;
        }
        off += (size_t)w;
    }
    free(line);
    if (spin_ns > 0)
        mnc_spin_readable(fd, spin_ns);
    /* most responses fit the stack buffer; a longer one moves to the heap (a 4 KiB malloc per
     * call was a large-bin request, which consolidates glibc's fast bins every time) */
    char small[4096];
    char *buf = small, *heap = NULL; /* buf is small or heap */
    size_t cap = sizeof(small), n = 0;
    int rc = -1;
    for (;;) {
        if (n == cap) {
            if (cap >= CLIENT_MAX_RESP) {
                snprintf(err, errlen, "response longer than %u bytes", CLIENT_MAX_RESP);
                break;
            }
            char *nb = realloc(heap, cap * 2);
            if (!nb) {
                snprintf(err, errlen, "out of memory");
                break;
            }
            if (!heap)
                memcpy(nb, small, n);
            buf = heap = nb;
            cap *= 2;
        }
        /* Wait in poll(), not in read(): mncd taking in the request frees the socket's send
         * space, and the kernel wakes whoever sleeps on this socket for that. A reader blocked
         * in read() is woken for nothing and goes back to sleep - a wake-up that mncd pays for
         * on every request (17% of its CPU at 64 clients); poll() sleeps only for POLLIN
         * (docs/mncd.md, "Clients wait in poll()"). */
        if (!wait_readable(fd)) {
            snprintf(err, errlen, "poll on the mncd connection: %s", strerror(errno));
            break;
        }
        /* read what is there: the protocol is strictly request/response, so nothing after the
         * newline belongs to anyone else */
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "read from mncd: %s", strerror(errno));
            break;
        }
        if (r == 0) {
            snprintf(err, errlen, "mncd closed the connection");
            break;
        }
        char *nl = memchr(buf + n, '\n', (size_t)r);
        n += (size_t)r;
        if (nl) {
            *resp = cJSON_ParseWithLength(buf, (size_t)(nl - buf));
            if (*resp)
                rc = 0;
            else
                snprintf(err, errlen, "mncd sent a malformed response");
            break;
        }
    }
    free(heap);
    return rc;
}

cJSON *mnc_protocol_table(void)
{
    cJSON *t = cJSON_CreateObject();
    cJSON *verbs = t ? cJSON_AddObjectToObject(t, "verbs") : NULL;
    bool ok = verbs && cJSON_AddStringToObject(t, "common", "id, as") &&
              cJSON_AddStringToObject(t, "note",
                                      "every member of a request and its kind; kind content: an object whose member "
                                      "values are content, released only as objects' values");
    for (int v = 0; ok && v < MNC_V_COUNT; v++) {
        cJSON *e = cJSON_AddObjectToObject(verbs, verb_names[v]);
        cJSON *args = e ? cJSON_AddArrayToObject(e, "args") : NULL;
        ok = args && cJSON_AddBoolToObject(e, "admin", mnc_verb_is_admin((mnc_verb)v));
        for (int i = 0; ok && i < MAX_ARGS && verb_args[v][i].key; i++) {
            const arg *a = &verb_args[v][i];
            cJSON *x = cJSON_CreateObject();
            ok = x && cJSON_AddItemToArray(args, x) && cJSON_AddStringToObject(x, "name", a->key) &&
                 cJSON_AddStringToObject(x, "kind", kind_names[a->kind]) &&
                 cJSON_AddBoolToObject(x, "required", a->required);
        }
    }
    if (!ok) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}
