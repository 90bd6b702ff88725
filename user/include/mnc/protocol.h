/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* protocol.h - the mncd wire protocol: JSON lines over a UNIX stream socket.
 *
 * One request per line, one response line per request, in order. docs/protocol.md documents
 * every verb with an example. This module is shared by mncd (parse + respond), mncctl and the
 * Python client's tests (build requests, read responses) and the libFuzzer target (parse).
 *
 * Request:  {"verb": "send", "id": 7, "as": "worker", "object": "<32 hex>", "to": "coordinator"}
 *   verb  required; one of the names below.
 *   id    optional string or number, echoed in the response (for pipelining clients).
 *   as    optional: the identity the client believes it has. It is never used to decide who the
 *         caller is (that comes from the kernel); a mismatch is an error.
 *   Every other key is verb-specific; unknown keys and wrong types are errors.
 *
 * Response: {"id": 7, "ok": true, "decision": "allow", "reason": "ok", ...}
 *   ok        true iff the operation was performed.
 *   decision  "allow" | "deny" | "delegate" | "approval" | "abstain" | "error"
 *   reason    mnc_reason_name() of the deciding reason ("ok" on allow).
 *   error     human-readable text when decision is "error" or "deny".
 */
#ifndef MNC_PROTOCOL_H
#define MNC_PROTOCOL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "mnc/reason.h"

/* Longest accepted request line, excluding the newline. Longer lines are answered with an
 * error and the rest of the line is discarded. */
#define MNC_PROTO_MAX_LINE (1u << 20)
#define MNC_PROTO_MAX_KEY 255    /* mem.put / mem.get keys */
#define MNC_PROTO_MAX_BATCH 1000 /* recv max, list max */

typedef enum mnc_verb {
    MNC_V_DISCLOSE = 0,
    MNC_V_SEND,
    MNC_V_RECV,
    MNC_V_FORWARD,
    MNC_V_DERIVE,
    MNC_V_LOG,
    MNC_V_MEM_PUT,
    MNC_V_MEM_GET,
    MNC_V_TOOL,
    MNC_V_WHOAMI,
    MNC_V_DISCLOSE_STATUS, /* MNC-D: poll a pending delegation / approval (issuer) */
    MNC_V_BROKER_NEXT,     /* MNC-D: broker role only - take the next delegation request */
    MNC_V_BROKER_REPLY,    /* MNC-D: broker role only - answer it (receipt or failure code) */
    /* admin verbs (admin uid only) */
    MNC_V_STATUS,
    MNC_V_LIST,
    MNC_V_REVOKE,
    MNC_V_APPROVE,
    MNC_V_AUDIT,
    MNC_V_AGENT_REGISTER,  /* kernel layer: cgroup -> agent (mncctl run) */
    MNC_V_TAINT_RESET,     /* kernel layer: clear an agent's taint and registrations */
    MNC_V_APPROVALS,       /* MNC-D: list the approval queue */
    MNC_V_WORKSPACE_CLEAR, /* kernel layer: remove a workspace directory's taint record */
    MNC_V_QUARANTINE_PUT,  /* mncctl run's stdio relay: output it withheld (quarantine.c) */
    MNC_V_COUNT
} mnc_verb;

const char *mnc_verb_name(mnc_verb v);
int mnc_verb_from_name(const char *name); /* -1 if unknown */
bool mnc_verb_is_admin(mnc_verb v);

/* A parsed, validated request. Pointers point into root (owned). Absent optional strings are
 * NULL, absent integers -1, absent booleans -1. */
typedef struct mnc_request {
    mnc_verb verb;
    cJSON *root;
    const cJSON *id; /* string or number, or NULL */
    const char *as;
    const char *object;        /* 32 hex chars (checked) */
    const char *to;            /* send / forward receiver */
    const char *channel;       /* send: "message" | "tool" */
    const char *contract;      /* disclose */
    const char *purpose;       /* disclose; optional on send/forward/log/tool/mem.*: checked */
    const char *recipient;     /* disclose */
    const cJSON *state;        /* disclose: {"subject": ..., "fields": {...}} */
    const cJSON *candidates;   /* disclose: [{"name","fields":[..],"text"}] */
    const char *release;       /* disclose: the client's release id (idempotency key), or NULL */
    const char *sink;          /* log */
    const char *tool;          /* tool */
    const char *key;           /* mem.put / mem.get */
    const char *store;         /* mem.put / mem.get: memory sink name */
    const cJSON *fields;       /* derive: array of field names */
    const cJSON *sinks;        /* derive: array of principal names */
    const cJSON *lifetime;     /* derive: {"seconds": N, "turns": N} */
    int memory;                /* derive */
    const char *request_id;    /* approve, disclose.status, broker.reply */
    int deny;                  /* approve: 1 = deny the request instead (-1: not given) */
    const cJSON *receipt;      /* broker.reply: {"field": "value", ...} */
    const char *failure;       /* broker.reply: a failure code (name) */
    int max;                   /* recv / list / audit (n) */
    const char *agent;         /* agent.register / taint.reset: agent name */
    const char *cgroup;        /* agent.register: cgroup v2 directory (absolute path) */
    long long uid;             /* agent.register: the uid the agent runs as (-1: not given) */
    int run_as_root;           /* agent.register: launched with --as-root (-1: not given) */
    const cJSON *workspaces;   /* agent.register: array of absolute workspace paths */
    const cJSON *tainted_dirs; /* agent.register: directories inside the workspaces that carry a
                               * taint record (the launcher's walk; mncd re-reads each) */
    const char *path;          /* workspace.clear: an absolute directory path */
    const char *stdio;         /* agent.register: "relay" (default) | "passthrough" (--stdio) */
    const cJSON *reads;        /* agent.register: the read grants (--read), absolute paths */
    const cJSON *fds;          /* agent.register: the caller's fd numbers the agent inherits (0, 1,
                                * 2, --keep-fd): mncd judges what each refers to, by its inode */
    const char *stream;        /* quarantine.put: "stdout" | "stderr" */
    const char *data;          /* quarantine.put: the withheld bytes, base64 (may be "") */
    long long lost;            /* quarantine.put: bytes the relay had to drop before (-1: none) */
} mnc_request;

/* The request table as data: {"verbs": {NAME: {"admin": bool, "args": [{"name", "kind",
 * "required"}...]}...}, "common": ..., "note": ...}; kinds: name, oid, key, object, array, int,
 * bool, channel, text, uid, path, b64, content. What `mncctl protocol` prints, and what
 * tests/integration/test_canary_sinks derives every field of every verb from. NULL on OOM. */
cJSON *mnc_protocol_table(void);

/* Parses and validates one request line (without the newline; need not be NUL-terminated).
 * Returns 0, or -1 with a one-line message in err (out is then empty, nothing to free). On
 * error *id_out (if not NULL) receives a copy of the request's "id" when it could be read, so
 * the error response can still echo it (caller frees with cJSON_Delete). */
int mnc_request_parse(const char *line, size_t len, mnc_request *out, cJSON **id_out, char *err, size_t errlen);
void mnc_request_free(mnc_request *r);

/* A response object with id (copied; may be NULL), ok, decision and reason. NULL on OOM. */
cJSON *mnc_resp_new(const cJSON *id, bool ok, const char *decision, mnc_reason reason);
/* An error response: ok false, decision "error", and "error": message. NULL on OOM. */
cJSON *mnc_resp_error(const cJSON *id, mnc_reason reason, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A denial: ok false, decision "deny", reason, and "error": message. NULL on OOM. */
cJSON *mnc_resp_deny(const cJSON *id, mnc_reason reason, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Serialises a response as one line ending in '\n' (heap, caller frees with free()). */
char *mnc_resp_line(const cJSON *resp, size_t *len);

/* Client side (mncctl, tests). Connects to the socket; returns an fd or -1 with err. */
int mnc_client_connect(const char *path, char *err, size_t errlen);
/* Sends req as one line and reads one response line (up to 64 MiB). Returns 0 with *resp
 * (caller frees) or -1 with err. It waits for the answer in poll(POLLIN), not in read(): a
 * reader blocked in read() is woken each time mncd takes in its bytes (docs/mncd.md, "Clients
 * wait in poll()"). */
int mnc_client_call(int fd, const cJSON *req, cJSON **resp, char *err, size_t errlen);
/* As mnc_client_call, but between the send and the blocking read it polls fd without blocking
 * for up to spin_ns nanoseconds (mnc_spin_readable). For a process relaying requests to mncd
 * (mnc-mcp): when mncd answers within the spin, the relay is still running and no wake-up is
 * paid for - on an idle VM a blocked reader woken by its peer costs a halted vCPU's wake-up,
 * tens of us (docs/mcp.md "Performance"). spin_ns 0 is mnc_client_call. */
int mnc_client_call_spin(int fd, const cJSON *req, long spin_ns, cJSON **resp, char *err, size_t errlen);
/* Polls fd (poll(2) with timeout 0) until it is readable (or reports an error or hang-up) or
 * spin_ns nanoseconds have passed. Never blocks. Returns true if poll reported fd ready. */
bool mnc_spin_readable(int fd, long spin_ns);

#endif
