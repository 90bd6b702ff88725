// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_audit.c - the hash-chained audit log: append, reopen, verify, tamper detection; deferred
 * mode and reconciliation with a durable copy (mncd's one-sync group commit). */
#include <malloc.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_write.h"
#include "mnc_util.h"
#include "mnc/audit.h"
#include "pagecache.h"

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

/* setup, in a directory whose files the page cache holds apart (pagecache.h) */
static int setup_cached(void **st)
{
    (void)st;
    if (pc_mkdtemp(dir, sizeof(dir), "test_audit.") != 0)
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
        mnc_audit_rec r = {.time_ms = 1000u + (unsigned)i,
                           .op = "send",
                           .sender = "worker",
                           .receiver = "coordinator",
                           .object = obj,
                           .decision = "allow",
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

/* ---- deferred mode + reconcile */

static char path2[160];

static void rec_n(mnc_audit_rec *r, char *obj, size_t objlen, int i, const char *op)
{
    snprintf(obj, objlen, "obj%d", i);
    *r = (mnc_audit_rec){.time_ms = 5000u + (unsigned)i,
                         .op = op,
                         .sender = "worker",
                         .receiver = "coordinator",
                         .object = obj,
                         .decision = "allow",
                         .reason = "ok"};
}

/* Appends records [from, to) to a (ops differ after `diverge`, so two logs can fork). */
static void add(mnc_audit *a, int from, int to, int diverge)
{
    for (int i = from; i < to; i++) {
        char obj[16];
        mnc_audit_rec r;
        rec_n(&r, obj, sizeof(obj), i, i >= diverge ? "recv" : "send");
        assert_int_equal(mnc_audit_append(a, &r), 0);
    }
}

static off_t fsize(const char *p)
{
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    return st.st_size;
}

/* Writes a log of n records, then appends m in deferred mode and returns a copy of the pending
 * lines (*first_seq = their first seq) WITHOUT writing them: the kill -9 between the journal
 * sync and the audit write. */
static char *crash_with_pending(int n, int m, uint64_t *first_seq, size_t *len)
{
    char err[256];
    write_n(n);
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    off_t before = fsize(path);
    assert_int_equal(mnc_audit_set_deferred(a, true), 0);
    add(a, n, n + m, 1 << 30);
    assert_int_equal(mnc_audit_seq(a), (uint64_t)(n + m));
    assert_int_equal(fsize(path), before); /* nothing written yet */
    const char *p = mnc_audit_pending(a, len, first_seq);
    assert_non_null(p);
    assert_int_equal(*first_seq, (uint64_t)n + 1);
    char *copy = strdup(p);
    assert_non_null(copy);
    assert_int_equal(strlen(copy), *len);
    assert_int_equal(mnc_audit_set_deferred(a, false), -1); /* pending lines: refused */
    mnc_audit_close(a);                                     /* drops them */
    assert_int_equal(fsize(path), before);
    return copy;
}

static void test_deferred_write(void **st)
{
    (void)st;
    char err[256];
    write_n(2);
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_set_deferred(a, true), 0);
    add(a, 2, 5, 1 << 30);
    size_t len;
    uint64_t first;
    assert_non_null(mnc_audit_pending(a, &len, &first));
    assert_int_equal(first, 3);
    assert_int_equal(mnc_audit_write_pending(a), 0);
    assert_null(mnc_audit_pending(a, &len, &first));
    assert_int_equal(len, 0);
    add(a, 5, 6, 1 << 30);
    assert_int_equal(mnc_audit_write_pending(a), 0);
    assert_int_equal(mnc_audit_set_deferred(a, false), 0);
    mnc_audit_close(a);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, 6);
    assert_false(v.torn_tail);
}

static void test_reconcile_appends_missing(void **st)
{
    (void)st;
    char err[256];
    uint64_t first, added = 99;
    size_t len;
    char *copy = crash_with_pending(4, 3, &first, &len);
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_seq(a), 4);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    assert_int_equal(added, 3);
    assert_int_equal(mnc_audit_seq(a), 7);
    /* the chain continues: a new record after the re-appended ones */
    add(a, 7, 8, 1 << 30);
    mnc_audit_close(a);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, 8);
    /* Idempotent: the same copy again (all lines present) appends nothing. */
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    assert_int_equal(added, 0);
    assert_int_equal(mnc_audit_seq(a), 8);
    mnc_audit_close(a);
    free(copy);
}

static void test_reconcile_partial_and_torn(void **st)
{
    (void)st;
    char err[256];
    uint64_t first, added;
    size_t len;
    char *copy = crash_with_pending(3, 4, &first, &len);
    /* The file got the first of the four lines whole and the second torn (power loss). */
    const char *nl = strchr(copy, '\n');
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fwrite(copy, 1, (size_t)(nl + 1 - copy) + 20, f);
    fclose(f);
    size_t torn = 0;
    mnc_audit *a = mnc_audit_open(path, &torn, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(torn, 20);
    assert_int_equal(mnc_audit_seq(a), 4);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    assert_int_equal(added, 3);
    mnc_audit_close(a);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, 7);
    assert_false(v.torn_tail);
    /* The file is byte-identical to a log that never crashed. */
    char *txt = NULL;
    size_t cap = 0;
    f = fopen(path, "r");
    assert_non_null(f);
    ssize_t got = getdelim(&txt, &cap, '\0', f);
    fclose(f);
    assert_true(got > (ssize_t)len);
    assert_memory_equal(txt + got - (ssize_t)len, copy, len);
    free(txt);
    free(copy);
}

static void test_reconcile_file_ahead(void **st)
{
    (void)st;
    char err[256];
    uint64_t first, added;
    size_t len;
    char *copy = crash_with_pending(2, 2, &first, &len);
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    add(a, 4, 9, 1 << 30); /* records beyond the copy (e.g. written directly and synced) */
    mnc_audit_close(a);
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    assert_int_equal(added, 0);
    assert_int_equal(mnc_audit_seq(a), 9);
    mnc_audit_close(a);
    free(copy);
}

static void test_reconcile_conflict(void **st)
{
    (void)st;
    char err[256];
    uint64_t added;
    /* Two logs with the same records 1..6 that fork at record 7. */
    snprintf(path2, sizeof(path2), "%s/other.jsonl", dir);
    mnc_audit *b = mnc_audit_open(path2, NULL, err, sizeof(err));
    assert_non_null(b);
    add(b, 0, 6, 6);
    assert_int_equal(mnc_audit_set_deferred(b, true), 0);
    add(b, 6, 9, 6); /* records 7..9, op "recv" */
    size_t len;
    uint64_t first;
    char *copy = strdup(mnc_audit_pending(b, &len, &first));
    assert_non_null(copy);
    mnc_audit_close(b);
    unlink(path2);

    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    add(a, 0, 8, 1 << 30); /* records 1..8, all op "send": 7 and 8 differ from the copy */
    mnc_audit_close(a);
    off_t sz = fsize(path);
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 1);
    assert_non_null(strstr(err, "line 7 "));
    assert_int_equal(mnc_audit_seq(a), 8);
    mnc_audit_close(a);
    assert_int_equal(fsize(path), sz); /* nothing written */

    /* The copy starting past the file's end + 1: a gap neither holds. */
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    const char *second = strchr(copy, '\n') + 1;
    unlink(path);
    mnc_audit_close(a);
    a = mnc_audit_open(path, NULL, err, sizeof(err)); /* empty log */
    assert_non_null(a);
    add(a, 0, 6, 6);
    assert_int_equal(mnc_audit_reconcile(a, first + 1, second, len - (size_t)(second - copy), &added, err, sizeof(err)),
                     1);
    assert_non_null(strstr(err, "in neither"));
    /* Lines that do not continue this chain (copy of another log's 7.. onto a log whose 6
     * differs) are refused, not appended. */
    mnc_audit_close(a);
    unlink(path);
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    add(a, 0, 6, 3); /* records 4..6 differ from b's */
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 1);
    assert_non_null(strstr(err, "does not continue the chain"));
    /* Zero bytes are never accepted into the text file. */
    char zero[] = "{\"seq\":7}\0\n";
    assert_int_equal(mnc_audit_reconcile(a, 7, zero, sizeof(zero) - 1, &added, err, sizeof(err)), 1);
    mnc_audit_close(a);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, 6);
    free(copy);
}

/* Copies and overlaps larger than the reader's 64 KiB chunks (backward line search and the
 * forward byte comparison both cross chunk boundaries). */
static void test_reconcile_large(void **st)
{
    (void)st;
    char err[256];
    uint64_t first, added;
    size_t len;
    char *copy = crash_with_pending(500, 700, &first, &len);
    assert_true(len > 2 * 65536);
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    assert_int_equal(added, 700);
    add(a, 1200, 1201, 1 << 30);
    mnc_audit_close(a);
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_reconcile(a, first, copy, len, &added, err, sizeof(err)), 0);
    assert_int_equal(added, 0);
    /* one byte changed deep inside the overlap: named by its line */
    char *mut = strdup(copy);
    assert_non_null(mut);
    char *p = mut;
    for (int i = 0; i < 650; i++)
        p = strchr(p, '\n') + 1; /* start of record 501 + 650 = 1151 */
    p[10] = p[10] == '1' ? '2' : '1';
    assert_int_equal(mnc_audit_reconcile(a, first, mut, len, &added, err, sizeof(err)), 1);
    assert_non_null(strstr(err, "line 1151 "));
    mnc_audit_close(a);
    free(mut);
    free(copy);
}

static void test_discard_poisons(void **st)
{
    (void)st;
    char err[256];
    write_n(1);
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(mnc_audit_set_deferred(a, true), 0);
    add(a, 1, 3, 1 << 30);
    mnc_audit_discard_pending(a);
    char obj[16];
    mnc_audit_rec r;
    rec_n(&r, obj, sizeof(obj), 9, "send");
    assert_int_equal(mnc_audit_append(a, &r), -1); /* would leave a hole in the chain */
    mnc_audit_close(a);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, 1);
}

/* ---- the record is written without a cJSON tree: its bytes must be cJSON's */

/* What cJSON_PrintUnformatted prints for item (consumed). */
static char *cjson_text(cJSON *item)
{
    assert_non_null(item);
    char *t = cJSON_PrintUnformatted(item);
    assert_non_null(t);
    cJSON_Delete(item);
    return t;
}

static void check_str(const char *s)
{
    char *want = cjson_text(s ? cJSON_CreateString(s) : cJSON_CreateNull());
    size_t n = mnc_json_str_len(s);
    char *got = malloc(n + 1);
    assert_non_null(got);
    assert_int_equal(mnc_json_put_str(got, s), n);
    got[n] = '\0';
    assert_string_equal(got, want);
    free(got);
    cJSON_free(want);
}

static void test_json_str_is_cjsons(void **st)
{
    (void)st;
    char all[256];
    for (int c = 1; c < 256; c++) {
        char s[4] = {'a', (char)c, 'b', 0};
        check_str(s);
        all[c - 1] = (char)c;
    }
    all[255] = 0;
    check_str(all);
    check_str("");
    check_str(NULL);
    check_str("caf\xc3\xa9 \xe2\x82\xac \"q\" \\ \x7f");
    /* strings of every length up to 40 mixing plain bytes with ones that need an escape at
     * every position: the writer takes 8 plain bytes at a time, any word with an escape byte by
     * byte (json_write.c), so each escape must be found wherever it sits in a word */
    static const char pool[] = {'a',  'Z',    '0',    ' ',    '~',        '"',        '\\',
                                '\n', '\x01', '\x1f', '\x7f', (char)0x80, (char)0xff, '/'};
    unsigned seed = 12345;
    for (int len = 0; len <= 40; len++)
        for (int rep = 0; rep < 60; rep++) {
            char s[41];
            for (int i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                /* mostly plain text, so that clean words occur next to dirty ones */
                unsigned r = (seed >> 16) % 40;
                s[i] = r < 26 ? (char)('a' + r % 26) : pool[r % sizeof(pool)];
            }
            s[len] = 0;
            check_str(s);
        }
    const uint64_t nums[] = {0, 1, 9, 10, 2147483647ull, 2147483648ull, 1764547200000ull, 999999999999999ull};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        char *want = cjson_text(cJSON_CreateNumber((double)nums[i]));
        char got[21];
        got[mnc_json_put_u64(got, nums[i])] = '\0';
        assert_string_equal(got, want);
        cJSON_free(want);
    }
    /* every digit count, each side of every power of ten, and random values: printf's digits */
    uint64_t p = 1, useed = 0x9e3779b97f4a7c15ull;
    for (int e = 0; e < 20; e++, p *= 10)
        for (int d = -2; d <= 2; d++) {
            for (int r = 0; r < 50; r++) {
                useed = useed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t v = r == 0 ? p + (uint64_t)(int64_t)d : (useed >> (r % 64));
                char want[24], got[21];
                snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
                got[mnc_json_put_u64(got, v)] = '\0';
                assert_string_equal(got, want);
            }
        }
    char mx[21];
    mx[mnc_json_put_u64(mx, UINT64_MAX)] = '\0';
    assert_string_equal(mx, "18446744073709551615");
}

/* The line as mnc_audit_append wrote it when it built a cJSON tree (the reference the chain's
 * existing files were written with), up to its hash member. */
static char *tree_body(uint64_t seq, const mnc_audit_rec *r, const char *prev)
{
    cJSON *o = cJSON_CreateObject();
    assert_non_null(o);
    assert_non_null(cJSON_AddNumberToObject(o, "seq", (double)seq));
    assert_non_null(mnc_json_add_u64(o, "time", r->time_ms));
    const char *k[] = {"op", "sender", "receiver", "object", "decision", "reason", "detail", "prev"};
    const char *v[] = {r->op, r->sender, r->receiver, r->object, r->decision, r->reason, r->detail, prev};
    for (int i = 0; i < 8; i++) {
        if (i == 6 && !r->detail)
            continue;
        cJSON_AddItemToObject(o, k[i], v[i] ? cJSON_CreateString(v[i]) : cJSON_CreateNull());
    }
    char *t = cjson_text(o);
    size_t n = strlen(t);
    assert_true(n > 2 && t[n - 1] == '}');
    t[n - 1] = '\0';
    return t;
}

static void test_record_bytes_are_cjsons(void **st)
{
    (void)st;
    char err[256];
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    const mnc_audit_rec recs[] = {
        {.time_ms = 1764547200123ull,
         .op = "send",
         .sender = "w\"1\\",
         .receiver = "c\n\t\x01",
         .object = "00ff",
         .decision = "allow",
         .reason = "ok"},
        {.time_ms = 0, .op = "daemon.start", .detail = "d\xc3\xa9tail \x1f"},
        {.time_ms = 42,
         .op = "recv",
         .sender = "",
         .receiver = "x",
         .object = NULL,
         .decision = "deny",
         .reason = "flow",
         .detail = ""},
    };
    char prev[MNC_AUDIT_HASH_HEX] = "0000000000000000000000000000000000000000000000000000000000000000";
    char *want[3];
    for (int i = 0; i < 3; i++) {
        want[i] = tree_body((uint64_t)i + 1, &recs[i], prev);
        assert_int_equal(mnc_audit_append(a, &recs[i]), 0);
        memcpy(prev, mnc_audit_head(a), sizeof(prev));
    }
    mnc_audit_close(a);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    for (int i = 0; i < 3; i++) {
        assert_non_null(fgets(line, sizeof(line), f));
        size_t wl = strlen(want[i]);
        assert_true(strlen(line) == wl + 9 + 64 + 3);
        assert_memory_equal(line, want[i], wl);
        assert_memory_equal(line + wl, ",\"hash\":\"", 9);
        cJSON_free(want[i]);
    }
    fclose(f);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0); /* every hash checks out */
    assert_int_equal(v.records, 3);
}

/* A pseudo-random tree of every item kind; numbers from the ranges mncd prints (counts,
 * millisecond timestamps, risks and charges, negative, huge, non-finite). */
static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static cJSON *gen(int depth)
{
    switch (next_rand() % (depth > 3 ? 6 : 8)) {
    case 0:
        return cJSON_CreateNull();
    case 1:
        return cJSON_CreateBool(next_rand() & 1);
    case 2: {
        static const double fixed[] = {0.0,        -0.0,          0.05,         1.4,
                                       0.1,        1e15,          1e15 + 1,     123456789012345678.0,
                                       1e300,      -1e-7,         2.5e-5,       1.0 / 3,
                                       2147483647, -2147483648.0, 2147483648.0, NAN,
                                       INFINITY,   -4.0,          1e21,         9007199254740993.0};
        uint64_t r = next_rand();
        double d;
        switch (r % 4) {
        case 0:
            d = fixed[(r >> 8) % (sizeof(fixed) / sizeof(fixed[0]))];
            break;
        case 1:
            d = (double)(1700000000000ull + (r >> 20) % 100000000000ull); /* ms timestamps */
            break;
        case 2:
            d = (double)(int64_t)(r >> 8) / (double)((r & 0xff) + 1);
            break;
        default:
            d = (double)((int64_t)(r >> 12) % 1000000) / 100.0;
        }
        return cJSON_CreateNumber(d);
    }
    case 3:
    case 4: {
        char s[24];
        size_t n = next_rand() % sizeof(s);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(1 + next_rand() % 255);
        s[n] = 0;
        return cJSON_CreateString(s);
    }
    case 5:
        return cJSON_CreateRaw("{\"raw\":[1,2]}");
    case 6: {
        cJSON *a = cJSON_CreateArray();
        for (int i = (int)(next_rand() % 5); a && i > 0; i--)
            cJSON_AddItemToArray(a, gen(depth + 1));
        return a;
    }
    default: {
        cJSON *o = cJSON_CreateObject();
        for (int i = (int)(next_rand() % 5); o && i > 0; i--) {
            char k[8] = {'k', (char)(1 + next_rand() % 255), (char)('a' + i), 0};
            cJSON_AddItemToObject(o, k, gen(depth + 1));
        }
        return o;
    }
    }
}

/* Fractions (json_write.c prints those with at most 15 significant digits without printf):
 * cJSON's text for decimals m / 10^k of every size and place, their neighbours one ulp away
 * (which need 16-17 digits: printf's path), random doubles, the ends of the fast path's range
 * (1e-4, 1e15) and values just inside and outside it, negative ones too. */
static void check_num(double v)
{
    cJSON *it = cJSON_CreateNumber(v);
    assert_non_null(it);
    mnc_jbuf b = {0};
    assert_int_equal(mnc_json_print(&b, it), 0);
    char *want = cjson_text(it);
    assert_int_equal(b.len, strlen(want));
    if (memcmp(b.p, want, b.len) != 0)
        fail_msg("%.17g: printed %.*s, cJSON %s", v, (int)b.len, b.p, want);
    free(b.p);
    cJSON_free(want);
}

static void test_json_fractions_are_cjsons(void **st)
{
    (void)st;
    static const double p10[] = {1,    1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9, 1e10,
                                 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20};
    uint64_t seed = 88172645463325252ull;
    int n = 0;
    for (int i = 0; i < 60000; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        int digits = 1 + (int)(seed % 17);                 /* 1..17 significant digits */
        int k = (int)((seed >> 8) % 21);                   /* 10^-k */
        uint64_t m = (seed >> 16) % (uint64_t)p10[digits]; /* below 10^digits */
        double v = (double)m / p10[k];
        double sgn = (seed >> 60) & 1 ? -1.0 : 1.0;
        check_num(sgn * v);
        check_num(sgn * nextafter(v, 1e300));
        check_num(sgn * nextafter(v, 0));
        double r; /* a random bit pattern (finite) */
        memcpy(&r, &seed, sizeof(r));
        if (isfinite(r))
            check_num(r);
        n += 4;
    }
    /* random doubles of every exponent around the exact 17-digit writer's range (most need
     * 17 digits), and the ties of its rounding: m / 2^s with few bits */
    for (int i = 0; i < 200000; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        uint64_t mant = (seed >> 11) | (1ull << 52);
        int ex = -70 + (int)((seed >> 3) % 70); /* 2^-70 .. 2^-1 times 2^52 */
        double v = ldexp((double)mant, ex);
        check_num((seed & 1) ? -v : v);
        if (i % 4 == 0) {
            double few = ldexp((double)(((seed >> 20) % 4096) | 1), -(int)(1 + (seed >> 40) % 40));
            check_num(few);
            check_num(few + 1e-4);
        }
        n += 2;
    }
    static const double edges[] = {1e-4,
                                   1e-5,
                                   0.00010000000000000001,
                                   0.0001000000000001,
                                   999999999999999.9,
                                   999999999999999.5,
                                   99999999999999.95,
                                   1e15 - 0.5,
                                   0.1 + 0.2,
                                   1.0 / 3,
                                   2.0 / 3,
                                   0.05,
                                   1.4,
                                   0.15,
                                   0.1,
                                   123456789012345.6,
                                   12345678901234.56,
                                   5e-324,
                                   1e308,
                                   0.15000000000000002,
                                   0.30000000000000004,
                                   999999999999999.88,
                                   0.000099999999999999991,
                                   0.00010000000000000002,
                                   123456789012345.625, /* ties at the 17th digit: to even */
                                   123456789012345.375,
                                   12345678901234.5625,
                                   12345678901234.4375,
                                   1234567890123.59375};
    /* just below a power of ten: the 15 digits round up to the next exponent */
    for (int x = -5; x <= 16; x++) {
        double pw = pow(10, x);
        check_num(nextafter(pw, 0));
        check_num(nextafter(nextafter(pw, 0), 0));
        check_num(-nextafter(pw, 0));
        check_num(pw * (1 - 4e-16));
        check_num(pw * (1 - 6e-16));
    }
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        check_num(edges[i]);
        check_num(-edges[i]);
        check_num(nextafter(edges[i], 0));
        check_num(nextafter(edges[i], 1e300));
    }
    assert_true(n > 200000);
}

static void test_json_print_is_cjsons(void **st)
{
    (void)st;
    mnc_jbuf b = {0};
    for (int i = 0; i < 3000; i++) {
        cJSON *t = gen(i % 2 ? 0 : 3);
        assert_non_null(t);
        char *want = cJSON_PrintUnformatted(t);
        assert_non_null(want);
        b.len = 0;
        assert_int_equal(mnc_json_print(&b, t), 0);
        assert_int_equal(b.len, strlen(want));
        assert_memory_equal(b.p, want, b.len);
        cJSON_free(want);
        cJSON_Delete(t);
    }
    /* what cJSON refuses to print is refused, and the buffer is left as it was */
    cJSON *bad = cJSON_CreateArray();
    cJSON *raw = cJSON_CreateRaw("1");
    assert_non_null(bad);
    assert_non_null(raw);
    cJSON_free(raw->valuestring);
    raw->valuestring = NULL;
    cJSON_AddItemToArray(bad, raw);
    memcpy(b.p, "xy", 2);
    b.len = 2;
    assert_null(cJSON_PrintUnformatted(bad));
    assert_int_equal(mnc_json_print(&b, bad), -1);
    assert_int_equal(b.len, 2);
    cJSON_Delete(bad);
    free(b.p);
}

/* Audit details are written without printf: mnc_fmt_g6 prints what "%.6g" prints (random
 * doubles, short decimals and their ulp neighbours, ties at the 6th digit, range edges, 0, -0,
 * infinities, NaN) and mnc_str_cat what snprintf(buf, n, "%s%s...") writes, cut at every size. */
static void test_fmt_g6_and_str_cat(void **st)
{
    (void)st;
    uint64_t sd = 0x2545F4914F6CDD1Dull;
    int n = 0;
    for (int i = 0; i < 100000; i++) {
        sd ^= sd << 13;
        sd ^= sd >> 7;
        sd ^= sd << 17;
        double vs[5];
        memcpy(&vs[0], &sd, sizeof(double));                                  /* any bits */
        vs[1] = (double)(sd % 10000000) / pow(10, (double)((sd >> 32) % 14)); /* decimals */
        vs[2] = nextafter(vs[1], 1e300);
        vs[3] = nextafter(vs[1], -1e300);
        vs[4] = ((double)(sd % 2000000) + 0.5) / pow(10, (double)((sd >> 40) % 12)); /* ties */
        for (int k = 0; k < 5; k++) {
            double v = (sd >> 63) ? -vs[k] : vs[k];
            char want[64], got[32];
            snprintf(want, sizeof(want), "%.6g", v);
            size_t l = mnc_fmt_g6(got, v);
            assert_int_equal(l, strlen(want));
            if (strcmp(got, want) != 0)
                fail_msg("%.17g: %s, printf %s", v, got, want);
            n++;
        }
    }
    static const double edges[] = {0.0,        -0.0,
                                   1e-4,       1e-5,
                                   999999.5,   999999.4,
                                   1e6,        999999,
                                   0.05,       0.15000000000000002,
                                   1.0 / 3,    123456.5,
                                   1234565e-1, 0.00012345650000000001,
                                   INFINITY,   -INFINITY,
                                   NAN};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        char want[64], got[32];
        snprintf(want, sizeof(want), "%.6g", edges[i]);
        assert_int_equal(mnc_fmt_g6(got, edges[i]), strlen(want));
        assert_string_equal(got, want);
    }
    assert_true(n == 500000);
    const char *const parts[] = {"subject ", "alice", " release ", "", " charged ", "0.05", "\xc3\xa9!"};
    char full[128];
    snprintf(full, sizeof(full), "%s%s%s%s%s%s%s", parts[0], parts[1], parts[2], parts[3], parts[4], parts[5],
             parts[6]);
    for (size_t sz = 0; sz <= strlen(full) + 2; sz++) {
        char want[128], got[128];
        memset(want, 'x', sizeof(want));
        memset(got, 'x', sizeof(got));
        snprintf(want, sz, "%s%s%s%s%s%s%s", parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6]);
        size_t l = mnc_str_cat(got, sz, parts, 7);
        assert_memory_equal(got, want, sizeof(got));
        assert_int_equal(l, sz ? strlen(got) : 0);
    }
}

/* mnc_json_use_pool: cJSON's allocations come from free lists afterwards. A freed block is
 * reused for the next request of its size, blocks are real malloc blocks (free() works on
 * what cJSON returns, as the default hooks allow), sizes of every class round-trip with their
 * contents intact, and the byte-identity tests above pass again with the pool in place. */
static void test_json_pool(void **st)
{
    mnc_json_use_pool();
    void *a = cJSON_malloc(40);
    assert_non_null(a);
    cJSON_free(a);
    void *b = cJSON_malloc(33); /* the same glibc chunk size as 40: the same block */
    assert_ptr_equal(a, b);
    cJSON_free(b);
    /* every size up to past the largest class, many live at once, each filled and checked */
    enum { N = 700 };
    static unsigned char *blk[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            size_t n = (size_t)i + 1;
            blk[i] = cJSON_malloc(n);
            assert_non_null(blk[i]);
            assert_true(malloc_usable_size(blk[i]) >= n);
            memset(blk[i], (int)(i & 0xff), n);
        }
        for (int i = 0; i < N; i++) {
            for (size_t k = 0; k < (size_t)i + 1; k++)
                assert_int_equal(blk[i][k], i & 0xff);
            cJSON_free(blk[i]);
        }
    }
    cJSON *x = cJSON_CreateString("x");
    char *t = cJSON_PrintUnformatted(x);
    assert_string_equal(t, "\"x\"");
    free(t); /* plain free on cJSON's memory */
    cJSON_Delete(x);
    test_json_str_is_cjsons(st);
    test_json_print_is_cjsons(st);
    test_json_fractions_are_cjsons(st);
}

/* The log keeps at most KEEP + STEP bytes cached behind its end (cache_trim.h), whether lines
 * are written one by one or in deferred batches (mncd's loop); nothing is fsynced meanwhile, so
 * the writer itself starts the writeback. The chain verifies afterwards, every line there. */
static void test_page_cache_bounded(void **st)
{
    (void)st;
    char err[256], detail[801];
    memset(detail, 'd', sizeof(detail) - 1);
    detail[sizeof(detail) - 1] = '\0';
    mnc_audit *a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    uint64_t n = 0;
    struct stat sb;
    for (int round = 0;; round++) {
        bool deferred = round % 2;
        assert_int_equal(mnc_audit_set_deferred(a, deferred), 0);
        for (int i = 0; i < 2000; i++, n++) {
            mnc_audit_rec r = {.time_ms = 1000u + n,
                               .op = "disclose",
                               .sender = "worker",
                               .receiver = "coordinator",
                               .object = "obj",
                               .decision = "allow",
                               .reason = "ok",
                               .detail = detail};
            assert_int_equal(mnc_audit_append(a, &r), 0);
            if (deferred && i % 100 == 99)
                assert_int_equal(mnc_audit_write_pending(a), 0);
        }
        assert_int_equal(stat(path, &sb), 0);
        if (sb.st_size >= MNC_CACHE_TRIM_KEEP + 4 * MNC_CACHE_TRIM_STEP)
            break;
    }
    off_t end = sb.st_size;
    pc_assert_trimmed("audit log", path, end);
    mnc_audit_close(a);
    mnc_audit_verify v;
    assert_int_equal(mnc_audit_verify_file(path, &v), 0);
    assert_int_equal(v.records, n);
    /* opening verifies the chain (reads it all), then lets go of it */
    a = mnc_audit_open(path, NULL, err, sizeof(err));
    assert_non_null(a);
    pc_assert_dropped(path, end - MNC_CACHE_TRIM_STEP);
    mnc_audit_close(a);
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
        cmocka_unit_test_setup_teardown(test_deferred_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_appends_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_partial_and_torn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_file_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discard_poisons, setup, teardown),
        cmocka_unit_test(test_json_str_is_cjsons),
        cmocka_unit_test(test_json_print_is_cjsons),
        cmocka_unit_test(test_json_fractions_are_cjsons),
        cmocka_unit_test(test_fmt_g6_and_str_cat),
        cmocka_unit_test_setup_teardown(test_record_bytes_are_cjsons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_bounded, setup_cached, teardown),
        cmocka_unit_test(test_json_pool), /* last: it changes cJSON's hooks */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
