// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_mcp.c - libFuzzer target for mnc-mcp's JSON-RPC reader (mcp_handle_line) and, through
 * it, the MCP method handlers, the tool-argument schema checker and the request builders.
 * Each input is one message line sent to a fresh server whose mncd socket does not exist (a
 * tool call then ends in an isError result). Properties: never crash, leak or read out of
 * bounds; every response is one line of valid JSON ending in '\n' with "jsonrpc":"2.0". */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

static void one(mcp_server *m, const char *line, size_t len)
{
    bool oom = false;
    char *out = mcp_handle_line(m, line, len, &oom);
    if (!out)
        return;
    size_t n = strlen(out);
    if (n == 0 || out[n - 1] != '\n' || memchr(out, '\n', n - 1))
        abort();
    cJSON *j = cJSON_ParseWithLength(out, n);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "jsonrpc");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
        abort();
    cJSON_Delete(j);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MCP_MAX_LINE)
        return 0;
    mcp_server m;
    if (mcp_server_init(&m, "/nonexistent/mnc-fuzz.sock") != 0)
        return 0;
    /* once before and once after initialize: both states of the server */
    one(&m, (const char *)data, size);
    static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                               "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"f\",\"version\":\"1\"}}}";
    one(&m, init, sizeof(init) - 1);
    one(&m, (const char *)data, size);
    mcp_server_free(&m);
    return 0;
}
