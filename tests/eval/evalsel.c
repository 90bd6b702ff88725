// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* evalsel.c - batch driver for the evaluation: runs the real libmnc selection (MNC-C, and MNC-L
 * with a history and a budget) on many requests without one process per request.
 *
 *   evalsel POLICY.json...  < requests.jsonl  > results.jsonl
 *
 * One request per input line:
 *   {"contract": ID, "state": {"subject": .., "fields": {..}},
 *    "history": [[FIELD, VALUE], ...],          (MNC-L: realised releases for this subject)
 *    "epsilon": X, "budget": B, "spent": S,     (optional; absent/negative = cap disabled)
 *    "candidates": [{"name", "fields": [..], "text"}]}  (optional: submitted candidates, as
 *                                                  mncd's disclose takes them; at most 16)
 * One result per line, in order:
 *   {"outcome": "selected"|"no_candidate"|"error", "candidate": NAME, "risk": R,
 *    "fields": [..], "message": TEXT (rendered by contract-boundary assembly),
 *    "failure": FIRST_FAILURE_MODE, "candidates": [{"name","risk","verdict"}], "error": MSG}
 * A malformed request gets an "error" line (the batch goes on); exit 1 only on I/O or policy
 * load failure. Selection, issue and rendering are libmnc's (mnc_select, mnc_disclosure_issue,
 * mnc_disclosure_render): this file adds no policy logic of its own.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/disclosure.h"
#include "mnc/policy.h"
#include "mnc/select.h"
#include "mnc/state.h"

#define MAX_HISTORY 256

static double num_or(const cJSON *o, const char *k, double dflt)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : dflt;
}

/* Handles one request; always returns a result object (or NULL on OOM). */
static cJSON *handle(const mnc_policy *p, const char *line)
{
    cJSON *out = cJSON_CreateObject();
    if (!out)
        return NULL;
    cJSON *req = cJSON_Parse(line);
    mnc_state st;
    mnc_state_init(&st);
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_obs hist[MAX_HISTORY];
    size_t nh = 0;
    const char *err = NULL;
    char ebuf[256];

    const cJSON *cid = req ? cJSON_GetObjectItemCaseSensitive(req, "contract") : NULL;
    int c = cJSON_IsString(cid) ? mnc_policy_contract(p, cid->valuestring) : -1;
    if (!req || !cJSON_IsObject(req)) {
        err = "request is not a JSON object";
        goto done;
    }
    if (c < 0) {
        err = "missing or unknown contract";
        goto done;
    }
    if (mnc_state_from_json(p, cJSON_GetObjectItemCaseSensitive(req, "state"), &st, "state", &e) != 0) {
        snprintf(ebuf, sizeof(ebuf), "%s", e.n ? e.msg[0] : "bad state");
        err = ebuf;
        goto done;
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(req, "history");
    for (const cJSON *it = h ? h->child : NULL; it; it = it->next) {
        const cJSON *f = cJSON_GetArrayItem(it, 0), *v = cJSON_GetArrayItem(it, 1);
        int fid = cJSON_IsString(f) ? mnc_policy_field(p, f->valuestring) : -1;
        if (nh >= MAX_HISTORY || fid < 0 || !cJSON_IsString(v)) {
            err = "history: at most 256 [known field, string value] pairs";
            goto done;
        }
        hist[nh].field = (uint16_t)fid;
        hist[nh].value = v->valuestring;
        nh++;
    }
    mnc_submitted sub[MNC_MAX_SUBMITTED];
    int nsub = 0;
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(req, "candidates");
    for (const cJSON *it = cl ? cl->child : NULL; it; it = it->next) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(it, "fields");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(it, "text");
        if (nsub >= MNC_MAX_SUBMITTED || !cJSON_IsString(nm) || strlen(nm->valuestring) >= MNC_NAME_MAX ||
            !cJSON_IsArray(fl) || !cJSON_IsString(tx)) {
            err = "candidates: at most 16 objects {\"name\", \"fields\": [...], \"text\"}";
            goto done;
        }
        memset(&sub[nsub], 0, sizeof(sub[nsub]));
        snprintf(sub[nsub].name, sizeof(sub[nsub].name), "%s", nm->valuestring);
        sub[nsub].text = tx->valuestring;
        for (const cJSON *f = fl->child; f; f = f->next) {
            int fid = cJSON_IsString(f) ? mnc_policy_field(p, f->valuestring) : -1;
            if (fid < 0) {
                err = "candidates: unknown field";
                goto done;
            }
            mnc_set_add(&sub[nsub].fields, (unsigned)fid);
        }
        nsub++;
    }
    mnc_limits lim = {
        .epsilon = num_or(req, "epsilon", -1), .budget = num_or(req, "budget", -1), .spent = num_or(req, "spent", 0)};
    bool capped = lim.epsilon >= 0 || lim.budget >= 0;
    const mnc_contract *con = &p->contracts[c];
    mnc_selection *sel = malloc(sizeof(*sel));
    if (!sel) {
        err = "out of memory";
        goto done;
    }
    mnc_select_req sr = {.contract = c,
                         .recipient = con->scope.recipient,
                         .state = &st,
                         .submitted = nsub ? sub : NULL,
                         .n_submitted = nsub,
                         .history = nh ? hist : NULL,
                         .n_history = nh,
                         .limits = capped ? &lim : NULL};
    mnc_reason r = mnc_select(p, &sr, sel);
    if (r != MNC_OK && r != MNC_R_NO_CANDIDATE) {
        snprintf(ebuf, sizeof(ebuf), "selection failed: %s", mnc_reason_name(r));
        err = ebuf;
        free(sel);
        goto done;
    }
    cJSON *cands = cJSON_AddArrayToObject(out, "candidates");
    for (int i = 0; cands && i < sel->n; i++) {
        cJSON *x = cJSON_CreateObject();
        if (!x)
            break;
        cJSON_AddItemToArray(cands, x);
        cJSON_AddStringToObject(x, "name", sel->c[i].name);
        if (isnan(sel->c[i].risk))
            cJSON_AddNullToObject(x, "risk");
        else
            cJSON_AddNumberToObject(x, "risk", sel->c[i].risk);
        cJSON_AddStringToObject(x, "verdict", mnc_reason_name(sel->c[i].verdict));
        cJSON_AddStringToObject(x, "detail", sel->c[i].detail);
    }
    cJSON_AddStringToObject(out, "failure", con->n_failure > 0 ? mnc_failure_name(con->failure[0]) : "abstain");
    if (sel->chosen < 0) {
        cJSON_AddStringToObject(out, "outcome", "no_candidate");
        free(sel);
        goto done;
    }
    const mnc_scored *win = &sel->c[sel->chosen];
    int origin = mnc_set_next(&con->issuers, -1);
    mnc_disclosure d;
    mnc_reason ir = mnc_disclosure_issue(p, c, origin, win->submitted ? "" : win->name, &win->fields, &st, 0, &d);
    if (ir != MNC_OK) {
        snprintf(ebuf, sizeof(ebuf), "issue refused: %s", mnc_reason_name(ir));
        err = ebuf;
        free(sel);
        goto done;
    }
    char *msg = mnc_disclosure_render(p, &d);
    cJSON *fl = cJSON_AddArrayToObject(out, "fields");
    for (int f = mnc_set_next(&win->fields, -1); fl && f >= 0; f = mnc_set_next(&win->fields, f))
        cJSON_AddItemToArray(fl, cJSON_CreateString(p->fields[f].name));
    cJSON_AddStringToObject(out, "outcome", "selected");
    cJSON_AddStringToObject(out, "candidate", win->name);
    cJSON_AddBoolToObject(out, "submitted", win->submitted);
    cJSON_AddNumberToObject(out, "risk", win->risk);
    cJSON_AddStringToObject(out, "message", msg ? msg : "");
    free(msg);
    mnc_disclosure_free(&d);
    free(sel);
done:
    if (err) {
        cJSON_DeleteItemFromObject(out, "outcome");
        cJSON_AddStringToObject(out, "outcome", "error");
        cJSON_AddStringToObject(out, "error", err);
    }
    cJSON_Delete(req);
    mnc_errors_free(&e);
    mnc_state_free(&st);
    return out;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: evalsel POLICY.json... < requests.jsonl > results.jsonl\n");
        return 2;
    }
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files((const char *const *)&argv[1], argc - 1, &e);
    for (int i = 0; i < e.n; i++)
        fprintf(stderr, "%s\n", e.msg[i]);
    mnc_errors_free(&e);
    if (!p)
        return 1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (n == 1 && line[0] == '\n')
            continue;
        cJSON *o = handle(p, line);
        char *s = o ? cJSON_PrintUnformatted(o) : NULL;
        cJSON_Delete(o);
        if (!s || puts(s) < 0) {
            free(s);
            fprintf(stderr, "evalsel: out of memory or write error\n");
            rc = 1;
            break;
        }
        free(s);
    }
    free(line);
    if (fflush(stdout) != 0 || ferror(stdin))
        rc = 1;
    mnc_policy_free(p);
    return rc;
}
