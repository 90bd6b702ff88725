/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mcp.h - mnc-mcp: an MCP (Model Context Protocol) server that maps MCP tools onto mncd verbs.
 *
 * Transport: stdio, JSON-RPC 2.0, one message per line (docs/mcp.md). The server answers
 * initialize, ping, tools/list and tools/call, and accepts the notifications
 * notifications/initialized and notifications/cancelled. Protocol revision 2025-06-18, and
 * 2025-03-26 when the client asks for it (then without titles, outputSchema and
 * structuredContent, which that revision does not have).
 *
 * Identity: mnc-mcp never says who the caller is. Each tool call becomes one mncd request
 * written by this process, and mncd identifies its writer by the kernel (cgroup, uid, pidfd).
 * Started by an agent runtime under `mncctl run --agent NAME`, mnc-mcp is in NAME's cgroup and
 * so speaks as NAME; no argument, environment variable or tool argument can change that.
 */
#ifndef MNC_MCP_H
#define MNC_MCP_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Longest accepted message line, without its newline: mncd's own request limit, so every
 * well-formed tool call fits into one mncd request. A longer line is answered with -32600 and
 * discarded up to its newline; the server stays up. */
#define MCP_MAX_LINE (1u << 20)

/* How long mnc-mcp polls its mncd connection after sending a request before it blocks in
 * read (mnc_client_call_spin). mncd answers a recv in ~10 us; on an idle 2-core VM a blocked
 * reader's wake-up costs tens of us more (a halted vCPU is woken), which the spin avoids when
 * mncd answers in time. Measured with bench_mcp (docs/mcp.md "Performance"). Bounded, and only
 * while a request is outstanding: an idle mnc-mcp waiting for its client never spins. */
#define MCP_MNCD_SPIN_NS 30000L

#define MCP_PROTO_LATEST "2025-06-18"
#define MCP_PROTO_OLDEST "2025-03-26"

/* JSON-RPC 2.0 error codes */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603

typedef struct mcp_server {
    const char *socket; /* mncd's socket path (not owned) */
    int fd;             /* connection to mncd, -1 until the first tool call or after a failure */
    bool initialized;   /* initialize answered */
    bool v2025_06;      /* negotiated 2025-06-18 (else 2025-03-26) */
    cJSON *tools;       /* tool definitions (owned): [{name,title,description,inputSchema,outputSchema}] */
} mcp_server;

/* Sets up m (tool table built from the static schemas). socket is the mncd socket path;
 * Returns 0, or -1 on OOM. Nothing is connected yet. */
int mcp_server_init(mcp_server *m, const char *socket);
void mcp_server_free(mcp_server *m);

/* Handles one message line (without its newline; need not be NUL-terminated; len <=
 * MCP_MAX_LINE). Returns the response line (heap, ending in '\n', caller frees) or NULL when
 * the message needs no response (a notification, a client's response). *oom is set when a
 * response was due but could not be built. */
char *mcp_handle_line(mcp_server *m, const char *line, size_t len, bool *oom);

/* The error response for a line longer than MCP_MAX_LINE (id null). Heap, or NULL on OOM. */
char *mcp_overlong_line(void);

/* tools.c */
/* Builds the tool table (cJSON array) for revision 2025-06-18; NULL on OOM. */
cJSON *mcp_tools_new(void);
/* Runs tool `t` (an entry of m->tools) with arguments `args` that passed its inputSchema.
 * Returns 0 with *result (the CallToolResult: content, structuredContent, isError; caller
 * frees), -2 when the arguments are invalid in a way the schema cannot say (err: why; the
 * caller answers -32602), -1 on OOM. A refusal by mncd, or mncd being unreachable, is a result
 * with isError true, never a JSON-RPC error. */
int mcp_tool_call(mcp_server *m, const cJSON *t, const cJSON *args, cJSON **result, char *err, size_t errlen);
/* Checks v against the schema subset our tool schemas use (type, properties, required,
 * additionalProperties, items, minLength, maxLength, minimum, maximum, maxItems,
 * maxProperties, minProperties). Returns 0 or -1 with a message "PATH: problem" in err. */
int mcp_schema_check(const cJSON *schema, const cJSON *v, const char *path, char *err, size_t errlen);

#endif
