// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_ledger.c - the MNC-L ledger: charges, budgets, idempotency, durability across reopen,
 * history for br(H), recovery rules, concurrent charges, and the crash test (fork + SIGKILL). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "mnc/journal.h"
#include "mnc/ledger.h"

static char dir[64], path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/mnc-ledger-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/ledger", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static mnc_ledger *open_ok(char *notice, size_t nn)
{
    char err[512];
    mnc_ledger *l = mnc_ledger_open(path, notice, nn, err, sizeof(err));
    if (!l)
        print_message("# open: %s\n", err);
    assert_non_null(l);
    return l;
}

static double spent(mnc_ledger *l, const char *s, const char *r)
{
    double v = -1;
    assert_int_equal(mnc_ledger_spent(l, s, r, &v), 0);
    return v;
}

static void test_charge_and_reopen(void **state)
{
    (void)state;
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    mnc_ledger_obs o1[2] = {{"slot_feasible", "no"}, {"selected_slot", "Thu 10:00"}};
    mnc_ledger_obs o2[1] = {{"reason_class", "medical"}};
    mnc_ledger_limits lim = {.epsilon = 0.5, .budget = 1.0};
    assert_int_equal(mnc_ledger_charge(l, "alice", "coordinator", "r1", o1, 2, 0.25, &lim), MNC_LEDGER_OK);
    assert_int_equal(mnc_ledger_charge(l, "alice", "calendar", "r2", o2, 1, 0.5, &lim), MNC_LEDGER_OK);
    /* ΔR > ε */
    assert_int_equal(mnc_ledger_charge(l, "alice", "calendar", "r3", o2, 1, 0.5000001, &lim), MNC_LEDGER_OVER_EPSILON);
    /* Σ + ΔR > B: 0.75 + 0.3 > 1 */
    assert_int_equal(mnc_ledger_check(l, "alice", NULL, 0.3, &lim), MNC_LEDGER_OVER_BUDGET);
    assert_int_equal(mnc_ledger_charge(l, "alice", "calendar", "r3", o2, 1, 0.3, &lim), MNC_LEDGER_OVER_BUDGET);
    /* exactly reaching B is allowed */
    assert_int_equal(mnc_ledger_check(l, "alice", NULL, 0.25, &lim), MNC_LEDGER_OK);
    /* per-recipient account: calendar has spent 0.5 only */
    mnc_ledger_limits per = {.epsilon = -1, .budget = 1.0, .per_recipient = true};
    assert_int_equal(mnc_ledger_check(l, "alice", "calendar", 0.3, &per), MNC_LEDGER_OK);
    /* idempotent */
    assert_int_equal(mnc_ledger_charge(l, "alice", "coordinator", "r1", o1, 2, 0.25, &lim), MNC_LEDGER_DUPLICATE);
    /* bad input */
    assert_int_equal(mnc_ledger_charge(l, "alice", "c", "r9", o1, 2, -0.1, NULL), MNC_LEDGER_ERROR);
    assert_int_equal(mnc_ledger_charge(l, "alice", "c", "r9", o1, 2, NAN, NULL), MNC_LEDGER_ERROR);
    assert_int_equal(mnc_ledger_charge(l, "", "c", "r9", o1, 2, 0.1, NULL), MNC_LEDGER_ERROR);
    assert_int_equal(mnc_ledger_charge(l, "al\nice", "c", "r9", o1, 2, 0.1, NULL), MNC_LEDGER_ERROR);
    assert_false(mnc_ledger_has_release(l, "r9"));
    assert_true(spent(l, "alice", NULL) == 0.75);
    assert_true(spent(l, "alice", "coordinator") == 0.25);
    assert_true(spent(l, "alice", "calendar") == 0.5);
    assert_true(spent(l, "bob", NULL) == 0);
    assert_int_equal(mnc_ledger_close(l), 0);

    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    l = open_ok(notice, sizeof(notice));
    assert_string_equal(notice, "");
    assert_true(spent(l, "alice", NULL) == 0.75);
    assert_true(spent(l, "alice", "calendar") == 0.5);
    assert_true(mnc_ledger_has_release(l, "r1"));
    assert_false(mnc_ledger_has_release(l, "r3"));
    assert_int_equal(mnc_ledger_charge(l, "alice", "coordinator", "r2", o1, 1, 0.1, NULL), MNC_LEDGER_DUPLICATE);
    /* history: observations in charge order, mapped to policy field ids */
    mnc_field fields[3] = {{"reason_class", 1}, {"slot_feasible", 1}, {"selected_slot", 1}};
    mnc_policy pol;
    memset(&pol, 0, sizeof(pol));
    pol.fields = fields;
    pol.n_fields = 3;
    mnc_obs *h;
    size_t n;
    assert_int_equal(mnc_ledger_history(l, &pol, "alice", &h, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(h[0].field, 1);
    assert_string_equal(h[0].value, "no");
    assert_int_equal(h[1].field, 2);
    assert_string_equal(h[1].value, "Thu 10:00");
    assert_int_equal(h[2].field, 0);
    assert_string_equal(h[2].value, "medical");
    free(h);
    assert_int_equal(mnc_ledger_history(l, &pol, "nobody", &h, &n), 0);
    assert_int_equal(n, 0);
    /* a recorded field the policy does not know: fail closed */
    pol.n_fields = 1;
    assert_int_equal(mnc_ledger_history(l, &pol, "alice", &h, &n), -1);
    /* charge by policy id */
    pol.n_fields = 3;
    mnc_obs d = {0, "dental"};
    assert_int_equal(mnc_ledger_charge_ids(l, &pol, "bob", "coordinator", "r4", &d, 1, 0.125, NULL), MNC_LEDGER_OK);
    size_t ns, nc;
    mnc_ledger_stats(l, &ns, &nc);
    assert_int_equal(ns, 2);
    assert_int_equal(nc, 3);
    assert_int_equal(mnc_ledger_close(l), 0);

    /* a read-only view sees the same and cannot charge */
    char err[256];
    l = mnc_ledger_open_ro(path, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(l);
    assert_true(spent(l, "bob", NULL) == 0.125);
    assert_int_equal(mnc_ledger_charge(l, "bob", "x", "r5", NULL, 0, 0.1, NULL), MNC_LEDGER_ERROR);
    assert_int_equal(errno, EROFS);
    assert_int_equal(mnc_ledger_close(l), 0);
}

/* A repeated identical disclosure reveals nothing new: the history keeps each distinct
 * observation once, so it stays bounded by the subject's facts, not by the number of rounds. */
/* A charge's record is written without a cJSON tree (ledger.c, json_write.h): its bytes in the
 * file are those cJSON_PrintUnformatted prints for the tree it used to be built as, for
 * deltas printed with and without printf and strings that need escapes. */
static void test_record_bytes_are_cjsons(void **state)
{
    (void)state;
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    static const double deltas[] = {0.25, 0.05, 1.0 / 3, 0.1 + 0.2, 1e-7, 123.456, 0, 2, 0.15000000000000002};
    mnc_ledger_obs obs[3] = {{"f\"q\\b", "v\nnl\ttab\x01"}, {"caf\xc3\xa9", "\xe2\x82\xac 5"}, {"plain", ""}};
    mnc_ledger_limits lim = {.epsilon = -1, .budget = -1};
    size_t nd = sizeof(deltas) / sizeof(deltas[0]);
    for (size_t i = 0; i < nd; i++) {
        char rel[32];
        snprintf(rel, sizeof(rel), "rel-%zu", i);
        assert_int_equal(mnc_ledger_charge(l, "sub\"j", "coordinator", rel, obs, i % 4, deltas[i], &lim),
                         MNC_LEDGER_OK);
    }
    mnc_ledger_close(l);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *at = buf;
    for (size_t i = 0; i < nd; i++) {
        const char *p = memmem(at, n - (size_t)(at - buf), "{\"v\":1,", 7);
        assert_non_null(p);
        const char *end = memmem(p, n - (size_t)(p - buf), "]}", 2); /* no value holds "]}" */
        assert_non_null(end);
        size_t len = (size_t)(end + 2 - p);
        cJSON *got = cJSON_ParseWithLength(p, len);
        assert_non_null(got);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(got, "t");
        assert_true(cJSON_IsNumber(t));
        /* the tree the record was built as before */
        cJSON *j = cJSON_CreateObject();
        char tt[24];
        snprintf(tt, sizeof(tt), "%.0f", t->valuedouble);
        cJSON_AddNumberToObject(j, "v", 1);
        cJSON_AddRawToObject(j, "t", tt);
        cJSON_AddStringToObject(j, "subject", "sub\"j");
        cJSON_AddStringToObject(j, "recipient", "coordinator");
        char rel[32];
        snprintf(rel, sizeof(rel), "rel-%zu", i);
        cJSON_AddStringToObject(j, "release", rel);
        cJSON_AddNumberToObject(j, "delta", deltas[i]);
        cJSON *arr = cJSON_AddArrayToObject(j, "obs");
        for (size_t k = 0; k < i % 4; k++) {
            const char *pair[2] = {obs[k].field, obs[k].value};
            cJSON_AddItemToArray(arr, cJSON_CreateStringArray(pair, 2));
        }
        char *want = cJSON_PrintUnformatted(j);
        assert_non_null(want);
        assert_int_equal(strlen(want), len);
        assert_memory_equal(want, p, len);
        free(want);
        cJSON_Delete(j);
        cJSON_Delete(got);
        at = end + 2;
    }
}

static void test_history_distinct(void **state)
{
    (void)state;
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    mnc_ledger_obs same[2] = {{"slot_feasible", "yes"}, {"selected_slot", "Thu 10:00"}};
    mnc_ledger_obs other[1] = {{"selected_slot", "Fri 09:00"}};
    for (int rep = 0; rep < 50; rep++) {
        char id[16];
        snprintf(id, sizeof(id), "rep%d", rep);
        assert_int_equal(mnc_ledger_charge(l, "carol", "coordinator", id, same, 2, 0, NULL), MNC_LEDGER_OK);
    }
    assert_int_equal(mnc_ledger_charge(l, "carol", "coordinator", "x", other, 1, 0, NULL), MNC_LEDGER_OK);
    mnc_field fields[2] = {{"slot_feasible", 1}, {"selected_slot", 1}};
    mnc_policy pol;
    memset(&pol, 0, sizeof(pol));
    pol.fields = fields;
    pol.n_fields = 2;
    mnc_obs *h;
    size_t n;
    assert_int_equal(mnc_ledger_history(l, &pol, "carol", &h, &n), 0);
    assert_int_equal(n, 3); /* feasible=yes, slot=Thu 10:00, slot=Fri 09:00 */
    assert_string_equal(h[0].value, "yes");
    assert_string_equal(h[1].value, "Thu 10:00");
    assert_string_equal(h[2].value, "Fri 09:00");
    free(h);
    assert_int_equal(mnc_ledger_close(l), 0);
}

/* The history is kept per subject as charges come (ledger_hist.c): after many charges, with
 * repeats, a policy whose field ids differ from the previous call's (a reload renumbers
 * fields), and a reopen (replay), it is still each distinct observation once in first-seen
 * order with the ids of the policy asked. */
static void test_history_incremental(void **state)
{
    (void)state;
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    for (int i = 0; i < 2000; i++) {
        char id[16], v[16];
        snprintf(id, sizeof(id), "r%d", i);
        snprintf(v, sizeof(v), "v%d", i % 7);
        mnc_ledger_obs o[2] = {{"a", v}, {"b", i % 2 ? "odd" : "even"}};
        assert_int_equal(mnc_ledger_charge(l, "dave", i % 3 ? "x" : "y", id, o, 2, 0, NULL), MNC_LEDGER_OK);
    }
    mnc_field f1[2] = {{"a", 1}, {"b", 1}}, f2[3] = {{"b", 1}, {"zz", 1}, {"a", 1}};
    mnc_policy p1, p2;
    memset(&p1, 0, sizeof(p1));
    memset(&p2, 0, sizeof(p2));
    p1.fields = f1;
    p1.n_fields = 2;
    p2.fields = f2;
    p2.n_fields = 3;
    for (int round = 0; round < 3; round++) {
        if (round == 2) { /* replayed from the file */
            assert_int_equal(mnc_ledger_close(l), 0);
            l = open_ok(notice, sizeof(notice));
        }
        for (int k = 0; k < 2; k++) {
            const mnc_policy *p = k ? &p2 : &p1;
            mnc_obs *h;
            size_t n;
            assert_int_equal(mnc_ledger_history(l, p, "dave", &h, &n), 0);
            assert_int_equal(n, 9); /* v0, even, v1, odd, v2..v6 */
            uint16_t ida = k ? 2 : 0, idb = k ? 0 : 1;
            assert_int_equal(h[0].field, ida);
            assert_string_equal(h[0].value, "v0");
            assert_int_equal(h[1].field, idb);
            assert_string_equal(h[1].value, "even");
            assert_int_equal(h[2].field, ida);
            assert_string_equal(h[2].value, "v1");
            assert_int_equal(h[3].field, idb);
            assert_string_equal(h[3].value, "odd");
            for (int i = 4; i < 9; i++) {
                char v[16];
                snprintf(v, sizeof(v), "v%d", i - 2);
                assert_int_equal(h[i].field, ida);
                assert_string_equal(h[i].value, v);
            }
            free(h);
        }
    }
    assert_int_equal(mnc_ledger_subject_charges(l, "dave"), 2000);
    assert_true(spent(l, "dave", "y") == 0);
    assert_int_equal(mnc_ledger_close(l), 0);
}

static int find_cb(void *arg, const mnc_ledger_entry *e)
{
    mnc_ledger_entry *out = arg;
    *out = *e;
    out->obs = NULL; /* valid during the call only */
    assert_int_equal(e->n_obs, 1);
    assert_string_equal(e->obs[0].field, "f");
    return 7;
}

/* mnc_ledger_find_release gives the one charge of a release id, among many subjects. */
static void test_find_release(void **state)
{
    (void)state;
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    for (int i = 0; i < 300; i++) {
        char id[16], subj[16], v[16];
        snprintf(id, sizeof(id), "rel%d", i);
        snprintf(subj, sizeof(subj), "s%d", i % 10);
        snprintf(v, sizeof(v), "%d", i);
        mnc_ledger_obs o[1] = {{"f", v}};
        assert_int_equal(mnc_ledger_charge(l, subj, "r", id, o, 1, 0.001 * i, NULL), MNC_LEDGER_OK);
    }
    mnc_ledger_entry e;
    memset(&e, 0, sizeof(e));
    assert_int_equal(mnc_ledger_find_release(l, "rel123", find_cb, &e), 7);
    assert_string_equal(e.subject, "s3");
    assert_string_equal(e.release, "rel123");
    assert_true(e.delta == 0.001 * 123);
    assert_int_equal(mnc_ledger_find_release(l, "nope", find_cb, &e), -1);
    assert_int_equal(mnc_ledger_close(l), 0);
}

typedef struct count_ctx {
    int n;
} count_ctx;

static int count_cb(void *arg, const mnc_ledger_entry *e)
{
    (void)e;
    ((count_ctx *)arg)->n++;
    return 0;
}

/* Records on disk, read by a read-only view (what `mncctl ledger show` sees). */
static int on_disk(void)
{
    char notice[256], err[512];
    mnc_ledger *ro = mnc_ledger_open_ro(path, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(ro);
    count_ctx c = {0};
    assert_int_equal(mnc_ledger_foreach(ro, NULL, count_cb, &c), 0);
    assert_int_equal(mnc_ledger_close(ro), 0);
    return c.n;
}

/* Deferred durability: a charge counts at once (budgets, duplicates) but reaches the file
 * only with the flush - one flush for all of them; turning deferral off flushes too. */
static void test_deferred_flush(void **state)
{
    (void)state;
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    mnc_ledger_limits lim = {.epsilon = -1, .budget = 1.0};
    mnc_ledger_obs o[1] = {{"f", "x"}};
    assert_int_equal(mnc_ledger_set_deferred(l, true), 0);
    assert_int_equal(mnc_ledger_charge(l, "s", "r", "d1", o, 1, 0.5, &lim), MNC_LEDGER_OK);
    assert_int_equal(mnc_ledger_charge(l, "s", "r", "d2", o, 1, 0.5, &lim), MNC_LEDGER_OK);
    assert_int_equal(mnc_ledger_charge(l, "s", "r", "d3", o, 1, 0.5, &lim), MNC_LEDGER_OVER_BUDGET);
    assert_int_equal(mnc_ledger_charge(l, "s", "r", "d1", o, 1, 0.0, NULL), MNC_LEDGER_DUPLICATE);
    assert_true(mnc_ledger_has_release(l, "d2"));
    assert_int_equal(on_disk(), 0); /* queued, not written */
    assert_int_equal(mnc_ledger_flush(l), 0);
    assert_int_equal(on_disk(), 2);
    assert_int_equal(mnc_ledger_flush(l), 0); /* nothing pending */
    assert_int_equal(mnc_ledger_charge(l, "t", "r", "d4", o, 1, 0.1, NULL), MNC_LEDGER_OK);
    assert_int_equal(mnc_ledger_set_deferred(l, false), 0);
    assert_int_equal(on_disk(), 3);
    assert_int_equal(mnc_ledger_charge(l, "t", "r", "d5", o, 1, 0.1, NULL), MNC_LEDGER_OK);
    assert_int_equal(on_disk(), 4); /* durable at return again */
    assert_int_equal(mnc_ledger_close(l), 0);
    l = open_ok(notice, sizeof(notice));
    assert_true(spent(l, "s", NULL) == 1.0);
    assert_int_equal(mnc_ledger_close(l), 0);
}

static void test_replayed_duplicate_counted_once(void **state)
{
    (void)state;
    /* Two records with the same release id (e.g. written by an older tool): counted once. */
    const char *a =
        "{\"v\":1,\"t\":1,\"subject\":\"s\",\"recipient\":\"r\",\"release\":\"x\",\"delta\":0.5,\"obs\":[]}";
    const void *p[2] = {a, a};
    size_t len[2] = {strlen(a), strlen(a)};
    assert_int_equal(mnc_journal_rewrite(path, 1, p, len, 2), 0);
    char notice[256];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    assert_true(spent(l, "s", NULL) == 0.5);
    assert_int_equal(mnc_ledger_close(l), 0);
}

static void test_bad_record(void **state)
{
    (void)state;
    /* CRC-valid but not a charge: refuse, naming the record */
    const char *a =
        "{\"v\":1,\"t\":1,\"subject\":\"s\",\"recipient\":\"r\",\"release\":\"x\",\"delta\":0.5,\"obs\":[]}";
    const char *b = "{\"v\":1,\"t\":1,\"subject\":\"s\",\"recipient\":\"r\",\"release\":\"y\",\"delta\":-1,\"obs\":[]}";
    const void *p[2] = {a, b};
    size_t len[2] = {strlen(a), strlen(b)};
    assert_int_equal(mnc_journal_rewrite(path, 1, p, len, 2), 0);
    char err[512];
    assert_null(mnc_ledger_open(path, NULL, 0, err, sizeof(err)));
    assert_non_null(strstr(err, "record #2"));
    assert_non_null(strstr(err, "malformed member"));
}

static void test_corruption_and_torn_tail(void **state)
{
    (void)state;
    char notice[512], err[512];
    mnc_ledger *l = open_ok(notice, sizeof(notice));
    for (int i = 0; i < 20; i++) {
        char id[16];
        snprintf(id, sizeof(id), "rel-%02d", i); /* equal-length records */
        mnc_ledger_obs o = {"f", "v"};
        assert_int_equal(mnc_ledger_charge(l, "s", "r", id, &o, 1, 0.01, NULL), MNC_LEDGER_OK);
    }
    assert_int_equal(mnc_ledger_close(l), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    off_t size = st.st_size;
    /* truncate mid-record: recovered with a notice, 19 charges left */
    assert_int_equal(truncate(path, size - 10), 0);
    l = open_ok(notice, sizeof(notice));
    assert_non_null(strstr(notice, "torn tail"));
    assert_non_null(strstr(notice, "record #20"));
    size_t nc;
    mnc_ledger_stats(l, NULL, &nc);
    assert_int_equal(nc, 19);
    assert_false(mnc_ledger_has_release(l, "rel-19"));
    assert_int_equal(mnc_ledger_close(l), 0);
    /* flip a byte in the middle (inside record #10's payload): refuse, naming it */
    assert_int_equal(stat(path, &st), 0);
    off_t rec = st.st_size / 19; /* records are the same length */
    off_t at = 9 * rec + 40;
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, at), 1);
    c ^= 0x01;
    assert_int_equal(pwrite(fd, &c, 1, at), 1);
    close(fd);
    assert_null(mnc_ledger_open(path, notice, sizeof(notice), err, sizeof(err)));
    char want[64];
    snprintf(want, sizeof(want), "corrupt record #10 at offset %lld", (long long)(9 * rec));
    if (!strstr(err, want))
        print_message("# err: %s\n", err);
    assert_non_null(strstr(err, want));
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 19 * rec); /* nothing was truncated */
}

#define THREADS 8
#define PER 250
static mnc_ledger *shared_l;

static void *charger(void *arg)
{
    int t = (int)(intptr_t)arg;
    mnc_ledger_limits lim = {.epsilon = -1, .budget = 100.0};
    for (int i = 0; i < PER; i++) {
        char id[32], subj[16];
        snprintf(id, sizeof(id), "t%d-%d", t, i);
        snprintf(subj, sizeof(subj), "subj%d", i % 3); /* threads contend on 3 subjects */
        mnc_ledger_obs o = {"f", id};
        if (mnc_ledger_charge(shared_l, subj, "r", id, &o, 1, 0.25, &lim) != MNC_LEDGER_OK &&
            mnc_ledger_charge(shared_l, subj, "r", id, &o, 1, 0.25, &lim) != MNC_LEDGER_OVER_BUDGET)
            return (void *)1;
    }
    return NULL;
}

/* Concurrent charges against a budget: the reservation keeps Σ ≤ B exactly. 8 threads × 250
 * charges of 0.25 over 3 subjects with B = 100 -> each subject gets exactly 400 charges. */
static void test_concurrent_budget(void **state)
{
    (void)state;
    char notice[256];
    shared_l = open_ok(notice, sizeof(notice));
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, charger, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *r;
        assert_int_equal(pthread_join(th[t], &r), 0);
        assert_null(r);
    }
    double tot = 0;
    for (int s = 0; s < 3; s++) {
        char subj[16];
        snprintf(subj, sizeof(subj), "subj%d", s);
        double v = spent(shared_l, subj, NULL);
        assert_true(v <= 100.0);
        tot += v;
    }
    /* 2000 charges wanted 500 bits; at most 300 fit */
    assert_true(tot == 300.0);
    assert_int_equal(mnc_ledger_close(shared_l), 0);
    shared_l = open_ok(notice, sizeof(notice));
    size_t nc;
    mnc_ledger_stats(shared_l, NULL, &nc);
    assert_int_equal(nc, 1200);
    assert_int_equal(mnc_ledger_close(shared_l), 0);
}

/* ---- crash test --------------------------------------------------------------------- */

/* Child: 8 threads charge continuously; each writes "ack ID\n" to the pipe only after
 * charge() returned OK. The parent SIGKILLs the child at a random moment. */
static int ack_fd;
static volatile int stop_flag;

static void *crash_writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; !stop_flag; i++) {
        char id[32], line[48];
        snprintf(id, sizeof(id), "c%d-%d", t, i);
        mnc_ledger_obs o = {"f", "v"};
        if (mnc_ledger_charge(shared_l, "victim", "r", id, &o, 1, 0.001, NULL) != MNC_LEDGER_OK)
            _exit(3);
        int n = snprintf(line, sizeof(line), "ack %s\n", id);
        if (write(ack_fd, line, (size_t)n) != n) /* atomic: < PIPE_BUF */
            _exit(4);
    }
    return NULL;
}

typedef struct per_thread {
    char prefix[16];
    int max, count;
} per_thread;

static int count_thread(void *arg, const mnc_ledger_entry *e)
{
    per_thread *pt = arg;
    size_t pl = strlen(pt->prefix);
    if (strncmp(e->release, pt->prefix, pl) == 0) {
        int i = atoi(e->release + pl);
        if (i > pt->max)
            pt->max = i;
        pt->count++;
    }
    return 0;
}

/* Concurrent charges to one subject may complete out of sequence order; the history must
 * still be in charge (sequence) order, as a replay would rebuild it. */
static void *order_charger(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < 150; i++) {
        char id[32], v[32];
        snprintf(id, sizeof(id), "o%d-%d", t, i);
        snprintf(v, sizeof(v), "%d-%d", t, i % 40);
        mnc_ledger_obs o[1] = {{"f", v}};
        if (mnc_ledger_charge(shared_l, "ord", "r", id, o, 1, 0, NULL) != MNC_LEDGER_OK)
            return (void *)1;
    }
    return NULL;
}

typedef struct order_ctx {
    char (*v)[32];
    size_t n;
} order_ctx;

static int order_cb(void *arg, const mnc_ledger_entry *e)
{
    order_ctx *x = arg;
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->v[i], e->obs[0].value) == 0)
            return 0;
    snprintf(x->v[x->n++], 32, "%s", e->obs[0].value);
    return 0;
}

static void test_history_order_concurrent(void **state)
{
    (void)state;
    char notice[256];
    shared_l = open_ok(notice, sizeof(notice));
    pthread_t th[8];
    for (int t = 0; t < 8; t++)
        assert_int_equal(pthread_create(&th[t], NULL, order_charger, (void *)(intptr_t)t), 0);
    for (int t = 0; t < 8; t++) {
        void *r;
        assert_int_equal(pthread_join(th[t], &r), 0);
        assert_null(r);
    }
    static char want[8 * 40][32];
    order_ctx x = {want, 0};
    assert_int_equal(mnc_ledger_foreach(shared_l, "ord", order_cb, &x), 0);
    assert_int_equal(x.n, 8 * 40);
    mnc_field f[1] = {{"f", 1}};
    mnc_policy pol;
    memset(&pol, 0, sizeof(pol));
    pol.fields = f;
    pol.n_fields = 1;
    for (int round = 0; round < 2; round++) {
        mnc_obs *h;
        size_t n;
        assert_int_equal(mnc_ledger_history(shared_l, &pol, "ord", &h, &n), 0);
        assert_int_equal(n, x.n);
        for (size_t i = 0; i < n; i++)
            assert_string_equal(h[i].value, want[i]);
        free(h);
        if (round == 0) { /* and the same after a replay */
            assert_int_equal(mnc_ledger_close(shared_l), 0);
            shared_l = open_ok(notice, sizeof(notice));
        }
    }
    assert_int_equal(mnc_ledger_close(shared_l), 0);
}

static void test_crash_kill9(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(seed);
    size_t prev_nc = 0;
    for (int round = 0; round < 3; round++) {
        int pfd[2];
        assert_int_equal(pipe(pfd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pfd[0]);
            ack_fd = pfd[1];
            char err[256], notice[256];
            shared_l = mnc_ledger_open(path, notice, sizeof(notice), err, sizeof(err));
            if (!shared_l)
                _exit(2);
            pthread_t th[THREADS];
            for (int t = 0; t < THREADS; t++)
                if (pthread_create(&th[t], NULL, crash_writer, (void *)(intptr_t)(t + 100 * round)))
                    _exit(5);
            for (;;)
                pause();
        }
        close(pfd[1]);
        size_t cap = 1 << 20, len = 0;
        char *buf = malloc(cap);
        assert_non_null(buf);
        ssize_t r;
        /* wait for the first ack (up to 30 s: slow under valgrind), so every round kills a
         * writer that is really charging, then let it run 20..220 ms more */
        struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
        while (!memchr(buf, '\n', len)) {
            assert_int_equal(poll(&pf, 1, 30000), 1);
            r = read(pfd[0], buf + len, cap - len - 1);
            assert_true(r > 0);
            len += (size_t)r;
        }
        usleep((useconds_t)(20000 + rand() % 200000));
        assert_int_equal(kill(pid, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        /* read the remaining acks (the pipe buffered them) */
        while ((r = read(pfd[0], buf + len, cap - len - 1)) > 0) {
            len += (size_t)r;
            if (len + 1 >= cap) {
                cap *= 2;
                buf = realloc(buf, cap);
                assert_non_null(buf);
            }
        }
        close(pfd[0]);
        buf[len] = '\0';
        char notice[512];
        mnc_ledger *l = open_ok(notice, sizeof(notice));
        size_t acks = 0;
        int acked_per[THREADS] = {0};
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
            assert_true(strncmp(line, "ack ", 4) == 0);
            if (!mnc_ledger_has_release(l, line + 4))
                print_message("# acknowledged %s missing\n", line + 4);
            assert_true(mnc_ledger_has_release(l, line + 4));
            int t, i;
            assert_int_equal(sscanf(line + 4, "c%d-%d", &t, &i), 2);
            t -= 100 * round;
            assert_true(t >= 0 && t < THREADS);
            acked_per[t]++;
            acks++;
        }
        free(buf);
        /* exactly once: Σ equals (distinct charges) × 0.001, and the records on disk are
         * exactly the distinct charges (no duplicate release ids were written) */
        size_t nc;
        mnc_ledger_stats(l, NULL, &nc);
        uint64_t nrec = 0;
        char err[256];
        assert_int_equal(mnc_journal_scan(path, NULL, NULL, &nrec, NULL, 0, err, sizeof(err)), 0);
        assert_int_equal(nrec, nc);
        assert_true(nc >= acks);
        double v = spent(l, "victim", NULL);
        assert_true(fabs(v - 0.001 * (double)nc) < 1e-9);
        /* Per writer thread, charges are sequential: the durable ids must be exactly
         * 0..d-1 with d = acked or acked + 1 (the one in flight when killed may have become
         * durable before its ack was printed; nothing never written can appear). */
        size_t durable_round = 0;
        for (int t = 0; t < THREADS; t++) {
            per_thread pt = {.prefix = "", .max = -1, .count = 0};
            snprintf(pt.prefix, sizeof(pt.prefix), "c%d-", t + 100 * round);
            assert_int_equal(mnc_ledger_foreach(l, "victim", count_thread, &pt), 0);
            assert_int_equal(pt.count, pt.max + 1); /* contiguous 0..max */
            int acked = acked_per[t];
            assert_true(pt.count == acked || pt.count == acked + 1);
            durable_round += (size_t)pt.count;
        }
        assert_int_equal(nc, prev_nc + durable_round);
        print_message("# round %d: killed after %zu acks; %zu durable this round (%zu durable "
                      "but unacknowledged)%s%s\n",
                      round, acks, durable_round, durable_round - acks, notice[0] ? "; " : "", notice);
        prev_nc = nc;
        assert_true(acks > 0);
        assert_int_equal(mnc_ledger_close(l), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_charge_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_bytes_are_cjsons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_distinct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_incremental, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deferred_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replayed_duplicate_counted_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corruption_and_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_order_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_kill9, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
