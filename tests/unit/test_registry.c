// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_registry.c - the table of live disclosure objects (user/include/mnc/registry.h): put, get,
 * del, each and free across growth and tombstones, and ids that share their first 8 bytes (the
 * tag a slot keeps: equal tags must still be told apart by the whole id). Run under ASan and
 * valgrind by `make asan` / `make valgrind`: an object freed twice or leaked fails there. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "mnc/registry.h"

/* An object whose id is (hi, lo) as two little-endian words: hi is the slot's tag. */
static mnc_disclosure *obj(uint64_t hi, uint64_t lo)
{
    mnc_disclosure *d = calloc(1, sizeof(*d));
    assert_non_null(d);
    memcpy(d->id.b, &hi, 8);
    memcpy(d->id.b + 8, &lo, 8);
    d->n_values = 1; /* an owned value, so a leaked or twice-freed object shows in ASan/valgrind */
    d->values = calloc(1, sizeof(*d->values));
    assert_non_null(d->values);
    d->values[0].value = strdup("v");
    assert_non_null(d->values[0].value);
    return d;
}

static mnc_oid oid(uint64_t hi, uint64_t lo)
{
    mnc_oid id;
    memcpy(id.b, &hi, 8);
    memcpy(id.b + 8, &lo, 8);
    return id;
}

/* splitmix64: well-spread words, as random ids are */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void t_put_get_del_growth(void **state)
{
    (void)state;
    mnc_registry r;
    mnc_registry_init(&r);
    assert_null(mnc_registry_get(&r, &(mnc_oid){{0}}));
    enum { N = 5000 };
    for (uint64_t i = 0; i < N; i++) {
        mnc_disclosure *d = obj(mix(i), i);
        assert_int_equal(mnc_registry_put(&r, d), 0);
        assert_ptr_equal(mnc_registry_get(&r, &d->id), d);
    }
    assert_int_equal(r.n, N);
    /* every object still found after the table grew many times */
    for (uint64_t i = 0; i < N; i++) {
        mnc_oid id = oid(mix(i), i);
        mnc_disclosure *d = mnc_registry_get(&r, &id);
        assert_non_null(d);
        assert_memory_equal(&d->id, &id, sizeof(id));
    }
    /* a duplicate id is refused and stays the caller's */
    mnc_disclosure *dup = obj(mix(7), 7);
    assert_int_equal(mnc_registry_put(&r, dup), -2);
    mnc_disclosure_free(dup);
    free(dup);
    /* delete every other one: gone, the rest found, the tombstones reused by later puts */
    for (uint64_t i = 0; i < N; i += 2) {
        mnc_oid id = oid(mix(i), i);
        assert_int_equal(mnc_registry_del(&r, &id), 0);
        assert_null(mnc_registry_get(&r, &id));
        assert_int_equal(mnc_registry_del(&r, &id), -1);
    }
    assert_int_equal(r.n, N / 2);
    assert_null(mnc_registry_get(&r, &(mnc_oid){{0}})); /* never put */
    for (uint64_t i = 1; i < N; i += 2) {
        mnc_oid id = oid(mix(i), i);
        assert_non_null(mnc_registry_get(&r, &id));
    }
    for (uint64_t i = N; i < 2 * N; i++)
        assert_int_equal(mnc_registry_put(&r, obj(mix(i), i)), 0);
    assert_int_equal(r.n, N / 2 + N);
    assert_true(r.used * 4 <= r.cap * 3); /* tombstones count toward the rebuild */
    mnc_registry_free(&r);
    assert_int_equal(r.n, 0);
    assert_null(r.slot);
}

/* Ids with the same first 8 bytes land in one probe run with equal tags: each is found by its
 * whole id, a near miss is not, and deleting one leaves the others. */
static void t_equal_tags(void **state)
{
    (void)state;
    mnc_registry r;
    mnc_registry_init(&r);
    const uint64_t hi = 0x1122334455667788ull;
    for (uint64_t lo = 0; lo < 64; lo++)
        assert_int_equal(mnc_registry_put(&r, obj(hi, lo)), 0);
    assert_int_equal(mnc_registry_put(&r, obj(hi + 1, 5)), 0); /* same lo, other tag */
    for (uint64_t lo = 0; lo < 64; lo++) {
        mnc_oid id = oid(hi, lo);
        mnc_disclosure *d = mnc_registry_get(&r, &id);
        assert_non_null(d);
        assert_memory_equal(&d->id, &id, sizeof(id));
    }
    mnc_oid miss = oid(hi, 64);
    assert_null(mnc_registry_get(&r, &miss));
    mnc_oid other = oid(hi + 1, 5);
    assert_non_null(mnc_registry_get(&r, &other));
    mnc_oid id5 = oid(hi, 5);
    assert_int_equal(mnc_registry_del(&r, &id5), 0);
    assert_null(mnc_registry_get(&r, &id5));
    assert_non_null(mnc_registry_get(&r, &other));
    for (uint64_t lo = 6; lo < 64; lo++) {
        mnc_oid id = oid(hi, lo);
        assert_non_null(mnc_registry_get(&r, &id));
    }
    mnc_disclosure *again = obj(hi, 5);
    assert_int_equal(mnc_registry_put(&r, again), 0);
    assert_ptr_equal(mnc_registry_get(&r, &id5), again);
    mnc_registry_free(&r);
}

static int count_or_stop(mnc_disclosure *d, void *arg)
{
    (void)d;
    return ++*(int *)arg == 3;
}

static int count(mnc_disclosure *d, void *arg)
{
    (void)d;
    ++*(int *)arg;
    return 0;
}

static void t_each(void **state)
{
    (void)state;
    mnc_registry r;
    mnc_registry_init(&r);
    int n = 0;
    mnc_registry_each(&r, count, &n); /* empty: no slots at all */
    assert_int_equal(n, 0);
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(mnc_registry_put(&r, obj(mix(i), i)), 0);
    mnc_oid id = oid(mix(3), 3);
    assert_int_equal(mnc_registry_del(&r, &id), 0);
    mnc_registry_each(&r, count, &n);
    assert_int_equal(n, 9); /* live objects only, not the tombstone */
    n = 0;
    mnc_registry_each(&r, count_or_stop, &n);
    assert_int_equal(n, 3);
    mnc_registry_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_put_get_del_growth),
        cmocka_unit_test(t_equal_tags),
        cmocka_unit_test(t_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
