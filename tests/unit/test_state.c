// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_state.c - private-state parsing against a policy: the shipped example states, values
 * stored as text, and rejection of unknown fields, bad types and bad bytes.
 * Paths are relative to the repository root; set MNC_SRCDIR to run from elsewhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/state.h"

static char srcdir[1024] = ".";

static const char *src(const char *rel, char *buf, size_t n)
{
    int r = snprintf(buf, n, "%s/%s", srcdir, rel);
    if (r < 0 || (size_t)r >= n)
        fail_msg("path too long: %s/%s", srcdir, rel);
    return buf;
}

static bool has_error(const mnc_errors *e, const char *needle)
{
    for (int i = 0; i < e->n; i++)
        if (strstr(e->msg[i], needle))
            return true;
    for (int i = 0; i < e->n; i++)
        print_message("# error: %s\n", e->msg[i]);
    return false;
}

static int setup(void **state)
{
    char path[1200];
    const char *paths[1] = {src("policies/scheduling.json", path, sizeof(path))};
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files(paths, 1, &e);
    mnc_errors_free(&e);
    *state = p;
    return p ? 0 : -1;
}

static int teardown(void **state)
{
    mnc_policy_free(*state);
    return 0;
}

static void assert_empty(const mnc_state *s)
{
    assert_true(mnc_set_empty(&s->present));
    assert_string_equal(s->subject, "");
    for (int i = 0; i < MNC_MAX_FIELDS; i++)
        assert_null(s->value[i]);
}

/* Parses text with the policy; returns the result of mnc_state_from_json. */
static int parse(const mnc_policy *p, const char *text, mnc_state *s, mnc_errors *e)
{
    cJSON *j = mnc_json_parse_strict("t", text, strlen(text), e);
    if (!j) {
        mnc_state_init(s);
        return -1;
    }
    int r = mnc_state_from_json(p, j, s, "t", e);
    cJSON_Delete(j);
    return r;
}

static void test_example_state(void **state)
{
    const mnc_policy *p = *state;
    char path[1200];
    mnc_state s;
    mnc_errors e;
    mnc_errors_init(&e);
    assert_int_equal(mnc_state_load_file(p, src("policies/examples/scheduling-state.json", path, sizeof(path)), &s, &e),
                     0);
    assert_int_equal(e.n, 0);
    assert_string_equal(s.subject, "alice");
    assert_string_equal(s.value[mnc_policy_field(p, "reason")], "oncology appointment");
    assert_string_equal(s.value[mnc_policy_field(p, "reason_class")], "private medical commitment");
    assert_string_equal(s.value[mnc_policy_field(p, "busy_slot")], "Tue 2pm");
    assert_string_equal(s.value[mnc_policy_field(p, "slot_feasible")], "true");
    assert_string_equal(s.value[mnc_policy_field(p, "selected_slot")], "Thu 10:00");
    assert_int_equal(mnc_set_count(&s.present), 5);
    mnc_state_free(&s);
    assert_empty(&s);
    mnc_errors_free(&e);
}

/* Every shipped policy's example state is complete for it. */
static void test_all_examples(void **state)
{
    (void)state;
    static const char *const names[] = {"scheduling", "procurement", "referral", "staffing"};
    for (size_t i = 0; i < 4; i++) {
        char rel[256], pp[1200], sp[1200];
        snprintf(rel, sizeof(rel), "policies/%s.json", names[i]);
        const char *paths[1] = {src(rel, pp, sizeof(pp))};
        mnc_errors e;
        mnc_errors_init(&e);
        mnc_policy *p = mnc_policy_load_files(paths, 1, &e);
        assert_non_null(p);
        snprintf(rel, sizeof(rel), "policies/examples/%s-state.json", names[i]);
        mnc_state s;
        assert_int_equal(mnc_state_load_file(p, src(rel, sp, sizeof(sp)), &s, &e), 0);
        assert_true(s.subject[0] != '\0');
        /* the example gives a value for every field, so every form can be rendered */
        assert_int_equal((int)mnc_set_count(&s.present), p->n_fields);
        mnc_state_free(&s);
        mnc_policy_free(p);
        mnc_errors_free(&e);
    }
}

static void test_numbers_and_bools_as_text(void **state)
{
    const mnc_policy *p = *state;
    mnc_state s;
    mnc_errors e;
    mnc_errors_init(&e);
    assert_int_equal(parse(p,
                           "{\"fields\": {\"reason\": 42, \"busy_slot\": 1.5, \"slot_feasible\": false,"
                           " \"selected_slot\": -3e2}}",
                           &s, &e),
                     0);
    assert_string_equal(s.value[mnc_policy_field(p, "reason")], "42");
    assert_string_equal(s.value[mnc_policy_field(p, "busy_slot")], "1.5");
    assert_string_equal(s.value[mnc_policy_field(p, "slot_feasible")], "false");
    assert_string_equal(s.value[mnc_policy_field(p, "selected_slot")], "-300");
    assert_null(s.value[mnc_policy_field(p, "reason_class")]);
    assert_false(mnc_set_has(&s.present, (unsigned)mnc_policy_field(p, "reason_class")));
    assert_string_equal(s.subject, ""); /* subject is optional */
    mnc_state_free(&s);
    mnc_errors_free(&e);
}

static void test_unknown_field(void **state)
{
    const mnc_policy *p = *state;
    mnc_state s;
    mnc_errors e;
    mnc_errors_init(&e);
    assert_int_equal(
        parse(p, "{\"subject\": \"alice\", \"fields\": {\"reason\": \"x\", \"diagnosis\": \"y\"}}", &s, &e), -1);
    assert_true(has_error(&e, "t: fields.diagnosis: unknown field"));
    assert_empty(&s); /* nothing half-filled on error */
    mnc_errors_free(&e);

    /* a key that is not even a name is quoted in the path, control bytes escaped */
    mnc_errors_init(&e);
    assert_int_equal(parse(p, "{\"fields\": {\"a\\nb\": \"y\"}}", &s, &e), -1);
    assert_true(has_error(&e, "t: fields[\"a\\x0ab\"]: unknown field"));
    mnc_errors_free(&e);
}

static void test_bad_values(void **state)
{
    const mnc_policy *p = *state;
    static const struct {
        const char *doc, *want;
    } cases[] = {
        {"{\"fields\": {\"reason\": null}}", "t: fields.reason: expected a string, number or boolean"},
        {"{\"fields\": {\"reason\": [1]}}", "t: fields.reason: expected a string, number or boolean"},
        {"{\"fields\": {\"reason\": {\"a\": 1}}}", "t: fields.reason: expected a string, number or boolean"},
        {"{\"fields\": {\"reason\": 1e400}}", "t: fields.reason: number is not finite"},
        {"{\"fields\": {\"reason\": \"a\", \"reason\": \"b\"}}", "t: fields: duplicate key \"reason\""},
        {"{\"subject\": \"al ice\", \"fields\": {}}", "t: subject: expected a name"},
        {"{\"subject\": 5, \"fields\": {}}", "t: subject: expected a name"},
        {"{\"subject\": \"alice\"}", "t: $: missing required key \"fields\""},
        {"{\"fields\": []}", "t: fields: expected an object"},
        {"{\"fields\": {}, \"extra\": 1}", "t: $: unknown key \"extra\""},
        {"[]", "t: $: expected a state object"},
        {"{\"fields\": {\"reason\": \"a\\u0000b\"}}", "t: $: \\u0000 escape"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mnc_state s;
        mnc_errors e;
        mnc_errors_init(&e);
        if (parse(p, cases[i].doc, &s, &e) != -1)
            fail_msg("accepted: %s", cases[i].doc);
        if (!has_error(&e, cases[i].want))
            fail_msg("%s: no error contains %s", cases[i].doc, cases[i].want);
        assert_empty(&s);
        mnc_errors_free(&e);
    }
}

/* A tree built in memory (not through the strict parser) is still checked for bad UTF-8 and
 * duplicate keys. */
static void test_tree_checks(void **state)
{
    const mnc_policy *p = *state;
    cJSON *j = cJSON_CreateObject();
    cJSON *f = cJSON_AddObjectToObject(j, "fields");
    assert_non_null(cJSON_AddStringToObject(f, "reason", "bad \xc0\xaf bytes"));
    mnc_state s;
    mnc_errors e;
    mnc_errors_init(&e);
    assert_int_equal(mnc_state_from_json(p, j, &s, "mem", &e), -1);
    assert_true(has_error(&e, "mem: fields.reason: value is not valid UTF-8"));
    mnc_errors_free(&e);
    cJSON_Delete(j);

    j = cJSON_CreateObject();
    f = cJSON_AddObjectToObject(j, "fields");
    assert_non_null(cJSON_AddStringToObject(f, "reason", "a"));
    assert_non_null(cJSON_AddStringToObject(f, "reason", "b"));
    mnc_errors_init(&e);
    assert_int_equal(mnc_state_from_json(p, j, &s, "mem", &e), -1);
    assert_true(has_error(&e, "mem: fields.reason: duplicate key"));
    assert_empty(&s);
    mnc_errors_free(&e);
    cJSON_Delete(j);
}

static void test_load_file_errors(void **state)
{
    const mnc_policy *p = *state;
    char path[] = "/tmp/mnc-test-state-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char bad[] = "{\"fields\": {\"reason\": \"\xff\"}}";
    assert_int_equal(write(fd, bad, sizeof(bad) - 1), (ssize_t)(sizeof(bad) - 1));
    assert_int_equal(close(fd), 0);
    mnc_state s;
    mnc_errors e;
    mnc_errors_init(&e);
    assert_int_equal(mnc_state_load_file(p, path, &s, &e), -1);
    char want[128];
    snprintf(want, sizeof(want), "%s: $: invalid UTF-8", path);
    assert_true(has_error(&e, want));
    assert_empty(&s);
    mnc_errors_free(&e);
    unlink(path);

    mnc_errors_init(&e);
    assert_int_equal(mnc_state_load_file(p, "/nonexistent/state.json", &s, &e), -1);
    assert_true(has_error(&e, "/nonexistent/state.json: $: cannot open"));
    mnc_errors_free(&e);
}

static void test_state_set(void **state)
{
    (void)state;
    mnc_state s;
    mnc_state_init(&s);
    assert_int_equal(mnc_state_set(&s, 3, "a"), 0);
    assert_int_equal(mnc_state_set(&s, 3, "b"), 0); /* replaces, no leak under ASan */
    assert_string_equal(s.value[3], "b");
    assert_true(mnc_set_has(&s.present, 3));
    assert_int_equal(mnc_state_set(&s, -1, "x"), -1);
    assert_int_equal(mnc_state_set(&s, MNC_MAX_FIELDS, "x"), -1);
    assert_int_equal(mnc_state_set(&s, 4, NULL), -1);
    assert_int_equal(mnc_set_count(&s.present), 1);
    mnc_state_free(&s);
    assert_empty(&s);
}

int main(void)
{
    const char *s = getenv("MNC_SRCDIR");
    if (s && *s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_state),
        cmocka_unit_test(test_all_examples),
        cmocka_unit_test(test_numbers_and_bools_as_text),
        cmocka_unit_test(test_unknown_field),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_tree_checks),
        cmocka_unit_test(test_load_file_errors),
        cmocka_unit_test(test_state_set),
    };
    return cmocka_run_group_tests_name("state", tests, setup, teardown);
}
