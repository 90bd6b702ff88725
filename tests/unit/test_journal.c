// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/journal.h"
#include "pagecache.h"

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
static char path2[128]; /* a copy of path taken while a handle is open: a crash image */

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/mnc-journal-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/j", dir);
    snprintf(path2, sizeof(path2), "%s/crash-image", dir);
    return 0;
}

/* setup, in a directory whose files the page cache holds apart (pagecache.h) */
static int setup_cached(void **state)
{
    (void)state;
    if (pc_mkdtemp(dir, sizeof(dir), "mnc-journal-") != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/j", dir);
    snprintf(path2, sizeof(path2), "%s/crash-image", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    unlink(path);
    unlink(path2);
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
    flip(2 * 27 + 22); /* repair */
    flip(3 * 27 + 5);  /* now a length byte of record #4 (offset 81) */
    assert_null(mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err)));
    assert_non_null(strstr(err, "record #4 at offset 81"));
    flip(3 * 27 + 5);
    flip(0); /* magic of the very first record */
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

/* Appenders that stop at different times, and a thread that queues and flushes, all at
 * once: the leader's gather (journal.c) waits for as many records as there were appenders,
 * so every writer that leaves makes a leader wait until its deadline, and flush() must never
 * wait for appenders at all. Every record must still be there exactly once, in each thread's
 * order, and nothing may hang. */
#define DROP_THREADS 6

static int per_thread(int t) { return 20 * (t + 1); }

static void *dropout_writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < per_thread(t); i++) {
        char p[32];
        int l = snprintf(p, sizeof(p), "t%d-%d", t, i);
        if (mnc_journal_append(shared_j, p, (size_t)l, NULL) != 0)
            return (void *)1;
    }
    return NULL;
}

static void *queue_flusher(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < per_thread(t); i++) {
        char p[32];
        int l = snprintf(p, sizeof(p), "t%d-%d", t, i);
        if (mnc_journal_queue(shared_j, p, (size_t)l, NULL) != 0 || (i % 3 == 2 && mnc_journal_flush(shared_j) != 0))
            return (void *)1;
    }
    return mnc_journal_flush(shared_j) == 0 ? NULL : (void *)1;
}

static void test_group_commit_dropouts(void **state)
{
    (void)state;
    char err[256], notice[256];
    shared_j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(shared_j);
    pthread_t th[DROP_THREADS + 1];
    int total = 0;
    for (int t = 0; t <= DROP_THREADS; t++) {
        assert_int_equal(
            pthread_create(&th[t], NULL, t < DROP_THREADS ? dropout_writer : queue_flusher, (void *)(intptr_t)t), 0);
        total += per_thread(t);
    }
    for (int t = 0; t <= DROP_THREADS; t++) {
        void *r;
        assert_int_equal(pthread_join(th[t], &r), 0);
        assert_null(r);
    }
    assert_true(mnc_journal_syncs(shared_j) >= 1 && mnc_journal_syncs(shared_j) <= (uint64_t)total);
    assert_int_equal(mnc_journal_close(shared_j), 0);
    static collected c;
    memset(&c, 0, sizeof(c));
    mnc_journal *j = mnc_journal_open(path, collect, &c, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(c.n, total);
    int next[DROP_THREADS + 1] = {0};
    for (int i = 0; i < c.n; i++) {
        int t, k;
        assert_int_equal(sscanf(c.payload[i], "t%d-%d", &t, &k), 2);
        assert_true(t >= 0 && t <= DROP_THREADS);
        assert_int_equal(k, next[t]);
        next[t]++;
        assert_int_equal(c.seq[i], (uint64_t)i + 1);
    }
    for (int t = 0; t <= DROP_THREADS; t++)
        assert_int_equal(next[t], per_thread(t));
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

/* ---- preallocation: the zero-filled region after the logical end ----------------------- */

#define PRE ((off_t)MNC_JOURNAL_PREALLOC_DEFAULT)

static void put_at(off_t at, const void *b, size_t n)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, b, n, at), (ssize_t)n);
    assert_int_equal(close(fd), 0);
}

static void zeros_at(off_t at, size_t n)
{
    void *z = calloc(1, n);
    assert_non_null(z);
    put_at(at, z, n);
    free(z);
}

static void read_at(off_t at, void *b, size_t n)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, b, n, at), (ssize_t)n);
    assert_int_equal(close(fd), 0);
}

/* Copies path to path2 byte for byte while a handle may hold path open: what a crash (kill -9,
 * with the page cache intact) would leave on disk. */
static off_t crash_image(void)
{
    off_t n = fsize();
    uint8_t *b = malloc((size_t)n);
    assert_non_null(b);
    read_at(0, b, (size_t)n);
    int fd = open(path2, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, (size_t)n), (ssize_t)n);
    assert_int_equal(close(fd), 0);
    free(b);
    return n;
}

static void test_prealloc_layout(void **state)
{
    (void)state;
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    for (int i = 0; i < 3; i++)
        assert_int_equal(mnc_journal_append(j, "{\"i\":0}", 7, NULL), 0);
    /* while open: one chunk of zeros past the 81 bytes of records, preallocated once */
    assert_int_equal(fsize(), PRE);
    assert_int_equal(mnc_journal_size(j), 81);
    assert_int_equal(mnc_journal_prealloc_rounds(j), 1);
    uint8_t tail[64];
    read_at(81, tail, sizeof(tail));
    for (size_t i = 0; i < sizeof(tail); i++)
        assert_int_equal(tail[i], 0);
    /* a read-only scan next to the live handle sees records, then zeros: clean */
    uint64_t live = 0;
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &live, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(live, 3);
    assert_string_equal(notice, "");
    /* the crash image (records, then zeros to EOF) is a clean journal */
    assert_int_equal(crash_image(), PRE);
    uint64_t n = 0;
    assert_int_equal(mnc_journal_scan(path2, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_string_equal(notice, "");
    /* a clean close gives the zeros back: the legacy layout, records only */
    assert_int_equal(mnc_journal_close(j), 0);
    assert_int_equal(fsize(), 81);
    /* reopening the crash image keeps its zeros as preallocated space: appends overwrite
     * them in place and the file does not grow */
    static collected c;
    memset(&c, 0, sizeof(c));
    snprintf(path, sizeof(path), "%s", path2);
    j = mnc_journal_open(path, collect, &c, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_string_equal(notice, "");
    assert_int_equal(c.n, 3);
    assert_int_equal(fsize(), PRE);
    uint64_t seq;
    assert_int_equal(mnc_journal_append(j, "{\"i\":3}", 7, &seq), 0);
    assert_int_equal(seq, 4);
    assert_int_equal(fsize(), PRE);
    assert_int_equal(mnc_journal_prealloc_rounds(j), 0);
    assert_int_equal(mnc_journal_close(j), 0);
    assert_int_equal(fsize(), 4 * 27);
    snprintf(path, sizeof(path), "%s/j", dir);
}

static void test_zeros_after_valid_clean(void **state)
{
    (void)state;
    write_n(3);
    zeros_at(81, 4096); /* a legacy file that a crash left with zeros after its records */
    char err[256], notice[256];
    uint64_t n = 0;
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_string_equal(notice, "");
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_string_equal(notice, "");
    assert_int_equal(fsize(), 81 + 4096); /* not truncated: zeros are not a torn tail */
    uint64_t seq;
    assert_int_equal(mnc_journal_append(j, "{\"i\":3}", 7, &seq), 0);
    assert_int_equal(seq, 4);
    assert_int_equal(fsize(), 81 + 4096); /* written over the zeros */
    assert_int_equal(mnc_journal_close(j), 0);
    static collected c;
    memset(&c, 0, sizeof(c));
    assert_int_equal(mnc_journal_scan(path, collect, &c, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(c.n, 4);
    assert_string_equal(c.payload[3], "{\"i\":3}");
}

/* A torn write inside the preallocated zone: the first `keep` bytes of record #4 (optionally
 * with a flipped byte), then zeros. Must be a torn tail at offset 81 whose notice counts
 * `want_bytes` (up to the last non-zero byte), truncated on open. */
static void torn_in_zone(size_t keep, int flip_at, size_t want_bytes, const char *want_why)
{
    write_n(4);
    uint8_t rec[27];
    read_at(81, rec, sizeof(rec));
    if (flip_at >= 0)
        rec[flip_at] ^= 0x5a;
    assert_int_equal(truncate(path, 81), 0);
    zeros_at(81, 65536);
    put_at(81, rec, keep);
    char err[256], notice[256];
    uint64_t n = 0;
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    char want[64];
    snprintf(want, sizeof(want), "torn tail at offset 81 (%zu bytes, record #4", want_bytes);
    if (!strstr(notice, want))
        print_message("# notice: %s\n", notice);
    assert_non_null(strstr(notice, want));
    assert_non_null(strstr(notice, want_why));
    assert_non_null(strstr(notice, "zero bytes follow"));
    assert_int_equal(fsize(), 81 + 65536); /* scan never modifies */
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_non_null(strstr(notice, "truncated to 81 bytes"));
    assert_int_equal(fsize(), 81);
    uint64_t seq;
    assert_int_equal(mnc_journal_append(j, "{\"i\":9}", 7, &seq), 0);
    assert_int_equal(seq, 4);
    assert_int_equal(fsize(), PRE); /* preallocated again */
    assert_int_equal(mnc_journal_close(j), 0);
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 4);
    assert_string_equal(notice, "");
}

static void test_torn_in_zone_header(void **state)
{
    (void)state;
    /* magic, length 7, half the seq, then zeros: the zeros complete a header whose length
     * fits, so the CRC decides; the notice counts up to the seq's last non-zero byte */
    torn_in_zone(12, -1, 9, "crc mismatch");
}

static void test_torn_in_zone_partial(void **state)
{
    (void)state;
    /* complete header, 5 of 7 payload bytes: the length fits (zeros follow), the CRC fails */
    torn_in_zone(25, -1, 25, "crc mismatch");
}

static void test_torn_in_zone_crc(void **state)
{
    (void)state;
    torn_in_zone(27, 24, 27, "crc mismatch"); /* whole record, damaged payload, then zeros */
}

static void test_garbage_in_zone_torn(void **state)
{
    (void)state;
    /* zeros with a stray non-zero byte (a sector of an unacknowledged batch whose start did
     * not reach the disk): nothing valid follows, so it is a torn tail */
    write_n(3);
    zeros_at(81, 4096);
    put_at(81 + 1000, "\x17", 1);
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_non_null(strstr(notice, "torn tail at offset 81 (1001 bytes"));
    assert_non_null(strstr(notice, "bad magic"));
    assert_int_equal(fsize(), 81);
    assert_int_equal(mnc_journal_close(j), 0);
}

static void test_corrupt_middle_prealloc(void **state)
{
    (void)state;
    /* crash image of an open, preallocated journal with a byte flipped in record #3 */
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    for (int i = 0; i < 6; i++)
        assert_int_equal(mnc_journal_append(j, "{\"i\":0}", 7, NULL), 0);
    off_t n = crash_image();
    assert_int_equal(mnc_journal_close(j), 0);
    snprintf(path, sizeof(path), "%s", path2);
    flip(2 * 27 + 22);
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, NULL, notice, sizeof(notice), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "corrupt record #3 at offset 54: crc mismatch"));
    assert_null(mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err)));
    assert_non_null(strstr(err, "corrupt record #3 at offset 54"));
    assert_non_null(strstr(err, "valid record follows at offset 81"));
    assert_int_equal(fsize(), n); /* nothing truncated, zeros included */
    snprintf(path, sizeof(path), "%s/j", dir);
}

static void test_zero_gap_then_valid_refused(void **state)
{
    (void)state;
    /* record #3 zeroed, #4 intact: zeros followed by a valid record are corruption, never a
     * clean end (that would silently drop record #4) */
    write_n(4);
    zeros_at(54, 27);
    zeros_at(108, 4096);
    char err[256], notice[256];
    assert_null(mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err)));
    assert_non_null(strstr(err, "corrupt record #3 at offset 54: bad magic"));
    assert_non_null(strstr(err, "valid record follows at offset 81"));
    assert_int_equal(fsize(), 108 + 4096);
}

static void test_legacy_file(void **state)
{
    (void)state;
    /* a file as older versions and rewrite() write it: records only, no zeros */
    const void *p[3] = {"{\"a\":1}", "{\"a\":2}", "{\"a\":3}"};
    size_t l[3] = {7, 7, 7};
    assert_int_equal(mnc_journal_rewrite(path, 1, p, l, 3), 0);
    assert_int_equal(fsize(), 81);
    char err[256], notice[256];
    uint64_t n = 0;
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_string_equal(notice, "");
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_string_equal(notice, "");
    assert_int_equal(fsize(), 81); /* opening alone changes nothing */
    assert_int_equal(mnc_journal_next_seq(j), 4);
    /* preallocation off: the file grows per batch, exactly as before */
    mnc_journal_set_prealloc(j, 0);
    assert_int_equal(mnc_journal_append(j, "{\"a\":4}", 7, NULL), 0);
    assert_int_equal(fsize(), 108);
    /* on again with a small chunk: next multiple of 4096 beyond the batch */
    mnc_journal_set_prealloc(j, 4096);
    assert_int_equal(mnc_journal_append(j, "{\"a\":5}", 7, NULL), 0);
    assert_int_equal(fsize(), 4096);
    assert_int_equal(mnc_journal_prealloc_rounds(j), 1);
    assert_int_equal(mnc_journal_close(j), 0);
    assert_int_equal(fsize(), 5 * 27);
}

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) one bit at a time: the format's checksum,
 * written independently of the library the journal computes it with. */
static uint32_t ref_crc(uint32_t c, const uint8_t *p, size_t n)
{
    c = ~c;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Lengths around the fast CRC's block sizes (16, 64, 128, 256 bytes) and beyond a page. */
static const size_t crc_lens[] = {1, 7, 15, 16, 17, 31, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4097, 9000};
#define N_CRC_LENS (sizeof(crc_lens) / sizeof(crc_lens[0]))

static void crc_payload(uint8_t *b, size_t n, size_t salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 131u + salt * 7u + (i >> 5));
}

static void test_crc_is_the_formats(void **state)
{
    (void)state;
    static uint8_t pl[N_CRC_LENS][9000];
    const void *p[N_CRC_LENS];
    size_t l[N_CRC_LENS], total = 0;
    for (size_t i = 0; i < N_CRC_LENS; i++) {
        crc_payload(pl[i], crc_lens[i], i);
        p[i] = pl[i];
        l[i] = crc_lens[i];
        total += 20 + crc_lens[i];
    }
    assert_int_equal(mnc_journal_rewrite(path, 1, p, l, N_CRC_LENS), 0);
    assert_int_equal(fsize(), (off_t)total);
    static uint8_t f[N_CRC_LENS * (20 + 9000)];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, f, sizeof(f)), (ssize_t)total);
    close(fd);
    size_t off = 0;
    for (size_t i = 0; i < N_CRC_LENS; i++) {
        assert_int_equal(le32(f + off + 4), crc_lens[i]);
        uint32_t want = ref_crc(ref_crc(0, f + off, 16), f + off + 20, crc_lens[i]);
        assert_int_equal(le32(f + off + 16), want);
        off += 20 + crc_lens[i];
    }
}

/* A file whose CRCs were computed by the reference (as by any earlier mnc): every record
 * reads back; one flipped payload bit in the last record is a torn tail. */
static void test_crc_reference_file_reads(void **state)
{
    (void)state;
    static uint8_t f[N_CRC_LENS * (20 + 9000)];
    size_t off = 0;
    for (size_t i = 0; i < N_CRC_LENS; i++) {
        uint8_t *h = f + off;
        uint32_t n = (uint32_t)crc_lens[i];
        uint64_t seq = i + 1;
        for (int k = 0; k < 4; k++) {
            h[k] = (uint8_t)(0x4A434E4Du >> (8 * k));
            h[4 + k] = (uint8_t)(n >> (8 * k));
        }
        for (int k = 0; k < 8; k++)
            h[8 + k] = (uint8_t)(seq >> (8 * k));
        crc_payload(h + 20, n, i);
        uint32_t c = ref_crc(ref_crc(0, h, 16), h + 20, n);
        for (int k = 0; k < 4; k++)
            h[16 + k] = (uint8_t)(c >> (8 * k));
        off += 20 + n;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f, off), (ssize_t)off);
    close(fd);
    char err[256], notice[256];
    uint64_t n = 0;
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, N_CRC_LENS);
    assert_string_equal(notice, "");
    f[off - 1] ^= 0x10; /* the last record's last payload byte */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f, off), (ssize_t)off);
    close(fd);
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, N_CRC_LENS - 1);
    assert_non_null(strstr(notice, "torn"));
}

static void test_compact_prealloc(void **state)
{
    (void)state;
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    for (int i = 0; i < 10; i++)
        assert_int_equal(mnc_journal_append(j, "{\"i\":0}", 7, NULL), 0);
    assert_int_equal(fsize(), PRE);
    const void *p[2] = {"{\"snap\":1}", "{\"snap\":2}"};
    size_t l[2] = {10, 10};
    assert_int_equal(mnc_journal_compact(j, p, l, 2), 0);
    assert_int_equal(fsize(), 2 * 30); /* the compacted file has no zeros */
    assert_int_equal(mnc_journal_append(j, "{\"after\":1}", 11, NULL), 0);
    assert_int_equal(fsize(), PRE); /* preallocated again on the new file */
    crash_image();
    uint64_t n = 0;
    static collected c;
    memset(&c, 0, sizeof(c));
    assert_int_equal(mnc_journal_scan(path2, collect, &c, &n, notice, sizeof(notice), err, sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_string_equal(notice, "");
    assert_int_equal(c.seq[0], 11);
    assert_string_equal(c.payload[2], "{\"after\":1}");
    assert_int_equal(mnc_journal_close(j), 0);
    assert_int_equal(fsize(), 2 * 30 + 31);
}

static void test_missing_scan(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(mnc_journal_scan(path, NULL, NULL, NULL, NULL, 0, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "No such file"));
}

/* Replay callback for test_page_cache_bounded: record i is 64 KiB of one letter, 'a' + i % 26. */
static int check_big(void *arg, uint64_t seq, const void *p, size_t len)
{
    long *n = arg;
    const unsigned char *b = p;
    if (seq != (uint64_t)*n + 1 || len != 64u << 10 || b[0] != 'a' + *n % 26 || memcmp(b, b + 1, len - 1) != 0)
        return -1;
    (*n)++;
    return 0;
}

/* The journal keeps at most KEEP + STEP bytes of its file cached behind the end
 * (cache_trim.h): after 32 MiB of appends the first 12 MiB are not in the page cache, the
 * newest bytes are, and every record replays intact on the next open. */
static void test_page_cache_bounded(void **state)
{
    (void)state;
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    mnc_journal_set_direct(j, 0); /* the page-cache path (test_direct_no_cache: the other) */
    assert_int_equal(mnc_journal_direct(j), 0);
    static unsigned char rec[64u << 10];
    long n = 0;
    while (mnc_journal_size(j) < (uint64_t)(MNC_CACHE_TRIM_KEEP + 4 * MNC_CACHE_TRIM_STEP)) {
        memset(rec, 'a' + n % 26, sizeof(rec));
        assert_int_equal(mnc_journal_append(j, rec, sizeof(rec), NULL), 0);
        n++;
    }
    off_t end = (off_t)mnc_journal_size(j);
    pc_assert_trimmed("journal", path, end);
    assert_int_equal(mnc_journal_close(j), 0);
    long back = 0;
    j = mnc_journal_open(path, check_big, &back, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(back, n);
    /* replay read the file; open lets go of it again */
    pc_assert_dropped(path, end - MNC_CACHE_TRIM_STEP);
    assert_int_equal(mnc_journal_close(j), 0);
}

/* Can this directory's filesystem open a file O_DIRECT? (tmpfs before Linux 6.6 cannot.) */
static bool dir_takes_direct(void)
{
    char p[160];
    snprintf(p, sizeof(p), "%s/direct-probe", dir);
    int fd = open(p, O_RDWR | O_CREAT | O_DIRECT, 0600);
    if (fd >= 0)
        close(fd);
    unlink(p);
    return fd >= 0;
}

/* Record i of the direct tests: its length varies so that batches end anywhere in a block. */
static size_t dio_rec(char *b, int i)
{
    size_t n = 1 + (size_t)(i * 977) % 5000;
    for (size_t k = 0; k < n; k++)
        b[k] = (char)('A' + (i + (int)k) % 26);
    return n;
}

typedef struct dio_check {
    int n;
    bool bad;
} dio_check;

static int dio_replay(void *arg, uint64_t seq, const void *p, size_t len)
{
    dio_check *c = arg;
    static char want[5001];
    size_t n = dio_rec(want, c->n);
    if (seq != (uint64_t)c->n + 1 || len != n || memcmp(p, want, n) != 0)
        c->bad = true;
    c->n++;
    return 0;
}

/* Where the filesystem takes O_DIRECT (ext4 here), batches go direct by default: records of
 * every length, across block boundaries, through close (which cuts the file to an unaligned
 * end) and reopen (the next batch rewrites that end's block), a torn tail cut by open, and a
 * compaction (a new file) all read back exactly, with CRCs the reference accepts. Where it
 * does not (tmpfs), the handle says so and the same sequence passes through the page cache. */
static void test_direct_roundtrip(void **state)
{
    (void)state;
    bool direct = dir_takes_direct();
    char err[256], notice[256], b[5001];
    int i = 0;
    for (int round = 0; round < 3; round++) {
        mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
        assert_non_null(j);
        assert_int_equal(mnc_journal_direct(j), direct);
        uint64_t d0 = mnc_journal_direct_batches(j);
        /* round 1 first writes 20 batches through the page cache (preallocation off, while
         * the direct descriptor is open): the direct batches after them start from their end */
        if (round == 1)
            mnc_journal_set_prealloc(j, 0);
        for (int k = 0; k < 40; k++, i++) {
            if (round == 1 && k == 20)
                mnc_journal_set_prealloc(j, 4096);
            size_t n = dio_rec(b, i);
            assert_int_equal(mnc_journal_append(j, b, n, NULL), 0);
        }
        assert_int_equal(mnc_journal_direct_batches(j) - d0, direct ? (round == 1 ? 20u : 40u) : 0u);
        assert_int_equal(mnc_journal_close(j), 0);
        dio_check c = {0, false};
        uint64_t nrec = 0;
        assert_int_equal(mnc_journal_scan(path, dio_replay, &c, &nrec, notice, sizeof(notice), err, sizeof(err)), 0);
        assert_string_equal(notice, "");
        assert_false(c.bad);
        assert_int_equal(c.n, i);
    }
    /* a torn last record: open cuts it, and direct batches go on from the cut */
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "MNCJ-torn", 9), 9);
    close(fd);
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_non_null(strstr(notice, "torn"));
    assert_int_equal(mnc_journal_direct(j), direct);
    for (int k = 0; k < 10; k++, i++) {
        size_t n = dio_rec(b, i);
        assert_int_equal(mnc_journal_append(j, b, n, NULL), 0);
    }
    /* compaction: a new file, so a new direct descriptor and tail */
    const void *p[2];
    size_t l[2];
    static char c0[5001], c1[5001];
    l[0] = dio_rec(c0, 0);
    l[1] = dio_rec(c1, 1);
    p[0] = c0;
    p[1] = c1;
    uint64_t next = mnc_journal_next_seq(j);
    assert_int_equal(mnc_journal_compact(j, p, l, 2), 0);
    assert_int_equal(mnc_journal_direct(j), direct);
    for (int k = 2; k < 30; k++) {
        size_t n = dio_rec(b, k);
        assert_int_equal(mnc_journal_append(j, b, n, NULL), 0);
    }
    assert_int_equal(mnc_journal_close(j), 0);
    /* the compacted file numbers from `next`: check payloads and the CRCs of every record */
    int rfd = open(path, O_RDONLY);
    assert_true(rfd >= 0);
    static uint8_t f[30 * (20 + 5001)];
    ssize_t got = read(rfd, f, sizeof(f));
    close(rfd);
    assert_true(got > 0);
    size_t off = 0;
    for (int k = 0; k < 30; k++) {
        size_t n = dio_rec(b, k);
        assert_true(off + 20 + n <= (size_t)got);
        assert_int_equal(le32(f + off + 4), n);
        assert_int_equal(f[off + 8] | (uint64_t)f[off + 9] << 8, (next + (uint64_t)k) & 0xffff);
        assert_memory_equal(f + off + 20, b, n);
        assert_int_equal(le32(f + off + 16), ref_crc(ref_crc(0, f + off, 16), f + off + 20, n));
        off += 20 + n;
    }
    assert_int_equal((size_t)got, off); /* closed: cut to its records */
}

/* Direct batches leave the page cache alone: after 32 MiB of appends almost nothing of the
 * file is cached - and reading it back caches it, so the count can see the cache. */
static void test_direct_no_cache(void **state)
{
    (void)state;
    if (!dir_takes_direct()) {
        printf("# the filesystem of %s takes no O_DIRECT: the page-cache path is test_page_cache_bounded\n", dir);
        return;
    }
    char err[256], notice[256];
    mnc_journal *j = mnc_journal_open(path, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(mnc_journal_direct(j), 1);
    static unsigned char rec[64u << 10];
    long n = 0;
    while (mnc_journal_size(j) < (uint64_t)(32 << 20)) {
        memset(rec, 'a' + n % 26, sizeof(rec));
        assert_int_equal(mnc_journal_append(j, rec, sizeof(rec), NULL), 0);
        n++;
    }
    off_t end = (off_t)mnc_journal_size(j);
    printf("# direct: journal of %lld bytes\n", (long long)end);
    pc_assert_dropped(path, end);
    assert_int_equal(mnc_journal_close(j), 0);
    long back = 0;
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    for (off_t o = 0; o < end; o += (off_t)sizeof(rec))
        assert_true(pread(fd, rec, sizeof(rec), o) > 0);
    close(fd);
    long cached = pc_cached_pages(path, 0, end);
    printf("# after reading it: %ld pages cached\n", cached);
    assert_true(cached > end / sysconf(_SC_PAGESIZE) / 2);
    j = mnc_journal_open(path, check_big, &back, notice, sizeof(notice), err, sizeof(err));
    assert_non_null(j);
    assert_int_equal(back, n);
    assert_int_equal(mnc_journal_close(j), 0);
}

/* A full disk, both paths: on a 512 KiB tmpfs (it takes O_DIRECT since Linux 6.6) the first
 * batch's preallocation zeros (up to 1 MiB) do not fit, which is no error - the records go
 * alone - and appends go on until the records themselves do not fit: that append fails with
 * ENOSPC, and exactly the acknowledged records replay. Needs root (mount). */
static void test_direct_disk_full(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        printf("# SKIP needs root to mount a small tmpfs\n");
        skip();
    }
    for (int direct = 1; direct >= 0; direct--) {
        char mnt[64], jp[96], err[256], notice[256];
        snprintf(mnt, sizeof(mnt), "/tmp/mnc-journal-full-XXXXXX");
        assert_non_null(mkdtemp(mnt));
        int mrc = mount("tmpfs", mnt, "tmpfs", 0, "size=512k,mode=0700");
        if (mrc != 0)
            rmdir(mnt);
        assert_int_equal(mrc, 0);
        snprintf(jp, sizeof(jp), "%s/j", mnt);
        mnc_journal *j = mnc_journal_open(jp, NULL, NULL, notice, sizeof(notice), err, sizeof(err));
        assert_non_null(j);
        mnc_journal_set_direct(j, direct);
        assert_int_equal(mnc_journal_direct(j), direct);
        static char rec[4000];
        int acked = 0, rc = 0, e = 0;
        while (acked < 1000) {
            memset(rec, 'a' + acked % 26, sizeof(rec));
            rc = mnc_journal_append(j, rec, sizeof(rec), NULL);
            e = errno;
            if (rc != 0)
                break;
            acked++;
        }
        printf("# %s: %d records acknowledged on 512 KiB, then %s\n", direct ? "direct" : "page cache", acked,
               rc ? strerror(e) : "no error");
        assert_int_equal(rc, -1);
        assert_int_equal(e, ENOSPC);
        assert_true(acked > 100); /* 512 KiB / 4020 B = 130: the zeros did not stop it early */
        if (direct)
            assert_true(mnc_journal_direct_batches(j) >= (uint64_t)acked);
        assert_int_equal(mnc_journal_close(j), -1); /* poisoned */
        uint64_t n = 0;
        assert_int_equal(mnc_journal_scan(jp, NULL, NULL, &n, notice, sizeof(notice), err, sizeof(err)), 0);
        assert_int_equal(n, (uint64_t)acked);
        unlink(jp);
        assert_int_equal(umount(mnt), 0);
        rmdir(mnt);
    }
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
        cmocka_unit_test_setup_teardown(test_group_commit_dropouts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prealloc_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zeros_after_valid_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_in_zone_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_in_zone_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_in_zone_crc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_in_zone_torn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_middle_prealloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_gap_then_valid_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_legacy_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compact_prealloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crc_is_the_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crc_reference_file_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_bounded, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_direct_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_direct_no_cache, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_direct_disk_full, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
