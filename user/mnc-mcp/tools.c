// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools.c - mnc-mcp's tools: one MCP tool per mncd agent verb (see mcp.h, docs/mcp.md).
 *
 * Each call becomes exactly one mncd request on mncd's socket, written by this process, so mncd
 * decides who the caller is from the kernel. No tool takes an identity ("as", an agent name or
 * a credential): the input schemas forbid unknown arguments, and the requests built here never
 * carry one. What comes back to the model is mncd's response (its "message" / "argument" text is
 * rendered by mncd from the object's authorised contract fields; nothing a model or another
 * agent wrote is relayed), as structuredContent, plus a short text rendering of it. A refusal is
 * a result with isError true and mncd's reason code, so the model can see and react to it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "mnc/policy.h" /* the strict JSON reader (mnc_json_parse_strict, mnc_errors) */
#include "mnc/protocol.h"
#include "mnc_util.h"

/* ---- schemas -------------------------------------------------------------------------- */

#define S_NAME(d) "{\"type\":\"string\",\"minLength\":1,\"maxLength\":63,\"description\":\"" d "\"}"
#define S_OBJ                                                                                                          \
    "{\"type\":\"string\",\"minLength\":32,\"maxLength\":32,\"description\":\"an object id (32 hex digits) from "      \
    "mnc_disclose, mnc_receive, mnc_memory_read or mnc_derive\"}"
#define S_PURPOSE S_NAME("optional: the purpose you act under; mnc checks it against the object's contract purpose")
#define S_KEY                                                                                                          \
    "{\"type\":\"string\",\"minLength\":1,\"maxLength\":255,\"description\":\"memory key ([A-Za-z0-9_.:/-])\"}"
#define S_STORE S_NAME("optional: the memory store (default: the policy's first)")
#define OUT_COMMON                                                                                                     \
    "\"ok\":{\"type\":\"boolean\",\"description\":\"true iff mnc performed the operation\"},"                          \
    "\"decision\":{\"type\":\"string\",\"description\":\"allow, deny, delegate, approval, abstain or error\"},"        \
    "\"reason\":{\"type\":\"string\",\"description\":\"mnc's reason code: ok, sink_not_allowed, expired, recipient, "  \
    "log_not_allowed, memory_not_allowed, ...\"},"                                                                     \
    "\"error\":{\"type\":\"string\",\"description\":\"why it was refused\"}"
#define OUT(extra)                                                                                                     \
    "{\"type\":\"object\",\"properties\":{" OUT_COMMON extra "},\"required\":[\"ok\",\"decision\",\"reason\"]}"
#define S_OBJECT_OUT                                                                                                   \
    ",\"object\":{\"type\":\"object\",\"description\":\"the scoped object: id, contract, purpose, origin, form, "      \
    "scope (recipient, fields, sinks, lifetime, memory), expiry, turns_left, holders, values\"}"
#define S_MESSAGE_OUT                                                                                                  \
    ",\"message\":{\"type\":\"string\",\"description\":\"the released text, rendered by mnc from the contract's "      \
    "fields only\"}"

typedef struct tool_def {
    const char *name, *title, *verb, *description, *input, *output;
} tool_def;

/* The table is laid out by hand: clang-format 14 does not settle on a layout for it. */
// clang-format off
static const tool_def TOOLS[] = {
    {"mnc_disclose", "Disclose under a contract", "disclose",
     "Tell another agent something derived from private information, through mnc. Name the "
     "contract (or the purpose and recipient) and give the private state, either as a JSON file "
     "(state_file: {\"subject\": ..., \"fields\": {...}}) or inline (fields, optional subject). "
     "mnc selects the least revealing form the recipient needs, issues it as a scoped object and "
     "queues it to the contract's recipient; you get the selected form, its risk, the exact text "
     "released and the object id. Only that text leaves; never send the private state any other "
     "way. If no form is admissible the result says what happened instead (outcome "
     "pending_delegation, pending_approval or abstained): that is an answer, not a failure, and "
     "nothing was released.",
     "{\"type\":\"object\",\"properties\":{"
     "\"contract\":" S_NAME("the contract id (or give purpose and recipient)") ","
     "\"purpose\":" S_NAME("the purpose of the disclosure (with recipient, instead of contract)") ","
     "\"recipient\":" S_NAME("the receiving agent (with purpose, instead of contract)") ","
     "\"state_file\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4095,\"description\":\"a JSON file with the private state {\\\"subject\\\":...,\\\"fields\\\":{...}}, read by mnc-mcp as you\"},"
     "\"fields\":{\"type\":\"object\",\"maxProperties\":256,\"additionalProperties\":{\"type\":[\"string\",\"number\",\"boolean\"]},\"description\":\"the private state inline: field name -> value (instead of state_file)\"},"
     "\"subject\":" S_NAME("optional: whom the state is about (enables the per-subject leakage budget)")
     "},\"additionalProperties\":false}",
     OUT(",\"outcome\":{\"type\":\"string\",\"description\":\"selected, pending_delegation, pending_approval or abstained\"},"
         "\"form\":{\"type\":\"string\",\"description\":\"the selected form\"},"
         "\"risk\":{\"type\":[\"number\",\"null\"],\"description\":\"the selected form's risk\"},"
         "\"object_id\":{\"type\":\"string\",\"description\":\"the issued object's id\"},"
         "\"queued_to\":{\"type\":\"string\",\"description\":\"the recipient it was queued to\"},"
         "\"request\":{\"type\":\"string\",\"description\":\"MNC-D request id (delegation or approval pending)\"},"
         "\"detail\":{\"type\":\"string\"},"
         "\"candidates\":{\"type\":\"array\",\"description\":\"every candidate form with its risk and verdict\"}"
         S_MESSAGE_OUT S_OBJECT_OUT)},
    {"mnc_receive", "Receive disclosed objects", "recv",
     "Take the messages other agents disclosed to you through mnc (or, with object, re-read one "
     "you are the recipient of). Each delivery uses one turn of the object's lifetime. What you "
     "receive stays inside its scope: pass it on only with mnc_forward, mnc_log or "
     "mnc_memory_write (mnc checks each); putting it into any other tool, a shell command, an "
     "HTTP request or a file is refused by the kernel once you have received it.",
     "{\"type\":\"object\",\"properties\":{"
     "\"object\":" S_OBJ ","
     "\"max\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"at most this many messages (default 100)\"},"
     "\"purpose\":" S_PURPOSE "},\"additionalProperties\":false}",
     OUT(",\"messages\":{\"type\":\"array\",\"description\":\"deliveries: {from, object, message}\"},"
         "\"denied\":{\"type\":\"array\",\"description\":\"queued objects that were not delivered (expired, revoked, ...) with the reason\"}"
         S_MESSAGE_OUT S_OBJECT_OUT)},
    {"mnc_forward", "Forward an object", "forward",
     "Pass an object you hold on to another agent or sink. mnc allows it only if the object's "
     "contract lists that receiver among its sinks and the object is still alive; otherwise the "
     "result is a denial with its reason (sink_not_allowed, expired, ...). Do not try to pass the "
     "content another way.",
     "{\"type\":\"object\",\"properties\":{\"object\":" S_OBJ ",\"to\":" S_NAME("the receiving agent or sink") ","
     "\"purpose\":" S_PURPOSE "},\"required\":[\"object\",\"to\"],\"additionalProperties\":false}",
     OUT(",\"queued_to\":{\"type\":\"string\"},\"argument\":{\"type\":\"string\",\"description\":\"for an external sink: the authorised text to send\"}")},
    {"mnc_log", "Log an object", "log",
     "Write an object's authorised text to a log sink. Allowed only when the object's contract "
     "lists that log sink; otherwise a denial (log_not_allowed).",
     "{\"type\":\"object\",\"properties\":{\"object\":" S_OBJ ",\"sink\":" S_NAME("the log sink") ","
     "\"purpose\":" S_PURPOSE "},\"required\":[\"object\",\"sink\"],\"additionalProperties\":false}",
     OUT("")},
    {"mnc_memory_write", "Remember an object", "mem.put",
     "Store an object in durable memory under a key. Allowed only when the object's contract "
     "permits memory; otherwise a denial (memory_not_allowed). The stored object keeps its scope "
     "and lifetime.",
     "{\"type\":\"object\",\"properties\":{\"key\":" S_KEY ",\"object\":" S_OBJ ",\"store\":" S_STORE ","
     "\"purpose\":" S_PURPOSE "},\"required\":[\"key\",\"object\"],\"additionalProperties\":false}",
     OUT("")},
    {"mnc_memory_read", "Recall an object", "mem.get",
     "Read an object back from durable memory by key. mnc repeats the recipient, purpose and "
     "lifetime checks (an expired object is refused: expired) and the read uses a turn. The same "
     "rules as for mnc_receive apply to what you read.",
     "{\"type\":\"object\",\"properties\":{\"key\":" S_KEY ",\"store\":" S_STORE ","
     "\"purpose\":" S_PURPOSE "},\"required\":[\"key\"],\"additionalProperties\":false}",
     OUT(S_MESSAGE_OUT S_OBJECT_OUT)},
    {"mnc_derive", "Derive a narrower object", "derive",
     "Make a narrower copy of an object you hold: fewer fields, fewer sinks, a shorter lifetime, "
     "or no memory. Widening anything is refused (widen_fields, widen_sinks, widen_lifetime, "
     "widen_memory). The copy's turns come out of the original's.",
     "{\"type\":\"object\",\"properties\":{\"object\":" S_OBJ ","
     "\"fields\":{\"type\":\"array\",\"maxItems\":64,\"items\":" S_NAME("a field") ",\"description\":\"keep only these fields\"},"
     "\"sinks\":{\"type\":\"array\",\"maxItems\":64,\"items\":" S_NAME("a sink") ",\"description\":\"keep only these sinks\"},"
     "\"lifetime_seconds\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":2147483647,\"description\":\"a shorter lifetime in seconds\"},"
     "\"lifetime_turns\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":2147483647,\"description\":\"fewer deliveries\"},"
     "\"memory\":{\"type\":\"boolean\",\"description\":\"false drops the memory permission\"}"
     "},\"required\":[\"object\"],\"additionalProperties\":false}",
     OUT(S_OBJECT_OUT)},
    {"mnc_status", "Who am I to mnc", "whoami",
     "Show who mnc (mncd) says you are - decided by the kernel from the process you run in, not "
     "by anything you say - the contracts you may disclose or receive under, and your taint: "
     "what you may still do with data you received (mncd's record and the kernel's entry).",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     OUT(",\"agent\":{\"type\":[\"string\",\"null\"]},\"via\":{\"type\":\"string\",\"description\":\"cgroup, uid or none\"},"
         "\"uid\":{\"type\":\"number\"},\"pid\":{\"type\":\"number\"},\"cgroup\":{\"type\":\"string\"},\"admin\":{\"type\":\"boolean\"},"
         "\"contracts\":{\"type\":[\"object\",\"null\"],\"description\":\"mncd's policy (null when you are no agent): disclose: contracts you are an issuer of, with the recipient; receive: contracts you are the recipient of, with the issuers\","
         "\"properties\":{\"disclose\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"contract\",\"purpose\",\"recipient\"]}},"
         "\"receive\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"contract\",\"purpose\",\"issuers\"]}}},\"required\":[\"disclose\",\"receive\"]},"
         "\"taint\":{\"type\":[\"object\",\"null\"],\"description\":\"mncd's view (null when you are no agent): tainted, objects (delivered to you, up to 64), n_objects, sinks (intersection of their sinks), memory; "
         "kernel: the taint entry the kernel enforces for all your processes (entry, tainted, sinks, log, memory, forward, external, generation), null when mncd runs without the kernel layer\","
         "\"properties\":{\"tainted\":{\"type\":\"boolean\"},\"objects\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"n_objects\":{\"type\":\"number\"},"
         "\"sinks\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"memory\":{\"type\":\"boolean\"},\"kernel\":{\"type\":[\"object\",\"null\"]}},"
         "\"required\":[\"tainted\",\"objects\",\"n_objects\",\"sinks\",\"memory\",\"kernel\"]}")},
};
// clang-format on
#define N_TOOLS (sizeof(TOOLS) / sizeof(TOOLS[0]))

cJSON *mcp_tools_new(void)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < N_TOOLS; i++) {
        const tool_def *d = &TOOLS[i];
        cJSON *t = cJSON_CreateObject();
        cJSON *in = cJSON_Parse(d->input), *out = cJSON_Parse(d->output);
        if (!t || !in || !out || !cJSON_AddStringToObject(t, "name", d->name) ||
            !cJSON_AddStringToObject(t, "title", d->title) ||
            !cJSON_AddStringToObject(t, "description", d->description)) {
            /* a schema that does not parse is a bug here, caught by every test run */
            if (!in || !out)
                fprintf(stderr, "mnc-mcp: internal error: schema of %s does not parse\n", d->name);
            cJSON_Delete(t);
            cJSON_Delete(in);
            cJSON_Delete(out);
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToObject(t, "inputSchema", in);
        cJSON_AddItemToObject(t, "outputSchema", out);
        cJSON_AddItemToArray(a, t);
    }
    return a;
}

/* ---- schema subset checker --------------------------------------------------------------- */

static bool type_is(const char *type, const cJSON *v)
{
    if (!strcmp(type, "string"))
        return cJSON_IsString(v);
    if (!strcmp(type, "number"))
        return cJSON_IsNumber(v);
    if (!strcmp(type, "integer"))
        return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble);
    if (!strcmp(type, "boolean"))
        return cJSON_IsBool(v);
    if (!strcmp(type, "object"))
        return cJSON_IsObject(v);
    if (!strcmp(type, "array"))
        return cJSON_IsArray(v);
    if (!strcmp(type, "null"))
        return cJSON_IsNull(v);
    return false;
}

static double num(const cJSON *s, const char *k, double dflt)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(s, k);
    return cJSON_IsNumber(x) ? x->valuedouble : dflt;
}

int mcp_schema_check(const cJSON *schema, const cJSON *v, const char *path, char *err, size_t errlen)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(schema, "type");
    bool ok = !type;
    if (cJSON_IsString(type))
        ok = type_is(type->valuestring, v);
    for (const cJSON *t = cJSON_IsArray(type) ? type->child : NULL; t && !ok; t = t->next)
        ok = cJSON_IsString(t) && type_is(t->valuestring, v);
    if (!ok) {
        char *ts = cJSON_PrintUnformatted(type);
        snprintf(err, errlen, "%s: must be of type %s", path, ts ? ts : "?");
        cJSON_free(ts);
        return -1;
    }
    if (cJSON_IsString(v)) {
        size_t n = strlen(v->valuestring); /* bytes; our limits are ASCII names and paths */
        if ((double)n < num(schema, "minLength", 0) || (double)n > num(schema, "maxLength", INFINITY)) {
            snprintf(err, errlen, "%s: length %zu is outside [%g, %g]", path, n, num(schema, "minLength", 0),
                     num(schema, "maxLength", INFINITY));
            return -1;
        }
    }
    if (cJSON_IsNumber(v) &&
        (v->valuedouble < num(schema, "minimum", -INFINITY) || v->valuedouble > num(schema, "maximum", INFINITY))) {
        snprintf(err, errlen, "%s: %g is outside [%g, %g]", path, v->valuedouble, num(schema, "minimum", -INFINITY),
                 num(schema, "maximum", INFINITY));
        return -1;
    }
    char sub[256];
    if (cJSON_IsArray(v)) {
        int n = cJSON_GetArraySize(v);
        if ((double)n > num(schema, "maxItems", INFINITY)) {
            snprintf(err, errlen, "%s: more than %g items", path, num(schema, "maxItems", 0));
            return -1;
        }
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items");
        int i = 0;
        for (const cJSON *it = v->child; items && it; it = it->next, i++) {
            snprintf(sub, sizeof(sub), "%s[%d]", path, i);
            if (mcp_schema_check(items, it, sub, err, errlen) != 0)
                return -1;
        }
    }
    if (cJSON_IsObject(v)) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
        const cJSON *addl = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
        int n = cJSON_GetArraySize(v);
        if ((double)n > num(schema, "maxProperties", INFINITY)) {
            snprintf(err, errlen, "%s: more than %g members", path, num(schema, "maxProperties", 0));
            return -1;
        }
        for (const cJSON *it = v->child; it; it = it->next) {
            snprintf(sub, sizeof(sub), "%s.%.100s", path, it->string);
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, it->string);
            if (!ps && cJSON_IsFalse(addl)) {
                snprintf(err, errlen, "%s: unknown argument \"%.100s\"", path, it->string);
                return -1;
            }
            if (!ps && cJSON_IsObject(addl))
                ps = addl;
            if (ps && mcp_schema_check(ps, it, sub, err, errlen) != 0)
                return -1;
        }
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
        for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next)
            if (cJSON_IsString(r) && !cJSON_GetObjectItemCaseSensitive(v, r->valuestring)) {
                snprintf(err, errlen, "%s: missing required argument \"%s\"", path, r->valuestring);
                return -1;
            }
    }
    return 0;
}

/* ---- a growing text buffer for the text rendering ---------------------------------------- */

typedef struct sbuf {
    char *s;
    int n, cap; /* s[0..n) written, NUL at s[n]; capacity in bytes (mnc_grow's int) */
    bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    /* room for a typical rendering up front, so the first vsnprintf already fits */
    if (b->oom || mnc_grow((void **)&b->s, &b->cap, b->n, 1, 256) != 0) {
        b->oom = true;
        return;
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, (size_t)(b->cap - b->n), fmt, ap);
        va_end(ap);
        if (k < 0 || k >= INT_MAX - b->n) {
            b->oom = true;
            return;
        }
        if (b->n + k < b->cap) {
            b->n += k;
            return;
        }
        /* byte n + k (the NUL) must fit: grow (doubling) until it does, then print again */
        while (b->cap <= b->n + k)
            if (mnc_grow((void **)&b->s, &b->cap, b->n + k, 1, 256) != 0) {
                b->oom = true;
                return;
            }
    }
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static const char *strd(const cJSON *o, const char *k, const char *dflt)
{
    const char *s = str(o, k);
    return s ? s : dflt;
}

/* "a, b" for a JSON array of strings ("none" if empty) */
static void sb_list(sbuf *b, const cJSON *a)
{
    int n = 0;
    for (const cJSON *it = cJSON_IsArray(a) ? a->child : NULL; it; it = it->next)
        if (cJSON_IsString(it))
            sb_printf(b, "%s%s", n++ ? ", " : "", it->valuestring);
    if (!n)
        sb_printf(b, "none");
}

/* One object's scope in words: what the reader may still do with it. */
static void sb_scope(sbuf *b, const cJSON *obj)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(obj, "scope");
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(obj, "turns_left");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(obj, "expires_ms");
    sb_printf(b, "object %s (contract %s; may go on to: ", strd(obj, "id", "?"), strd(obj, "contract", "?"));
    sb_list(b, cJSON_GetObjectItemCaseSensitive(sc, "sinks"));
    sb_printf(b, "; memory: %s", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "memory")) ? "yes" : "no");
    if (cJSON_IsNumber(tl))
        sb_printf(b, "; turns left %d", tl->valueint);
    if (cJSON_IsNumber(ex))
        sb_printf(b, "; expires at %.0f ms", ex->valuedouble);
    sb_printf(b, ")");
}

/* ---- the calls ------------------------------------------------------------------------- */

/* Sends req to mncd on the session's connection (connected on first use; after any transport
 * failure it is closed and the next call reconnects - a request is never re-sent, since mncd
 * may have acted on it). Between the send and the blocking read it polls the connection for up
 * to MCP_MNCD_SPIN_NS: only while a request is outstanding, so an idle server never spins. */
static int mncd_call(mcp_server *m, const cJSON *req, cJSON **resp, char *err, size_t errlen)
{
    if (m->fd < 0) {
        m->fd = mnc_client_connect(m->socket, err, errlen);
        if (m->fd < 0)
            return -1;
    }
    if (mnc_client_call_spin(m->fd, req, MCP_MNCD_SPIN_NS, resp, err, errlen) != 0) {
        close(m->fd);
        m->fd = -1;
        return -1;
    }
    return 0;
}

static bool copy_str(cJSON *req, const cJSON *args, const char *from, const char *to)
{
    const char *v = str(args, from);
    return !v || cJSON_AddStringToObject(req, to, v);
}

/* Loads the private state for mnc_disclose. The file is opened by mnc-mcp, i.e. by the agent
 * itself (its uid, its Landlock domain): mncd never opens a path an agent names. Returns the
 * state, or NULL with err (*oom on OOM). */
static cJSON *disclose_state(const cJSON *args, char *err, size_t errlen, bool *oom)
{
    const char *file = str(args, "state_file");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(args, "fields");
    const char *subject = str(args, "subject");
    cJSON *st = NULL;
    if (file) {
        char *buf = NULL;
        size_t len = 0;
        mnc_errors errs;
        mnc_errors_init(&errs);
        if (mnc_json_read_file(file, MNC_PROTO_MAX_LINE, &buf, &len, &errs) == 0) {
            st = mnc_json_parse_strict(file, buf, len, &errs);
            free(buf);
        }
        if (!st || !cJSON_IsObject(st)) {
            snprintf(err, errlen, "state_file: %s",
                     errs.n ? errs.msg[0] : "not a JSON object {\"subject\":...,\"fields\":{...}}");
            mnc_errors_free(&errs);
            cJSON_Delete(st);
            return NULL;
        }
        mnc_errors_free(&errs);
    } else {
        st = cJSON_CreateObject();
        cJSON *f = cJSON_Duplicate(fields, 1);
        if (!st || !f) {
            cJSON_Delete(st);
            cJSON_Delete(f);
            *oom = true;
            return NULL;
        }
        cJSON_AddItemToObject(st, "fields", f);
    }
    if (subject) {
        cJSON *s = cJSON_CreateString(subject);
        if (!s) {
            cJSON_Delete(st);
            *oom = true;
            return NULL;
        }
        if (cJSON_GetObjectItemCaseSensitive(st, "subject"))
            cJSON_ReplaceItemInObjectCaseSensitive(st, "subject", s);
        else
            cJSON_AddItemToObject(st, "subject", s);
    }
    return st;
}

/* Builds the mncd request for tool `name` (args passed its schema). Returns 0, -2 with err for
 * arguments that do not fit together, -3 with err for a client-side failure (state file), -1
 * on OOM. */
static int build_request(const char *name, const char *verb, const cJSON *args, cJSON **out, char *err, size_t errlen)
{
    cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "verb", verb))
        goto oom;
    bool ok = true;
    if (!strcmp(name, "mnc_disclose")) {
        bool c = str(args, "contract"), p = str(args, "purpose"), r = str(args, "recipient");
        bool f = str(args, "state_file"), i = cJSON_GetObjectItemCaseSensitive(args, "fields");
        if (c == (p || r) || p != r) {
            snprintf(err, errlen, "mnc_disclose needs either contract, or purpose and recipient");
            cJSON_Delete(req);
            return -2;
        }
        if (f == i) {
            snprintf(err, errlen,
                     "mnc_disclose needs the private state: state_file or fields "
                     "(exactly one)");
            cJSON_Delete(req);
            return -2;
        }
        bool oom = false;
        cJSON *st = disclose_state(args, err, errlen, &oom);
        if (!st) {
            cJSON_Delete(req);
            return oom ? -1 : -3;
        }
        cJSON_AddItemToObject(req, "state", st);
        ok = copy_str(req, args, "contract", "contract") && copy_str(req, args, "purpose", "purpose") &&
             copy_str(req, args, "recipient", "recipient");
    } else if (!strcmp(name, "mnc_derive")) {
        ok = copy_str(req, args, "object", "object");
        const char *arr[] = {"fields", "sinks"};
        for (int k = 0; ok && k < 2; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(args, arr[k]);
            cJSON *d = a ? cJSON_Duplicate(a, 1) : NULL;
            if (a && !d)
                goto oom;
            if (d)
                cJSON_AddItemToObject(req, arr[k], d);
        }
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(args, "lifetime_seconds");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "lifetime_turns");
        if (ok && (s || t)) {
            cJSON *l = cJSON_AddObjectToObject(req, "lifetime");
            ok = l && (!s || cJSON_AddNumberToObject(l, "seconds", s->valuedouble)) &&
                 (!t || cJSON_AddNumberToObject(l, "turns", t->valuedouble));
        }
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(args, "memory");
        if (ok && mem)
            ok = cJSON_AddBoolToObject(req, "memory", cJSON_IsTrue(mem)) != NULL;
    } else if (strcmp(name, "mnc_status") != 0) {
        /* the other tools' arguments are mncd's members under the same names */
        for (const cJSON *it = args->child; ok && it; it = it->next) {
            cJSON *d = cJSON_Duplicate(it, 1);
            ok = d && cJSON_AddItemToObject(req, it->string, d);
            if (!ok)
                cJSON_Delete(d);
        }
    }
    if (!ok)
        goto oom;
    *out = req;
    return 0;
oom:
    cJSON_Delete(req);
    return -1;
}

/* The text content: what mncd decided, in a sentence or a few lines. */
static void render(sbuf *b, const char *tool, const cJSON *sc, bool is_error)
{
    const char *dec = strd(sc, "decision", "?"), *reason = strd(sc, "reason", "?");
    if (is_error) {
        sb_printf(b, "%s by mnc (reason: %s): %s", !strcmp(dec, "deny") ? "DENIED" : "ERROR", reason,
                  strd(sc, "error", "no detail"));
        return;
    }
    if (!strcmp(tool, "mnc_disclose")) {
        const char *outcome = strd(sc, "outcome", "?");
        if (!strcmp(outcome, "selected")) {
            const cJSON *risk = cJSON_GetObjectItemCaseSensitive(sc, "risk");
            sb_printf(b, "Disclosed as form \"%s\"", strd(sc, "form", "?"));
            if (cJSON_IsNumber(risk))
                sb_printf(b, " (risk %g)", risk->valuedouble);
            sb_printf(b, ", object %s, queued to %s. Released text: %s", strd(sc, "object_id", "?"),
                      strd(sc, "queued_to", "?"), strd(sc, "message", ""));
        } else {
            sb_printf(b, "No form was admissible; nothing was released. Outcome: %s (%s)", outcome,
                      strd(sc, "detail", reason));
            if (str(sc, "request"))
                sb_printf(b, "; request %s", str(sc, "request"));
            if (str(sc, "broker"))
                sb_printf(b, " delegated to broker %s", str(sc, "broker"));
        }
        return;
    }
    if (!strcmp(tool, "mnc_receive")) {
        const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(sc, "messages");
        const cJSON *den = cJSON_GetObjectItemCaseSensitive(sc, "denied");
        if (cJSON_IsArray(msgs)) {
            sb_printf(b, "%d message(s).", cJSON_GetArraySize(msgs));
            for (const cJSON *it = msgs->child; it; it = it->next) {
                sb_printf(b, "\n- from %s, ", strd(it, "from", "?"));
                sb_scope(b, cJSON_GetObjectItemCaseSensitive(it, "object"));
                sb_printf(b, ": %s", strd(it, "message", ""));
            }
        } else if (cJSON_GetObjectItemCaseSensitive(sc, "object")) {
            sb_printf(b, "Received ");
            sb_scope(b, cJSON_GetObjectItemCaseSensitive(sc, "object"));
            sb_printf(b, ": %s", strd(sc, "message", ""));
        }
        for (const cJSON *it = cJSON_IsArray(den) ? den->child : NULL; it; it = it->next)
            sb_printf(b, "\n- not delivered: object %s from %s (%s)", strd(it, "object", "?"), strd(it, "from", "?"),
                      strd(it, "reason", "?"));
        return;
    }
    if (!strcmp(tool, "mnc_forward")) {
        if (str(sc, "queued_to"))
            sb_printf(b, "Forwarded; queued to %s.", str(sc, "queued_to"));
        else
            sb_printf(b, "Forward allowed. Authorised text for the sink: %s", strd(sc, "argument", ""));
        return;
    }
    if (!strcmp(tool, "mnc_memory_read") || !strcmp(tool, "mnc_derive")) {
        sb_printf(b, "%s ", !strcmp(tool, "mnc_derive") ? "Derived" : "Read");
        sb_scope(b, cJSON_GetObjectItemCaseSensitive(sc, "object"));
        if (str(sc, "message"))
            sb_printf(b, ": %s", str(sc, "message"));
        return;
    }
    if (!strcmp(tool, "mnc_status")) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(sc, "contracts");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(sc, "taint");
        sb_printf(b, "mncd identifies you as %s (via %s; uid %.0f, cgroup %s).", strd(sc, "agent", "no agent"),
                  strd(sc, "via", "?"), cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sc, "uid")),
                  strd(sc, "cgroup", "?"));
        if (cJSON_IsObject(c)) {
            sb_printf(b, "\nYou may disclose under: ");
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "disclose");
            int n = 0;
            for (const cJSON *it = d ? d->child : NULL; it; it = it->next)
                sb_printf(b, "%s%s (to %s)", n++ ? ", " : "", strd(it, "contract", "?"), strd(it, "recipient", "?"));
            if (!n)
                sb_printf(b, "none");
            sb_printf(b, "\nYou receive under: ");
            n = 0;
            d = cJSON_GetObjectItemCaseSensitive(c, "receive");
            for (const cJSON *it = d ? d->child : NULL; it; it = it->next) {
                sb_printf(b, "%s%s (from ", n++ ? ", " : "", strd(it, "contract", "?"));
                sb_list(b, cJSON_GetObjectItemCaseSensitive(it, "issuers"));
                sb_printf(b, ")");
            }
            if (!n)
                sb_printf(b, "none");
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "tainted"))) {
            sb_printf(b, "\nTainted by %.0f received object(s): received data may go only to: ",
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "n_objects")));
            sb_list(b, cJSON_GetObjectItemCaseSensitive(t, "sinks"));
            sb_printf(b, "; memory: %s.", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "memory")) ? "yes" : "no");
        } else if (cJSON_IsObject(t)) {
            sb_printf(b, "\nNot tainted (nothing received).");
        }
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(t, "kernel");
        if (cJSON_IsObject(k)) {
            sb_printf(b, "\nKernel taint entry (generation %.0f): %s",
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(k, "generation")),
                      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "tainted"))
                          ? "tainted; your processes may reach only: "
                          : "not tainted.");
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "tainted")))
                sb_list(b, cJSON_GetObjectItemCaseSensitive(k, "sinks"));
        } else if (cJSON_IsObject(t)) {
            sb_printf(b, "\nmncd runs without the kernel layer: the kernel does not confine you.");
        }
        return;
    }
    if (!strcmp(tool, "mnc_log"))
        sb_printf(b, "Logged to %s.", "the sink");
    else if (!strcmp(tool, "mnc_memory_write"))
        sb_printf(b, "Stored in memory.");
    else
        sb_printf(b, "%s (%s)", dec, reason);
}

int mcp_tool_call(mcp_server *m, const cJSON *t, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
    const char *name = cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring;
    const tool_def *d = NULL;
    for (size_t i = 0; i < N_TOOLS && !d; i++)
        if (!strcmp(TOOLS[i].name, name))
            d = &TOOLS[i];
    if (!d) {
        snprintf(err, errlen, "unknown tool \"%s\"", name);
        return -2;
    }
    cJSON *req = NULL, *resp = NULL;
    char why[512];
    int rc = build_request(d->name, d->verb, args, &req, why, sizeof(why));
    if (rc == -2) {
        snprintf(err, errlen, "%s", why);
        return -2;
    }
    if (rc == -1)
        return -1;
    if (rc == 0 && mncd_call(m, req, &resp, why, sizeof(why)) != 0)
        rc = -4;
    cJSON_Delete(req);

    /* structuredContent: mncd's response without its id (a transport or client-side failure
     * gets the same shape, decision "error") */
    cJSON *sc = resp;
    if (!sc) {
        sc = cJSON_CreateObject();
        char msg[700];
        snprintf(msg, sizeof(msg), "%s%s", rc == -4 ? "mncd unreachable: " : "", why);
        if (!sc || !cJSON_AddFalseToObject(sc, "ok") || !cJSON_AddStringToObject(sc, "decision", "error") ||
            !cJSON_AddStringToObject(sc, "reason", rc == -4 ? "internal" : "invalid") ||
            !cJSON_AddStringToObject(sc, "error", msg)) {
            cJSON_Delete(sc);
            return -1;
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(sc, "id");
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sc, "ok"));
    const char *dec = strd(sc, "decision", "error");
    bool is_error = !ok;
    if (!strcmp(d->name, "mnc_disclose")) {
        /* An MNC-D outcome (delegate / approval / abstain) is mnc's answer, not a failure. */
        if (!strcmp(dec, "delegate") || !strcmp(dec, "approval") || !strcmp(dec, "abstain"))
            is_error = false;
        const cJSON *obj = cJSON_GetObjectItemCaseSensitive(sc, "object");
        const char *form = str(sc, "form");
        if (ok && str(obj, "id") && !cJSON_AddStringToObject(sc, "object_id", str(obj, "id")))
            goto oom;
        const cJSON *cands = cJSON_GetObjectItemCaseSensitive(sc, "candidates");
        for (const cJSON *c = cJSON_IsArray(cands) ? cands->child : NULL; ok && form && c; c = c->next)
            if (str(c, "name") && !strcmp(str(c, "name"), form)) {
                cJSON *r = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "risk"), 1);
                if (!r)
                    goto oom;
                cJSON_AddItemToObject(sc, "risk", r);
                break;
            }
    }

    sbuf b = {0};
    render(&b, d->name, sc, is_error);
    /* constant keys and "text" are referenced, not copied (cJSON_AddItemToObjectCS) */
    cJSON *res = cJSON_CreateObject();
    cJSON *content = cJSON_CreateArray();
    cJSON *text = cJSON_CreateObject();
    cJSON *type = cJSON_CreateStringReference("text");
    cJSON *body = b.oom ? NULL : cJSON_CreateString(b.s ? b.s : ""); /* nothing to say: "" */
    cJSON *iserr = cJSON_CreateBool(is_error);
    free(b.s);
    if (!res || !content || !text || !type || !body || !iserr) {
        cJSON_Delete(res);
        cJSON_Delete(content);
        cJSON_Delete(text);
        cJSON_Delete(type);
        cJSON_Delete(body);
        cJSON_Delete(iserr);
        goto oom;
    }
    cJSON_AddItemToObjectCS(text, "type", type);
    cJSON_AddItemToObjectCS(text, "text", body);
    cJSON_AddItemToArray(content, text);
    cJSON_AddItemToObjectCS(res, "content", content);
    cJSON_AddItemToObjectCS(res, "isError", iserr);
    cJSON_AddItemToObjectCS(res, "structuredContent", sc);
    *result = res;
    return 0;
oom:
    cJSON_Delete(sc);
    return -1;
}
