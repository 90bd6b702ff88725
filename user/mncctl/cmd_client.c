// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_client.c - mncctl subcommands that talk to mncd over its socket.
 *
 * Each subcommand builds one protocol request (docs/protocol.md), sends it, and prints the
 * response: with --json the response line as is; otherwise a short human summary. Exit codes
 * follow mncctl.h: 0 allowed, 1 denied or error, 2 usage, 3 a non-success MNC-D outcome
 * (delegate / approval / abstain).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnc/protocol.h"
#include "mncctl.h"

/* Shared with cmd_audit.c (audit tail). Sends req (consumed) and prints the response. */
int mncctl_call_print(const mncctl_global *g, cJSON *req);

static void print_human(const cJSON *r)
{
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(r, "ok");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(r, "decision");
    const cJSON *rea = cJSON_GetObjectItemCaseSensitive(r, "reason");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(r, "error");
    printf("%s (%s)%s%s\n", cJSON_IsString(dec) ? dec->valuestring : "?", cJSON_IsString(rea) ? rea->valuestring : "?",
           cJSON_IsString(err) ? ": " : "", cJSON_IsString(err) ? err->valuestring : "");
    (void)ok; /* every outcome, MNC-D ones included, prints its details below */
    for (const cJSON *it = r->child; it; it = it->next) {
        if (!strcmp(it->string, "ok") || !strcmp(it->string, "decision") || !strcmp(it->string, "reason") ||
            !strcmp(it->string, "error") || !strcmp(it->string, "id"))
            continue;
        if (cJSON_IsString(it)) {
            printf("  %s: %s\n", it->string, it->valuestring);
        } else {
            char *s = cJSON_Print(it);
            if (s) {
                printf("  %s: %s\n", it->string, s);
                cJSON_free(s);
            }
        }
    }
}

int mncctl_call_print(const mncctl_global *g, cJSON *req)
{
    if (!req) {
        mncctl_err("out of memory");
        return 1;
    }
    char err[512];
    int fd = mnc_client_connect(g->socket, err, sizeof(err));
    if (fd < 0) {
        mncctl_err("%s", err);
        cJSON_Delete(req);
        return 1;
    }
    cJSON *resp = NULL;
    int rc = mnc_client_call(fd, req, &resp, err, sizeof(err));
    close(fd);
    cJSON_Delete(req);
    if (rc != 0) {
        mncctl_err("%s", err);
        return 1;
    }
    if (g->json) {
        char *s = cJSON_PrintUnformatted(resp);
        if (s) {
            puts(s);
            cJSON_free(s);
        }
    } else {
        print_human(resp);
    }
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(resp, "ok");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(resp, "decision");
    int code = cJSON_IsTrue(ok) ? 0 : 1;
    if (!cJSON_IsTrue(ok) && cJSON_IsString(dec) &&
        (!strcmp(dec->valuestring, "delegate") || !strcmp(dec->valuestring, "approval") ||
         !strcmp(dec->valuestring, "abstain")))
        code = 3;
    cJSON_Delete(resp);
    return code;
}

static cJSON *req_new(const char *verb)
{
    cJSON *r = cJSON_CreateObject();
    if (r && !cJSON_AddStringToObject(r, "verb", verb)) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

static int usage_err(const char *u)
{
    mncctl_err("usage: mncctl %s", u);
    return 2;
}

/* "a,b,c" -> ["a","b","c"] */
static cJSON *csv_array(const char *s)
{
    cJSON *a = cJSON_CreateArray();
    char *dup = strdup(s);
    if (!a || !dup) {
        cJSON_Delete(a);
        free(dup);
        return NULL;
    }
    char *save = NULL;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(a, cJSON_CreateString(t));
    free(dup);
    return a;
}

static cJSON *read_json_file(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    if (!f) {
        mncctl_err("%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= MNC_PROTO_MAX_LINE) {
                mncctl_err("%s: larger than the 1 MiB request limit", path);
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    if (f != stdin)
        fclose(f);
    if (!buf)
        return NULL;
    cJSON *j = cJSON_ParseWithLength(buf, n);
    free(buf);
    if (!j)
        mncctl_err("%s: malformed JSON", path);
    return j;
}

/* Parses trailing "--opt value" pairs into req; known options map to protocol keys. */
static int opts(cJSON *req, int argc, char **argv, int from, const char *u)
{
    for (int i = from; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--memory") || !strcmp(o, "--no-memory")) {
            cJSON_AddBoolToObject(req, "memory", !strcmp(o, "--memory"));
            continue;
        }
        if (!strcmp(o, "--tool")) {
            cJSON_AddStringToObject(req, "channel", "tool");
            continue;
        }
        if (!v)
            return usage_err(u);
        i++;
        if (!strcmp(o, "--as") || !strcmp(o, "--purpose") || !strcmp(o, "--store") || !strcmp(o, "--contract") ||
            !strcmp(o, "--recipient") || !strcmp(o, "--object")) {
            cJSON_AddStringToObject(req, o + 2, v);
        } else if (!strcmp(o, "--max")) {
            cJSON_AddNumberToObject(req, "max", atof(v));
        } else if (!strcmp(o, "--fields") || !strcmp(o, "--sinks")) {
            cJSON *a = csv_array(v);
            if (!a)
                return 1;
            cJSON_AddItemToObject(req, o + 2, a);
        } else if (!strcmp(o, "--seconds") || !strcmp(o, "--turns")) {
            cJSON *l = cJSON_GetObjectItemCaseSensitive(req, "lifetime");
            if (!l)
                l = cJSON_AddObjectToObject(req, "lifetime");
            if (!l)
                return 1;
            cJSON_AddNumberToObject(l, o + 2, atof(v));
        } else if (!strcmp(o, "--state")) {
            cJSON *st = read_json_file(v);
            if (!st)
                return 1;
            cJSON_AddItemToObject(req, "state", st);
        } else if (!strcmp(o, "--candidates")) {
            cJSON *c = read_json_file(v);
            if (!c)
                return 1;
            cJSON_AddItemToObject(req, "candidates", c);
        } else {
            mncctl_err("unknown option %s", o);
            return usage_err(u);
        }
    }
    return 0;
}

/* Generic: verb with positional args mapped to keys, then options. */
static int run(int argc, char **argv, const mncctl_global *g, const char *verb, const char *const *pos, int npos,
               const char *u)
{
    if (argc - 1 < npos)
        return usage_err(u);
    cJSON *req = req_new(verb);
    if (!req)
        return 1;
    for (int i = 0; i < npos; i++) {
        if (argv[1 + i][0] == '-' && argv[1 + i][1] == '-') {
            cJSON_Delete(req);
            return usage_err(u);
        }
        cJSON_AddStringToObject(req, pos[i], argv[1 + i]);
    }
    int rc = opts(req, argc, argv, 1 + npos, u);
    if (rc != 0) {
        cJSON_Delete(req);
        return rc;
    }
    return mncctl_call_print(g, req);
}

#define U_DISCLOSE                                                                                                     \
    "disclose (--contract ID | --purpose P --recipient R) --state FILE|- "                                             \
    "[--candidates FILE]"
#define U_SEND "send OBJECT TO [--tool] [--purpose P]"
#define U_RECV "recv [--object OBJECT] [--max N]"
#define U_FORWARD "forward OBJECT TO"
#define U_DERIVE                                                                                                       \
    "derive OBJECT [--fields a,b] [--sinks x,y] [--seconds N] [--turns N] "                                            \
    "[--memory|--no-memory]"
#define U_LOG "log OBJECT SINK"
#define U_MEM "mem put KEY OBJECT [--store S] | mem get KEY [--store S]"
#define U_TOOL "tool OBJECT TOOL"
#define U_LIST "list [--max N]            (admin)"
#define U_REVOKE "revoke OBJECT            (admin)"
#define U_APPROVE                                                                                                      \
    "approve [--deny] REQUEST (admin; release - or deny - a pending MNC-D approval, in fleet mode one of any host)"
#define U_CALL "call JSON                 (send one raw protocol request)"

static int c_disclose(int argc, char **argv, const mncctl_global *g)
{
    return run(argc, argv, g, "disclose", NULL, 0, U_DISCLOSE);
}
static int c_send(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"object", "to"};
    return run(argc, argv, g, "send", p, 2, U_SEND);
}
static int c_recv(int argc, char **argv, const mncctl_global *g) { return run(argc, argv, g, "recv", NULL, 0, U_RECV); }
static int c_forward(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"object", "to"};
    return run(argc, argv, g, "forward", p, 2, U_FORWARD);
}
static int c_derive(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"object"};
    return run(argc, argv, g, "derive", p, 1, U_DERIVE);
}
static int c_log(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"object", "sink"};
    return run(argc, argv, g, "log", p, 2, U_LOG);
}
static int c_tool(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"object", "tool"};
    return run(argc, argv, g, "tool", p, 2, U_TOOL);
}
static int c_mem(int argc, char **argv, const mncctl_global *g)
{
    if (argc >= 4 && !strcmp(argv[1], "put")) {
        static const char *const p[] = {"key", "object"};
        return run(argc - 1, argv + 1, g, "mem.put", p, 2, U_MEM);
    }
    if (argc >= 3 && !strcmp(argv[1], "get")) {
        static const char *const p[] = {"key"};
        return run(argc - 1, argv + 1, g, "mem.get", p, 1, U_MEM);
    }
    return usage_err(U_MEM);
}
static int c_whoami(int argc, char **argv, const mncctl_global *g)
{
    return run(argc, argv, g, "whoami", NULL, 0, "whoami");
}
static int c_status(int argc, char **argv, const mncctl_global *g)
{
    return run(argc, argv, g, "status", NULL, 0, "status");
}
static int c_list(int argc, char **argv, const mncctl_global *g) { return run(argc, argv, g, "list", NULL, 0, U_LIST); }
static int c_revoke(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"object"};
    return run(argc, argv, g, "revoke", p, 1, U_REVOKE);
}
static int c_approve(int argc, char **argv, const mncctl_global *g)
{
    static const char *const p[] = {"request"};
    if (argc == 3 && strcmp(argv[1], "--deny") == 0) {
        cJSON *req = cJSON_CreateObject();
        if (!req || !cJSON_AddStringToObject(req, "verb", "approve") ||
            !cJSON_AddStringToObject(req, "request", argv[2]) || !cJSON_AddBoolToObject(req, "deny", true)) {
            cJSON_Delete(req);
            mncctl_err("out of memory");
            return 1;
        }
        return mncctl_call_print(g, req);
    }
    return run(argc, argv, g, "approve", p, 1, U_APPROVE);
}
static int c_call(int argc, char **argv, const mncctl_global *g)
{
    if (argc != 2)
        return usage_err(U_CALL);
    cJSON *req = cJSON_Parse(argv[1]);
    if (!req) {
        mncctl_err("call: malformed JSON");
        return 2;
    }
    return mncctl_call_print(g, req);
}

MNCCTL_COMMAND(cmd_disclose, "disclose", U_DISCLOSE, c_disclose)
MNCCTL_COMMAND(cmd_send, "send", U_SEND, c_send)
MNCCTL_COMMAND(cmd_recv, "recv", U_RECV, c_recv)
MNCCTL_COMMAND(cmd_forward, "forward", U_FORWARD, c_forward)
MNCCTL_COMMAND(cmd_derive, "derive", U_DERIVE, c_derive)
MNCCTL_COMMAND(cmd_log, "log", U_LOG, c_log)
MNCCTL_COMMAND(cmd_mem, "mem", U_MEM, c_mem)
MNCCTL_COMMAND(cmd_tool, "tool", U_TOOL, c_tool)
MNCCTL_COMMAND(cmd_whoami, "whoami", "whoami                    (who mncd thinks you are)", c_whoami)
MNCCTL_COMMAND(cmd_status, "status", "status                    (admin)", c_status)
MNCCTL_COMMAND(cmd_list, "list", U_LIST, c_list)
MNCCTL_COMMAND(cmd_revoke, "revoke", U_REVOKE, c_revoke)
MNCCTL_COMMAND(cmd_approve, "approve", U_APPROVE, c_approve)
MNCCTL_COMMAND(cmd_call, "call", U_CALL, c_call)
