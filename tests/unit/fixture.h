/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* fixture.h - shared setup for unit tests: the shipped worked-example policy and state.
 * Tests run from the repository root (tests/run-tests cd's there). */
#ifndef MNC_TEST_FIXTURE_H
#define MNC_TEST_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "mnc/disclosure.h"
#include "mnc/monitor.h"
#include "mnc/policy.h"
#include "mnc/select.h"
#include "mnc/state.h"

#define SCHED_POLICY "policies/scheduling.json"
#define SCHED_STATE "policies/examples/scheduling-state.json"

typedef struct fx {
    mnc_policy *p;
    mnc_state st;
    int worker, coordinator, external, broker, ops_log, memory, calendar;
    int f_reason, f_reason_class, f_busy, f_feasible, f_selected;
    int c_sched, c_share;
} fx;

static inline void fx_print_errors(const mnc_errors *e)
{
    for (int i = 0; i < e->n; i++)
        fprintf(stderr, "%s\n", e->msg[i]);
}

static inline int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    mnc_errors e;
    mnc_errors_init(&e);
    const char *paths[] = {SCHED_POLICY};
    f->p = mnc_policy_load_files(paths, 1, &e);
    fx_print_errors(&e);
    assert_non_null(f->p);
    mnc_state_init(&f->st);
    int rc = mnc_state_load_file(f->p, SCHED_STATE, &f->st, &e);
    fx_print_errors(&e);
    assert_int_equal(rc, 0);
    mnc_errors_free(&e);
    f->worker = mnc_policy_agent(f->p, "worker");
    f->coordinator = mnc_policy_agent(f->p, "coordinator");
    f->external = mnc_policy_agent(f->p, "external");
    f->broker = mnc_policy_agent(f->p, "broker");
    f->ops_log = mnc_policy_principal(f->p, "ops_log");
    f->memory = mnc_policy_principal(f->p, "agent_memory");
    f->calendar = mnc_policy_principal(f->p, "calendar");
    f->f_reason = mnc_policy_field(f->p, "reason");
    f->f_reason_class = mnc_policy_field(f->p, "reason_class");
    f->f_busy = mnc_policy_field(f->p, "busy_slot");
    f->f_feasible = mnc_policy_field(f->p, "slot_feasible");
    f->f_selected = mnc_policy_field(f->p, "selected_slot");
    f->c_sched = mnc_policy_contract(f->p, "schedule_meeting");
    f->c_share = mnc_policy_contract(f->p, "share_availability");
    int ids[] = {f->worker,   f->coordinator,    f->external, f->broker,     f->ops_log,    f->memory,  f->calendar,
                 f->f_reason, f->f_reason_class, f->f_busy,   f->f_feasible, f->f_selected, f->c_sched, f->c_share};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        assert_true(ids[i] >= 0);
    *state = f;
    return 0;
}

static inline int fx_teardown(void **state)
{
    fx *f = *state;
    mnc_state_free(&f->st);
    mnc_policy_free(f->p);
    free(f);
    return 0;
}

static inline mnc_set fx_set2(int a, int b)
{
    mnc_set s;
    mnc_set_clear(&s);
    if (a >= 0)
        mnc_set_add(&s, (unsigned)a);
    if (b >= 0)
        mnc_set_add(&s, (unsigned)b);
    return s;
}

/* Issues an object under contract c from the worker carrying `fields`; asserts success. */
static inline void fx_issue(fx *f, int c, mnc_set fields, uint64_t now, mnc_disclosure *d)
{
    assert_int_equal(mnc_disclosure_issue(f->p, c, f->worker, "receipt", &fields, &f->st, now, d), MNC_OK);
}

#endif
