// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_select.c - `mncctl select`: run MNC-C offline on a policy and a private state.
 *
 * Prints {"outcome", "contract", "selected": {"candidate", "risk", "object", "message"} | null,
 * "candidates": [{name, risk, fields, verdict, detail, submitted}], "failure": [...]}.
 * Exit 0 when a candidate was selected, 3 when nothing is admissible, 1 on errors, 2 on usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/disclosure.h"
#include "mnc/select.h"
#include "mncctl.h"
#include "util.h"

#define MAX_POLICIES 16

static cJSON *fieldset_json(const mnc_policy *p, const mnc_set *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int f = mnc_set_next(s, -1); a && f >= 0; f = mnc_set_next(s, f))
        cJSON_AddItemToArray(a, cJSON_CreateString(p->fields[f].name));
    return a;
}

/* Reads submitted candidates: [{"name", "fields": [...], "text"}]. Returns count or -1. */
static int load_submitted(const mnc_policy *p, const char *path, mnc_submitted *out, cJSON **keep)
{
    mnc_errors e;
    mnc_errors_init(&e);
    char *buf = NULL;
    size_t len = 0;
    cJSON *j = NULL;
    int n = -1;
    if (mnc_json_read_file(path, MNC_POLICY_FILE_MAX, &buf, &len, &e) == 0)
        j = mnc_json_parse_strict(path, buf, len, &e);
    free(buf);
    if (j && !cJSON_IsArray(j))
        mnc_errors_add(&e, "%s: $: expected an array of candidates", path);
    else if (j) {
        n = 0;
        int i = 0;
        for (cJSON *it = j->child; it; it = it->next, i++) {
            if (n >= MNC_MAX_SUBMITTED) {
                mnc_errors_add(&e, "%s: $[%d]: more than %d submitted candidates", path, i, MNC_MAX_SUBMITTED);
                n = -1;
                break;
            }
            cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
            cJSON *fields = cJSON_GetObjectItemCaseSensitive(it, "fields");
            cJSON *text = cJSON_GetObjectItemCaseSensitive(it, "text");
            if (!cJSON_IsString(name) || strlen(name->valuestring) >= MNC_NAME_MAX || !cJSON_IsArray(fields) ||
                !cJSON_IsString(text)) {
                mnc_errors_add(&e, "%s: $[%d]: need name (string), fields (array), text (string)", path, i);
                n = -1;
                break;
            }
            mnc_submitted *s = &out[n];
            memset(s, 0, sizeof(*s));
            snprintf(s->name, sizeof(s->name), "%s", name->valuestring);
            s->text = text->valuestring;
            int k = 0;
            for (cJSON *fj = fields->child; fj; fj = fj->next, k++) {
                int f = cJSON_IsString(fj) ? mnc_policy_field(p, fj->valuestring) : -1;
                if (f < 0) {
                    mnc_errors_add(&e, "%s: $[%d].fields[%d]: unknown field", path, i, k);
                    n = -1;
                    break;
                }
                mnc_set_add(&s->fields, (unsigned)f);
            }
            if (n < 0)
                break;
            n++;
        }
    }
    for (int i = 0; i < e.n; i++)
        fprintf(stderr, "%s\n", e.msg[i]);
    mnc_errors_free(&e);
    if (n < 0) {
        cJSON_Delete(j);
        return -1;
    }
    *keep = j;
    return n;
}

static int cmd_select(int argc, char **argv, const mncctl_global *g)
{
    (void)g;
    const char *policies[MAX_POLICIES];
    int np = 0;
    const char *purpose = NULL, *recipient = NULL, *state_path = NULL, *contract_id = NULL;
    const char *origin_name = NULL, *submit_path = NULL;
    static const struct option opts[] = {
        {"policy", required_argument, 0, 'p'},
        {"purpose", required_argument, 0, 'u'},
        {"recipient", required_argument, 0, 'r'},
        {"state", required_argument, 0, 's'},
        {"contract", required_argument, 0, 'c'},
        {"origin", required_argument, 0, 'o'},
        {"submit", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            if (np >= MAX_POLICIES) {
                mncctl_err("at most %d --policy files", MAX_POLICIES);
                return 2;
            }
            policies[np++] = optarg;
            break;
        case 'u':
            purpose = optarg;
            break;
        case 'r':
            recipient = optarg;
            break;
        case 's':
            state_path = optarg;
            break;
        case 'c':
            contract_id = optarg;
            break;
        case 'o':
            origin_name = optarg;
            break;
        case 'S':
            submit_path = optarg;
            break;
        case 'h':
            printf("usage: mncctl select --policy FILE --state STATE.json (--contract ID | --purpose P "
                   "--recipient R) [--origin AGENT] [--submit CANDIDATES.json]\n"
                   "exit 0: a candidate was selected; 3: nothing admissible; 1: error; 2: usage\n");
            return 0;
        default:
            return 2;
        }
    }
    if (!np || !state_path || (!contract_id && (!purpose || !recipient)) || optind != argc) {
        mncctl_err("usage: mncctl select --policy FILE --state STATE.json "
                   "(--contract ID | --purpose P --recipient R) [--origin AGENT] [--submit CANDIDATES.json]");
        return 2;
    }
    mnc_policy *p = mncctl_load_policies(policies, np);
    if (!p)
        return 1;
    int rc = 1;
    cJSON *out = NULL, *subj = NULL;
    mnc_state st;
    mnc_state_init(&st);
    mnc_errors e;
    mnc_errors_init(&e);

    int r = recipient ? mnc_policy_agent(p, recipient) : -1;
    int c = -1;
    if (recipient && r < 0) {
        mncctl_err("unknown recipient agent \"%s\"", recipient);
        goto done;
    }
    if (contract_id) {
        if ((c = mnc_policy_contract(p, contract_id)) < 0) {
            mncctl_err("unknown contract \"%s\"", contract_id);
            goto done;
        }
        if (purpose && strcmp(purpose, p->contracts[c].purpose) != 0) {
            mncctl_err("contract %s has purpose %s, not %s", contract_id, p->contracts[c].purpose, purpose);
            goto done;
        }
        if (r < 0)
            r = p->contracts[c].scope.recipient;
    } else if ((c = mnc_policy_contract_for(p, purpose, r)) < 0) {
        mncctl_err("no contract for purpose \"%s\" and recipient \"%s\"", purpose, recipient);
        goto done;
    }
    const mnc_contract *con = &p->contracts[c];
    if (mnc_state_load_file(p, state_path, &st, &e) != 0) {
        for (int i = 0; i < e.n; i++)
            fprintf(stderr, "%s\n", e.msg[i]);
        goto done;
    }
    mnc_submitted sub[MNC_MAX_SUBMITTED];
    int nsub = 0;
    if (submit_path && (nsub = load_submitted(p, submit_path, sub, &subj)) < 0)
        goto done;
    int origin = origin_name ? mnc_policy_agent(p, origin_name) : mnc_set_next(&con->issuers, -1);
    if (origin < 0) {
        mncctl_err("unknown origin agent \"%s\"", origin_name ? origin_name : "?");
        goto done;
    }

    mnc_selection sel;
    mnc_select_req req = {.contract = c, .recipient = r, .state = &st, .submitted = sub, .n_submitted = nsub};
    mnc_reason sr = mnc_select(p, &req, &sel);
    if (sr != MNC_OK && sr != MNC_R_NO_CANDIDATE) {
        mncctl_err("selection failed: %s", mnc_reason_name(sr));
        goto done;
    }
    out = cJSON_CreateObject();
    if (!out)
        goto done;
    cJSON_AddStringToObject(out, "contract", con->id);
    cJSON_AddStringToObject(out, "purpose", con->purpose);
    cJSON_AddStringToObject(out, "recipient", p->principals[r].name);
    cJSON *cands = cJSON_AddArrayToObject(out, "candidates");
    for (int i = 0; cands && i < sel.n; i++) {
        const mnc_scored *sc = &sel.c[i];
        cJSON *cj = cJSON_CreateObject();
        if (!cj)
            goto done;
        cJSON_AddItemToArray(cands, cj);
        cJSON_AddStringToObject(cj, "name", sc->name);
        if (isnan(sc->risk))
            cJSON_AddNullToObject(cj, "risk");
        else
            cJSON_AddNumberToObject(cj, "risk", sc->risk);
        cJSON_AddItemToObject(cj, "fields", fieldset_json(p, &sc->fields));
        cJSON_AddStringToObject(cj, "verdict", sc->verdict == MNC_OK ? "admissible" : mnc_reason_name(sc->verdict));
        cJSON_AddStringToObject(cj, "detail", sc->detail);
        cJSON_AddBoolToObject(cj, "submitted", sc->submitted);
        cJSON_AddBoolToObject(cj, "selected", i == sel.chosen);
    }
    cJSON *fail = cJSON_AddArrayToObject(out, "failure");
    for (int i = 0; fail && i < con->n_failure; i++)
        cJSON_AddItemToArray(fail, cJSON_CreateString(mnc_failure_name(con->failure[i])));

    if (sel.chosen < 0) {
        cJSON_AddStringToObject(out, "outcome", "no_candidate");
        cJSON_AddNullToObject(out, "selected");
        cJSON_AddStringToObject(out, "next", con->n_failure ? mnc_failure_name(con->failure[0]) : "abstain");
        rc = mncctl_print_json(out) == 0 ? 3 : 1;
        goto done;
    }
    const mnc_scored *win = &sel.c[sel.chosen];
    mnc_disclosure d;
    mnc_reason ir = mnc_disclosure_issue(p, c, origin, win->name, &win->fields, &st, mnc_now_ms(), &d);
    if (ir != MNC_OK) {
        mncctl_err("cannot issue %s as %s: %s", win->name, p->principals[origin].name, mnc_reason_name(ir));
        goto done;
    }
    cJSON_AddStringToObject(out, "outcome", "selected");
    cJSON *selj = cJSON_AddObjectToObject(out, "selected");
    char *msg = mnc_disclosure_render(p, &d);
    cJSON *obj = mnc_disclosure_to_json(p, &d);
    mnc_disclosure_free(&d);
    if (!selj || !msg || !obj) {
        free(msg);
        cJSON_Delete(obj);
        mncctl_err("out of memory");
        goto done;
    }
    cJSON_AddStringToObject(selj, "candidate", win->name);
    cJSON_AddNumberToObject(selj, "risk", win->risk);
    cJSON_AddStringToObject(selj, "message", msg);
    cJSON_AddItemToObject(selj, "object", obj);
    free(msg);
    rc = mncctl_print_json(out) == 0 ? 0 : 1;
done:
    cJSON_Delete(out);
    cJSON_Delete(subj);
    mnc_errors_free(&e);
    mnc_state_free(&st);
    mnc_policy_free(p);
    return rc;
}

MNCCTL_COMMAND(select_cmd, "select",
               "select --policy FILE --state STATE.json (--contract ID | --purpose P --recipient R) [--submit FILE]",
               cmd_select)
