// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_kern_rollback.c - an attach that fails its self-test after REPLACING programs in the
 * pinned links puts the previous programs back (mnc_kern_attach, loader/kern_load.c), and the
 * swap-back is a compare-and-swap that reports loudly when it cannot be done.
 *
 * Real kernel, cgroup backend, a private pin root and cgroup tree (a production attachment is
 * never touched). The self-test failure is forced with the test-only hook
 * $MNC_TEST_SELFTEST_FAIL, which can only turn a pass into a failure. Needs root; without it
 * the test says SKIP (counted as a failure by the project's runner). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "fixture.h"
#include "kern_int.h"
#include "mnc_abi.h"
#include "mnc_kern.h"

#define FAIL_CASE "sock_create: raw IPv4 socket denied"

static char root[128], tree[128], tree_abs[PATH_MAX];

static int n_hooks(void)
{
    int n;
    (void)mnc_kern_hooks(&n);
    return n;
}

/* Program id in each pinned link (in hook order); 0 for a missing link. */
static void link_ids(uint32_t *ids)
{
    int n;
    const mnc_hook_info *h = mnc_kern_hooks(&n);
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/links/%s", root, h[i].program);
        ids[i] = 0;
        int fd = bpf_obj_get(p);
        if (fd < 0)
            continue;
        struct bpf_link_info li;
        __u32 len = sizeof(li);
        memset(&li, 0, sizeof(li));
        if (bpf_obj_get_info_by_fd(fd, &li, &len) == 0)
            ids[i] = li.prog_id;
        close(fd);
    }
}

static int attach(mnc_selftest *st, char *err, size_t errlen)
{
    mnc_kern_opts o = {.pin_root = root, .tree = tree, .backend = MNC_BACKEND_CGROUP};
    mnc_kern *k = NULL;
    err[0] = 0;
    int rc = mnc_kern_attach(&o, &k, st, err, errlen);
    mnc_kern_close(k);
    return rc;
}

static void teardown_all(void)
{
    char err[512];
    (void)mnc_kern_detach(root, true, err, sizeof(err));
    rmdir(tree_abs);
}

static void t_rollback(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("SKIP: needs root to attach BPF programs\n");
        skip();
    }
    char cg2[256];
    assert_int_equal(mnc_cgroup2_mount(cg2, sizeof(cg2)), 0);
    snprintf(root, sizeof(root), "/sys/fs/bpf/mnc-rollback-unit-%d", (int)getpid());
    snprintf(tree, sizeof(tree), "mnc-rollback-unit-%d", (int)getpid());
    snprintf(tree_abs, sizeof(tree_abs), "%s/%s", cg2, tree);
    unsetenv("MNC_TEST_SELFTEST_FAIL");
    int n = n_hooks();
    uint32_t a[32], b[32], c[32];
    assert_true(n > 0 && n <= 32);
    char err[1024];
    mnc_selftest st;

    /* 1. fresh attach, self-test passes: programs A */
    int rc = attach(&st, err, sizeof(err));
    if (rc != 0) {
        print_message("fresh attach: %d %s\n", rc, err);
        teardown_all();
        fail();
    }
    link_ids(a);
    for (int i = 0; i < n; i++)
        assert_int_not_equal(a[i], 0);

    /* 2. replacement whose self-test fails: the links hold programs A again */
    setenv("MNC_TEST_SELFTEST_FAIL", FAIL_CASE, 1);
    rc = attach(&st, err, sizeof(err));
    unsetenv("MNC_TEST_SELFTEST_FAIL");
    print_message("# failed replacement: %s\n", err);
    link_ids(b);
    bool forced = false;
    for (int i = 0; i < st.n; i++)
        if (strcmp(st.c[i].name, FAIL_CASE) == 0)
            forced = !st.c[i].pass;
    assert_true(forced);
    assert_int_equal(rc, -ENOTRECOVERABLE);
    assert_non_null(strstr(err, "functional self-test failed"));
    char want[64];
    snprintf(want, sizeof(want), "rolled back: %d replaced link(s)", n);
    assert_non_null(strstr(err, want));
    for (int i = 0; i < n; i++)
        assert_int_equal(b[i], a[i]);

    /* 3. the same replacement with a passing self-test: new programs (so step 2 did replace
     * something that had to be put back) */
    rc = attach(&st, err, sizeof(err));
    if (rc != 0)
        print_message("replacement: %d %s\n", rc, err);
    assert_int_equal(rc, 0);
    link_ids(b);
    for (int i = 0; i < n; i++)
        assert_true(b[i] != 0 && b[i] != a[i]);

    /* 4. the swap-back is a compare-and-swap: told to expect a program the link does not hold,
     * it changes nothing and reports ROLLBACK FAILED naming the link */
    char lp[PATH_MAX];
    int h;
    const mnc_hook_info *hooks = mnc_kern_hooks(&h);
    snprintf(lp, sizeof(lp), "%s/links/%s", root, hooks[0].program);
    mnc_attach_undo u;
    mnc_attach_undo_init(&u);
    mnc_replaced_link *r = &u.replaced[0];
    snprintf(r->name, sizeof(r->name), "%s", hooks[0].program);
    r->link_fd = bpf_obj_get(lp);
    r->old_prog_fd = bpf_prog_get_fd_by_id(b[0]); /* "put back": the program it holds */
    r->new_prog_fd = bpf_prog_get_fd_by_id(b[3]); /* "expected": another program */
    r->old_prog_id = b[0];
    r->new_prog_id = b[3];
    assert_true(r->link_fd >= 0 && r->old_prog_fd >= 0 && r->new_prog_fd >= 0);
    u.n_replaced = 1;
    rc = mnc_attach_rollback(&u, root, err, sizeof(err));
    print_message("# forced CAS mismatch: %s\n", err);
    assert_int_equal(rc, -EPERM);
    assert_non_null(strstr(err, "ROLLBACK FAILED"));
    assert_non_null(strstr(err, hooks[0].program));
    assert_int_equal(u.n_replaced, 0); /* fds released */
    link_ids(c);
    for (int i = 0; i < n; i++)
        assert_int_equal(c[i], b[i]);

    /* 5. a fresh attach whose self-test fails leaves no link */
    char derr[512];
    assert_int_equal(mnc_kern_detach(root, false, derr, sizeof(derr)), 0);
    setenv("MNC_TEST_SELFTEST_FAIL", FAIL_CASE, 1);
    rc = attach(&st, err, sizeof(err));
    unsetenv("MNC_TEST_SELFTEST_FAIL");
    assert_int_equal(rc, -ENOTRECOVERABLE);
    snprintf(want, sizeof(want), "0 replaced link(s)");
    assert_non_null(strstr(err, want));
    link_ids(c);
    for (int i = 0; i < n; i++)
        assert_int_equal(c[i], 0);

    teardown_all();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_rollback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
