// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_disclosure.c - issue, every narrowing rule (and an attempt to widen each), render, JSON. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "json_write.h"

#define NOW 1700000000000ULL

static void t_issue(void **state)
{
    fx *f = *state;
    mnc_disclosure d;
    mnc_set ok = fx_set2(f->f_selected, f->f_feasible);
    mnc_set outside = fx_set2(f->f_selected, f->f_reason);
    mnc_set empty;
    mnc_set_clear(&empty);
    /* only an issuer may disclose */
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->coordinator, "x", &ok, &f->st, NOW, &d),
                     MNC_R_NOT_ISSUER);
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->ops_log, "x", &ok, &f->st, NOW, &d),
                     MNC_R_UNKNOWN_AGENT);
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "x", &outside, &f->st, NOW, &d),
                     MNC_R_CONTRACT_FIELDS);
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "x", &empty, &f->st, NOW, &d), MNC_R_INVALID);
    assert_int_equal(mnc_disclosure_issue(f->p, 999, f->worker, "x", &ok, &f->st, NOW, &d), MNC_R_INVALID);
    /* a field the state does not have */
    mnc_state partial;
    mnc_state_init(&partial);
    assert_int_equal(mnc_state_set(&partial, f->f_selected, "Thu 10:00"), 0);
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "x", &ok, &partial, NOW, &d),
                     MNC_R_MISSING_VALUE);
    mnc_state_free(&partial);

    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "task_fact", &ok, &f->st, NOW, &d), MNC_OK);
    assert_int_equal(d.n_values, 2);
    assert_string_equal(mnc_disclosure_value(&d, f->f_selected), "Thu 10:00");
    assert_string_equal(mnc_disclosure_value(&d, f->f_feasible), "true");
    assert_true(mnc_set_has(&d.holders, (unsigned)f->worker));
    assert_false(mnc_set_has(&d.holders, (unsigned)f->coordinator));
    assert_int_equal(d.expires_ms, NOW + 300000);
    assert_int_equal(d.turns_left, 1);
    assert_false(d.has_parent);
    mnc_disclosure d2;
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "task_fact", &ok, &f->st, NOW, &d2), MNC_OK);
    assert_memory_not_equal(&d.id, &d2.id, sizeof(d.id)); /* fresh random ids */
    mnc_disclosure_free(&d);
    mnc_disclosure_free(&d2);
}

/* A share_availability object (φ = {external, ops_log, calendar}, μ = 1, 3600 s) held by the
 * coordinator, for narrowing tests. */
static void share_obj(fx *f, mnc_disclosure *d)
{
    fx_issue(f, f->c_share, fx_set2(f->f_selected, f->f_feasible), NOW, d);
    mnc_set_add(&d->holders, (unsigned)f->coordinator);
}

static void t_derive_narrows(void **state)
{
    fx *f = *state;
    mnc_disclosure p, c;
    share_obj(f, &p);
    mnc_set fields = fx_set2(f->f_selected, -1);
    mnc_set sinks = fx_set2(f->ops_log, -1);
    mnc_lifetime life = {.seconds = 60, .turns = 2};
    mnc_narrowing n = {.fields = &fields, .sinks = &sinks, .life = &life, .memory = 0};
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &n, NOW + 1000, &c), MNC_OK);
    assert_true(c.has_parent);
    assert_memory_equal(&c.parent, &p.id, sizeof(p.id));
    assert_int_equal(c.origin, f->coordinator);
    assert_true(mnc_set_eq(&c.scope.fields, &fields));
    assert_true(mnc_set_eq(&c.scope.sinks, &sinks));
    assert_false(c.scope.memory);
    assert_int_equal(c.expires_ms, NOW + 1000 + 60000);
    assert_int_equal(c.turns_left, 2);
    assert_int_equal(c.n_values, 1); /* slot_feasible dropped with F' */
    assert_null(mnc_disclosure_value(&c, f->f_feasible));
    assert_int_equal(c.scope.recipient, p.scope.recipient);
    /* a derived object can be derived again, only narrower */
    mnc_disclosure g;
    mnc_narrowing same = {.memory = -1};
    assert_int_equal(mnc_disclosure_derive(&c, f->coordinator, &same, NOW + 2000, &g), MNC_OK);
    mnc_disclosure_free(&g);
    mnc_narrowing wider = {.memory = 1};
    assert_int_equal(mnc_disclosure_derive(&c, f->coordinator, &wider, NOW + 2000, &g), MNC_R_WIDEN_MEMORY);
    mnc_disclosure_free(&c);
    mnc_disclosure_free(&p);
}

static void t_derive_widen_each(void **state)
{
    fx *f = *state;
    mnc_disclosure p, c;
    share_obj(f, &p);

    mnc_set wide_fields = fx_set2(f->f_selected, f->f_reason);
    mnc_narrowing n1 = {.fields = &wide_fields, .memory = -1};
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &n1, NOW, &c), MNC_R_WIDEN_FIELDS);

    mnc_set wide_sinks = fx_set2(f->ops_log, f->memory); /* agent_memory not in φ */
    mnc_narrowing n2 = {.sinks = &wide_sinks, .memory = -1};
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &n2, NOW, &c), MNC_R_WIDEN_SINKS);

    mnc_lifetime longer = {.seconds = 7200};
    mnc_narrowing n3 = {.life = &longer, .memory = -1};
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &n3, NOW, &c), MNC_R_WIDEN_LIFETIME);
    /* same length, but later: the child's deadline would pass the parent's */
    mnc_lifetime same_len = {.seconds = 3600};
    assert_int_equal(
        mnc_disclosure_derive(&p, f->coordinator, &(mnc_narrowing){.life = &same_len, .memory = -1}, NOW + 1, &c),
        MNC_R_WIDEN_LIFETIME);
    /* dropping the time bound is a widening */
    mnc_lifetime turns_only = {.turns = 1};
    assert_int_equal(
        mnc_disclosure_derive(&p, f->coordinator, &(mnc_narrowing){.life = &turns_only, .memory = -1}, NOW, &c),
        MNC_R_WIDEN_LIFETIME);

    mnc_disclosure_free(&p);
    /* memory: a μ=0 parent cannot have a μ=1 child */
    mnc_disclosure s;
    fx_issue(f, f->c_sched, fx_set2(f->f_selected, -1), NOW, &s);
    assert_int_equal(mnc_disclosure_derive(&s, f->worker, &(mnc_narrowing){.memory = 1}, NOW, &c), MNC_R_WIDEN_MEMORY);
    /* turns: the parent has 1 turn */
    mnc_lifetime more_turns = {.seconds = 10, .turns = 5};
    assert_int_equal(mnc_disclosure_derive(&s, f->worker, &(mnc_narrowing){.life = &more_turns, .memory = -1}, NOW, &c),
                     MNC_R_WIDEN_LIFETIME);
    /* φ: the parent has none; any sink widens */
    mnc_set one = fx_set2(f->external, -1);
    assert_int_equal(mnc_disclosure_derive(&s, f->worker, &(mnc_narrowing){.sinks = &one, .memory = -1}, NOW, &c),
                     MNC_R_WIDEN_SINKS);
    mnc_disclosure_free(&s);
}

static void t_scope_narrows_recipient(void **state)
{
    fx *f = *state;
    mnc_scope a = f->p->contracts[f->c_sched].scope, b = a;
    assert_int_equal(mnc_scope_narrows(&a, 10, 1, &b, 10, 1), MNC_OK);
    b.recipient = (uint16_t)f->external;
    assert_int_equal(mnc_scope_narrows(&a, 10, 1, &b, 10, 1), MNC_R_WIDEN_RECIPIENT);
    b = a;
    assert_int_equal(mnc_scope_narrows(&a, 10, 1, &b, 11, 1), MNC_R_WIDEN_LIFETIME);
    assert_int_equal(mnc_scope_narrows(&a, 0, MNC_TURNS_UNBOUNDED, &b, 0, MNC_TURNS_UNBOUNDED), MNC_OK);
}

static void t_derive_refusals(void **state)
{
    fx *f = *state;
    mnc_disclosure p, c;
    share_obj(f, &p);
    mnc_narrowing same = {.memory = -1};
    assert_int_equal(mnc_disclosure_derive(&p, f->external, &same, NOW, &c), MNC_R_NOT_HOLDER);
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &same, p.expires_ms, &c), MNC_R_EXPIRED);
    p.revoked = true;
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &same, NOW, &c), MNC_R_REVOKED);
    mnc_disclosure_free(&p);
}

static void t_render(void **state)
{
    fx *f = *state;
    mnc_disclosure d;
    mnc_set fields = fx_set2(f->f_selected, -1);
    assert_int_equal(mnc_disclosure_issue(f->p, f->c_sched, f->worker, "receipt", &fields, &f->st, NOW, &d), MNC_OK);
    char *s = mnc_disclosure_render(f->p, &d);
    assert_non_null(s);
    assert_non_null(strstr(s, "Thu 10:00"));
    assert_null(strstr(s, "oncology"));
    assert_null(strstr(s, "{"));
    free(s);
    /* an unknown form renders field=value lines */
    strcpy(d.form, "no_such_form");
    s = mnc_disclosure_render(f->p, &d);
    assert_string_equal(s, "selected_slot=Thu 10:00");
    free(s);
    mnc_disclosure_free(&d);
}

static void t_json_roundtrip(void **state)
{
    fx *f = *state;
    mnc_disclosure p, c, back;
    share_obj(f, &p);
    mnc_set fields = fx_set2(f->f_selected, -1);
    mnc_narrowing n = {.fields = &fields, .memory = 0};
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &n, NOW + 5, &c), MNC_OK);
    c.revoked = true;
    mnc_disclosure *objs[] = {&p, &c};
    for (int i = 0; i < 2; i++) {
        cJSON *j = mnc_disclosure_to_json(f->p, objs[i]);
        assert_non_null(j);
        mnc_errors e;
        mnc_errors_init(&e);
        int rc = mnc_disclosure_from_json(f->p, j, &back, &e);
        fx_print_errors(&e);
        assert_int_equal(rc, 0);
        mnc_errors_free(&e);
        /* exact equality of every component */
        assert_memory_equal(&back.id, &objs[i]->id, sizeof(back.id));
        assert_int_equal(back.has_parent, objs[i]->has_parent);
        assert_memory_equal(&back.parent, &objs[i]->parent, sizeof(back.parent));
        assert_int_equal(back.contract, objs[i]->contract);
        assert_int_equal(back.origin, objs[i]->origin);
        assert_string_equal(back.form, objs[i]->form);
        assert_memory_equal(&back.scope, &objs[i]->scope, sizeof(back.scope));
        assert_int_equal(back.issued_ms, objs[i]->issued_ms);
        assert_int_equal(back.expires_ms, objs[i]->expires_ms);
        assert_int_equal(back.turns_left, objs[i]->turns_left);
        assert_true(mnc_set_eq(&back.holders, &objs[i]->holders));
        assert_int_equal(back.revoked, objs[i]->revoked);
        assert_int_equal(back.n_values, objs[i]->n_values);
        for (int v = 0; v < back.n_values; v++) {
            assert_int_equal(back.values[v].field, objs[i]->values[v].field);
            assert_string_equal(back.values[v].value, objs[i]->values[v].value);
        }
        /* and the serialisations are identical */
        char *a = cJSON_PrintUnformatted(j);
        cJSON *j2 = mnc_disclosure_to_json(f->p, &back);
        char *b = cJSON_PrintUnformatted(j2);
        assert_string_equal(a, b);
        free(a);
        free(b);
        cJSON_Delete(j);
        cJSON_Delete(j2);
        mnc_disclosure_free(&back);
    }
    mnc_disclosure_free(&p);
    mnc_disclosure_free(&c);
}

/* mnc_disclosure_write_json (json_write.h) writes, without a tree, exactly the bytes
 * mnc_json_print prints for mnc_disclosure_to_json's tree - mncd's journal records and answers
 * depend on it - over objects that vary every member: parent or not, revoked, turns bounded or
 * not, numbers past 10^15 (printed through "%1.15g"), escapes and UTF-8 in names and values, an
 * unknown contract index, no holders; and a NULL value fails both ways, leaving b as it was. */
static void check_write_same(fx *f, const mnc_disclosure *d)
{
    cJSON *j = mnc_disclosure_to_json(f->p, d);
    assert_non_null(j);
    mnc_jbuf a = {0}, b = {0};
    assert_int_equal(mnc_json_print(&a, j), 0);
    assert_int_equal(mnc_jbuf_put(&b, "xy", 2), 0); /* appends after what is there */
    assert_int_equal(mnc_disclosure_write_json(&b, f->p, d), 0);
    assert_int_equal(b.len, a.len + 2);
    assert_memory_equal(b.p + 2, a.p, a.len);
    if (d->issued_ms < 1000000000000000ULL && d->expires_ms < 1000000000000000ULL &&
        d->scope.life.seconds < 1000000000000000ULL) { /* and cJSON's own printer agrees */
        char *c = cJSON_PrintUnformatted(j);
        assert_non_null(c);
        assert_int_equal(strlen(c), a.len);
        assert_memory_equal(c, a.p, a.len);
        free(c);
    }
    cJSON_Delete(j);
    free(a.p);
    free(b.p);
}

static void t_json_write_bytes(void **state)
{
    fx *f = *state;
    mnc_disclosure p, c;
    share_obj(f, &p);
    mnc_set fields = fx_set2(f->f_selected, -1);
    mnc_narrowing n = {.fields = &fields, .memory = 0};
    assert_int_equal(mnc_disclosure_derive(&p, f->coordinator, &n, NOW + 5, &c), MNC_OK);
    static const uint64_t nums[] = {
        0, 1, 999999999999999ULL, 1000000000000000ULL, 12345678901234567ULL, (1ULL << 53) + 1, UINT64_MAX};
    static const char *const texts[] = {
        "", "a\"b\\c", "tab\there\nnl\r\b\f", "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac", "</script>"};
    int runs = 0;
    for (int v = 0; v < 2; v++) {
        mnc_disclosure *d = v ? &c : &p;
        check_write_same(f, d);
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
            mnc_disclosure x = *d; /* shallow: values shared, not freed */
            x.issued_ms = nums[i];
            x.expires_ms = nums[(i + 3) % 7];
            x.scope.life.seconds = nums[(i + 5) % 7];
            x.scope.life.turns = (uint32_t)nums[i];
            x.turns_left = i % 2 ? MNC_TURNS_UNBOUNDED : (uint32_t)i;
            x.revoked = i % 2;
            x.scope.memory = !(i % 3);
            check_write_same(f, &x);
            runs++;
        }
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
            mnc_disclosure x = *d;
            snprintf(x.form, sizeof(x.form), "%s", texts[i]);
            mnc_value vals[2];
            for (int k = 0; k < x.n_values && k < 2; k++) {
                vals[k] = d->values[k];
                vals[k].value = (char *)texts[(i + (size_t)k) % 6];
            }
            x.values = vals;
            check_write_same(f, &x);
            x.contract = 999; /* unknown: "?" */
            mnc_set_clear(&x.holders);
            check_write_same(f, &x);
            runs += 2;
        }
    }
    assert_int_equal(runs, 2 * (7 + 12));
    /* a NULL value: the tree cannot be built, and the writer fails without writing */
    mnc_disclosure x = p;
    mnc_value bad = {.field = p.values[0].field, .value = NULL};
    x.values = &bad;
    x.n_values = 1;
    assert_null(mnc_disclosure_to_json(f->p, &x));
    mnc_jbuf b = {0};
    assert_int_equal(mnc_jbuf_put(&b, "z", 1), 0);
    assert_int_equal(mnc_disclosure_write_json(&b, f->p, &x), -1);
    assert_int_equal(b.len, 1);
    free(b.p);
    mnc_disclosure_free(&p);
    mnc_disclosure_free(&c);
}

static void t_json_strict(void **state)
{
    fx *f = *state;
    mnc_disclosure p, back;
    share_obj(f, &p);
    const char *mutations[][2] = {
        {"extra", "1"},                                      /* unknown key */
        {"id", "\"xyz\""},                                   /* bad id */
        {"origin", "\"nobody\""},                            /* unknown agent */
        {"contract", "\"nope\""},                            /* unknown contract */
        {"purpose", "\"other\""},                            /* purpose mismatch */
        {"issued_ms", "-1"},                                 /* negative */
        {"issued_ms", "1.5"},                                /* non-integer */
        {"turns_left", "\"1\""},                             /* wrong type */
        {"values", "{\"reason\":\"oncology appointment\"}"}, /* outside F */
        {"holders", "[\"ghost\"]"},                          /* unknown holder */
        {"revoked", "0"},                                    /* wrong type */
    };
    for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
        cJSON *j = mnc_disclosure_to_json(f->p, &p);
        cJSON *v = cJSON_Parse(mutations[i][1]);
        assert_non_null(v);
        if (cJSON_GetObjectItemCaseSensitive(j, mutations[i][0]))
            cJSON_ReplaceItemInObjectCaseSensitive(j, mutations[i][0], v);
        else
            cJSON_AddItemToObject(j, mutations[i][0], v);
        mnc_errors e;
        mnc_errors_init(&e);
        assert_int_equal(mnc_disclosure_from_json(f->p, j, &back, &e), -1);
        assert_true(e.n >= 1);
        assert_non_null(strstr(e.msg[0], "object."));
        mnc_errors_free(&e);
        cJSON_Delete(j);
    }
    mnc_disclosure_free(&p);
}

static void t_oid(void **state)
{
    (void)state;
    mnc_oid a, b;
    char hex[MNC_OID_HEX];
    assert_int_equal(mnc_oid_random(&a), 0);
    mnc_oid_hex(&a, hex);
    assert_int_equal(strlen(hex), 32);
    assert_int_equal(mnc_oid_parse(hex, &b), 0);
    assert_memory_equal(&a, &b, sizeof(a));
    assert_int_equal(mnc_oid_parse("zz", &b), -1);
    assert_int_equal(mnc_oid_parse("0123456789abcdef0123456789abcdeg", &b), -1);
    assert_int_equal(mnc_oid_parse(NULL, &b), -1);
}

/* Ids come from a buffered getrandom (randbuf.h): all distinct, and a forked child never hands
 * out the ids its parent hands out next (the buffer page is wiped in the child). */
static void t_oid_unique(void **state)
{
    (void)state;
    enum { N = 3000, K = 200 };
    static mnc_oid ids[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(mnc_oid_random(&ids[i]), 0);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            assert_memory_not_equal(&ids[i], &ids[j], sizeof(ids[i]));
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        mnc_oid c[K];
        for (int i = 0; i < K; i++)
            if (mnc_oid_random(&c[i]) != 0)
                _exit(1);
        _exit(write(pfd[1], c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
    }
    close(pfd[1]);
    static mnc_oid child[K], mine[K];
    size_t got = 0;
    while (got < sizeof(child)) {
        ssize_t r = read(pfd[0], (char *)child + got, sizeof(child) - got);
        assert_true(r > 0);
        got += (size_t)r;
    }
    close(pfd[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int i = 0; i < K; i++)
        assert_int_equal(mnc_oid_random(&mine[i]), 0);
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            assert_memory_not_equal(&child[i], &mine[j], sizeof(mine[j]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_issue, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_derive_narrows, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_derive_widen_each, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_scope_narrows_recipient, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_derive_refusals, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_render, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_json_roundtrip, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_json_write_bytes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_json_strict, fx_setup, fx_teardown),
        cmocka_unit_test(t_oid),
        cmocka_unit_test(t_oid_unique),
    };
    return cmocka_run_group_tests_name("disclosure", tests, NULL, NULL);
}
