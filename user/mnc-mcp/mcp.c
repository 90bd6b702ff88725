// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mcp.c - mnc-mcp's JSON-RPC 2.0 / MCP message layer (see mcp.h).
 *
 * Every line is checked strictly before anything acts on it: one JSON object (mncd's strict
 * parser: valid UTF-8, no NUL, no duplicate keys, bounded depth), "jsonrpc": "2.0", only the
 * members JSON-RPC defines, an id that is a string or a number, params an object. A batch (a JSON
 * array) is refused: MCP 2025-06-18 removed batching. Errors follow JSON-RPC: -32700 (id null)
 * for malformed JSON, -32600 for an invalid request, -32601 for an unknown method, -32602 for
 * invalid params (an unknown tool or arguments that do not match its inputSchema included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "mnc/policy.h" /* the strict JSON reader (mnc_json_parse_strict, mnc_errors) */
#include "mnc/protocol.h"

#define MCP_SERVER_VERSION "0.1.0"

static const char INSTRUCTIONS[] =
    "mnc scopes what you may disclose to other agents and what you may do with what you "
    "receive. Disclose private information only through mnc_disclose: mnc picks the least "
    "revealing form the receiver needs. What mnc_receive or mnc_memory_read returns stays "
    "inside its scope (recipient, sinks, lifetime, memory): move it on only through mnc_forward, "
    "mnc_log or mnc_memory_write, which mnc checks. Copying received text into any other tool "
    "(a shell, an HTTP request, a file outside your workspace) is refused by the kernel. A "
    "result with isError true and a reason code is mnc's decision: do not retry it another way.";

int mcp_server_init(mcp_server *m, const char *socket)
{
    memset(m, 0, sizeof(*m));
    m->socket = socket;
    m->fd = -1;
    m->tools = mcp_tools_new();
    if (!m->tools) {
        mcp_server_free(m);
        return -1;
    }
    return 0;
}

void mcp_server_free(mcp_server *m)
{
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
    cJSON_Delete(m->tools);
    m->tools = NULL;
}

/* Serialises msg (consumed) as one line. NULL on OOM. */
static char *to_line(cJSON *msg)
{
    char *line = msg ? mnc_resp_line(msg, NULL) : NULL;
    cJSON_Delete(msg);
    return line;
}

/* A copy of a request's id for the response. An integral id (what clients send) is written out
 * here as a raw JSON number: cJSON prints every number with "%1.15g" and reads it back with
 * sscanf to check the round trip, which was a good part of printing a small response. Beyond
 * 2^53 (not exact in a double) and for fractions cJSON's own printing is kept. */
static cJSON *id_copy(const cJSON *id)
{
    if (!id)
        return cJSON_CreateNull();
    double d = id->valuedouble;
    if (cJSON_IsNumber(id) && d >= -9007199254740992.0 && d <= 9007199254740992.0 && d == (double)(long long)d) {
        char t[24], *p = t + sizeof(t);
        long long v = (long long)d;
        unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
        *--p = '\0';
        do {
            *--p = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0)
            *--p = '-';
        return cJSON_CreateRaw(p);
    }
    return cJSON_Duplicate(id, 1);
}

/* {"jsonrpc":"2.0","id":id} with id copied (null if id is NULL). NULL on OOM. Constant keys and
 * the constant version are referenced, not copied (cJSON_AddItemToObjectCS). */
static cJSON *envelope(const cJSON *id)
{
    cJSON *r = cJSON_CreateObject();
    cJSON *v = cJSON_CreateStringReference("2.0");
    if (!r || !v || !cJSON_AddItemToObjectCS(r, "jsonrpc", v)) {
        cJSON_Delete(v);
        goto oom;
    }
    cJSON *idc = id_copy(id);
    if (!idc || !cJSON_AddItemToObjectCS(r, "id", idc)) {
        cJSON_Delete(idc);
        goto oom;
    }
    return r;
oom:
    cJSON_Delete(r);
    return NULL;
}

static char *rpc_error(const cJSON *id, int code, const char *message)
{
    cJSON *r = envelope(id);
    cJSON *e = r ? cJSON_AddObjectToObject(r, "error") : NULL;
    if (!e || !cJSON_AddNumberToObject(e, "code", code) || !cJSON_AddStringToObject(e, "message", message)) {
        cJSON_Delete(r);
        return NULL;
    }
    return to_line(r);
}

static char *rpc_result(const cJSON *id, cJSON *result)
{
    cJSON *r = result ? envelope(id) : NULL;
    if (!r) {
        cJSON_Delete(result);
        return NULL;
    }
    cJSON_AddItemToObjectCS(r, "result", result);
    return to_line(r);
}

char *mcp_overlong_line(void)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "Invalid Request: message line longer than %u bytes; it was discarded", MCP_MAX_LINE);
    return rpc_error(NULL, RPC_INVALID_REQUEST, msg);
}

/* params members other than the listed ones (and "_meta", which MCP allows on every request)
 * are invalid. Returns the first unknown member's name, or NULL. */
static const char *unknown_member(const cJSON *params, const char *const *known)
{
    for (const cJSON *it = params ? params->child : NULL; it; it = it->next) {
        bool ok = !strcmp(it->string, "_meta");
        for (int i = 0; !ok && known[i]; i++)
            ok = !strcmp(it->string, known[i]);
        if (!ok)
            return it->string;
    }
    return NULL;
}

static char *invalid_params(const cJSON *id, const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, arg);
    return rpc_error(id, RPC_INVALID_PARAMS, msg);
}

static char *m_initialize(mcp_server *m, const cJSON *id, const cJSON *params)
{
    static const char *const known[] = {"protocolVersion", "capabilities", "clientInfo", NULL};
    if (m->initialized)
        return rpc_error(id, RPC_INVALID_REQUEST, "Invalid Request: already initialized");
    if (!params)
        return invalid_params(id, "Invalid params: initialize needs %s",
                              "protocolVersion, capabilities and clientInfo");
    const char *u = unknown_member(params, known);
    if (u)
        return invalid_params(id, "Invalid params: unknown member \"%s\" for initialize", u);
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(params, "clientInfo");
    if (!cJSON_IsString(pv))
        return invalid_params(id, "Invalid params: %s must be a string", "protocolVersion");
    if (!cJSON_IsObject(caps))
        return invalid_params(id, "Invalid params: %s must be an object", "capabilities");
    if (!cJSON_IsObject(ci) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ci, "name")) ||
        !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ci, "version")))
        return invalid_params(id,
                              "Invalid params: %s must be an object with string name and "
                              "version",
                              "clientInfo");
    /* Negotiation: answer the client's revision if we speak it, else our latest (the client
     * then decides whether it can go on). */
    m->v2025_06 = strcmp(pv->valuestring, MCP_PROTO_OLDEST) != 0;
    cJSON *res = cJSON_CreateObject();
    cJSON *cap = res ? cJSON_AddObjectToObject(res, "capabilities") : NULL;
    cJSON *tools = cap ? cJSON_AddObjectToObject(cap, "tools") : NULL;
    cJSON *si = cJSON_CreateObject();
    if (!tools || !si ||
        !cJSON_AddStringToObject(res, "protocolVersion", m->v2025_06 ? MCP_PROTO_LATEST : MCP_PROTO_OLDEST) ||
        !cJSON_AddFalseToObject(tools, "listChanged") || !cJSON_AddStringToObject(si, "name", "mnc-mcp") ||
        (m->v2025_06 && !cJSON_AddStringToObject(si, "title", "mnc: scoped disclosure")) ||
        !cJSON_AddStringToObject(si, "version", MCP_SERVER_VERSION) ||
        !cJSON_AddStringToObject(res, "instructions", INSTRUCTIONS)) {
        cJSON_Delete(si);
        cJSON_Delete(res);
        return NULL;
    }
    cJSON_AddItemToObject(res, "serverInfo", si);
    m->initialized = true;
    return rpc_result(id, res);
}

/* The tool table as the negotiated revision shows it (2025-03-26 has no title/outputSchema). */
static char *m_tools_list(mcp_server *m, const cJSON *id, const cJSON *params)
{
    static const char *const known[] = {"cursor", NULL};
    const char *u = unknown_member(params, known);
    if (u)
        return invalid_params(id, "Invalid params: unknown member \"%s\" for tools/list", u);
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(params, "cursor");
    if (cur && !cJSON_IsString(cur))
        return invalid_params(id, "Invalid params: %s must be a string", "cursor");
    if (cur) /* one page: we never hand out a cursor, so any cursor is not ours */
        return invalid_params(id, "Invalid params: unknown cursor \"%s\"", cur->valuestring);
    cJSON *res = cJSON_CreateObject();
    cJSON *list = cJSON_Duplicate(m->tools, 1);
    if (!res || !list) {
        cJSON_Delete(res);
        cJSON_Delete(list);
        return NULL;
    }
    if (!m->v2025_06)
        for (cJSON *t = list->child; t; t = t->next) {
            cJSON_DeleteItemFromObjectCaseSensitive(t, "title");
            cJSON_DeleteItemFromObjectCaseSensitive(t, "outputSchema");
        }
    cJSON_AddItemToObject(res, "tools", list);
    return rpc_result(id, res);
}

static char *m_tools_call(mcp_server *m, const cJSON *id, const cJSON *params)
{
    static const char *const known[] = {"name", "arguments", NULL};
    if (!params)
        return invalid_params(id, "Invalid params: tools/call needs %s", "a tool name");
    const char *u = unknown_member(params, known);
    if (u)
        return invalid_params(id, "Invalid params: unknown member \"%s\" for tools/call", u);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
    if (!cJSON_IsString(name))
        return invalid_params(id, "Invalid params: %s must be a string", "name");
    if (args && !cJSON_IsObject(args))
        return invalid_params(id, "Invalid params: %s must be an object", "arguments");
    const cJSON *tool = NULL;
    for (const cJSON *t = m->tools->child; t && !tool; t = t->next)
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring, name->valuestring))
            tool = t;
    if (!tool)
        return invalid_params(id, "Invalid params: unknown tool \"%.200s\"", name->valuestring);
    cJSON *empty = NULL;
    if (!args) {
        empty = cJSON_CreateObject();
        if (!empty)
            return NULL;
        args = empty;
    }
    char err[400];
    if (mcp_schema_check(cJSON_GetObjectItemCaseSensitive(tool, "inputSchema"), args, "arguments", err, sizeof(err)) !=
        0) {
        cJSON_Delete(empty);
        return invalid_params(id, "Invalid params: %s", err);
    }
    cJSON *res = NULL;
    int rc = mcp_tool_call(m, tool, args, &res, err, sizeof(err));
    cJSON_Delete(empty);
    if (rc == -2)
        return invalid_params(id, "Invalid params: %s", err);
    if (res && !m->v2025_06) /* 2025-03-26 results have content and isError only */
        cJSON_DeleteItemFromObjectCaseSensitive(res, "structuredContent");
    return rpc_result(id, res);
}

char *mcp_handle_line(mcp_server *m, const char *line, size_t len, bool *oom)
{
    *oom = false;
    char *out = NULL;
    bool want = true; /* a response is due (false: notification, client's response) */
    /* mnc_json_parse_strict needs buf[len] == '\0'; a typical request fits on the stack */
    char small[2048];
    char *buf = len < sizeof(small) ? small : malloc(len + 1);
    if (!buf) {
        *oom = true;
        return NULL;
    }
    memcpy(buf, line, len);
    buf[len] = '\0';
    mnc_errors errs;
    mnc_errors_init(&errs);
    cJSON *msg = mnc_json_parse_strict("message", buf, len, &errs);
    if (buf != small)
        free(buf);
    if (!msg) {
        char text[400];
        snprintf(text, sizeof(text), "Parse error: %s", errs.n > 0 ? errs.msg[0] : "malformed JSON");
        mnc_errors_free(&errs);
        out = rpc_error(NULL, RPC_PARSE_ERROR, text);
        goto done;
    }
    mnc_errors_free(&errs);

    if (cJSON_IsArray(msg)) {
        out = rpc_error(NULL, RPC_INVALID_REQUEST,
                        "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 "
                        "removed batching); send one message per line");
        goto done;
    }
    if (!cJSON_IsObject(msg)) {
        out = rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request: a message is a JSON object");
        goto done;
    }
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    /* An id we cannot echo is answered with id null (JSON-RPC 5.1). */
    const cJSON *rid = (cJSON_IsString(id) || cJSON_IsNumber(id)) ? id : NULL;
    if (!cJSON_IsString(jv) || strcmp(jv->valuestring, "2.0") != 0) {
        out = rpc_error(rid, RPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
        goto done;
    }
    if (!method) {
        /* A response or error from the client: we never send requests, so nothing awaits it.
         * Ignored only if it is shaped like one; anything else is invalid. */
        if (rid &&
            (cJSON_GetObjectItemCaseSensitive(msg, "result") || cJSON_GetObjectItemCaseSensitive(msg, "error"))) {
            want = false;
            goto done;
        }
        out = rpc_error(rid, RPC_INVALID_REQUEST, "Invalid Request: no \"method\"");
        goto done;
    }
    for (const cJSON *it = msg->child; it; it = it->next)
        if (strcmp(it->string, "jsonrpc") && strcmp(it->string, "id") && strcmp(it->string, "method") &&
            strcmp(it->string, "params")) {
            char text[200];
            snprintf(text, sizeof(text), "Invalid Request: unknown member \"%.100s\"", it->string);
            out = rpc_error(rid, RPC_INVALID_REQUEST, text);
            goto done;
        }
    if (!cJSON_IsString(method)) {
        out = rpc_error(rid, RPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a string");
        goto done;
    }
    if (id && !rid) {
        out = rpc_error(NULL, RPC_INVALID_REQUEST,
                        "Invalid Request: \"id\" must be a string or a number (MCP forbids null)");
        goto done;
    }
    if (params && !cJSON_IsObject(params)) {
        want = id != NULL;
        if (want)
            out = rpc_error(rid, RPC_INVALID_PARAMS, "Invalid params: \"params\" must be an object");
        goto done;
    }
    const char *mn = method->valuestring;
    if (!id) {
        /* Notifications are never answered. notifications/initialized and
         * notifications/cancelled need no action (calls are answered in order, before the next
         * line is read); unknown ones are ignored, as JSON-RPC requires. */
        want = false;
        goto done;
    }
    if (!strcmp(mn, "initialize")) {
        out = m_initialize(m, rid, params);
    } else if (!strcmp(mn, "ping")) {
        cJSON *empty = cJSON_CreateObject();
        out = rpc_result(rid, empty);
    } else if (!strcmp(mn, "tools/list") || !strcmp(mn, "tools/call")) {
        if (!m->initialized)
            out = rpc_error(rid, RPC_INVALID_REQUEST, "Invalid Request: not initialized (send initialize first)");
        else if (!strcmp(mn, "tools/list"))
            out = m_tools_list(m, rid, params);
        else
            out = m_tools_call(m, rid, params);
    } else {
        char text[200];
        snprintf(text, sizeof(text), "Method not found: %.100s", mn);
        out = rpc_error(rid, RPC_METHOD_NOT_FOUND, text);
    }
done:
    *oom = want && !out;
    cJSON_Delete(msg);
    return out;
}
