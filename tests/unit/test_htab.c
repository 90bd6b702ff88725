// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_htab.c - libmnc's intrusive hash table (user/lib/mnc_htab.h): find, insert, remove, each,
 * growth, and mnc_htab_add_new's one-block entries (the ledger's subjects, accounts and
 * releases, the postgres cache and mncd's memory store use it). Run under ASan and valgrind by
 * `make asan` / `make valgrind`: a key freed apart from its entry, or an entry leaked, fails
 * there. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "mnc_htab.h"

typedef struct item {
    int before; /* a member ahead of the node: the node is not at offset 0 */
    mnc_hnode h;
    int value;
} item;

static int free_item(mnc_hnode *n, void *arg)
{
    (*(int *)arg)++;
    free(MNC_HTAB_ENTRY(n, item, h));
    return 0;
}

static void t_add_new(void **state)
{
    (void)state;
    mnc_htab t;
    mnc_htab_init(&t, 2, 1, 2);
    char key[32];
    /* enough entries to grow the table several times */
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_null(mnc_htab_find(&t, key));
        item *it = mnc_htab_add_new(&t, key, sizeof(item), offsetof(item, h));
        assert_non_null(it);
        assert_int_equal(t.n, (size_t)i + 1); /* linked once */
        assert_ptr_equal(mnc_htab_find(&t, key), &it->h);
        assert_int_equal(it->before, 0); /* zeroed */
        assert_int_equal(it->value, 0);
        assert_string_equal(it->h.key, key);
        assert_ptr_not_equal(it->h.key, key); /* a copy, in the entry's block */
        assert_ptr_equal(it->h.key, (const char *)it + sizeof(item));
        it->value = i;
    }
    assert_int_equal(t.n, 1000);
    assert_true(t.cap >= 1000);
    strcpy(key, "k7");
    key[1] = '8'; /* the caller's buffer changes; the stored key does not */
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        item *it = MNC_HTAB_ENTRY(mnc_htab_find(&t, key), item, h);
        assert_non_null(it);
        assert_int_equal(it->value, i);
    }
    /* remove one: it is unlinked once (MNC_HTAB_ENTRY evaluates its node argument once) and
     * freed, key included, in one free() */
    item *gone = MNC_HTAB_ENTRY(mnc_htab_remove(&t, "k500"), item, h);
    assert_non_null(gone);
    assert_int_equal(gone->value, 500);
    assert_int_equal(t.n, 999);
    free(gone);
    assert_null(mnc_htab_find(&t, "k500"));
    assert_null(mnc_htab_remove(&t, "k500"));
    int freed = 0;
    assert_int_equal(mnc_htab_each(&t, free_item, &freed), 0);
    assert_int_equal(freed, 999);
    mnc_htab_fini(&t);
    assert_null(t.b);
}

static void t_add_new_bad_layout(void **state)
{
    (void)state;
    mnc_htab t;
    mnc_htab_init(&t, 4, 1, 2);
    /* a node that would not fit in the entry: refused, nothing linked */
    assert_null(mnc_htab_add_new(&t, "x", sizeof(mnc_hnode), 1));
    assert_null(mnc_htab_add_new(&t, "x", (size_t)-1, 0));
    assert_int_equal(t.n, 0);
    assert_null(mnc_htab_find(&t, "x"));
    mnc_htab_fini(&t);
}

static int stop_at_second(mnc_hnode *n, void *arg)
{
    (void)n;
    return ++*(int *)arg == 2 ? 7 : 0;
}

static void t_each_stops(void **state)
{
    (void)state;
    mnc_htab t;
    mnc_htab_init(&t, 4, 2, 2);
    for (int i = 0; i < 5; i++) {
        char key[8];
        snprintf(key, sizeof(key), "%d", i);
        assert_non_null(mnc_htab_add_new(&t, key, sizeof(item), offsetof(item, h)));
    }
    int calls = 0;
    assert_int_equal(mnc_htab_each(&t, stop_at_second, &calls), 7);
    assert_int_equal(calls, 2);
    int freed = 0;
    mnc_htab_each(&t, free_item, &freed);
    assert_int_equal(freed, 5);
    mnc_htab_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_add_new),
        cmocka_unit_test(t_add_new_bad_layout),
        cmocka_unit_test(t_each_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
