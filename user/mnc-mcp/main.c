// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c - mnc-mcp: the MCP server's stdio loop (see mcp.h, docs/mcp.md).
 *
 *   mnc-mcp [--socket PATH]
 *
 * --socket (default $MNC_SOCKET, else /run/mnc/mncd.sock) is where mncd listens. There is
 * deliberately no option naming an agent, and none naming a policy: mncd identifies this
 * process by the kernel, and identity, contracts and taint are mncd's (mnc_status asks mncd's
 * whoami). The former --policy option is refused with a message saying so.
 *
 * Messages are read from stdin one line at a time (at most MCP_MAX_LINE bytes; a longer line is
 * answered with an error and skipped up to its newline) and each response is written to stdout
 * before the next line is read. stdout carries only JSON-RPC messages; diagnostics go to
 * stderr. EOF on stdin (also in the middle of a line, which is then dropped, never executed)
 * ends the server with status 0; a write error on stdout ends it with status 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"

#define DEFAULT_SOCKET "/run/mnc/mncd.sock"

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mnc-mcp [--socket PATH]\n"
               "An MCP server (stdio) for mnc: tools mnc_disclose, mnc_receive, mnc_forward, "
               "mnc_log,\nmnc_memory_write, mnc_memory_read, mnc_derive, mnc_status. Start it "
               "from an agent runtime\nlaunched with `mncctl run --agent NAME`: mncd identifies it "
               "as NAME by the kernel.\n");
}

int main(int argc, char **argv)
{
    const char *sock = getenv("MNC_SOCKET");
    if (!sock || !*sock)
        sock = DEFAULT_SOCKET;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--socket") && i + 1 < argc) {
            sock = argv[++i];
        } else if (!strncmp(a, "--socket=", 9)) {
            sock = a + 9;
        } else if (!strcmp(a, "--policy") || !strncmp(a, "--policy=", 9)) {
            /* the agent-side process reads no policy: what the agent may use is mncd's answer */
            fprintf(stderr, "mnc-mcp: --policy is no longer accepted: mnc_status shows the contracts "
                            "and taint mncd reports for this agent (whoami); drop the option\n");
            return 2;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "mnc-mcp: unknown or incomplete argument \"%s\"\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* a client that goes away must end us through write()'s EPIPE, not a signal */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
        perror("mnc-mcp: signal");
        return 1;
    }
    mcp_server m;
    if (mcp_server_init(&m, sock) != 0) {
        fprintf(stderr, "mnc-mcp: out of memory (or a tool schema does not parse)\n");
        return 1;
    }

    size_t cap = MCP_MAX_LINE + 1, n = 0; /* one line + its newline */
    char *buf = malloc(cap);
    bool skipping = false; /* inside an over-long line: discard up to its newline */
    int status = 0;
    if (!buf) {
        fprintf(stderr, "mnc-mcp: out of memory\n");
        mcp_server_free(&m);
        return 1;
    }
    for (;;) {
        ssize_t r = read(0, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            perror("mnc-mcp: read stdin");
            status = 1;
            break;
        }
        if (r == 0)
            break; /* EOF: a partial last line is dropped, never executed */
        n += (size_t)r;
        size_t start = 0;
        for (;;) {
            char *nl = memchr(buf + start, '\n', n - start);
            if (!nl)
                break;
            size_t len = (size_t)(nl - (buf + start));
            char *out = NULL;
            bool oom = false;
            if (skipping) {
                skipping = false; /* the rest of the over-long line ends here */
            } else {
                if (len > 0 && buf[start + len - 1] == '\r')
                    len--;
                if (len > 0) /* blank lines are ignored */
                    out = mcp_handle_line(&m, buf + start, len, &oom);
            }
            start = (size_t)(nl - buf) + 1;
            if (oom) {
                /* fail closed and say so: nothing was done for a request we cannot answer */
                static const char oom_line[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
                                               "\"message\":\"Internal error: out of memory\"}}\n";
                if (write_all(1, oom_line, sizeof(oom_line) - 1) != 0)
                    goto out_err;
            }
            if (out) {
                int w = write_all(1, out, strlen(out));
                free(out);
                if (w != 0)
                    goto out_err;
            }
        }
        memmove(buf, buf + start, n - start);
        n -= start;
        if (n == cap) {
            /* MCP_MAX_LINE + 1 bytes and no newline: too long. Answer now, then discard. */
            if (!skipping) {
                char *out = mcp_overlong_line();
                int w = out ? write_all(1, out, strlen(out)) : 0;
                free(out);
                if (w != 0)
                    goto out_err;
                fprintf(stderr, "mnc-mcp: message line longer than %u bytes discarded\n", MCP_MAX_LINE);
            }
            skipping = true;
            n = 0;
        }
    }
    free(buf);
    mcp_server_free(&m);
    return status;
out_err:
    fprintf(stderr, "mnc-mcp: cannot write to stdout: %s\n", strerror(errno));
    free(buf);
    mcp_server_free(&m);
    return 1;
}
