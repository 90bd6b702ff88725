// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_ledger_backend.c - the ledger backend interface (mnc/ledger_backend.h) on the journal
 * backend: history versions, pricing again when the history moved, duplicates (same release
 * vs a reused id), caps, read-only views, listing and verify. The postgres backend is tested
 * against a real server by tests/integration/test_fleet. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/ledger_backend.h"
#include "mnc/policy.h"
#include "mnc/risk.h"

static char dir[64], path[128];
static mnc_policy *pol;

static const char policy_json[] =
    "{\"mnc_policy\":1,\"name\":\"t\",\"agents\":[{\"name\":\"worker\"},{\"name\":\"coord\"}],"
    "\"fields\":[{\"name\":\"a\",\"weight\":0.5},{\"name\":\"b\",\"weight\":0.25}],"
    "\"families\":[{\"name\":\"f\",\"forms\":[{\"name\":\"x\",\"fields\":[\"a\"]}]}],"
    "\"requirements\":[{\"agent\":\"coord\",\"purpose\":\"p\",\"needs\":[\"a\"]}],"
    "\"contracts\":[{\"id\":\"c\",\"purpose\":\"p\",\"issuers\":[\"worker\"],\"recipient\":"
    "\"coord\",\"fields\":[\"a\",\"b\"],\"lifetime\":{\"turns\":1},\"sinks\":[],\"memory\":false,"
    "\"family\":\"f\",\"failure\":[\"abstain\"]}]}";

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/mnc-lb-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/ledger", dir);
    mnc_errors e;
    mnc_errors_init(&e);
    pol = mnc_policy_load_buffer("t", policy_json, sizeof(policy_json) - 1, &e);
    if (!pol)
        print_message("# policy: %s\n", e.n ? e.msg[0] : "?");
    mnc_errors_free(&e);
    return pol ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    mnc_policy_free(pol);
    return 0;
}

static mnc_lbackend *open_j(bool ro)
{
    char notice[256], err[512];
    mnc_lbackend *b = mnc_lb_open_journal(path, ro, notice, sizeof(notice), err, sizeof(err));
    if (!b)
        print_message("# open: %s\n", err);
    assert_non_null(b);
    return b;
}

static int recomputed;

/* The risk model itself, as mncd's callback does. */
static int reprice(void *arg, const mnc_obs *h, size_t nh, double *delta)
{
    const mnc_obs *d = arg;
    recomputed++;
    return mnc_risk_charge(pol, h, nh, d, 1, delta);
}

static mnc_lb_request req(const char *release, const mnc_obs *o, double delta, uint64_t version,
                          const mnc_ledger_limits *lim)
{
    return (mnc_lb_request){.subject = "alice",
                            .recipient = "coord",
                            .release = release,
                            .obs = o,
                            .n_obs = 1,
                            .delta = delta,
                            .version = version,
                            .recompute = reprice,
                            .arg = (void *)o,
                            .lim = lim};
}

static void test_versions_and_reprice(void **state)
{
    (void)state;
    mnc_lbackend *b = open_j(false);
    assert_int_equal(mnc_lb_kind_of(b), MNC_LB_JOURNAL);
    mnc_obs *h = NULL;
    size_t nh = 9;
    double spent = -1;
    uint64_t v = 9;
    assert_int_equal(mnc_lb_history(b, pol, "alice", &h, &nh, &spent, &v), MNC_LEDGER_OK);
    assert_int_equal(nh, 0);
    assert_int_equal(v, 0);
    mnc_obs oa = {.field = 0, .value = "x"};
    mnc_lb_result r;
    mnc_lb_request c = req("r1", &oa, 0.5, 0, NULL);
    recomputed = 0;
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_OK);
    assert_int_equal(recomputed, 0); /* priced against the current version */
    assert_true(r.delta == 0.5 && r.spent == 0.5);
    /* priced against version 0 again, but the history is at 1 now: priced once more, and a
     * repeat of field a costs nothing under the weights model */
    mnc_obs oa2 = {.field = 0, .value = "y"};
    c = req("r2", &oa2, 0.5, 0, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_OK);
    assert_int_equal(recomputed, 1);
    assert_true(r.delta == 0 && r.spent == 0.5);
    assert_int_equal(mnc_lb_history(b, pol, "alice", &h, &nh, &spent, &v), MNC_LEDGER_OK);
    assert_int_equal(v, 2);
    assert_int_equal(nh, 2);
    assert_true(spent == 0.5);
    free(h);
    assert_int_equal(mnc_lb_close(b), 0);
}

static void test_duplicates_and_caps(void **state)
{
    (void)state;
    mnc_lbackend *b = open_j(false);
    mnc_obs oa = {.field = 0, .value = "x"}, ob = {.field = 1, .value = "z"};
    mnc_lb_result r;
    mnc_lb_request c = req("r1", &oa, 0.5, 0, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_OK);
    /* a retry of the same release: duplicate, same */
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_DUPLICATE);
    assert_true(r.same);
    /* the same id for other values: duplicate, not the same */
    c = req("r1", &ob, 0.25, 1, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_DUPLICATE);
    assert_false(r.same);
    mnc_ledger_limits eps = {.epsilon = 0.1, .budget = -1}, bud = {.epsilon = -1, .budget = 0.6};
    c = req("r2", &ob, 0.25, 1, &eps);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_OVER_EPSILON);
    c = req("r2", &ob, 0.25, 1, &bud);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_OVER_BUDGET);
    assert_true(r.spent == 0.5);
    /* bad input: a negative delta, an unknown field id */
    c = req("r3", &ob, -1, 1, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_ERROR);
    mnc_obs bad = {.field = 99, .value = "q"};
    c = req("r3", &bad, 0, 1, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_ERROR);
    assert_int_equal(mnc_lb_close(b), 0);
}

static int count_cb(void *arg, const mnc_lb_entry *e)
{
    assert_string_equal(e->host, "");
    (*(int *)arg)++;
    return 0;
}

static void test_readonly_list_verify(void **state)
{
    (void)state;
    mnc_lbackend *b = open_j(false);
    mnc_obs oa = {.field = 0, .value = "x"};
    mnc_lb_result r;
    mnc_lb_request c = req("r1", &oa, 0.5, 0, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_OK);
    assert_int_equal(mnc_lb_close(b), 0);
    b = open_j(true);
    c = req("r2", &oa, 0, 1, NULL);
    assert_int_equal(mnc_lb_charge(b, pol, &c, &r), MNC_LEDGER_ERROR);
    int n = 0;
    char err[256];
    assert_int_equal(mnc_lb_foreach(b, NULL, count_cb, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 1);
    size_t ns = 0, nc = 0;
    assert_int_equal(mnc_lb_verify(b, &ns, &nc, err, sizeof(err)), 0);
    assert_int_equal(ns, 1);
    assert_int_equal(nc, 1);
    char st[64];
    assert_true(mnc_lb_state(b, st, sizeof(st), NULL));
    assert_string_equal(st, "ok");
    assert_int_equal(mnc_lb_tick(b, 0), -1);
    assert_null(mnc_lb_pg_conn(b));
    assert_int_equal(mnc_lb_close(b), 0);
    /* the import is postgres only */
    b = open_j(false);
    size_t k = 9;
    assert_int_equal(mnc_lb_import(b, NULL, NULL, "h", &k, err, sizeof(err)), -1);
    assert_int_equal(k, 0);
    assert_int_equal(mnc_lb_close(b), 0);
}

static void test_postgres_refuses_bad_config(void **state)
{
    (void)state;
    char err[512];
    /* never reaches a server: a password, a bad host name, a malformed conninfo */
    assert_null(mnc_lb_open_postgres("dbname=x password=secret", "h1", err, sizeof(err)));
    assert_non_null(strstr(err, "carries a password"));
    assert_null(strstr(err, "secret"));
    assert_null(mnc_lb_open_postgres("dbname=x", "bad host", err, sizeof(err)));
    assert_non_null(strstr(err, "host name"));
    assert_null(mnc_lb_open_postgres("dbname=x bogus", "h1", err, sizeof(err)));
    assert_non_null(strstr(err, "not a libpq connection string"));
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test_setup_teardown(test_versions_and_reprice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates_and_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_list_verify, setup, teardown),
        cmocka_unit_test(test_postgres_refuses_bad_config),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
