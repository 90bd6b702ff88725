// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_audit_seg.c - the audit log's rotation into segments (audit_seg.c): rotation in deferred
 * mode, reopening across segments, reconciling a journal copy that spans a rotation, verifying
 * a set (a missing or altered segment named), retention, undoing an interrupted rotation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/audit.h"

static char dir[64], path[128];
static char copy[65536]; /* every line appended: the state journal's durable copy */
static size_t copy_len;

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof(dir), "/tmp/test_audit_seg.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
    copy_len = 0;
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* n records through deferred mode, as mncd's loop writes them (rotation after each write) */
static void append_n(mnc_audit *a, int n)
{
    assert_int_equal(mnc_audit_set_deferred(a, true), 0);
    for (int i = 0; i < n; i++) {
        mnc_audit_rec r = {.time_ms = 1000u + (unsigned)i,
                           .op = "send",
                           .sender = "worker",
                           .receiver = "coordinator",
                           .decision = "allow",
                           .reason = "ok",
                           .detail = "a detail long enough that a few records fill a segment"};
        assert_int_equal(mnc_audit_append(a, &r), 0);
        size_t len;
        const char *p = mnc_audit_pending(a, &len, NULL);
        assert_non_null(p);
        assert_true(copy_len + len < sizeof(copy));
        memcpy(copy + copy_len, p, len);
        copy_len += len;
        assert_int_equal(mnc_audit_write_pending(a), 0);
    }
    assert_int_equal(mnc_audit_set_deferred(a, false), 0);
}

static size_t nsegs(char ***out)
{
    char **s = mnc_audit_segments(path);
    assert_non_null(s);
    size_t n = 0;
    while (s[n])
        n++;
    if (out)
        *out = s;
    else
        mnc_audit_segments_free(s);
    return n;
}

static int verify_all(mnc_audit_set_verify *v)
{
    char **s;
    size_t n = nsegs(&s);
    const char *set[64];
    assert_true(n < 63);
    for (size_t i = 0; i < n; i++)
        set[i] = s[i];
    set[n] = path;
    int rc = mnc_audit_verify_set(set, n + 1, v);
    mnc_audit_segments_free(s);
    return rc;
}

static void test_rotate_reopen_reconcile(void **st)
{
    (void)st;
    char err[512];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    mnc_audit_set_rotation(a, 1000, 0, 0);
    append_n(a, 30);
    mnc_audit_rotation r;
    uint64_t bytes;
    mnc_audit_rotation_status(a, &r, &bytes);
    assert_true(r.rotations >= 5);
    assert_int_equal(r.failures, 0);
    assert_int_equal(nsegs(NULL), r.rotations);
    char head[MNC_AUDIT_HASH_HEX];
    snprintf(head, sizeof(head), "%s", mnc_audit_head(a));
    mnc_audit_close(a);

    mnc_audit_set_verify v;
    assert_int_equal(verify_all(&v), 0);
    assert_int_equal(v.first, 1);
    assert_int_equal(v.last, 30);
    assert_string_equal(v.head, head);

    /* reopen: the chain goes on from the newest segment's end */
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_seq(a), 30);
    assert_string_equal(mnc_audit_head(a), head);
    /* the journal's copy holds records from before the rotations: found in the segments */
    uint64_t app = 99;
    assert_int_equal(mnc_audit_reconcile(a, 1, copy, copy_len, &app, err, sizeof(err)), 0);
    assert_int_equal(app, 0);
    mnc_audit_close(a);
}

static void test_reconcile_conflict_at_the_base(void **st)
{
    (void)st;
    char err[512];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    mnc_audit_set_rotation(a, 1000, 0, 0);
    append_n(a, 12);
    mnc_audit_close(a);
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    /* alter the copy's record just before the active file's first one: its hash */
    char **s;
    size_t n = nsegs(&s);
    assert_true(n >= 1);
    /* the active file starts after the newest segment; find that record in the copy by seq */
    mnc_audit_set_verify v;
    assert_int_equal(verify_all(&v), 0);
    char want[32];
    FILE *f = fopen(s[n - 1], "r");
    assert_non_null(f);
    char line[4096], last[4096] = "";
    while (fgets(line, sizeof(line), f))
        snprintf(last, sizeof(last), "%s", line);
    fclose(f);
    mnc_audit_segments_free(s);
    snprintf(want, sizeof(want), "%.20s", last); /* {"seq":N,... */
    char *at = strstr(copy, want);
    assert_non_null(at);
    char *nl = strchr(at, '\n');
    nl[-3] = nl[-3] == 'a' ? 'b' : 'a'; /* a hex digit of its hash */
    assert_int_equal(mnc_audit_reconcile(a, 1, copy, copy_len, NULL, err, sizeof(err)), 1);
    assert_non_null(strstr(err, "newest rotated segment"));
    mnc_audit_close(a);
}

static void test_missing_and_altered_segments(void **st)
{
    (void)st;
    char err[512];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    mnc_audit_set_rotation(a, 1000, 0, 0);
    append_n(a, 30);
    mnc_audit_close(a);
    char **s;
    size_t n = nsegs(&s);
    assert_true(n >= 3);
    char mid[256];
    snprintf(mid, sizeof(mid), "%s", s[1]);
    char saved[8192];
    FILE *f = fopen(mid, "r");
    assert_non_null(f);
    size_t len = fread(saved, 1, sizeof(saved), f);
    fclose(f);
    assert_int_equal(unlink(mid), 0);
    mnc_audit_set_verify v;
    const char *set[64];
    for (size_t i = 0, k = 0; i < n; i++)
        if (i != 1)
            set[k++] = s[i];
    set[n - 1] = path;
    assert_int_equal(mnc_audit_verify_set(set, n, &v), 1);
    assert_non_null(strstr(v.msg, "are missing"));
    assert_string_equal(v.bad_file, s[2]);
    /* altered: the segment back with one byte changed */
    char *p = strstr(saved, "\"allow\"");
    assert_non_null(p);
    memcpy(p, "\"deny\" ", 7);
    f = fopen(mid, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(saved, 1, len, f), len);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        set[i] = s[i];
    set[n] = path;
    assert_int_equal(mnc_audit_verify_set(set, n + 1, &v), 1);
    assert_string_equal(v.bad_file, mid);
    mnc_audit_segments_free(s);
}

static void test_retention_and_interrupted_rotation(void **st)
{
    (void)st;
    char err[512];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    mnc_audit_set_rotation(a, 1000, 0, 2);
    append_n(a, 30);
    mnc_audit_rotation r;
    mnc_audit_rotation_status(a, &r, NULL);
    assert_true(r.pruned >= 3);
    uint64_t seq = mnc_audit_seq(a);
    mnc_audit_close(a);
    assert_int_equal(nsegs(NULL), 2);
    mnc_audit_set_verify v;
    assert_int_equal(verify_all(&v), 0);
    assert_true(v.first > 1);
    assert_non_null(strstr(v.msg, "not in the set"));
    /* a rotation killed after linking the segment's name: the next open undoes it */
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    append_n(a, 1); /* no rotation configured: the active file has a record */
    seq = mnc_audit_seq(a);
    mnc_audit_close(a);
    char seg[256];
    char **s;
    size_t n = nsegs(&s);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof(line), f)); /* the active file is not empty here */
    fclose(f);
    unsigned long long first = strtoull(line + 7, NULL, 10);
    assert_int_equal(mnc_audit_segment_name(path, first, seg, sizeof(seg)), 0);
    assert_int_equal(link(path, seg), 0);
    mnc_audit_segments_free(s);
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_seq(a), seq);
    mnc_audit_close(a);
    assert_int_equal(access(seg, F_OK), -1);
    assert_int_equal(nsegs(NULL), n);
    /* the newest segment gone: the open refuses */
    n = nsegs(&s);
    assert_int_equal(unlink(s[n - 1]), 0);
    mnc_audit_segments_free(s);
    assert_null(mnc_audit_open(path, NULL, err, sizeof(err)));
    assert_non_null(strstr(err, "does not continue the newest rotated segment"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rotate_reopen_reconcile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_conflict_at_the_base, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_and_altered_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention_and_interrupted_rotation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
