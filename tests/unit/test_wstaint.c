// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_wstaint.c - the workspace taint record (user/mncd/wstaint.c): parse/render, merge
 * (tighten only), a changed policy never widens, oversized records narrow, corrupt records are
 * refused, path overlap, and a real xattr round trip on a directory of the test's own.
 *
 * wstaint.c is part of mncd, not libmnc: it is compiled into this test directly (the Makefile
 * names it as a prerequisite of this binary). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/wstaint.c"

/* A policy of n principals named p0.. (only names matter to the record). */
static mnc_policy *mkpol(int n, const char *prefix)
{
    mnc_policy *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    p->principals = calloc((size_t)n, sizeof(*p->principals));
    assert_non_null(p->principals);
    p->n_principals = n;
    for (int i = 0; i < n; i++)
        snprintf(p->principals[i].name, sizeof(p->principals[i].name), "%s%d", prefix, i);
    return p;
}

static void freepol(mnc_policy *p)
{
    free(p->principals);
    free(p);
}

static mnc_oid oid(int k)
{
    mnc_oid o;
    memset(&o, 0, sizeof(o));
    o.b[0] = (uint8_t)k;
    o.b[15] = 0xa5;
    return o;
}

static void test_round_trip_and_policy_change(void **st)
{
    (void)st;
    mnc_policy *p = mkpol(6, "s");
    mncd_wtaint t;
    memset(&t, 0, sizeof(t));
    t.tainted = true;
    mnc_set_add(&t.sinks, 1);
    mnc_set_add(&t.sinks, 4);
    t.may_log = true;
    mnc_oid a = oid(1);
    mncd_ws_add_object(&t, &a);
    snprintf(t.agent, sizeof(t.agent), "coordinator");
    t.time_ms = 1234;
    char *txt = render(&t, p, 0, 256);
    assert_non_null(txt);
    assert_non_null(strstr(txt, "\"sinks\":[\"s1\",\"s4\"]"));
    mncd_wtaint b;
    assert_int_equal(parse(txt, p, &b), 0);
    assert_true(b.tainted && b.may_log && !b.may_memory && !b.may_external);
    assert_true(mnc_set_eq(&b.sinks, &t.sinks));
    assert_int_equal(b.n_obj, 1);
    assert_memory_equal(&b.obj[0], &a, sizeof(a));
    assert_string_equal(b.agent, "coordinator");
    /* the same record under a policy without "s4", and where ids moved: names decide, a name
     * the policy lacks is dropped (tighter), never mapped onto another sink */
    mnc_policy *q = mkpol(3, "x");
    snprintf(q->principals[2].name, sizeof(q->principals[2].name), "s1");
    assert_int_equal(parse(txt, q, &b), 0);
    assert_true(mnc_set_has(&b.sinks, 2));
    assert_int_equal(mnc_set_count(&b.sinks), 1);
    free(txt);
    freepol(q);
    freepol(p);
}

static void test_merge_tightens_only(void **st)
{
    (void)st;
    mncd_wtaint a, b, clean;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&clean, 0, sizeof(clean));
    /* untainted a takes b's scope */
    b.tainted = true;
    mnc_set_add(&b.sinks, 1);
    mnc_set_add(&b.sinks, 2);
    b.may_log = b.may_external = true;
    mncd_ws_merge(&a, &b);
    assert_true(a.tainted && a.may_log && a.may_external && mnc_set_eq(&a.sinks, &b.sinks));
    /* a tainted b narrows: ∩ sinks, AND flags */
    mncd_wtaint c;
    memset(&c, 0, sizeof(c));
    c.tainted = true;
    mnc_set_add(&c.sinks, 2);
    mnc_set_add(&c.sinks, 3);
    c.may_log = true;
    mncd_ws_merge(&a, &c);
    assert_true(a.tainted && a.may_log && !a.may_external);
    assert_true(mnc_set_has(&a.sinks, 2) && !mnc_set_has(&a.sinks, 1) && !mnc_set_has(&a.sinks, 3));
    /* an untainted side never widens */
    mncd_wtaint before = a;
    mncd_ws_merge(&a, &clean);
    assert_memory_equal(&a, &before, sizeof(a));
    /* objects: union, no duplicates, the newest MNCD_WS_MAX_OBJECTS kept */
    for (int i = 0; i < MNCD_WS_MAX_OBJECTS + 5; i++) {
        mnc_oid o = oid(i);
        mncd_ws_add_object(&a, &o);
        mncd_ws_add_object(&a, &o);
    }
    assert_int_equal(a.n_obj, MNCD_WS_MAX_OBJECTS);
    mnc_oid last = oid(MNCD_WS_MAX_OBJECTS + 4), first = oid(5);
    assert_memory_equal(&a.obj[MNCD_WS_MAX_OBJECTS - 1], &last, sizeof(last));
    assert_memory_equal(&a.obj[0], &first, sizeof(first));
}

static void test_corrupt_refused(void **st)
{
    (void)st;
    mnc_policy *p = mkpol(2, "s");
    static const char *const bad[] = {
        "",
        "not json",
        "[]",
        "{\"v\":2,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,\"may_forward\":false,"
        "\"may_external\":false}",
        "{\"v\":1,\"tainted\":true,\"sinks\":{},\"may_log\":false,\"may_memory\":false,\"may_forward\":false,"
        "\"may_external\":false}",
        "{\"v\":1,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,\"may_forward\":false}",
        "{\"v\":1,\"tainted\":true,\"sinks\":[1],\"may_log\":false,\"may_memory\":false,\"may_forward\":false,"
        "\"may_external\":false}",
        "{\"v\":1,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,\"may_forward\":false,"
        "\"may_external\":false,\"objects\":[\"xyz\"]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mncd_wtaint t;
        if (parse(bad[i], p, &t) != -EBADMSG)
            fail_msg("record %zu accepted: %s", i, bad[i]);
    }
    freepol(p);
}

static void test_overlap(void **st)
{
    (void)st;
    assert_true(mncd_ws_overlap("/a/b", "/a/b"));
    assert_true(mncd_ws_overlap("/a/b/c", "/a/b"));
    assert_true(mncd_ws_overlap("/a", "/a/b"));
    assert_false(mncd_ws_overlap("/a/bc", "/a/b"));
    assert_false(mncd_ws_overlap("/a/b", "/a/bc"));
    assert_true(mncd_ws_overlap("/", "/x"));
    assert_true(mncd_ws_within("/x/y", "/"));
    assert_false(mncd_ws_within("/a", "/a/b"));
}

/* A real directory: write, read back, narrowing of an oversized record, no-xattr filesystems.
 * trusted.* needs CAP_SYS_ADMIN: the suite runs as root (tests/run-tests counts a skip as a
 * failure), so without it this test fails rather than skips. */
static void test_xattr_round_trip(void **st)
{
    (void)st;
    char dir[] = "/tmp/mnc-wstaint-XXXXXX";
    assert_non_null(mkdtemp(dir));
    mnc_policy *p = mkpol(200, "a-rather-long-sink-name-to-overflow-one-xattr-block-");
    mncd_wtaint t, b;
    assert_int_equal(mncd_ws_read(dir, p, &b), -ENODATA);
    memset(&t, 0, sizeof(t));
    assert_int_equal(mncd_ws_write(dir, p, &t), 0); /* untainted: nothing written */
    assert_int_equal(mncd_ws_read(dir, p, &b), -ENODATA);
    t.tainted = true;
    for (int i = 0; i < 200; i++)
        mnc_set_add(&t.sinks, (unsigned)i);
    for (int i = 0; i < MNCD_WS_MAX_OBJECTS; i++) {
        mnc_oid o = oid(i);
        mncd_ws_add_object(&t, &o);
    }
    int r = mncd_ws_write(dir, p, &t);
    if (r != 0)
        fail_msg("setxattr " MNCD_WS_XATTR " on %s: %s (needs root)", dir, strerror(-r));
    char raw[65536];
    ssize_t n = getxattr(dir, MNCD_WS_XATTR, raw, sizeof(raw));
    assert_true(n > 0 && n <= MNCD_WS_XATTR_MAX);
    assert_int_equal(mncd_ws_read(dir, p, &b), 0);
    /* too long for one block: every object dropped first, then sinks (never widened) */
    assert_true(b.tainted && b.n_obj == 0 && mnc_set_count(&b.sinks) < 200 && mnc_set_subset(&b.sinks, &t.sinks));
    assert_true(b.narrowed);
    assert_int_equal(removexattr(dir, MNCD_WS_XATTR), 0);
    assert_int_equal(rmdir(dir), 0);
    /* a filesystem that keeps no trusted xattrs */
    if (access("/proc/self", F_OK) == 0)
        assert_int_equal(mncd_ws_read("/proc/self", p, &b), -ENOTSUP);
    freepol(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_and_policy_change),
        cmocka_unit_test(test_merge_tightens_only),
        cmocka_unit_test(test_corrupt_refused),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_xattr_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
