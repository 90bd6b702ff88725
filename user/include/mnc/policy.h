/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* policy.h - the policy model and its loader.
 *
 * A policy set is loaded from one or more JSON files (format: docs/policy.md, schema:
 * policies/schema.json) written by the policy authority. Names are resolved to small integer
 * ids at load time so that every later check is a bitset operation:
 *   - principals: agents and sinks share one id space (an agent is the sink of messages);
 *   - fields: one id space across all files.
 * Files may repeat an agent, sink or field definition only if it is identical; anything else
 * that collides is an error. Loading is all-or-nothing: on any error nothing is returned.
 */
#ifndef MNC_POLICY_H
#define MNC_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc_abi.h"
#include "mnc/set.h"

#define MNC_NAME_MAX 64 /* names: [A-Za-z0-9_.:-]{1,63} */
#define MNC_PATH_MAX 4096
#define MNC_MAX_PRINCIPALS MNC_SET_BITS
#define MNC_MAX_FIELDS MNC_SET_BITS
#define MNC_MAX_FORMS 32 /* candidates per family */
#define MNC_MAX_UIDS 16
#define MNC_MAX_WORKSPACE 16
#define MNC_MAX_FAILURE 3
#define MNC_MAX_ONWARD 16 /* contracts an object's holder may issue while it holds the object */
#define MNC_NO_ID 0xffff

typedef enum mnc_role { MNC_ROLE_AGENT = 0, MNC_ROLE_BROKER = 1 } mnc_role;

/* An agent or a sink. class == MNC_SINK_AGENT for agents. */
typedef struct mnc_principal {
    char name[MNC_NAME_MAX];
    enum mnc_sink_class cls;
    char path[MNC_PATH_MAX]; /* log / memory sinks: file or directory; "" if none */
    char address[128];       /* sockets: "unix:/path" or "ip:port" / "[ip6]:port"; "" if none */
    /* log sinks only: an output stream of the agent relayed by `mncctl run` (docs/kernel.md,
     * "Stdio"): "stdout" / "stderr" (the launcher's stream when it is not a terminal) or
     * "console" (the operator's terminal); "" for every other sink. The sink's name equals it,
     * so the launcher finds its id in the names map without the policy. */
    char stream[8];
    /* agents only */
    mnc_role role;
    bool confinement_none;       /* "confinement": "none": deliveries without kernel confinement are
                            * allowed (and audited each time); default "kernel" */
    bool confinement_netns;      /* "confinement": "netns": "kernel", and every process of the instance
                             * in a network namespace other than mncd's (checked at each delivery) */
    uint32_t uids[MNC_MAX_UIDS]; /* uid -> agent fallback identity (before cgroup registration) */
    int n_uids;
    char *workspace[MNC_MAX_WORKSPACE]; /* writable paths (Landlock); heap strings */
    int n_workspace;
    bool server; /* may listen() under `mncctl run` (mncd's sweep shuts its UNIX listeners when tainted) */
    /* "reads_from": agents whose data at rest (files their tainted instances wrote) this agent
     * may be launched to read through a read grant or an fd passed in, taking on its label;
     * another agent's labelled data is refused at launch otherwise (docs/policy.md). Its own
     * data it may always read (with the label). */
    mnc_set reads_from;
} mnc_principal;

typedef struct mnc_field {
    char name[MNC_NAME_MAX];
    double weight; /* declared per-field risk weight, >= 0 */
} mnc_field;

/* A candidate form: a projection of the private state onto `fields`, rendered by `tmpl`
 * ("{field}" placeholders; a template may only name the form's own fields). */
typedef struct mnc_form {
    char name[MNC_NAME_MAX];
    mnc_set fields;
    char *tmpl; /* heap; never NULL (defaults to "" - render as "field=value" lines) */
} mnc_form;

typedef struct mnc_family {
    char name[MNC_NAME_MAX];
    mnc_form forms[MNC_MAX_FORMS];
    int n_forms;
} mnc_family;

/* need(d, p, r): receiver r, for purpose p, needs all of `needs`. */
typedef struct mnc_requirement {
    uint16_t agent;
    char purpose[MNC_NAME_MAX];
    mnc_set needs;
} mnc_requirement;

typedef enum mnc_failure {
    MNC_FAIL_ABSTAIN = 0,
    MNC_FAIL_DELEGATE = 1,
    MNC_FAIL_APPROVAL = 2,
} mnc_failure;

/* Lifetime ℓ. At least one bound is set; 0 means "no bound of this kind". A turn is one
 * delivery of the object (a successful recv or mem.get). */
typedef struct mnc_lifetime {
    uint64_t seconds;
    uint32_t turns;
} mnc_lifetime;

/* The scope part of a contract: what the released object carries downstream. */
typedef struct mnc_scope {
    uint16_t recipient; /* r: agent id */
    mnc_set fields;     /* F */
    mnc_lifetime life;  /* ℓ */
    mnc_set sinks;      /* φ: onward agents, log sinks, tools, memory stores, external sinks */
    bool memory;        /* μ */
} mnc_scope;

typedef struct mnc_contract {
    char id[MNC_NAME_MAX];
    char purpose[MNC_NAME_MAX]; /* p */
    mnc_set issuers;            /* agents that may disclose under this contract */
    mnc_scope scope;
    int family;                           /* index into policy->families */
    mnc_failure failure[MNC_MAX_FAILURE]; /* MNC-D order; n_failure == 0 means abstain */
    int n_failure;
    uint16_t broker; /* broker agent for delegate, MNC_NO_ID if none */
    double epsilon;  /* MNC-L per-release cap ε; < 0 = none */
    double budget;   /* MNC-L total budget B; < 0 = none */
    /* "onward": contracts (indexes into policy->contracts) that an agent holding an object of
     * this contract may still disclose under, to recipients outside the object's sinks. An agent
     * that holds objects discloses to recipient r under contract k only if every object it holds
     * has r among its sinks or k among its contract's onward (mncd, verbs.c). */
    uint16_t onward[MNC_MAX_ONWARD];
    int n_onward;
} mnc_contract;

typedef enum mnc_risk_kind { MNC_RISK_WEIGHTS = 0, MNC_RISK_BAYES = 1 } mnc_risk_kind;

typedef struct mnc_policy {
    mnc_principal *principals;
    int n_principals;
    mnc_field *fields;
    int n_fields;
    mnc_family *families;
    int n_families;
    mnc_requirement *reqs;
    int n_reqs;
    mnc_contract *contracts;
    int n_contracts;
    mnc_risk_kind risk;
    void *risk_model; /* model-specific data (bayes); owned */
} mnc_policy;

/* Collected load errors, each "FILE: JSON.PATH: message". */
typedef struct mnc_errors {
    char **msg;
    int n, cap;
} mnc_errors;

void mnc_errors_init(mnc_errors *e);
void mnc_errors_free(mnc_errors *e);
/* printf-style append; never fails silently (on OOM it records a fixed message). */
void mnc_errors_add(mnc_errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads and validates `n` files into one policy set.
 * Returns a new policy (free with mnc_policy_free) or NULL with at least one entry in *errs.
 * Never partially succeeds. */
mnc_policy *mnc_policy_load_files(const char *const *paths, int n, mnc_errors *errs);

/* Same, from an in-memory document; `name` is used in error messages. */
mnc_policy *mnc_policy_load_buffer(const char *name, const char *json, size_t len, mnc_errors *errs);

void mnc_policy_free(mnc_policy *p);

/* Lookups by name; return the id/index or -1. */
int mnc_policy_principal(const mnc_policy *p, const char *name);
int mnc_policy_agent(const mnc_policy *p, const char *name); /* class must be AGENT */
int mnc_policy_field(const mnc_policy *p, const char *name);
int mnc_policy_contract(const mnc_policy *p, const char *id);
int mnc_policy_contract_for(const mnc_policy *p, const char *purpose, int recipient); /* first match */
/* uid -> agent id via the agents' "uids"; -1 if none or ambiguous */
int mnc_policy_agent_by_uid(const mnc_policy *p, uint32_t uid);
/* The requirement of agent for purpose, or NULL if the receiver declared none. */
const mnc_requirement *mnc_policy_requirement(const mnc_policy *p, int agent, const char *purpose);

/* "delegate", "approval" or "abstain". */
const char *mnc_failure_name(mnc_failure f);

/* A name: [A-Za-z0-9_.:-]{1,63} (agents, sinks, fields, contracts, forms, subjects). */
bool mnc_name_valid(const char *s);

/* s[0..n) is valid UTF-8: no stray or truncated sequences, overlong forms, surrogates or code
 * points above U+10FFFF. */
bool mnc_utf8_valid(const char *s, size_t n);

/* Names of a field set, comma separated, into buf (always NUL-terminated). */
void mnc_policy_fieldset_str(const mnc_policy *p, const mnc_set *s, char *buf, size_t n);

/* ---- strict JSON input, shared by every libmnc reader of authority-written files (policies,
 * private states, risk models). cJSON alone accepts NUL-truncated strings, invalid UTF-8 and
 * duplicate keys (last one silently wins); these wrappers reject all of them. */
#define MNC_POLICY_FILE_MAX (4u << 20) /* 4 MiB: the largest policy / state file accepted */
#define MNC_JSON_DEPTH_MAX 32          /* deepest [ / { nesting accepted (policies need 6) */

struct cJSON;

/* Reads the whole regular file `path` (at most `limit` bytes) into a new NUL-terminated heap
 * buffer (*buf, *len, free with free()). Returns 0, or -1 with "path: $: message" in *errs. */
int mnc_json_read_file(const char *path, size_t limit, char **buf, size_t *len, mnc_errors *errs);

/* Parses buf[0..len) (buf[len] must be '\0') as exactly one JSON value after checking the raw
 * bytes: no NUL byte, valid UTF-8 (no overlong forms, surrogates or code points > U+10FFFF), no
 * "\u0000" escape, nesting at most MNC_JSON_DEPTH_MAX; then rejects duplicate keys in every
 * object. Returns the tree (cJSON_Delete it) or NULL with errors "name: PATH: message". */
struct cJSON *mnc_json_parse_strict(const char *name, const char *buf, size_t len, mnc_errors *errs);

#endif
