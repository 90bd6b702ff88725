// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_policy.c - the policy loader: shipped policies, defaults, multi-file merge, lookups,
 * limits, and the malformed corpus in tests/policies/bad (every file must be rejected with the
 * error its .expect file names, and without a crash: run this binary under ASan too).
 *
 * Paths are relative to the repository root (tests/run-tests runs from there); set
 * MNC_SRCDIR to run from elsewhere.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/policy.h"

static char srcdir[1024] = ".";

static const char *src(const char *rel, char *buf, size_t n)
{
    int r = snprintf(buf, n, "%s/%s", srcdir, rel);
    if (r < 0 || (size_t)r >= n)
        fail_msg("path too long: %s/%s", srcdir, rel);
    return buf;
}

static void dump_errors(const mnc_errors *e)
{
    for (int i = 0; i < e->n; i++)
        print_message("# error: %s\n", e->msg[i]);
}

static mnc_policy *load1(const char *rel, mnc_errors *e)
{
    char path[1200];
    const char *paths[1] = {src(rel, path, sizeof(path))};
    mnc_policy *p = mnc_policy_load_files(paths, 1, e);
    if (!p)
        dump_errors(e);
    return p;
}

static bool has_error(const mnc_errors *e, const char *needle)
{
    for (int i = 0; i < e->n; i++)
        if (strstr(e->msg[i], needle))
            return true;
    return false;
}

static char *write_tmp(const char *content, size_t len)
{
    char *path = strdup("/tmp/mnc-test-policy-XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, content + off, len - off);
        assert_true(w > 0);
        off += (size_t)w;
    }
    assert_int_equal(close(fd), 0);
    return path;
}

static void rm_tmp(char *path)
{
    unlink(path);
    free(path);
}

static mnc_set setof(const mnc_policy *p, const char *const *names)
{
    mnc_set s;
    mnc_set_clear(&s);
    for (int i = 0; names[i]; i++) {
        int id = mnc_policy_field(p, names[i]);
        if (id < 0)
            id = mnc_policy_principal(p, names[i]);
        assert_true(id >= 0);
        mnc_set_add(&s, (unsigned)id);
    }
    return s;
}

/* ---------------------------------------------------------------- the worked example */

static void test_scheduling_ids_and_sets(void **state)
{
    (void)state;
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = load1("policies/scheduling.json", &e);
    assert_non_null(p);
    assert_int_equal(e.n, 0);

    /* principals: agents first, then sinks, in file order */
    assert_int_equal(p->n_principals, 7);
    assert_int_equal(mnc_policy_principal(p, "worker"), 0);
    assert_int_equal(mnc_policy_principal(p, "coordinator"), 1);
    assert_int_equal(mnc_policy_principal(p, "external"), 2);
    assert_int_equal(mnc_policy_principal(p, "broker"), 3);
    assert_int_equal(mnc_policy_principal(p, "ops_log"), 4);
    assert_int_equal(mnc_policy_principal(p, "agent_memory"), 5);
    assert_int_equal(mnc_policy_principal(p, "calendar"), 6);
    assert_int_equal(p->principals[3].role, MNC_ROLE_BROKER);
    assert_int_equal(p->principals[0].role, MNC_ROLE_AGENT);
    assert_int_equal(p->principals[0].n_uids, 0);
    assert_int_equal(p->principals[4].cls, MNC_SINK_LOG);
    assert_string_equal(p->principals[4].path, "/var/log/mnc/ops.log");
    assert_int_equal(p->principals[5].cls, MNC_SINK_MEMORY);
    assert_string_equal(p->principals[5].path, "/var/lib/mnc/memory");
    assert_int_equal(p->principals[6].cls, MNC_SINK_TOOL);
    assert_string_equal(p->principals[6].path, "");
    assert_int_equal(mnc_policy_agent(p, "coordinator"), 1);
    assert_int_equal(mnc_policy_agent(p, "ops_log"), -1); /* a sink is not an agent */
    assert_int_equal(mnc_policy_principal(p, "nobody"), -1);

    /* fields and weights */
    static const char *const fnames[] = {"reason", "reason_class", "busy_slot", "selected_slot", "slot_feasible"};
    static const double w[] = {1.0, 0.6, 0.3, 0.1, 0.05};
    assert_int_equal(p->n_fields, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(mnc_policy_field(p, fnames[i]), i);
        assert_float_equal(p->fields[i].weight, w[i], 1e-12);
    }
    assert_int_equal(mnc_policy_field(p, "diagnosis"), -1);

    /* the family, in order */
    assert_int_equal(p->n_families, 1);
    const mnc_family *fam = &p->families[0];
    assert_string_equal(fam->name, "scheduling_forms");
    assert_int_equal(fam->n_forms, 5);
    static const char *const forms[] = {"full_rationale", "redacted_summary", "task_fact", "receipt",
                                        "feasibility_bit"};
    for (int i = 0; i < 5; i++)
        assert_string_equal(fam->forms[i].name, forms[i]);
    mnc_set full = setof(p, (const char *const[]){"reason", "busy_slot", "selected_slot", NULL});
    assert_true(mnc_set_eq(&fam->forms[0].fields, &full));
    assert_string_equal(fam->forms[0].tmpl,
                        "Alice cannot meet {busy_slot} because of an {reason}; {selected_slot} works");
    mnc_set rec = setof(p, (const char *const[]){"selected_slot", NULL});
    assert_true(mnc_set_eq(&fam->forms[3].fields, &rec));
    assert_string_equal(fam->forms[3].tmpl, "selected slot {selected_slot}");
    assert_non_null(fam->forms[4].tmpl);
    assert_string_equal(fam->forms[4].tmpl, ""); /* default: field=value lines */
    assert_null(strstr(fam->forms[2].tmpl, "{busy_slot}"));

    /* requirement */
    const mnc_requirement *r = mnc_policy_requirement(p, 1, "schedule_meeting");
    assert_non_null(r);
    assert_true(mnc_set_eq(&r->needs, &rec));
    assert_null(mnc_policy_requirement(p, 1, "share_availability"));
    assert_null(mnc_policy_requirement(p, 0, "schedule_meeting"));

    /* contract schedule_meeting */
    int ci = mnc_policy_contract(p, "schedule_meeting");
    assert_int_equal(ci, 0);
    const mnc_contract *c = &p->contracts[ci];
    assert_string_equal(c->purpose, "schedule_meeting");
    mnc_set F = setof(p, (const char *const[]){"slot_feasible", "selected_slot", NULL});
    assert_true(mnc_set_eq(&c->scope.fields, &F));
    mnc_set iss = setof(p, (const char *const[]){"worker", NULL});
    assert_true(mnc_set_eq(&c->issuers, &iss));
    assert_int_equal(c->scope.recipient, 1);
    assert_int_equal(c->scope.life.turns, 1);
    assert_int_equal(c->scope.life.seconds, 300);
    assert_true(mnc_set_empty(&c->scope.sinks));
    assert_false(c->scope.memory);
    assert_int_equal(c->family, 0);
    assert_int_equal(c->n_failure, 3);
    assert_int_equal(c->failure[0], MNC_FAIL_DELEGATE);
    assert_int_equal(c->failure[1], MNC_FAIL_APPROVAL);
    assert_int_equal(c->failure[2], MNC_FAIL_ABSTAIN);
    assert_int_equal(c->broker, 3);
    assert_true(c->epsilon < 0);
    assert_true(c->budget < 0);

    /* contract share_availability: the allowed forward / log / tool / memory cases */
    ci = mnc_policy_contract(p, "share_availability");
    assert_int_equal(ci, 1);
    c = &p->contracts[ci];
    mnc_set phi = setof(p, (const char *const[]){"external", "ops_log", "calendar", NULL});
    assert_true(mnc_set_eq(&c->scope.sinks, &phi));
    assert_true(c->scope.memory);
    assert_int_equal(c->scope.life.seconds, 3600);
    assert_int_equal(c->scope.life.turns, 0);
    assert_int_equal(c->n_failure, 1);
    assert_int_equal(c->failure[0], MNC_FAIL_ABSTAIN);
    assert_int_equal(c->broker, MNC_NO_ID);

    assert_int_equal(mnc_policy_contract_for(p, "schedule_meeting", 1), 0);
    assert_int_equal(mnc_policy_contract_for(p, "share_availability", 1), 1);
    assert_int_equal(mnc_policy_contract_for(p, "schedule_meeting", 2), -1);
    assert_int_equal(mnc_policy_contract(p, "nope"), -1);
    assert_int_equal(p->risk, MNC_RISK_WEIGHTS);

    char buf[128];
    mnc_policy_fieldset_str(p, &F, buf, sizeof(buf));
    assert_string_equal(buf, "selected_slot,slot_feasible");
    char small[8];
    mnc_policy_fieldset_str(p, &F, small, sizeof(small));
    assert_true(strlen(small) < sizeof(small));

    mnc_policy_free(p);
    mnc_errors_free(&e);
}

static void test_shipped_policies(void **state)
{
    (void)state;
    static const char *const files[] = {"policies/scheduling.json", "policies/procurement.json",
                                        "policies/referral.json", "policies/staffing.json"};
    for (size_t i = 0; i < 4; i++) {
        mnc_errors e;
        mnc_errors_init(&e);
        mnc_policy *p = load1(files[i], &e);
        assert_non_null(p);
        assert_true(p->n_contracts >= 2);
        assert_true(p->n_families >= 1);
        assert_true(p->families[0].n_forms >= 4 && p->families[0].n_forms <= 6);
        /* every requirement names an agent, every contract's broker has role broker */
        for (int k = 0; k < p->n_contracts; k++) {
            const mnc_contract *c = &p->contracts[k];
            assert_int_equal(p->principals[c->scope.recipient].cls, MNC_SINK_AGENT);
            if (c->broker != MNC_NO_ID)
                assert_int_equal(p->principals[c->broker].role, MNC_ROLE_BROKER);
        }
        mnc_policy_free(p);
        mnc_errors_free(&e);
    }
    /* all four together form one consistent set */
    char b[4][1200];
    const char *paths[4];
    for (int i = 0; i < 4; i++)
        paths[i] = src(files[i], b[i], sizeof(b[i]));
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files(paths, 4, &e);
    if (!p)
        dump_errors(&e);
    assert_non_null(p);
    assert_int_equal(p->n_contracts, 8);
    /* agents of every file come before the first sink */
    int first_sink = -1, last_agent = -1;
    for (int i = 0; i < p->n_principals; i++) {
        if (p->principals[i].cls == MNC_SINK_AGENT)
            last_agent = i;
        else if (first_sink < 0)
            first_sink = i;
    }
    assert_true(last_agent < first_sink);
    mnc_policy_free(p);
    mnc_errors_free(&e);
}

/* ---------------------------------------------------------------- defaults and small policies */

#define MINI_HEAD "{\"mnc_policy\": 1, \"name\": \"mini\", "
#define MINI_AGENTS "\"agents\": [{\"name\": \"a\", \"uids\": [1001, 1002]}, {\"name\": \"b\", \"uids\": [0]}], "
#define MINI_REST                                                                                                      \
    "\"fields\": [{\"name\": \"x\"}, {\"name\": \"y\", \"weight\": 0}], "                                              \
    "\"families\": [{\"name\": \"fam\", \"forms\": [{\"name\": \"f\", \"fields\": [\"x\"]}]}], "                       \
    "\"contracts\": [{\"id\": \"c\", \"purpose\": \"p\", \"issuers\": [\"a\"], "                                       \
    "\"recipient\": \"b\", \"fields\": [\"x\"], \"lifetime\": {\"seconds\": 2147483647}, "                             \
    "\"family\": \"fam\"}]}"

/* Loads a policy document that must be valid (its errors are printed otherwise). */
static mnc_policy *load_mini(const char *doc)
{
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("mini", doc, strlen(doc), &e);
    if (!p)
        dump_errors(&e);
    assert_non_null(p);
    mnc_errors_free(&e);
    return p;
}

static void test_defaults(void **state)
{
    (void)state;
    mnc_policy *p = load_mini(MINI_HEAD MINI_AGENTS MINI_REST);
    assert_int_equal(p->n_principals, 2);
    assert_float_equal(p->fields[0].weight, 1.0, 0);
    assert_float_equal(p->fields[1].weight, 0.0, 0);
    const mnc_contract *c = &p->contracts[0];
    assert_int_equal(c->n_failure, 1);
    assert_int_equal(c->failure[0], MNC_FAIL_ABSTAIN);
    assert_int_equal(c->broker, MNC_NO_ID);
    assert_true(c->epsilon < 0 && c->budget < 0);
    assert_false(c->scope.memory);
    assert_true(mnc_set_empty(&c->scope.sinks));
    assert_int_equal(c->scope.life.seconds, 2147483647u);
    assert_int_equal(c->scope.life.turns, 0);
    assert_string_equal(p->families[0].forms[0].tmpl, "");
    assert_int_equal(p->n_reqs, 0);
    assert_int_equal(p->risk, MNC_RISK_WEIGHTS);
    /* uid fallback identity */
    assert_int_equal(mnc_policy_agent_by_uid(p, 1001), 0);
    assert_int_equal(mnc_policy_agent_by_uid(p, 1002), 0);
    assert_int_equal(mnc_policy_agent_by_uid(p, 0), 1);
    assert_int_equal(mnc_policy_agent_by_uid(p, 1003), -1);
    mnc_policy_free(p);
}

/* "confinement": "kernel" (default), "netns" or "none"; each sets its flag alone, and two files
 * that define one agent with different confinements conflict. */
static void test_confinement(void **state)
{
    (void)state;
    static const char *const vals[] = {"kernel", "netns", "none"};
    char *paths[3];
    for (int v = 0; v < 3; v++) {
        char doc[2048];
        snprintf(doc, sizeof(doc),
                 MINI_HEAD "\"agents\": [{\"name\": \"a\"}, {\"name\": \"b\", \"confinement\": \"%s\"}], " MINI_REST,
                 vals[v]);
        mnc_policy *p = load_mini(doc);
        assert_false(p->principals[0].confinement_netns || p->principals[0].confinement_none);
        assert_int_equal(p->principals[1].confinement_netns, v == 1);
        assert_int_equal(p->principals[1].confinement_none, v == 2);
        mnc_policy_free(p);
        paths[v] = write_tmp(doc, strlen(doc));
    }
    for (int v = 0; v < 3; v++) {
        const char *two[2] = {paths[v], paths[(v + 1) % 3]};
        mnc_errors e;
        mnc_errors_init(&e);
        assert_null(mnc_policy_load_files(two, 2, &e));
        char want[2048];
        snprintf(want, sizeof(want), "%s: agents[1]: agent \"b\" differs from its definition in %s", two[1], two[0]);
        if (!has_error(&e, want))
            dump_errors(&e);
        assert_true(has_error(&e, want));
        mnc_errors_free(&e);
    }
    for (int v = 0; v < 3; v++)
        rm_tmp(paths[v]);
}

/* "reads_from": agent names, resolved after every file's agents are known (an agent may name
 * one defined later or in another file); a sink, an unknown name or a duplicate is an error;
 * two files defining one agent must agree. */
static void test_reads_from(void **state)
{
    (void)state;
    mnc_policy *p = load_mini(MINI_HEAD "\"agents\": [{\"name\": \"a\", \"reads_from\": [\"b\"]}, "
                                        "{\"name\": \"b\"}], " MINI_REST);
    assert_true(mnc_set_has(&p->principals[0].reads_from, 1));
    assert_false(mnc_set_has(&p->principals[0].reads_from, 0));
    assert_true(mnc_set_empty(&p->principals[1].reads_from));
    mnc_policy_free(p);
    static const char *const bad[][2] = {
        {"[\"nobody\"]", "agents[0].reads_from[0]: \"nobody\" is not an agent"},
        {"[\"b\", \"b\"]", "agents[0].reads_from[1]: duplicate agent \"b\""},
        {"\"b\"", "agents[0].reads_from: expected an array of agent names"},
        {"[\"s\"]", "agents[0].reads_from[0]: \"s\" is not an agent"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char doc[2048];
        snprintf(doc, sizeof(doc),
                 MINI_HEAD "\"agents\": [{\"name\": \"a\", \"reads_from\": %s}, {\"name\": \"b\"}], "
                           "\"sinks\": [{\"name\": \"s\", \"class\": \"tool\"}], " MINI_REST,
                 bad[i][0]);
        mnc_errors e;
        mnc_errors_init(&e);
        assert_null(mnc_policy_load_buffer("mini", doc, strlen(doc), &e));
        char want[512];
        snprintf(want, sizeof(want), "mini: %s", bad[i][1]);
        if (!has_error(&e, want))
            dump_errors(&e);
        assert_true(has_error(&e, want));
        mnc_errors_free(&e);
    }
}

/* The buffer need not be NUL-terminated; bytes after len are not read. */
static void test_buffer_not_terminated(void **state)
{
    (void)state;
    const char *doc = MINI_HEAD MINI_AGENTS MINI_REST;
    size_t n = strlen(doc);
    char *buf = malloc(n + 8);
    assert_non_null(buf);
    memcpy(buf, doc, n);
    memcpy(buf + n, "garbage!", 8); /* no NUL anywhere */
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("mini", buf, n, &e);
    assert_non_null(p);
    mnc_policy_free(p);
    mnc_errors_free(&e);
    free(buf);
}

/* A workspace next to a sink path (string prefix, different component) is fine. */
static void test_workspace_component_compare(void **state)
{
    (void)state;
    const char *doc =
        MINI_HEAD "\"agents\": [{\"name\": \"a\", \"workspace\": [\"/var/lib/mnc/memoryX\", \"/a/bc\", "
                  "\"/var/log/mnc//other/\"]},"
                  " {\"name\": \"b\"}], "
                  "\"sinks\": [{\"name\": \"m\", \"class\": \"memory\", \"path\": \"/var/lib/mnc/memory\"},"
                  " {\"name\": \"l\", \"class\": \"log\", \"path\": \"/a/b\"},"
                  " {\"name\": \"l2\", \"class\": \"log\", \"path\": \"/var/log/mnc/ops.log\"}], " MINI_REST;
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("ws", doc, strlen(doc), &e);
    if (!p)
        dump_errors(&e);
    assert_non_null(p);
    assert_int_equal(p->principals[0].n_workspace, 3);
    assert_string_equal(p->principals[0].workspace[2], "/var/log/mnc/other"); /* normalised */
    mnc_policy_free(p);
    mnc_errors_free(&e);

    /* and the root directory contains everything */
    const char *bad =
        MINI_HEAD "\"agents\": [{\"name\": \"a\", \"workspace\": [\"/\"]}, {\"name\": \"b\"}], "
                  "\"sinks\": [{\"name\": \"l\", \"class\": \"log\", \"path\": \"/x/y.log\"}], " MINI_REST;
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_buffer("root", bad, strlen(bad), &e));
    assert_true(has_error(&e, "root: agents[0].workspace[0]: workspace \"/\" contains the path of log sink \"l\""));
    mnc_errors_free(&e);
}

/* Independent errors in one document are all reported in one pass. */
static void test_collects_all_errors(void **state)
{
    (void)state;
    const char *doc =
        "{\"mnc_policy\": 2, \"name\": \"bad name\", \"extra\": true,"
        " \"agents\": [{\"name\": \"a\", \"role\": \"king\"}, {\"name\": \"b\"}],"
        " \"fields\": [{\"name\": \"x\", \"weight\": -1}],"
        " \"families\": [{\"name\": \"fam\", \"forms\": [{\"name\": \"f\", \"fields\": [\"x\", \"zz\"]}]}],"
        " \"contracts\": [{\"id\": \"c\", \"purpose\": \"p\", \"issuers\": [\"a\"], \"recipient\": \"a\","
        " \"fields\": [\"x\"], \"lifetime\": {\"turns\": 0}, \"family\": \"nofam\", \"sinks\": [\"s\"]}]}";
    mnc_errors e;
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_buffer("multi", doc, strlen(doc), &e));
    dump_errors(&e);
    static const char *const want[] = {
        "multi: mnc_policy: unsupported format version 2",
        "multi: name: invalid name \"bad name\"",
        "multi: $: unknown key \"extra\"",
        "multi: agents[0].role: unknown role \"king\"",
        "multi: fields[0].weight: must be >= 0",
        "multi: families[0].forms[0].fields[1]: unknown field \"zz\"",
        "multi: contracts[0].recipient: recipient \"a\" is also an issuer",
        "multi: contracts[0].lifetime.turns: integer out of range",
        "multi: contracts[0].family: unknown family \"nofam\"",
        "multi: contracts[0].sinks[0]: unknown sink \"s\"",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!has_error(&e, want[i]))
            fail_msg("missing error: %s", want[i]);
    }
    mnc_errors_free(&e);
}

/* ---------------------------------------------------------------- multiple files */

static const char *EXTRA_OK =
    "{\"mnc_policy\": 1, \"name\": \"extra\","
    " \"agents\": [{\"name\": \"auditor\"}, {\"name\": \"coordinator\"}, {\"name\": \"worker\"}],"
    " \"sinks\": [{\"name\": \"ops_log\", \"class\": \"log\", \"path\": \"/var/log/mnc//ops.log\"}],"
    " \"fields\": [{\"name\": \"selected_slot\", \"weight\": 0.1}, {\"name\": \"room\", \"weight\": 0.2}],"
    " \"families\": [{\"name\": \"room_forms\", \"forms\": [{\"name\": \"room\", \"fields\": [\"room\", "
    "\"selected_slot\"]}]}],"
    " \"contracts\": [{\"id\": \"book_room\", \"purpose\": \"book_room\", \"issuers\": [\"coordinator\"],"
    " \"recipient\": \"auditor\", \"fields\": [\"room\", \"selected_slot\"], \"lifetime\": {\"turns\": 2},"
    " \"family\": \"room_forms\", \"sinks\": [\"ops_log\"]},"
    " {\"id\": \"reuse\", \"purpose\": \"reuse\", \"issuers\": [\"worker\"], \"recipient\": \"auditor\","
    " \"fields\": [\"selected_slot\"], \"lifetime\": {\"turns\": 1}, \"family\": \"scheduling_forms\"}]}";

static void test_merge_identical(void **state)
{
    (void)state;
    char sched[1200];
    char *extra = write_tmp(EXTRA_OK, strlen(EXTRA_OK));
    const char *paths[2] = {src("policies/scheduling.json", sched, sizeof(sched)), extra};
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files(paths, 2, &e);
    if (!p)
        dump_errors(&e);
    assert_non_null(p);
    /* 4 + 1 new agents, then 3 sinks (ops_log merged) */
    assert_int_equal(p->n_principals, 8);
    assert_int_equal(mnc_policy_agent(p, "auditor"), 4);
    assert_int_equal(mnc_policy_principal(p, "ops_log"), 5);
    assert_int_equal(mnc_policy_principal(p, "calendar"), 7);
    assert_int_equal(p->n_fields, 6);
    assert_int_equal(mnc_policy_field(p, "room"), 5);
    assert_int_equal(p->n_families, 2);
    assert_int_equal(p->n_contracts, 4);
    /* a contract in file 2 may use a family from file 1 */
    int r = mnc_policy_contract(p, "reuse");
    assert_int_equal(r, 3);
    assert_int_equal(p->contracts[r].family, 0);
    int b = mnc_policy_contract(p, "book_room");
    assert_true(mnc_set_has(&p->contracts[b].scope.sinks, 5));
    assert_int_equal(p->contracts[b].family, 1);
    mnc_policy_free(p);
    mnc_errors_free(&e);
    rm_tmp(extra);
}

static void test_merge_conflicts(void **state)
{
    (void)state;
    char sched[1200];
    src("policies/scheduling.json", sched, sizeof(sched));
    /* worker gets a uid, reason a different weight, ops_log another path, calendar becomes an
     * agent, and schedule_meeting is defined again */
    const char *doc =
        "{\"mnc_policy\": 1, \"name\": \"conflict\","
        " \"agents\": [{\"name\": \"worker\", \"uids\": [4000]}, {\"name\": \"calendar\"}],"
        " \"sinks\": [{\"name\": \"ops_log\", \"class\": \"log\", \"path\": \"/var/log/other.log\"}],"
        " \"fields\": [{\"name\": \"reason\", \"weight\": 0.5}],"
        " \"families\": [{\"name\": \"scheduling_forms\", \"forms\": [{\"name\": \"r\", \"fields\": [\"reason\"]}]}],"
        " \"contracts\": [{\"id\": \"schedule_meeting\", \"purpose\": \"x\", \"issuers\": [\"worker\"],"
        " \"recipient\": \"calendar\", \"fields\": [\"reason\"], \"lifetime\": {\"turns\": 1},"
        " \"family\": \"scheduling_forms\"}]}";
    char *other = write_tmp(doc, strlen(doc));
    const char *paths[2] = {sched, other};
    mnc_errors e;
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(paths, 2, &e));
    dump_errors(&e);
    char want[2048];
    snprintf(want, sizeof(want), "%s: agents[0]: agent \"worker\" differs from its definition in %s (agents[0])", other,
             sched);
    assert_true(has_error(&e, want));
    snprintf(want, sizeof(want), "%s: agents[1]: agent name \"calendar\" clashes with sinks[2] in %s", other, sched);
    assert_true(has_error(&e, want));
    snprintf(want, sizeof(want), "%s: sinks[0]: sink \"ops_log\" differs from its definition in %s", other, sched);
    assert_true(has_error(&e, want));
    snprintf(want, sizeof(want), "%s: fields[0]: field \"reason\" differs from its definition in %s", other, sched);
    assert_true(has_error(&e, want));
    snprintf(want, sizeof(want), "%s: families[0].name: family \"scheduling_forms\" is already defined in %s", other,
             sched);
    assert_true(has_error(&e, want));
    snprintf(want, sizeof(want), "%s: contracts[0].id: contract id \"schedule_meeting\" is already used in %s", other,
             sched);
    assert_true(has_error(&e, want));
    mnc_errors_free(&e);

    /* the order of the files does not change the verdict */
    const char *rev[2] = {other, sched};
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(rev, 2, &e));
    assert_true(e.n >= 5);
    mnc_errors_free(&e);
    rm_tmp(other);
}

/* An unreadable file and an invalid second file: both are reported. */
static void test_all_files_reported(void **state)
{
    (void)state;
    char bad[1200];
    const char *paths[3] = {"/nonexistent/mnc-policy.json", src("tests/policies/bad/02-empty.json", bad, sizeof(bad)),
                            NULL};
    char sched[1200];
    paths[2] = src("policies/scheduling.json", sched, sizeof(sched));
    mnc_errors e;
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(paths, 3, &e));
    assert_true(has_error(&e, "/nonexistent/mnc-policy.json: $: cannot open"));
    assert_true(has_error(&e, "02-empty.json: $: empty file"));
    mnc_errors_free(&e);

    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(paths, 0, &e));
    assert_true(e.n >= 1);
    mnc_errors_free(&e);

    /* a directory is not a policy file */
    const char *dir[1] = {"/tmp"};
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(dir, 1, &e));
    assert_true(has_error(&e, "/tmp: $: not a regular file"));
    mnc_errors_free(&e);
}

/* ---------------------------------------------------------------- limits */

/* The limit is MNC_POLICY_FILE_MAX (4 MiB): a valid policy padded to exactly the limit loads,
 * one byte more is refused, both from a file and from a buffer. */
static void test_size_limit(void **state)
{
    (void)state;
    assert_int_equal(MNC_POLICY_FILE_MAX, 4u * 1024 * 1024);
    const char *doc = MINI_HEAD MINI_AGENTS MINI_REST;
    size_t n = strlen(doc), lim = MNC_POLICY_FILE_MAX;
    char *big = malloc(lim + 2);
    assert_non_null(big);
    memcpy(big, doc, n);
    memset(big + n, ' ', lim + 1 - n);
    big[lim + 1] = '\0';

    mnc_errors e;
    mnc_errors_init(&e);
    char *at = write_tmp(big, lim);
    const char *p1[1] = {at};
    mnc_policy *p = mnc_policy_load_files(p1, 1, &e);
    if (!p)
        dump_errors(&e);
    assert_non_null(p);
    mnc_policy_free(p);
    mnc_errors_free(&e);
    rm_tmp(at);

    char *over = write_tmp(big, lim + 1);
    const char *p2[1] = {over};
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(p2, 1, &e));
    assert_true(has_error(&e, ": $: file is 4194305 bytes, over the 4194304-byte limit"));
    mnc_errors_free(&e);
    rm_tmp(over);

    mnc_errors_init(&e);
    assert_null(mnc_policy_load_buffer("big", big, lim + 1, &e));
    assert_true(has_error(&e, "big: $: document is 4194305 bytes, over the 4194304-byte limit"));
    mnc_errors_free(&e);
    free(big);
}

/* Too many principals: the 257th is refused with one message. */
static void test_principal_limit(void **state)
{
    (void)state;
    size_t cap = 64 * 1024, o = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    o += (size_t)snprintf(doc + o, cap - o, "{\"mnc_policy\": 1, \"name\": \"many\", \"agents\": [");
    for (int i = 0; i < 257; i++)
        o += (size_t)snprintf(doc + o, cap - o, "%s{\"name\": \"a%d\"}", i ? "," : "", i);
    o += (size_t)snprintf(doc + o, cap - o,
                          "], \"fields\": [{\"name\": \"x\"}], \"families\": [{\"name\": \"f\", \"forms\":"
                          " [{\"name\": \"f\", \"fields\": [\"x\"]}]}], \"contracts\": [{\"id\": \"c\","
                          " \"purpose\": \"p\", \"issuers\": [\"a0\"], \"recipient\": \"a1\", \"fields\":"
                          " [\"x\"], \"lifetime\": {\"turns\": 1}, \"family\": \"f\"}]}");
    assert_true(o < cap);
    mnc_errors e;
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_buffer("many", doc, o, &e));
    assert_true(has_error(&e, "many: agents[256]: too many agents and sinks (at most 256"));
    assert_int_equal(e.n, 1);
    mnc_errors_free(&e);
    free(doc);
}

static void test_errors_list(void **state)
{
    (void)state;
    mnc_errors e;
    mnc_errors_init(&e);
    for (int i = 0; i < 1500; i++)
        mnc_errors_add(&e, "f: $: error %d", i);
    assert_int_equal(e.n, 1001);
    assert_string_equal(e.msg[0], "f: $: error 0");
    assert_string_equal(e.msg[999], "f: $: error 999");
    assert_non_null(strstr(e.msg[1000], "too many errors"));
    mnc_errors_free(&e);
    assert_int_equal(e.n, 0);
    assert_null(e.msg);
    mnc_errors_free(&e); /* idempotent */
}

/* ---------------------------------------------------------------- the malformed corpus */

static const char *corpus_dir(char *buf, size_t n) { return src("tests/policies/bad", buf, n); }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names of NN-name.json files in the corpus, sorted. */
static char **corpus_list(int *count)
{
    char dirp[1200];
    DIR *d = opendir(corpus_dir(dirp, sizeof(dirp)));
    *count = 0;
    if (!d)
        return NULL;
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, (size_t)cap * sizeof(*nn));
            if (!nn)
                abort();
            names = nn;
        }
        names[n] = strdup(de->d_name);
        if (!names[n])
            abort();
        n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(*names), cmp_str);
    *count = n;
    return names;
}

static void test_corpus_case(void **state)
{
    const char *name = *state;
    char dirp[1200], path[1400], expath[1400];
    corpus_dir(dirp, sizeof(dirp));
    snprintf(path, sizeof(path), "%s/%s", dirp, name);
    snprintf(expath, sizeof(expath), "%.*s.expect", (int)(strlen(path) - 5), path);
    FILE *f = fopen(expath, "r");
    if (!f)
        fail_msg("%s has no .expect file", name);
    char expect[512] = "";
    if (!fgets(expect, sizeof(expect), f))
        expect[0] = '\0';
    fclose(f);
    expect[strcspn(expect, "\n")] = '\0';
    assert_true(strlen(expect) > 0);

    mnc_errors e;
    mnc_errors_init(&e);
    const char *paths[1] = {path};
    mnc_policy *p = mnc_policy_load_files(paths, 1, &e);
    if (p) {
        mnc_policy_free(p);
        fail_msg("%s was accepted", name);
    }
    assert_true(e.n >= 1);
    /* the error names the file and the JSON path: "FILE: PATH: message" */
    char want[2048];
    snprintf(want, sizeof(want), "%s: %s", path, expect);
    if (!has_error(&e, want)) {
        dump_errors(&e);
        fail_msg("%s: no error contains \"%s\"", name, want);
    }
    for (int i = 0; i < e.n; i++)
        if (strncmp(e.msg[i], path, strlen(path)) != 0 || strncmp(e.msg[i] + strlen(path), ": ", 2) != 0)
            fail_msg("error does not start with the file name: %s", e.msg[i]);
    mnc_errors_free(&e);
}

static void test_corpus_complete(void **state)
{
    (void)state;
    int n = 0;
    char **names = corpus_list(&n);
    assert_true(n >= 25);
    char dirp[1200];
    corpus_dir(dirp, sizeof(dirp));
    for (int i = 0; i < n; i++) {
        char ex[1400];
        snprintf(ex, sizeof(ex), "%s/%.*s.expect", dirp, (int)(strlen(names[i]) - 5), names[i]);
        if (access(ex, R_OK) != 0)
            fail_msg("%s has no .expect file", names[i]);
        free(names[i]);
    }
    free(names);
}

int main(void)
{
    const char *s = getenv("MNC_SRCDIR");
    if (s && *s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scheduling_ids_and_sets),
        cmocka_unit_test(test_shipped_policies),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_confinement),
        cmocka_unit_test(test_reads_from),
        cmocka_unit_test(test_buffer_not_terminated),
        cmocka_unit_test(test_workspace_component_compare),
        cmocka_unit_test(test_collects_all_errors),
        cmocka_unit_test(test_merge_identical),
        cmocka_unit_test(test_merge_conflicts),
        cmocka_unit_test(test_all_files_reported),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_principal_limit),
        cmocka_unit_test(test_errors_list),
        cmocka_unit_test(test_corpus_complete),
    };
    int rc = cmocka_run_group_tests_name("policy", tests, NULL, NULL);

    /* one test per corpus file, so a failure names the case */
    int n = 0;
    char **names = corpus_list(&n);
    if (n == 0) {
        fprintf(stdout, "not ok 1 - bad corpus not found under %s/tests/policies/bad\n", srcdir);
        return 1;
    }
    struct CMUnitTest *ct = calloc((size_t)n, sizeof(*ct));
    if (!ct)
        return 1;
    for (int i = 0; i < n; i++) {
        ct[i].name = names[i];
        ct[i].test_func = test_corpus_case;
        ct[i].initial_state = names[i];
    }
    rc |= _cmocka_run_group_tests("bad_corpus", ct, (size_t)n, NULL, NULL);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(ct);
    return rc ? 1 : 0;
}
