// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_select.c - MNC-C: argmin, insufficient, contract-breaking, ties, nothing admissible,
 * submitted free text, MNC-L caps. */
#include <math.h>
#include <string.h>

#include "fixture.h"

static const mnc_scored *by_name(const mnc_selection *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->c[i].name, name) == 0)
            return &s->c[i];
    fail_msg("candidate %s not in the list", name);
    return NULL;
}

static void t_worked_example_argmin(void **state)
{
    fx *f = *state;
    mnc_selection s;
    mnc_select_req req = {.contract = f->c_sched, .recipient = f->coordinator, .state = &f->st};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_OK);
    assert_int_equal(s.n, 5);
    assert_string_equal(s.c[s.chosen].name, "receipt");
    /* every candidate is scored and has a verdict */
    assert_int_equal(by_name(&s, "full_rationale")->verdict, MNC_R_CONTRACT_FIELDS);
    assert_non_null(strstr(by_name(&s, "full_rationale")->detail, "reason"));
    assert_int_equal(by_name(&s, "redacted_summary")->verdict, MNC_R_CONTRACT_FIELDS);
    assert_int_equal(by_name(&s, "task_fact")->verdict, MNC_OK);
    assert_int_equal(by_name(&s, "receipt")->verdict, MNC_OK);
    assert_int_equal(by_name(&s, "feasibility_bit")->verdict, MNC_R_INSUFFICIENT);
    assert_non_null(strstr(by_name(&s, "feasibility_bit")->detail, "selected_slot"));
    /* risks are the sums of declared weights */
    assert_float_equal(by_name(&s, "receipt")->risk, 0.1, 1e-12);
    assert_float_equal(by_name(&s, "task_fact")->risk, 0.15, 1e-12);
    assert_float_equal(by_name(&s, "full_rationale")->risk, 1.4, 1e-12);
    assert_float_equal(by_name(&s, "feasibility_bit")->risk, 0.05, 1e-12);
    /* the chosen one is the minimum over the admissible ones */
    for (int i = 0; i < s.n; i++)
        if (s.c[i].verdict == MNC_OK)
            assert_true(s.c[s.chosen].risk <= s.c[i].risk);
}

static void t_wrong_recipient(void **state)
{
    fx *f = *state;
    mnc_selection s;
    mnc_select_req req = {.contract = f->c_sched, .recipient = f->external, .state = &f->st};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_NO_CANDIDATE);
    assert_int_equal(s.chosen, -1);
    assert_int_equal(by_name(&s, "receipt")->verdict, MNC_R_WRONG_RECIPIENT);
}

static void t_missing_value(void **state)
{
    fx *f = *state;
    mnc_state st;
    mnc_state_init(&st);
    assert_int_equal(mnc_state_set(&st, f->f_feasible, "true"), 0);
    mnc_selection s;
    mnc_select_req req = {.contract = f->c_sched, .recipient = f->coordinator, .state = &st};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_NO_CANDIDATE);
    assert_int_equal(by_name(&s, "receipt")->verdict, MNC_R_MISSING_VALUE);
    mnc_state_free(&st);
}

/* A submitted free-text candidate that copies a forbidden value is rejected; a clean one is
 * admissible and competes on risk like any form. */
static void t_submitted(void **state)
{
    fx *f = *state;
    mnc_submitted sub[3] = {
        {.name = "llm_leaky",
         .fields = fx_set2(f->f_selected, -1),
         .text = "Alice has an Oncology Appointment on Tue 2pm, so Thu 10:00"},
        {.name = "llm_clean", .fields = fx_set2(f->f_selected, -1), .text = "Let's meet Thu 10:00."},
        {.name = "llm_overclaim", .fields = fx_set2(f->f_selected, f->f_reason), .text = "Thu 10:00"},
    };
    mnc_selection s;
    mnc_select_req req = {
        .contract = f->c_sched, .recipient = f->coordinator, .state = &f->st, .submitted = sub, .n_submitted = 3};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_OK);
    const mnc_scored *leaky = by_name(&s, "llm_leaky");
    assert_true(leaky->submitted);
    assert_int_equal(leaky->verdict, MNC_R_DIRECT_EXPOSURE);
    assert_non_null(strstr(leaky->detail, "reason") ? strstr(leaky->detail, "reason")
                                                    : strstr(leaky->detail, "busy_slot"));
    assert_int_equal(by_name(&s, "llm_clean")->verdict, MNC_OK);
    assert_int_equal(by_name(&s, "llm_overclaim")->verdict, MNC_R_CONTRACT_FIELDS);
    /* llm_clean ties with receipt on risk and field count: policy forms win the tie */
    assert_string_equal(s.c[s.chosen].name, "receipt");

    /* exposure scan directly */
    mnc_set allowed = f->p->contracts[f->c_sched].scope.fields;
    assert_int_equal(mnc_exposure_scan(&f->st, &allowed, "nothing here"), -1);
    assert_int_equal(mnc_exposure_scan(&f->st, &allowed, "busy tue 2PM"), f->f_busy);
    /* allowed fields are not forbidden */
    assert_int_equal(mnc_exposure_scan(&f->st, &allowed, "Thu 10:00"), -1);
}

static void t_limits(void **state)
{
    fx *f = *state;
    mnc_selection s;
    mnc_limits lim = {.epsilon = 0.12, .budget = -1, .spent = 0};
    mnc_select_req req = {.contract = f->c_sched, .recipient = f->coordinator, .state = &f->st, .limits = &lim};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_OK);
    assert_string_equal(s.c[s.chosen].name, "receipt");
    assert_int_equal(by_name(&s, "task_fact")->verdict, MNC_R_OVER_EPSILON);
    lim.epsilon = 0.05; /* below the receipt's charge */
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_NO_CANDIDATE);
    assert_int_equal(by_name(&s, "receipt")->verdict, MNC_R_OVER_EPSILON);
    lim = (mnc_limits){.epsilon = -1, .budget = 1.0, .spent = 0.95};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_NO_CANDIDATE);
    assert_int_equal(by_name(&s, "receipt")->verdict, MNC_R_OVER_BUDGET);
    lim.spent = 0.9; /* 0.9 + 0.1 == 1.0 is within budget */
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_OK);

    /* history: a field already disclosed is not charged again under the weights model */
    mnc_obs hist[] = {{.field = (uint16_t)f->f_selected, .value = "Thu 10:00"}};
    mnc_select_req req2 = {
        .contract = f->c_sched, .recipient = f->coordinator, .state = &f->st, .history = hist, .n_history = 1};
    assert_int_equal(mnc_select(f->p, &req2, &s), MNC_OK);
    assert_float_equal(by_name(&s, "receipt")->risk, 0.0, 1e-12);
    assert_float_equal(by_name(&s, "task_fact")->risk, 0.05, 1e-12);
}

static void t_bad_requests(void **state)
{
    fx *f = *state;
    mnc_selection s;
    mnc_select_req req = {.contract = 999, .recipient = f->coordinator, .state = &f->st};
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_INVALID);
    assert_int_equal(s.chosen, -1);
    req.contract = f->c_sched;
    req.state = NULL;
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_INVALID);
    req.state = &f->st;
    req.n_submitted = MNC_MAX_SUBMITTED + 1;
    assert_int_equal(mnc_select(f->p, &req, &s), MNC_R_INVALID);
}

/* Ties and nothing-admissible on a purpose-built policy. */
static const char tie_policy[] =
    "{\"mnc_policy\":1,\"name\":\"ties\","
    "\"agents\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
    "\"fields\":[{\"name\":\"x\",\"weight\":0.5},{\"name\":\"y\",\"weight\":0.5},"
    "{\"name\":\"z\",\"weight\":0.25},{\"name\":\"w\",\"weight\":0.25},{\"name\":\"secret\",\"weight\":2}],"
    "\"families\":[{\"name\":\"fam\",\"forms\":["
    "{\"name\":\"second_x\",\"fields\":[\"x\"]},"
    "{\"name\":\"first_y\",\"fields\":[\"y\"]},"
    "{\"name\":\"two_small\",\"fields\":[\"z\",\"w\"]},"
    "{\"name\":\"leak\",\"fields\":[\"secret\"]}]}],"
    "\"requirements\":["
    "{\"agent\":\"b\",\"purpose\":\"q\",\"needs\":[\"secret\"]}],"
    "\"contracts\":["
    "{\"id\":\"c\",\"purpose\":\"p\",\"issuers\":[\"a\"],\"recipient\":\"b\",\"fields\":[\"x\",\"y\",\"z\",\"w\"],"
    "\"lifetime\":{\"seconds\":10},\"family\":\"fam\"},"
    "{\"id\":\"q\",\"purpose\":\"q\",\"issuers\":[\"a\"],\"recipient\":\"b\",\"fields\":[\"x\",\"y\"],"
    "\"lifetime\":{\"turns\":1},\"family\":\"fam\",\"failure\":[\"approval\",\"abstain\"]}]}";

static void t_ties_and_nothing(void **state)
{
    (void)state;
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_buffer("tie_policy", tie_policy, sizeof(tie_policy) - 1, &e);
    fx_print_errors(&e);
    assert_non_null(p);
    mnc_state st;
    mnc_state_init(&st);
    const char *names[] = {"x", "y", "z", "w", "secret"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(mnc_state_set(&st, mnc_policy_field(p, names[i]), "val"), 0);
    int b = mnc_policy_agent(p, "b");
    mnc_selection s;
    mnc_select_req req = {.contract = mnc_policy_contract(p, "c"), .recipient = b, .state = &st};
    /* all of second_x, first_y, two_small cost 0.5: fewer fields wins, then declaration order */
    for (int rep = 0; rep < 3; rep++) { /* deterministic */
        assert_int_equal(mnc_select(p, &req, &s), MNC_OK);
        assert_string_equal(s.c[s.chosen].name, "second_x");
    }
    assert_float_equal(by_name(&s, "two_small")->risk, 0.5, 1e-12);
    assert_int_equal(by_name(&s, "leak")->verdict, MNC_R_CONTRACT_FIELDS);

    /* contract q: the receiver needs `secret`, which F does not allow -> nothing admissible,
     * a distinct outcome with the full list still scored */
    req.contract = mnc_policy_contract(p, "q");
    assert_int_equal(mnc_select(p, &req, &s), MNC_R_NO_CANDIDATE);
    assert_int_equal(s.chosen, -1);
    assert_int_equal(s.n, 4);
    assert_int_equal(by_name(&s, "second_x")->verdict, MNC_R_INSUFFICIENT);
    assert_int_equal(by_name(&s, "leak")->verdict, MNC_R_CONTRACT_FIELDS);
    assert_false(isnan(by_name(&s, "second_x")->risk));
    mnc_state_free(&st);
    mnc_policy_free(p);
    mnc_errors_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_worked_example_argmin, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_wrong_recipient, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_missing_value, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_submitted, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_limits, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_bad_requests, fx_setup, fx_teardown),
        cmocka_unit_test(t_ties_and_nothing),
    };
    return cmocka_run_group_tests_name("select", tests, NULL, NULL);
}
