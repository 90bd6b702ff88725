/* test_journal.c - the durable journal: round trip, recovery rules, group commit, compaction. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "mnc/journal.h"

typedef struct collected {
    int n;
    uint64_t seq[4096];
    char payload[4096][48];
} collected;

static int collect(void *arg, uint64_t seq, const void *p, size_t len)
{
    collected *c = arg;
    if (c->n >= 4096 || len >= sizeof(c->payload[0]))
        return -1;
    c->seq[c->n] = seq;
    memcpy(c->payload[c->n], p, len);
    c->payload[c->n][len] = '\0';
    c->n++;
    return 0;
}

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/mnc-journal-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/j", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    unlink(path);
    rmdir(dir);
    return 0;
}

static void write_n(int n)
{
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    for (int i = 0; i < n; i++) {
        char p[32];
        int l = snprintf(p, sizeof(p), "{\"i\":%d}", i);
        uint64_t seq = 0;
        assert_int_equal(mnc_journal_append(j, p, (size_t)l, &seq), 0);
        assert_int_equal(seq, (uint64_t)i + 1);
    }
    assert_int_equal(mnc_journal_close(j), 0);
}

static off_t fsize(void)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void test_roundtrip(void **state)
{
    (void)state;
    write_n(5);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* each record: 20-byte header + payload {"i":N} (7 bytes) */
    assert_int_equal(st.st_size, 5 * (20 + 7));
    static collected c;
    memset(&c, 0, sizeof(c));
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, collect, &c, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_string_equal(notice, "");
    assert_int_equal(c.n, 5);
    for (int i = 0; i < 5; i++) {
        char want[32];
        snprintf(want, sizeof(want), "{\"i\":%d}", i);
        assert_string_equal(c.payload[i], want);
        assert_int_equal(c.seq[i], (uint64_t)i + 1);
    }
    assert_int_equal(mnc_journal_next_seq(j), 6);
    /* a second opener (another process or handle) is refused while we hold it */
    mnc_journal *j2 = mnc_journal_open(path, NULL, NULL, NULL, 0, err, sizeof(err));
    assert_null(j2);
    assert_non_null(strstr(err, "in use"));
    /* bad lengths are refused without consuming a sequence number */
    assert_int_equal(mnc_journal_append(j, "x", 0, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(mnc_journal_next_seq(j), 6);
    assert_int_equal(mnc_journal_close(j), 0);
}

static void test_torn_partial(void **state)
{
    (void)state;
    write_n(4);
    off_t sz = fsize();
    assert_int_equal(truncate(path, sz - 5), 0); /* cut the last record mid-payload */
    static collected c;
    memset(&c, 0, sizeof(c));
    char err[256], notice[256];
    uint64_t n = 0;
    /* scan reports but does not modify */
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_non_null(strstr(notice, "torn tail at offset 81"));
    assert_int_equal(fsize(), sz - 5);
    mnc_journal *j = mnc_journal_open(path, collect, &c, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(c.n, 3);
    assert_non_null(strstr(notice, "torn tail at offset 81"));
    assert_non_null(strstr(notice, "record #4"));
    assert_non_null(strstr(notice, "truncated to 81 bytes"));
    assert_int_equal(fsize(), 81);
    uint64_t seq;
    assert_int_equal(mnc_journal_append(j, "{\"i\":9}", 7, &seq), 0);
    assert_int_equal(seq, 4); /* numbering continues after the recovered prefix */
    assert_int_equal(mnc_journal_close(j), 0);
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 4);
    assert_string_equal(notice, "");
}

static void test_torn_header(void **state)
{
    (void)state;
    write_n(2);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "MNCJ\x07\0\0", 7), 7); /* 7 bytes of a next header */
    close(fd);
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_non_null(strstr(notice, "incomplete header"));
    assert_int_equal(fsize(), 2 * 27);
    assert_int_equal(mnc_journal_close(j), 0);
}

static void flip(off_t at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x5a;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

static void test_torn_crc_at_eof(void **state)
{
    (void)state;
    write_n(3);
    flip(fsize() - 2); /* last record complete, payload damaged, ends exactly at EOF */
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_non_null(strstr(notice, "crc mismatch"));
    assert_int_equal(fsize(), 2 * 27);
    assert_int_equal(mnc_journal_close(j), 0);
}

static void test_corrupt_middle(void **state)
{
    (void)state;
    write_n(6);
    off_t before = fsize();
    flip(2 * 27 + 22); /* payload byte of record #3 (offset 54) */
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_null(j);
    assert_non_null(strstr(err, "corrupt record #3 at offset 54"));
    assert_non_null(strstr(err, "crc mismatch"));
    assert_int_equal(fsize(), before); /* nothing truncated */
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, NULL, notice, sizeof(notice), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "#3"));
    flip(2 * 27 + 22);             /* repair */
    flip(3 * 27 + 5);              /* now a length byte of record #4 (offset 81) */
    assert_null(mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err)));
    assert_non_null(strstr(err, "record #4 at offset 81"));
    flip(3 * 27 + 5);
    flip(0);                       /* magic of the very first record */
    assert_null(mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err)));
    assert_non_null(strstr(err, "at offset 0: bad magic"));
}

static void test_sequence_gap(void **state)
{
    (void)state;
    /* Two valid records with a gap (a removed record): never a torn tail. */
    const void *p[2] = {"{\"a\":1}", "{\"a\":2}"};
    size_t l[2] = {7, 7};
    assert_int_equal(mnc_journal_rewrite(path, 10, p, l, 1), 0);
    char tmpp[160];
    snprintf(tmpp, sizeof(tmpp), "%s.b", path);
    char *save = strdup(path);
    assert_non_null(save);
    /* second file starting at 12, then concatenate */
    assert_int_equal(mnc_journal_rewrite(tmpp, 12, p + 1, l + 1, 1), 0);
    int a = open(path, O_WRONLY | O_APPEND), b = open(tmpp, O_RDONLY);
    char buf[64];
    ssize_t n = read(b, buf, sizeof(buf));
    assert_int_equal(n, 27);
    assert_int_equal(write(a, buf, (size_t)n), n);
    close(a);
    close(b);
    unlink(tmpp);
    free(save);
    char err[256], notice[256];
    assert_null(mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err)));
    assert_non_null(strstr(err, "sequence number 12 where 11 was expected"));
}

#define THREADS 8
#define PER 200

static mnc_journal *shared_j;

static void *writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++) {
        char p[32];
        int l = snprintf(p, sizeof(p), "t%d-%d", t, i);
        if (mnc_journal_append(shared_j, p, (size_t)l, NULL) != 0)
            return (void *)1;
    }
    return NULL;
}

static void test_group_commit(void **state)
{
    (void)state;
    char err[256], notice[256];
    shared_j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(shared_j);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, writer, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *r;
        assert_int_equal(pthread_join(th[t], &r), 0);
        assert_null(r);
    }
    uint64_t syncs = mnc_journal_syncs(shared_j);
    assert_true(syncs >= 1 && syncs <= THREADS * PER);
    print_message("# %d appends in %llu syncs\n", THREADS * PER, (unsigned long long)syncs);
    assert_int_equal(mnc_journal_close(shared_j), 0);
    static collected c;
    memset(&c, 0, sizeof(c));
    mnc_journal *j = mnc_journal_open(path, collect, &c, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(c.n, THREADS * PER);
    /* every record exactly once, and each thread's records in its own order */
    int next[THREADS] = {0};
    for (int i = 0; i < c.n; i++) {
        int t, k;
        assert_int_equal(sscanf(c.payload[i], "t%d-%d", &t, &k), 2);
        assert_true(t >= 0 && t < THREADS);
        assert_int_equal(k, next[t]);
        next[t]++;
        assert_int_equal(c.seq[i], (uint64_t)i + 1);
    }
    assert_int_equal(mnc_journal_close(j), 0);
}

static void test_compact(void **state)
{
    (void)state;
    write_n(10);
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    const void *p[2] = {"{\"snap\":1}", "{\"snap\":2}"};
    size_t l[2] = {10, 10};
    assert_int_equal(mnc_journal_compact(j, p, l, 2), 0);
    uint64_t seq;
    assert_int_equal(mnc_journal_append(j, "{\"after\":1}", 11, &seq), 0);
    assert_int_equal(seq, 13); /* 1..10 old, 11..12 snapshot, 13 next */
    assert_int_equal(mnc_journal_close(j), 0);
    static collected c;
    memset(&c, 0, sizeof(c));
    j = mnc_journal_open(path, collect, &c, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.payload[0], "{\"snap\":1}");
    assert_int_equal(c.seq[0], 11);
    assert_string_equal(c.payload[2], "{\"after\":1}");
    assert_int_equal(mnc_journal_close(j), 0);
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1); /* no leftover */
}

static void test_missing_scan(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, NULL, NULL, 0, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_crc_at_eof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequence_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_scan, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
