/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* policy_int.h - internal to the policy loader (policy.c, policy_read.c, policy_entities.c,
 * policy_contracts.c): the set being built while files are loaded, and the typed field readers.
 *
 * Contract: the loader runs in passes (policy.c's header comment); each pass reports every
 * problem through E() as "FILE: JSON.PATH: message" into the build's mnc_errors and goes on, so
 * one run reports all of them; the set is assembled only if no pass reported anything. The
 * readers return 0 with the value stored, or -1 with the problem reported (out untouched).
 * Not installed.
 */
#ifndef MNC_POLICY_INT_H
#define MNC_POLICY_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "json_strict.h"
#include "mnc/policy.h"

/* Bounds for entities the header does not bound. Contract indices travel as uint16 in
 * disclosures, so the set must stay well below 65535; 1024 is far beyond any real policy. */
#define MAX_FAMILIES 1024
#define MAX_CONTRACTS 1024
#define MAX_REQUIREMENTS 4096
#define MAX_UID 4294967294.0  /* (uid_t)-1 is "no uid" */
#define LIFE_MAX 2147483647.0 /* 2^31 - 1 */

/* Where a reader reports: the error list, the file's name as shown, its index in the set. */
typedef struct fctx {
    mnc_errors *errs;
    const char *file;
    int fi; /* file index */
} fctx;

#define E(c, path, ...) mnc_json_err((c)->errs, (c)->file, (path), __VA_ARGS__)

/* ---- typed field readers (policy_read.c) */
/* Reports keys of obj outside `allowed` and missing `required` ones (NULL-terminated lists). */
void pol_check_keys(fctx *c, const cJSON *obj, const char *path, const char *const *allowed,
                    const char *const *required);
/* obj[key] (case-sensitive), or NULL. */
const cJSON *pol_get(const cJSON *obj, const char *key);
/* obj[key] as a valid name (mnc_name_valid) into out. */
int pol_get_name(fctx *c, const cJSON *obj, const char *key, const char *path, char out[MNC_NAME_MAX]);
/* v as an integer in [lo, hi]. */
int pol_as_int(fctx *c, const cJSON *v, const char *path, double lo, double hi, double *out);
/* v as a finite number (positive: > 0). */
int pol_as_number(fctx *c, const cJSON *v, const char *path, bool positive, double *out);
/* v as an absolute, normalised path that fits outsz. */
int pol_as_path(fctx *c, const cJSON *v, const char *path, char *out, size_t outsz);
/* a is b or below it (both normalised absolute paths). */
bool pol_path_within(const char *a, const char *b);
/* v as a sink address: "unix:/path", "tcp:HOST:PORT" or "udp:HOST:PORT" (docs/policy.md). */
int pol_check_address(fctx *c, const cJSON *v, const char *path, char *out, size_t outsz);

/* ---- the set being built (policy_read.c) */

typedef struct pent {
    mnc_principal p;
    int file, index;     /* first definition: file and index in its agents[] / sinks[] */
    int last_file;       /* last file that defined it (detects in-file duplicates) */
    int last_index;      /* its index in that file */
    int reads_from_file; /* agents: the file whose "reads_from" set it (-1: none yet) */
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
    cJSON *root; /* NULL if unreadable / unparsable */
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
    int risk_file;         /* first file that declared a risk model, -1 if none */
    char *risk_model_path; /* bayes model_file resolved against its policy file; heap */
} build;

/* Frees what a principal owns (not p itself). */
void pol_free_principal(mnc_principal *p);
/* Frees what a family owns (not f itself). */
void pol_free_family(mnc_family *f);
/* Frees everything b owns. */
void pol_build_free(build *b);
/* The id of principal name in the merged set (agents first, then sinks), or -1; *is_agent set when found. */
int pol_principal_id(build *b, const char *name, bool *is_agent);
/* Merges principal p (an agent or a sink, index idx of its file's array at path) into b: a repeat identical to the first definition is the same principal, a differing one is reported naming both files. Takes ownership of what p owns. */
void pol_add_principal(build *b, fctx *c, mnc_principal *p, bool is_agent, int idx, const char *path);
/* After pass 1: an agent's "reads_from" names, resolved (agents only). */
void pol_parse_reads_from(build *b, fctx *c, const cJSON *j, int idx);

/* ---- the passes: each takes one element of its file's array (pass 1: policy_entities.c,
 * pass 3: policy_contracts.c); policy.c runs them over every file in order */
void pol_parse_agent(build *b, fctx *c, const cJSON *j, int idx);
void pol_parse_sink(build *b, fctx *c, const cJSON *j, int idx);
void pol_parse_field(build *b, fctx *c, const cJSON *j, int idx);
void pol_parse_family(build *b, fctx *c, const cJSON *j, int idx);
void pol_parse_requirement(build *b, fctx *c, const cJSON *j, int idx);
void pol_parse_contract(build *b, fctx *c, const cJSON *j, int idx);
void pol_parse_onward(build *b, fctx *c, const cJSON *j, int idx); /* after every file's contracts */

#endif
