// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_wsrec.c - the enforcer's binary records in trusted.* xattrs (user/mncd/wsrec.c): a
 * workspace taint record round-trips; read under an edited policy it never names another
 * principal (a vanished name is dropped: tighter); too many sinks narrow it to fit, oldest objects
 * first; a record of mncd before the split (JSON) reads as the tightest taint without being
 * parsed; every truncation, extension and one-byte change of the header or of a name that would
 * make it another record is refused; merge only tightens; registration facts round-trip and
 * refuse what is malformed; and a real xattr on a directory of the test's own round-trips.
 * wsrec.c is part of mncd: compiled in directly (the Makefile names it). */
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

#include "../../user/mncd/wsrec.c"

static char names_a[200][WSREC_NAME];

static wsrec_names names(int n, const char *prefix)
{
    for (int i = 0; i < n; i++) {
        memset(names_a[i], 0, WSREC_NAME);
        snprintf(names_a[i], WSREC_NAME, "%s%d", prefix, i);
    }
    return (wsrec_names){names_a, n};
}

static void set(wsrec *t, int i) { t->sinks[i / 64] |= 1ull << (i % 64); }

static wsrec sample(void)
{
    wsrec t;
    memset(&t, 0, sizeof(t));
    t.tainted = true;
    set(&t, 1);
    set(&t, 4);
    t.may_log = true;
    t.may_external = true;
    for (int k = 0; k < 3; k++) {
        uint8_t id[16];
        memset(id, 0x10 + k, sizeof(id));
        wsrec_add_object(&t, id);
    }
    snprintf(t.agent, sizeof(t.agent), "coordinator");
    t.time_ms = 1700000000123ull;
    return t;
}

static void test_round_trip(void **st)
{
    (void)st;
    wsrec_names nm = names(6, "s");
    wsrec t = sample(), u;
    uint8_t v[WSREC_MAX];
    int len = wsrec_encode(&t, &nm, v, sizeof(v));
    assert_int_equal(len, 88 + 3 * 16 + 2 * WSREC_NAME);
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), 0);
    assert_true(u.tainted && u.may_log && !u.may_memory && !u.may_forward && u.may_external && !u.narrowed);
    assert_memory_equal(u.sinks, t.sinks, sizeof(t.sinks));
    assert_int_equal(u.n_obj, 3);
    assert_memory_equal(u.obj, t.obj, sizeof(u.obj[0]) * 3);
    assert_string_equal(u.agent, "coordinator");
    assert_true(u.time_ms == t.time_ms);
    const char *sn[8];
    assert_int_equal(wsrec_sink_names(v, (size_t)len, sn, 8), 2);
    assert_string_equal(sn[0], "s1");
    assert_string_equal(sn[1], "s4");
    /* an untainted record is never written */
    u.tainted = false;
    assert_int_equal(wsrec_encode(&u, &nm, v, sizeof(v)), -EINVAL);
}

static void test_policy_change(void **st)
{
    (void)st;
    wsrec_names old = names(6, "s");
    wsrec t = sample(), u;
    uint8_t v[WSREC_MAX];
    int len = wsrec_encode(&t, &old, v, sizeof(v));
    /* the same names at other ids, and s4 gone: s1 is found where it is now, s4 dropped */
    wsrec_names now = names(6, "s");
    strcpy(names_a[0], "s1");
    memset(names_a[1], 0, WSREC_NAME);
    strcpy(names_a[1], "other");
    memset(names_a[4], 0, WSREC_NAME);
    strcpy(names_a[4], "renamed");
    assert_int_equal(wsrec_decode(v, (size_t)len, &now, &u), 0);
    assert_true(u.sinks[0] == 1ull && u.narrowed); /* id 0 is "s1" now; nothing else */
}

static void test_narrowing(void **st)
{
    (void)st;
    wsrec_names nm = names(200, "a_rather_long_sink_name_");
    wsrec t = sample(), u;
    for (int i = 0; i < 200; i++)
        set(&t, i);
    for (int k = 0; k < WSREC_MAX_OBJECTS; k++) {
        uint8_t id[16];
        memset(id, 0x40 + k, sizeof(id));
        wsrec_add_object(&t, id);
    }
    uint8_t v[WSREC_MAX];
    int len = wsrec_encode(&t, &nm, v, sizeof(v));
    assert_true(len > 0 && len <= WSREC_MAX);
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), 0);
    assert_true(u.narrowed);
    assert_int_equal(u.n_obj, 0); /* the objects went first */
    int ns = 0;
    for (int i = 0; i < 200; i++)
        ns += (u.sinks[i / 64] >> (i % 64)) & 1;
    assert_int_equal(ns, (WSREC_MAX - 88) / WSREC_NAME); /* then sinks: fewer, never more */
    for (int i = 0; i < 4; i++)
        assert_true((u.sinks[i] & ~t.sinks[i]) == 0);
}

static void test_legacy(void **st)
{
    (void)st;
    wsrec_names nm = names(6, "s");
    static const char rec[] =
        "{\"v\":1,\"tainted\":true,\"sinks\":[\"s1\",\"s2\"],\"may_log\":true,\"may_memory\":true,"
        "\"may_forward\":true,\"may_external\":true}";
    wsrec u;
    assert_int_equal(wsrec_decode((const uint8_t *)rec, strlen(rec), &nm, &u), 0);
    assert_true(u.tainted && u.legacy && !u.may_log && !u.may_memory && !u.may_forward && !u.may_external);
    assert_true(u.sinks[0] == 0 && u.sinks[1] == 0); /* the tightest: what it said is never looser */
    char d[300];
    wsrec_describe(&u, &nm, d, sizeof(d));
    assert_non_null(strstr(d, "before its split"));
}

static void test_malformed(void **st)
{
    (void)st;
    wsrec_names nm = names(6, "s");
    wsrec t = sample(), u;
    uint8_t v[WSREC_MAX + 1];
    int len = wsrec_encode(&t, &nm, v, WSREC_MAX);
    for (int l = 0; l < len; l++) /* every truncation */
        assert_int_equal(wsrec_decode(v, (size_t)l, &nm, &u), -EBADMSG);
    v[len] = 0;
    assert_int_equal(wsrec_decode(v, (size_t)len + 1, &nm, &u), -EBADMSG); /* a byte more */
    /* every bit of the header's fixed bytes but the flags of may_* and the time */
    static const int fixed[] = {0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        for (int b = 0; b < 8; b++) {
            v[fixed[i]] ^= (uint8_t)(1u << b);
            assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
            v[fixed[i]] ^= (uint8_t)(1u << b);
        }
    v[5] |= 0x40; /* an unknown flag */
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
    v[5] &= (uint8_t)~0x41u; /* not tainted */
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
    v[5] |= 0x01;
    size_t name0 = 88 + 3 * 16;
    v[name0 + 1] = '/'; /* outside a name's alphabet */
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
    v[name0 + 1] = '1';
    v[name0 + WSREC_NAME - 1] = 'x'; /* bytes after the name's NUL */
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
    v[name0 + WSREC_NAME - 1] = 0;
    memset(v + name0, 0, WSREC_NAME); /* an empty name */
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
    v[24 + 63] = 'x'; /* an agent name without its NUL */
    assert_int_equal(wsrec_decode(v, (size_t)len, &nm, &u), -EBADMSG);
}

static void test_merge_tightens(void **st)
{
    (void)st;
    wsrec a = sample(), b = sample(), none;
    memset(&none, 0, sizeof(none));
    b.sinks[0] = 1ull << 4;
    b.may_log = false;
    b.may_memory = true;
    wsrec c = a;
    wsrec_merge(&c, &b);
    assert_true(c.tainted && c.sinks[0] == (1ull << 4) && !c.may_log && !c.may_memory && c.may_external);
    wsrec d = c;
    wsrec_merge(&d, &none); /* untainted adds nothing */
    assert_memory_equal(&d, &c, sizeof(c));
    wsrec e = none;
    wsrec_merge(&e, &a); /* untainted takes the tainted side */
    assert_true(e.tainted && e.sinks[0] == a.sinks[0] && e.may_log);
    assert_true(wsrec_within("/a/b", "/a") && !wsrec_within("/ab", "/a") && wsrec_within("/x", "/"));
    assert_true(wsrec_overlap("/a", "/a/b/c") && !wsrec_overlap("/a/b", "/a/c"));
}

static void test_regrec(void **st)
{
    (void)st;
    regrec r = {.known = true, .uid = 1001, .n_ws = 2, .ws = {"/srv/ws/a", "/srv/ws/b c"}}, u;
    uint8_t v[256];
    int len = regrec_encode(&r, v, sizeof(v));
    assert_int_equal(len, 12 + 2 + 9 + 2 + 11);
    assert_int_equal(regrec_decode(v, (size_t)len, &u), 0);
    assert_true(u.known && !u.root && u.uid == 1001 && u.n_ws == 2 && u.ws_len[1] == 11);
    assert_memory_equal(u.ws[1], "/srv/ws/b c", 11);
    for (int l = 0; l < len; l++)
        assert_int_equal(regrec_decode(v, (size_t)l, &u), -EBADMSG);
    v[14] = 'x'; /* a relative path */
    assert_int_equal(regrec_decode(v, (size_t)len, &u), -EBADMSG);
    v[14] = '/';
    v[5] = 0x03; /* --as-root with uid 1001 */
    assert_int_equal(regrec_decode(v, (size_t)len, &u), -EBADMSG);
    v[5] = 0x01;
    v[16] = 0; /* a NUL in a path */
    assert_int_equal(regrec_decode(v, (size_t)len, &u), -EBADMSG);
    regrec bad = {.root = true, .known = true, .uid = 5};
    assert_int_equal(regrec_encode(&bad, v, sizeof(v)), -EINVAL);
    regrec rel = {.n_ws = 1, .ws = {"srv"}};
    assert_int_equal(regrec_encode(&rel, v, sizeof(v)), -EINVAL);
    assert_int_equal(regrec_encode(&r, v, 20), -E2BIG);
}

static void test_real_xattr(void **st)
{
    (void)st;
    char dir[] = "/tmp/mnc-wsrec.XXXXXX";
    assert_non_null(mkdtemp(dir));
    wsrec_names nm = names(6, "s");
    wsrec t = sample(), u;
    uint8_t v[WSREC_MAX];
    int len = wsrec_encode(&t, &nm, v, sizeof(v));
    if (setxattr(dir, WSREC_XATTR, v, (size_t)len, 0) != 0) {
        rmdir(dir);
        fail_msg("setxattr %s on %s: %s (root and a filesystem with trusted xattrs needed)", WSREC_XATTR, dir,
                 strerror(errno));
    }
    uint8_t back[WSREC_MAX + 1];
    ssize_t n = getxattr(dir, WSREC_XATTR, back, sizeof(back));
    assert_int_equal(n, len);
    assert_int_equal(wsrec_decode(back, (size_t)n, &nm, &u), 0);
    assert_memory_equal(u.sinks, t.sinks, sizeof(t.sinks));
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_policy_change), cmocka_unit_test(test_narrowing),
        cmocka_unit_test(test_legacy),     cmocka_unit_test(test_malformed),     cmocka_unit_test(test_merge_tightens),
        cmocka_unit_test(test_regrec),     cmocka_unit_test(test_real_xattr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
