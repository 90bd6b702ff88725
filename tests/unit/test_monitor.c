// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_monitor.c - every monitor check, each with an allowed and a denied case. */
#include "fixture.h"

#define NOW 1700000000000ULL

typedef struct {
    fx *f;
    mnc_disclosure sched; /* schedule_meeting: r=coordinator, F={feasible,selected}, 1 turn, 300 s, φ={}, μ=0 */
    mnc_disclosure share; /* share_availability: φ={external,ops_log,calendar}, μ=1, 3600 s */
} mt;

static int setup(void **state)
{
    void *fs;
    fx_setup(&fs);
    mt *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    m->f = fs;
    fx *f = m->f;
    fx_issue(f, f->c_sched, fx_set2(f->f_selected, -1), NOW, &m->sched);
    fx_issue(f, f->c_share, fx_set2(f->f_selected, f->f_feasible), NOW, &m->share);
    /* delivered to the coordinator: it now holds both */
    mnc_set_add(&m->sched.holders, (unsigned)f->coordinator);
    mnc_set_add(&m->share.holders, (unsigned)f->coordinator);
    *state = m;
    return 0;
}

static int teardown(void **state)
{
    mt *m = *state;
    mnc_disclosure_free(&m->sched);
    mnc_disclosure_free(&m->share);
    void *fs = m->f;
    fx_teardown(&fs);
    free(m);
    return 0;
}

static mnc_reason chk(mt *m, int s, int r, const char *purpose, mnc_channel ch, const mnc_disclosure *d, uint64_t now)
{
    mnc_op op = {.sender = s, .receiver = r, .purpose = purpose, .ch = ch, .fields = NULL, .now_ms = now};
    return mnc_monitor_check(m->f->p, &op, d);
}

static void t_unknown_principal(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_OK);
    assert_int_equal(chk(m, -1, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW),
                     MNC_R_UNKNOWN_AGENT);
    assert_int_equal(chk(m, f->worker, 9999, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_R_UNKNOWN_AGENT);
    /* a sink cannot act as a sender */
    assert_int_equal(chk(m, f->ops_log, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW),
                     MNC_R_UNKNOWN_AGENT);
}

static void t_existence(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, NULL, NOW), MNC_R_NO_OBJECT);
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_OK);
}

static void t_revocation(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    m->sched.revoked = true;
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW),
                     MNC_R_REVOKED);
    m->sched.revoked = false;
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_OK);
}

static void t_expiry_time(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    uint64_t exp = m->sched.expires_ms;
    assert_int_equal(exp, NOW + 300 * 1000);
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, exp - 1), MNC_OK);
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, exp),
                     MNC_R_EXPIRED);
}

static void t_expiry_turns(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(m->sched.turns_left, 1);
    assert_int_equal(chk(m, f->coordinator, f->coordinator, "schedule_meeting", MNC_CH_RECV, &m->sched, NOW), MNC_OK);
    m->sched.turns_left = 0; /* the one turn was consumed by the delivery */
    assert_int_equal(chk(m, f->coordinator, f->coordinator, "schedule_meeting", MNC_CH_RECV, &m->sched, NOW),
                     MNC_R_EXPIRED);
    /* onward operations are judged by the scope, so the reason names it */
    assert_int_equal(chk(m, f->coordinator, f->external, "schedule_meeting", MNC_CH_FORWARD, &m->sched, NOW),
                     MNC_R_SINK);
    m->share.turns_left = 0;
    assert_int_equal(chk(m, f->coordinator, f->external, "share_availability", MNC_CH_FORWARD, &m->share, NOW), MNC_OK);
    assert_int_equal(chk(m, f->coordinator, f->memory, "share_availability", MNC_CH_MEMORY_READ, &m->share, NOW),
                     MNC_R_EXPIRED);
    m->sched.turns_left = 1;
}

static void t_holder(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->external, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW),
                     MNC_R_NOT_HOLDER);
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_OK);
}

static void t_recipient_first_hop(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->worker, f->external, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW),
                     MNC_R_RECIPIENT);
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_OK);
}

static void t_purpose(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->worker, f->coordinator, "share_availability", MNC_CH_MESSAGE, &m->sched, NOW),
                     MNC_R_PURPOSE);
    assert_int_equal(chk(m, f->worker, f->coordinator, NULL, MNC_CH_MESSAGE, &m->sched, NOW), MNC_R_PURPOSE);
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &m->sched, NOW), MNC_OK);
}

static void t_fields(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    mnc_set bad = fx_set2(f->f_selected, f->f_reason);
    mnc_set good = fx_set2(f->f_selected, f->f_feasible);
    mnc_op op = {.sender = f->worker,
                 .receiver = f->coordinator,
                 .purpose = "schedule_meeting",
                 .ch = MNC_CH_MESSAGE,
                 .fields = &bad,
                 .now_ms = NOW};
    assert_int_equal(mnc_monitor_check(f->p, &op, &m->sched), MNC_R_FIELDS);
    op.fields = &good;
    assert_int_equal(mnc_monitor_check(f->p, &op, &m->sched), MNC_OK);
}

static void t_forward(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->coordinator, f->external, "schedule_meeting", MNC_CH_FORWARD, &m->sched, NOW),
                     MNC_R_SINK);
    assert_int_equal(chk(m, f->coordinator, f->external, "share_availability", MNC_CH_FORWARD, &m->share, NOW), MNC_OK);
    /* forwarding to a log sink is not a forward */
    assert_int_equal(chk(m, f->coordinator, f->ops_log, "share_availability", MNC_CH_FORWARD, &m->share, NOW),
                     MNC_R_CHANNEL);
}

static void t_tool(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->coordinator, f->calendar, "schedule_meeting", MNC_CH_TOOL, &m->sched, NOW), MNC_R_SINK);
    assert_int_equal(chk(m, f->coordinator, f->calendar, "share_availability", MNC_CH_TOOL, &m->share, NOW), MNC_OK);
    assert_int_equal(chk(m, f->coordinator, f->external, "share_availability", MNC_CH_TOOL, &m->share, NOW),
                     MNC_R_CHANNEL);
}

static void t_log(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->coordinator, f->ops_log, "schedule_meeting", MNC_CH_LOG, &m->sched, NOW), MNC_R_LOG);
    assert_int_equal(chk(m, f->coordinator, f->ops_log, "share_availability", MNC_CH_LOG, &m->share, NOW), MNC_OK);
    assert_int_equal(chk(m, f->coordinator, f->memory, "share_availability", MNC_CH_LOG, &m->share, NOW),
                     MNC_R_CHANNEL);
}

static void t_memory_write(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->coordinator, f->memory, "schedule_meeting", MNC_CH_MEMORY_WRITE, &m->sched, NOW),
                     MNC_R_MEMORY);
    assert_int_equal(chk(m, f->coordinator, f->memory, "share_availability", MNC_CH_MEMORY_WRITE, &m->share, NOW),
                     MNC_OK);
    assert_int_equal(chk(m, f->coordinator, f->ops_log, "share_availability", MNC_CH_MEMORY_WRITE, &m->share, NOW),
                     MNC_R_CHANNEL);
}

static void t_memory_read(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    /* allowed: the recipient, same purpose, within the lifetime */
    assert_int_equal(chk(m, f->coordinator, f->memory, "share_availability", MNC_CH_MEMORY_READ, &m->share, NOW),
                     MNC_OK);
    /* repeated checks: recipient, purpose, lifetime */
    assert_int_equal(chk(m, f->external, f->memory, "share_availability", MNC_CH_MEMORY_READ, &m->share, NOW),
                     MNC_R_RECIPIENT);
    assert_int_equal(chk(m, f->coordinator, f->memory, "schedule_meeting", MNC_CH_MEMORY_READ, &m->share, NOW),
                     MNC_R_PURPOSE);
    assert_int_equal(
        chk(m, f->coordinator, f->memory, "share_availability", MNC_CH_MEMORY_READ, &m->share, m->share.expires_ms),
        MNC_R_EXPIRED);
}

static void t_recv(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    assert_int_equal(chk(m, f->coordinator, f->coordinator, "schedule_meeting", MNC_CH_RECV, &m->sched, NOW), MNC_OK);
    assert_int_equal(chk(m, f->external, f->external, "schedule_meeting", MNC_CH_RECV, &m->sched, NOW),
                     MNC_R_RECIPIENT);
}

static void t_channel_names(void **state)
{
    (void)state;
    for (int i = 0; i < MNC_CH_COUNT; i++)
        assert_int_equal(mnc_channel_from_name(mnc_channel_name((mnc_channel)i)), i);
    assert_int_equal(mnc_channel_from_name("telepathy"), -1);
    assert_string_equal(mnc_reason_name(MNC_R_EXPIRED), "expired");
    assert_int_equal(mnc_reason_from_name("widen_sinks"), MNC_R_WIDEN_SINKS);
}

/* The paper's worked example: select, issue, then the five monitor decisions. */
static void t_worked_example(void **state)
{
    mt *m = *state;
    fx *f = m->f;
    mnc_selection sel;
    mnc_select_req req = {.contract = f->c_sched, .recipient = f->coordinator, .state = &f->st};
    assert_int_equal(mnc_select(f->p, &req, &sel), MNC_OK);
    assert_string_equal(sel.c[sel.chosen].name, "receipt");

    mnc_disclosure d;
    mnc_set fields = sel.c[sel.chosen].fields;
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "receipt", &fields, &f->st, NOW, &d), MNC_OK);
    assert_string_equal(mnc_disclosure_value(&d, f->f_selected), "Thu 10:00");
    assert_null(mnc_disclosure_value(&d, f->f_reason));

    /* delivery to the coordinator: allowed (send then recv) */
    assert_int_equal(chk(m, f->worker, f->coordinator, "schedule_meeting", MNC_CH_MESSAGE, &d, NOW), MNC_OK);
    assert_int_equal(chk(m, f->coordinator, f->coordinator, "schedule_meeting", MNC_CH_RECV, &d, NOW + 1), MNC_OK);
    mnc_set_add(&d.holders, (unsigned)f->coordinator);
    d.turns_left--; /* the delivery consumed the one turn */
    /* forward, log, memory write: denied, each for its scope reason */
    assert_int_equal(chk(m, f->coordinator, f->external, "schedule_meeting", MNC_CH_FORWARD, &d, NOW + 2), MNC_R_SINK);
    assert_int_equal(chk(m, f->coordinator, f->ops_log, "schedule_meeting", MNC_CH_LOG, &d, NOW + 2), MNC_R_LOG);
    assert_int_equal(chk(m, f->coordinator, f->memory, "schedule_meeting", MNC_CH_MEMORY_WRITE, &d, NOW + 2),
                     MNC_R_MEMORY);
    /* read after expiry: denied, by turns and by time */
    assert_int_equal(chk(m, f->coordinator, f->coordinator, "schedule_meeting", MNC_CH_RECV, &d, NOW + 3),
                     MNC_R_EXPIRED);
    d.turns_left = 1;
    assert_int_equal(chk(m, f->coordinator, f->memory, "schedule_meeting", MNC_CH_MEMORY_READ, &d, NOW + 301 * 1000),
                     MNC_R_EXPIRED);
    mnc_disclosure_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_unknown_principal, setup, teardown),
        cmocka_unit_test_setup_teardown(t_existence, setup, teardown),
        cmocka_unit_test_setup_teardown(t_revocation, setup, teardown),
        cmocka_unit_test_setup_teardown(t_expiry_time, setup, teardown),
        cmocka_unit_test_setup_teardown(t_expiry_turns, setup, teardown),
        cmocka_unit_test_setup_teardown(t_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(t_recipient_first_hop, setup, teardown),
        cmocka_unit_test_setup_teardown(t_purpose, setup, teardown),
        cmocka_unit_test_setup_teardown(t_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(t_forward, setup, teardown),
        cmocka_unit_test_setup_teardown(t_tool, setup, teardown),
        cmocka_unit_test_setup_teardown(t_log, setup, teardown),
        cmocka_unit_test_setup_teardown(t_memory_write, setup, teardown),
        cmocka_unit_test_setup_teardown(t_memory_read, setup, teardown),
        cmocka_unit_test_setup_teardown(t_recv, setup, teardown),
        cmocka_unit_test(t_channel_names),
        cmocka_unit_test_setup_teardown(t_worked_example, setup, teardown),
    };
    return cmocka_run_group_tests_name("monitor", tests, NULL, NULL);
}
