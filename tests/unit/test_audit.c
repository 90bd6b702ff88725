/* test_audit.c - the hash-chained audit log: append, reopen, verify, tamper detection. */
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

static char dir[64];
static char path[128];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof(dir), "/tmp/test_audit.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void write_n(int n)
{
    char err[256];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    for (int i = 0; i < n; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "obj%d", i);
        mnc_audit_rec r = {.time_ms = 1000u + (unsigned)i, .op = "send", .sender = "worker",
                           .receiver = "coordinator", .object = obj, .decision = "allow",
                           .reason = "ok"};
        assert_int_equal(mnc_audit_append(a, &r), 0);
    }
    assert_int_equal(mnc_audit_sync(a), 0);
    mnc_audit_close(a);
}

/* Reads the file into lines[] (up to 16). */
static int read_lines(char lines[16][1024])
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0;
    while (n < 16 && fgets(lines[n], 1024, f))
        n++;
    fclose(f);
    return n;
}

static void write_lines(char lines[16][1024], int n, int skip)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++)
        if (i != skip)
            fputs(lines[i], f);
    fclose(f);
}

static void test_chain_and_reopen(void **st)
{
    (void)st;
    write_n(3);
    write_n(2); /* reopen continues the chain */
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, 5);
    assert_false(v.torn_tail);
    char err[256];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_seq(a), 5);
    assert_string_equal(mnc_audit_head(a), v.head);
    mnc_audit_close(a);
    cJSON *t = mnc_audit_tail(path, 2);
    assert_non_null(t);
    assert_int_equal(cJSON_GetArraySize(t), 2);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "seq")->valueint, 4);
    cJSON_Delete(t);
}

static void test_edit_detected(void **st)
{
    (void)st;
    write_n(4);
    char l[16][1024];
    int n = read_lines(l);
    char *p = strstr(l[2], "\"allow\"");
    assert_non_null(p);
    memcpy(p, "\"deny\" ", 7); /* same length, still valid JSON */
    write_lines(l, n, -1);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 1);
    assert_int_equal(v.bad_line, 3);
    assert_non_null(strstr(v.msg, "edited"));
    char err[256];
    assert_null(mnc_audit_open(path, NULL, err, sizeof(err))); /* refuses a corrupt chain */
}

static void test_remove_detected(void **st)
{
    (void)st;
    write_n(4);
    char l[16][1024];
    int n = read_lines(l);
    write_lines(l, n, 1);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 1);
    assert_int_equal(v.bad_line, 2);
}

static void test_reorder_detected(void **st)
{
    (void)st;
    write_n(4);
    char l[16][1024];
    int n = read_lines(l);
    char tmp[1024];
    memcpy(tmp, l[1], sizeof(tmp));
    memcpy(l[1], l[2], sizeof(tmp));
    memcpy(l[2], tmp, sizeof(tmp));
    write_lines(l, n, -1);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 1);
    assert_int_equal(v.bad_line, 2);
}

static void test_torn_tail(void **st)
{
    (void)st;
    write_n(3);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("{\"seq\":4,\"time\":1,\"op\":\"se", f);
    fclose(f);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_true(v.torn_tail);
    assert_int_equal(v.records, 3);
    size_t torn = 0;
    char err[256];
    mnc_audit *a = mnc_audit_open(path, &torn, err, sizeof(err));
    assert_non_null(a);
    assert_true(torn > 0);
    mnc_audit_rec r = {.time_ms = 9, .op = "daemon.start", .decision = "allow", .reason = "ok"};
    assert_int_equal(mnc_audit_append(a, &r), 0);
    mnc_audit_close(a);
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_false(v.torn_tail);
    assert_int_equal(v.records, 4);
}

static void test_garbage_line(void **st)
{
    (void)st;
    write_n(2);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("not json at all\n", f);
    fclose(f);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 1);
    assert_int_equal(v.bad_line, 3);
    assert_int_equal(mnc_audit_verify_file("/nonexistent/audit", &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_chain_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edit_detected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_detected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reorder_detected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
