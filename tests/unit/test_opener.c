// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_opener.c - libmnc's configuration files through an opener (mnc_set_opener, mnc_util.h):
 * how mncd's monitor, which cannot open root's files itself, reads its policies through its
 * enforcer (docs/privsep.md). With an opener installed the policy loader and the risk-model
 * loader open nothing themselves: a path that exists only for the opener loads, the opener's
 * error is the loader's error, and removing the opener restores open(2). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/policy.h"
#include "mnc_util.h"

/* The source tree (the tests run from it; MNC_SRCDIR to run from elsewhere). */
static char srcdir[512] = ".";
static char shipped[600];

typedef struct seen {
    int calls;
    char last[256];
} seen;

/* Serves "/virtual/policy.json" from memory, refuses everything else with EACCES. */
static int opener(void *arg, const char *path)
{
    seen *s = arg;
    s->calls++;
    snprintf(s->last, sizeof(s->last), "%s", path);
    if (strcmp(path, "/virtual/policy.json") != 0)
        return -EACCES;
    FILE *f = fopen(shipped, "re");
    if (!f)
        return -errno;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    int fd = memfd_create("policy", MFD_CLOEXEC);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0)
        return -EIO;
    return fd;
}

static void test_policy_through_opener(void **st)
{
    (void)st;
    seen s = {0};
    mnc_set_opener(opener, &s);
    const char *ok[] = {"/virtual/policy.json"};
    mnc_errors e;
    mnc_errors_init(&e);
    mnc_policy *p = mnc_policy_load_files(ok, 1, &e);
    assert_non_null(p);
    assert_true(p->n_principals > 2);
    assert_int_equal(s.calls, 1);
    mnc_policy_free(p);
    mnc_errors_free(&e);

    const char *no[] = {shipped}; /* exists, but the opener refuses */
    mnc_errors_init(&e);
    assert_null(mnc_policy_load_files(no, 1, &e));
    assert_true(e.n >= 1);
    assert_non_null(strstr(e.msg[0], "cannot open: Permission denied"));
    assert_string_equal(s.last, no[0]);
    mnc_errors_free(&e);

    mnc_set_opener(NULL, NULL); /* open(2) again */
    mnc_errors_init(&e);
    p = mnc_policy_load_files(no, 1, &e);
    assert_non_null(p);
    assert_int_equal(s.calls, 2);
    mnc_policy_free(p);
    mnc_errors_free(&e);
}

static void test_open_ro(void **st)
{
    (void)st;
    int fd = mnc_open_ro("/nonexistent/mnc-test");
    assert_int_equal(fd, -ENOENT);
    fd = mnc_open_ro("/dev/null");
    assert_true(fd >= 0);
    close(fd);
}

int main(void)
{
    const char *sd = getenv("MNC_SRCDIR");
    if (sd && *sd)
        snprintf(srcdir, sizeof(srcdir), "%s", sd);
    snprintf(shipped, sizeof(shipped), "%s/policies/scheduling.json", srcdir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_through_opener),
        cmocka_unit_test(test_open_ro),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
