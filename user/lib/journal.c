// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* journal.c - durable append-only record file with leader/follower group commit.
 * Format, recovery rules and contracts: see mnc/journal.h. */
#include "mnc/journal.h"
#include "cache_trim.h"
#include "mnc_bench.h"
#include "mnc_util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <isa-l/crc.h>
#include <unistd.h>

struct mnc_journal {
    int fd;
    char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint8_t *buf; /* records queued for the next batch */
    size_t len, cap;
    uint8_t *spare; /* buffer the current leader writes from (swapped with buf) */
    size_t spare_cap;
    uint64_t next_seq;
    uint64_t cur_batch;  /* id of the batch accumulating in buf */
    uint64_t done_batch; /* highest batch id known durable */
    bool flushing;       /* a leader is writing */
    int poisoned;        /* errno of the first I/O failure, 0 if none */
    uint64_t syncs;
    off_t end;        /* logical end: bytes covered by durable batches */
    off_t alloc_end;  /* file size; [end, alloc_end) holds zero bytes (preallocated) */
    size_t prealloc;  /* chunk for zero preallocation, 0 = grow the file per batch */
    uint64_t extends; /* preallocation rounds (statistic) */
    int no_gc;
    /* Gathering (see gather()): how many threads are inside append() now, the most seen since
     * the last batch began, and the records queued in buf. */
    int appenders, peak;
    size_t queued;
    bool gathering;        /* a leader is waiting for the other appenders' records */
    size_t gather_target;  /* ... until `queued` reaches this */
    pthread_cond_t arrive; /* signalled when it does (CLOCK_MONOTONIC) */
    int64_t last_sync_us;  /* the last batch's write + fdatasync */
    mnc_cache_trim trim;   /* the file's page cache behind end (cache_trim.h); leader-owned */
    /* Direct I/O (see flush_batch): a second descriptor of the same file opened O_DIRECT, or
     * -1 (the filesystem refuses it, it failed once, or mnc_journal_set_direct(j, 0)). tail
     * holds the file's bytes from the DIO_BLOCK boundary below `end` up to `end` (a direct
     * write starts at that boundary and rewrites them unchanged); stage is the aligned buffer a
     * direct write is assembled in. All leader-owned. */
    int dfd;
    bool direct_off; /* mnc_journal_set_direct(j, 0) */
    uint8_t *tail;   /* DIO_BLOCK bytes, aligned */
    uint8_t *stage;
    size_t stage_cap;
    uint64_t direct_batches; /* statistic */
};

/* Alignment and granularity of direct writes: the page size, which covers every logical block
 * size a Linux filesystem uses for O_DIRECT (512 or 4096). */
#define DIO_BLOCK 4096u

/* ---- small helpers ------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The record's CRC-32 (IEEE 802.3, reflected: zlib's crc32, the format's checksum since the
 * first journal). ISA-L's crc32_gzip_refl computes the same value (same polynomial, same
 * initial and final inversion, chainable like zlib's) with carry-less multiplication: 6-10x
 * zlib's speed on records of 0.1-4 KB on this project's VMs, where zlib's crc32 was ~3.7% of
 * mncd's CPU (docs/mncd.md). test_journal checks it against a bitwise reference, and
 * test_mncd_durability writes records with Python's zlib.crc32 that mncd must accept. */
static uint32_t rec_crc(const uint8_t *hdr, const uint8_t *payload, uint32_t len)
{
    uint32_t c = crc32_gzip_refl(0, hdr, 16);
    return crc32_gzip_refl(c, payload, len);
}

static void encode(uint8_t *out, uint64_t seq, const void *payload, uint32_t len)
{
    put32(out, MNC_JOURNAL_MAGIC);
    put32(out + 4, len);
    put64(out + 8, seq);
    memcpy(out + MNC_JOURNAL_HDR, payload, len);
    put32(out + 16, rec_crc(out, out + MNC_JOURNAL_HDR, len));
}

static void msg(char *b, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msg(char *b, size_t n, const char *fmt, ...)
{
    if (!b || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, n, fmt, ap);
    va_end(ap);
}

static int write_all(int fd, const uint8_t *p, size_t n, off_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* Writes zero bytes over [from, to). Returns the offset reached: `to` on success, less on
 * error (errno set). Real zero bytes, not fallocate(): on ext4 a fallocated range is an
 * "unwritten" extent and the first write into each block converts it, which is again a
 * metadata change that fdatasync must journal - the very cost preallocation avoids. */
static off_t write_zeros(int fd, off_t from, off_t to)
{
    static const size_t ZB = 64u << 10;
    uint8_t *z = calloc(1, ZB);
    if (!z) {
        errno = ENOMEM;
        return from;
    }
    while (from < to) {
        size_t n = (size_t)(to - from) < ZB ? (size_t)(to - from) : ZB;
        ssize_t w = pwrite(fd, z, n, from);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            break;
        }
        from += w;
    }
    int e = errno;
    free(z);
    errno = e;
    return from;
}

/* ---- direct I/O ------------------------------------------------------------------------
 * Why: a batch written through the page cache is copied into freshly allocated pages, charged
 * to the memory cgroup, written back by fdatasync and dropped again by cache_trim - for bytes
 * nobody reads until the next start. Written O_DIRECT from an aligned buffer it goes to the
 * device in one request and fdatasync only flushes the device's cache: 3.5-4x less CPU per
 * 1.4 MB batch on this project's VMs (docs/mncd.md, "The journal writes O_DIRECT").
 *
 * A direct write covers whole DIO_BLOCKs: it starts at the block boundary below the logical
 * end, rewriting the durable bytes before it unchanged (j->tail), and ends with zeros up to the
 * next boundary - zeros past the logical end are the clean end in this format, so a torn
 * direct write looks exactly like a torn buffered one: identical old bytes, then part of the
 * new batch or zeros. */

static void *dio_alloc(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, DIO_BLOCK, n) == 0 ? p : NULL;
}

static void direct_close(mnc_journal *j)
{
    if (j->dfd >= 0)
        close(j->dfd);
    j->dfd = -1;
}

/* Opens the O_DIRECT descriptor of j->fd's file (the same inode: through /proc/self/fd, so a
 * rename over the path cannot swap it) and loads the tail bytes below j->end. Leaves j->dfd
 * -1, the page-cache path, when any step fails: the filesystem has no O_DIRECT (tmpfs before
 * 6.6, some FUSE), no /proc, or the read fails. Not an error. */
static void direct_setup(mnc_journal *j)
{
    direct_close(j);
    if (j->direct_off)
        return;
    if (!j->tail && !(j->tail = dio_alloc(DIO_BLOCK)))
        return;
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", j->fd);
    int dfd = open(p, O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (dfd < 0)
        return;
    size_t tl = (size_t)(j->end % DIO_BLOCK);
    if (tl > 0 && pread(j->fd, j->tail, tl, j->end - (off_t)tl) != (ssize_t)tl) {
        close(dfd);
        return;
    }
    j->dfd = dfd;
}

/* After a batch of blen bytes at p went to the file at off by any path: j->tail becomes the
 * file's bytes from the block boundary below the new end up to it. A batch that ends in the
 * old tail's block extends the tail; else the new tail is the batch's last bytes. */
static void tail_after(mnc_journal *j, const uint8_t *p, size_t blen, off_t off)
{
    off_t need = off + (off_t)blen, na = need - need % DIO_BLOCK;
    if (na >= off)
        memcpy(j->tail, p + (na - off), (size_t)(need - na));
    else /* na is the boundary below off too: the old tail [na, off) stays in front */
        memcpy(j->tail + (off - na), p, blen);
}

/* One direct pwrite of n bytes (n and off multiples of DIO_BLOCK, p aligned). Returns the
 * bytes written - fewer than n when the filesystem ran out of space part way (the rest cannot
 * be continued: it would be unaligned) - or -1 with errno. */
static ssize_t dio_write(int fd, const uint8_t *p, size_t n, off_t off)
{
    ssize_t w;
    do
        w = pwrite(fd, p, n, off);
    while (w < 0 && errno == EINTR);
    return w;
}

/* Writes the batch (blen bytes at p, to go at file offset off) direct, together with the zeros
 * of a preallocation round up to `target` (0: none) in the same request - one request rather
 * than one per chunk of zeros: on a VM each request is a notification of the host (a VM exit)
 * and a sleep until it completes. Returns 0 and sets *reached (the file's new allocated end),
 * or -1 with errno; *fallback then says nothing was written and the page-cache path may take
 * the batch (the filesystem refused the direct write itself, or no memory for the buffer). */
static int dio_batch(mnc_journal *j, const uint8_t *p, size_t blen, off_t off, off_t target, off_t *reached,
                     bool *fallback)
{
    *fallback = false;
    off_t a = off - (off % DIO_BLOCK);
    size_t tl = (size_t)(off - a);
    size_t n = tl + blen, wn = (n + DIO_BLOCK - 1) / DIO_BLOCK * DIO_BLOCK;
    size_t zn = target > a + (off_t)wn ? (size_t)(target - a) : wn; /* target is a block multiple */
    if (zn > j->stage_cap) {
        size_t nc = j->stage_cap ? j->stage_cap : (size_t)64 << 10;
        while (nc < zn)
            nc *= 2;
        uint8_t *ns = dio_alloc(nc);
        if (!ns) {
            *fallback = true;
            errno = ENOMEM;
            return -1;
        }
        free(j->stage);
        j->stage = ns;
        j->stage_cap = nc;
    }
    memcpy(j->stage, j->tail, tl);
    memcpy(j->stage + tl, p, blen);
    memset(j->stage + n, 0, zn - n);
    ssize_t w = dio_write(j->dfd, j->stage, zn, a);
    if (zn > wn && (w < 0 ? errno == ENOSPC || errno == EDQUOT || errno == EFBIG : (size_t)w < wn)) {
        /* As with the page cache, the zeros are for speed only, and a full disk is no reason
         * to fail the records: write them alone. (A failed or short direct write leaves what
         * the format reads as before: old bytes, then new ones or zeros.) */
        zn = wn;
        w = dio_write(j->dfd, j->stage, zn, a);
    }
    if (w < 0) {
        /* EINVAL: this filesystem (or its alignment rules) does not take direct writes after
         * all, and nothing was written */
        *fallback = errno == EINVAL;
        return -1;
    }
    if ((size_t)w < wn) { /* the records did not fit */
        errno = ENOSPC;
        return -1;
    }
    /* the zeros may have fallen short: the file is allocated as far as they reached */
    *reached = a + (off_t)((size_t)w / DIO_BLOCK * DIO_BLOCK);
    tail_after(j, p, blen, off);
    return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    /* memcmp against a shifted view of the same buffer: zero iff every byte equals the first */
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* fsync the directory holding `path`, so a created or renamed entry survives a crash. */
static int fsync_dir(const char *path)
{
    char *dup = strdup(path);
    if (!dup)
        return -1;
    int dfd = open(dirname(dup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dup);
    if (dfd < 0)
        return -1;
    int rc = fsync(dfd);
    int e = errno;
    close(dfd);
    errno = e;
    return rc;
}

/* ---- parsing / recovery ------------------------------------------------------------- */

/* Is there a complete valid record starting at `o` (magic, length within the file, CRC)? */
static bool valid_at(const uint8_t *b, size_t size, size_t o)
{
    if (size - o < MNC_JOURNAL_HDR)
        return false;
    if (get32(b + o) != MNC_JOURNAL_MAGIC)
        return false;
    uint32_t len = get32(b + o + 4);
    if (len == 0 || len > MNC_JOURNAL_MAX_PAYLOAD || len > size - o - MNC_JOURNAL_HDR)
        return false;
    return rec_crc(b + o, b + o + MNC_JOURNAL_HDR, len) == get32(b + o + 16);
}

/* First offset > o with a valid record, or SIZE_MAX. */
static size_t resync(const uint8_t *b, size_t size, size_t o)
{
    static const uint8_t m[4] = {0x4D, 0x4E, 0x43, 0x4A}; /* MAGIC little-endian */
    for (size_t p = o + 1; p + MNC_JOURNAL_HDR <= size;) {
        const uint8_t *hit = memmem(b + p, size - p, m, 4);
        if (!hit)
            break;
        p = (size_t)(hit - b);
        if (valid_at(b, size, p))
            return p;
        p++;
    }
    return SIZE_MAX;
}

typedef struct parse_out {
    size_t valid_end; /* logical end: bytes of valid records */
    bool torn;        /* a torn tail starts at valid_end (else only zero bytes follow it) */
    uint64_t n;
    uint64_t next_seq; /* 1 for an empty file */
} parse_out;

static int parse(const char *path, const uint8_t *b, size_t size, mnc_journal_replay_fn cb, void *arg, parse_out *po,
                 char *notice, size_t nn, char *err, size_t en)
{
    size_t o = 0;
    uint64_t expect = 0; /* 0 = the first record may carry any seq >= 1 */
    po->n = 0;
    po->next_seq = 1;
    while (o < size) {
        const char *why = NULL;
        char whybuf[128];
        size_t rem = size - o;
        uint64_t seq = expect;
        if (rem < MNC_JOURNAL_HDR) {
            why = "incomplete header";
        } else if (get32(b + o) != MNC_JOURNAL_MAGIC) {
            why = "bad magic";
        } else {
            uint32_t len = get32(b + o + 4);
            uint64_t hseq = get64(b + o + 8);
            if (len == 0 || len > MNC_JOURNAL_MAX_PAYLOAD) {
                why = "bad length";
            } else if (len > rem - MNC_JOURNAL_HDR) {
                why = "record extends past end of file";
            } else {
                uint32_t stored = get32(b + o + 16);
                uint32_t calc = rec_crc(b + o, b + o + MNC_JOURNAL_HDR, len);
                if (stored != calc) {
                    snprintf(whybuf, sizeof(whybuf), "crc mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                             stored, calc);
                    why = whybuf;
                } else if (hseq == 0 || (expect && hseq != expect)) {
                    /* A CRC-valid record with the wrong number: a record was removed or files
                     * were spliced. Never a torn write, so never truncated. */
                    msg(err, en,
                        "%s: corrupt record #%" PRIu64 " at offset %zu: sequence number "
                        "%" PRIu64 " where %" PRIu64 " was expected",
                        path, expect ? expect : 1, o, hseq, expect ? expect : 1);
                    return -1;
                } else {
                    seq = hseq;
                    if (cb && cb(arg, seq, b + o + MNC_JOURNAL_HDR, len) != 0) {
                        msg(err, en, "%s: replay callback refused record #%" PRIu64 " at offset %zu", path, seq, o);
                        return -1;
                    }
                    po->n++;
                    expect = seq + 1;
                    po->next_seq = expect;
                    o += MNC_JOURNAL_HDR + len;
                    continue;
                }
            }
        }
        /* Record at o is bad. Only zero bytes up to EOF: the preallocated region (or an
         * extension whose data never reached the disk) - the clean logical end. */
        if (all_zero(b + o, rem))
            break;
        /* Otherwise it is a torn tail only if nothing valid follows it. */
        size_t next = resync(b, size, o);
        uint64_t name = expect ? expect : (rem >= 16 ? get64(b + o + 8) : 1);
        if (next != SIZE_MAX) {
            msg(err, en,
                "%s: corrupt record #%" PRIu64 " at offset %zu: %s; a valid record "
                "follows at offset %zu, so this is not a torn tail - refusing to continue",
                path, name, o, why, next);
            return -1;
        }
        /* Everything from o to EOF is an incomplete append (partial record, or a record or
         * batch whose bytes did not all reach the disk). Only unacknowledged data can be here:
         * append() acknowledges after fdatasync of the whole batch. Inside a preallocated
         * region the torn bytes are followed by zeros; count only up to the last non-zero. */
        size_t last = size;
        while (last > o && b[last - 1] == 0)
            last--;
        msg(notice, nn, "%s: torn tail at offset %zu (%zu bytes, record #%" PRIu64 ": %s%s)", path, o, last - o, name,
            why, last < size ? "; zero bytes follow" : "");
        po->valid_end = o;
        po->torn = true;
        return 0;
    }
    po->valid_end = o;
    po->torn = false;
    if (notice && nn)
        notice[0] = '\0';
    return 0;
}

/* Reads [0, size) into a heap buffer; a file that shrinks meanwhile ends where the read
 * stopped. Returns the buffer and sets *got, or NULL with errno. */
static uint8_t *read_copy(int fd, size_t size, size_t *got)
{
    uint8_t *b = malloc(size);
    if (!b)
        return NULL;
    size_t n = 0;
    while (n < size) {
        ssize_t r = pread(fd, b + n, size - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *got = n;
    return b;
}

/* Parses the file. `copy`: read it into memory instead of mapping it - for scan(), which
 * holds no lock: the lock holder may truncate the file meanwhile (close() gives back the
 * preallocated zeros, open() cuts a torn tail), and touching a mapped page past the new EOF
 * would kill the reader with SIGBUS. open() holds the lock, so nobody else truncates. */
static int map_and_parse(int fd, const char *path, bool copy, mnc_journal_replay_fn cb, void *arg, parse_out *po,
                         size_t *size_out, char *notice, size_t nn, char *err, size_t en)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        msg(err, en, "%s: fstat: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        msg(err, en, "%s: not a regular file", path);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    *size_out = size;
    if (size == 0) {
        po->valid_end = 0;
        po->torn = false;
        po->n = 0;
        po->next_seq = 1;
        if (notice && nn)
            notice[0] = '\0';
        return 0;
    }
    if (copy) {
        size_t got = 0;
        uint8_t *b = read_copy(fd, size, &got);
        if (!b) {
            msg(err, en, "%s: read: %s", path, strerror(errno));
            return -1;
        }
        *size_out = got;
        int rc = parse(path, b, got, cb, arg, po, notice, nn, err, en);
        free(b);
        return rc;
    }
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        msg(err, en, "%s: mmap: %s", path, strerror(errno));
        return -1;
    }
    int rc = parse(path, m, size, cb, arg, po, notice, nn, err, en);
    munmap(m, size);
    return rc;
}

int mnc_journal_scan(const char *path, mnc_journal_replay_fn cb, void *arg, uint64_t *n_records, char *notice,
                     size_t notice_len, char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        msg(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    parse_out po;
    size_t size;
    int rc = map_and_parse(fd, path, true, cb, arg, &po, &size, notice, notice_len, err, err_len);
    close(fd);
    if (rc == 0 && n_records)
        *n_records = po.n;
    return rc;
}

mnc_journal *mnc_journal_open(const char *path, mnc_journal_replay_fn cb, void *arg, char *notice, size_t notice_len,
                              char *err, size_t err_len)
{
    if (notice && notice_len)
        notice[0] = '\0';
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        msg(err, err_len, "%s: open: %s", path, strerror(errno));
        return NULL;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        msg(err, err_len, "%s: %s", path,
            errno == EWOULDBLOCK ? "journal is in use by another process" : strerror(errno));
        close(fd);
        return NULL;
    }
    parse_out po;
    size_t size;
    if (map_and_parse(fd, path, false, cb, arg, &po, &size, notice, notice_len, err, err_len) != 0)
        goto fail;
    if (po.torn) {
        /* ftruncate rather than zeroing in place: it is one metadata operation, crash-safe
         * either way (a crash before it is durable leaves the same torn tail, which the next
         * open recovers again), and the next append re-preallocates with fresh zeros. */
        if (ftruncate(fd, (off_t)po.valid_end) != 0 || fsync(fd) != 0) {
            msg(err, err_len, "%s: truncating torn tail: %s", path, strerror(errno));
            goto fail;
        }
        if (notice && notice_len) {
            size_t l = strlen(notice);
            snprintf(notice + l, notice_len - l, "; truncated to %zu bytes", po.valid_end);
        }
    }
    /* The file may have just been created: make its directory entry durable too, otherwise an
     * acknowledged record could vanish with the entry. */
    if (fsync_dir(path) != 0) {
        msg(err, err_len, "%s: fsync directory: %s", path, strerror(errno));
        goto fail;
    }
    mnc_journal *j = calloc(1, sizeof(*j));
    if (!j || !(j->path = strdup(path))) {
        free(j);
        msg(err, err_len, "%s: out of memory", path);
        goto fail;
    }
    j->fd = fd;
    j->next_seq = po.next_seq;
    j->end = (off_t)po.valid_end;
    /* Without a torn tail, [valid_end, size) is all zero: keep it as preallocated space. */
    j->alloc_end = po.torn ? (off_t)po.valid_end : (off_t)size;
    j->prealloc = MNC_JOURNAL_PREALLOC_DEFAULT;
    /* replay has read the whole file; none of it is read again while it is open */
    (void)mnc_cache_trim_reset(fd, &j->trim, j->end);
    j->dfd = -1;
    direct_setup(j);
    j->cur_batch = 1;
    j->done_batch = 0;
    /* the leader's gather waits on `arrive` with an absolute CLOCK_MONOTONIC deadline */
    pthread_condattr_t ca;
    int ca_rc = pthread_condattr_init(&ca), mu_rc = -1, cv_rc = -1, ar_rc = -1;
    if (ca_rc == 0 && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0) {
        mu_rc = pthread_mutex_init(&j->mu, NULL);
        cv_rc = pthread_cond_init(&j->cv, NULL);
        ar_rc = pthread_cond_init(&j->arrive, &ca);
    }
    if (ca_rc == 0)
        pthread_condattr_destroy(&ca);
    if (mu_rc != 0 || cv_rc != 0 || ar_rc != 0) {
        if (mu_rc == 0)
            pthread_mutex_destroy(&j->mu);
        if (cv_rc == 0)
            pthread_cond_destroy(&j->cv);
        if (ar_rc == 0)
            pthread_cond_destroy(&j->arrive);
        direct_close(j);
        free(j->tail);
        free(j->path);
        free(j);
        msg(err, err_len, "%s: pthread init failed", path);
        goto fail;
    }
    return j;
fail:
    close(fd);
    return NULL;
}

/* ---- append with group commit ------------------------------------------------------- */

static int grow(uint8_t **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 4096;
    while (nc < need)
        nc *= 2;
    uint8_t *n = realloc(*b, nc);
    if (!n)
        return -1;
    *b = n;
    *cap = nc;
    return 0;
}

/* Leader step, called with j->mu held and !j->flushing and j->len > 0. Writes the queued
 * batch; drops the lock during I/O unless no_gc (the baseline holds it, which serialises).
 *
 * Preallocation: a batch that fits below alloc_end overwrites zero bytes that are already
 * allocated and counted in i_size, so its fdatasync flushes data only (no journal commit of
 * i_size/extents on ext4 - measured ~1.4x faster per sync on this host, see bench_ledger).
 * A batch that would grow the file also writes zeros up to the next chunk boundary beyond it,
 * so the one metadata commit that growing costs anyway covers the next chunk as well. The
 * leader owns end/alloc_end while `flushing` (compact and close wait for it). */
static void flush_batch(mnc_journal *j, bool drop_lock)
{
    j->flushing = true;
    uint8_t *tb = j->spare;
    size_t tcap = j->spare_cap;
    j->spare = j->buf;
    j->spare_cap = j->cap;
    j->buf = tb;
    j->cap = tcap;
    size_t blen = j->len;
    j->len = 0;
    j->queued = 0;
    j->peak = j->appenders; /* who is in append() now: the next batch's expected size */
    uint64_t id = j->cur_batch++;
    off_t off = j->end;
    off_t need = off + (off_t)blen;
    off_t alloc = j->alloc_end;
    off_t chunk = (off_t)j->prealloc;
    if (drop_lock)
        pthread_mutex_unlock(&j->mu);
    int64_t t0 = mnc_mono_us();
    int rc = 0;
    off_t new_alloc = need > alloc ? need : alloc;
    bool extended = false, written = false;
    /* Direct only with preallocation on (with it off every batch grows the file by exactly
     * its records: the legacy layout stays exact) and chunks of whole blocks. */
    if (j->dfd >= 0 && chunk > 0 && chunk % DIO_BLOCK == 0) {
        off_t target = need > alloc ? (need / chunk + 1) * chunk : 0, reached = need;
        bool fallback;
        rc = dio_batch(j, j->spare, blen, off, target, &reached, &fallback);
        if (rc == 0) {
            written = true;
            extended = target > 0 && reached > need;
            if (reached > new_alloc)
                new_alloc = reached;
            j->direct_batches++;
        } else if (fallback) {
            direct_close(j); /* the page cache from now on; nothing of this batch was written */
            rc = 0;
        } else {
            written = true; /* an I/O error: the batch fails below */
        }
    }
    if (!written) {
        rc = write_all(j->fd, j->spare, blen, off);
        if (rc == 0 && chunk > 0 && need > alloc) {
            /* A failure here (e.g. ENOSPC) is not an error for this batch: the zeros are not
             * needed for correctness, only for speed. Keep whatever part was written - zero
             * bytes past the logical end are a clean end - and let fdatasync decide the batch's
             * fate. */
            off_t target = (need / chunk + 1) * chunk;
            off_t reached = write_zeros(j->fd, need, target);
            extended = reached > need;
            new_alloc = reached;
        }
        /* a later batch may go direct (preallocation back on): it starts with these bytes */
        if (rc == 0 && j->dfd >= 0)
            tail_after(j, j->spare, blen, off);
    }
    if (rc == 0)
        rc = fdatasync(j->fd);
    int e = errno;
    int64_t took = mnc_mono_us() - t0;
    /* The synced bytes are clean: let go of the pages more than KEEP behind the end (replay
     * reads the file from disk anyway). Advisory; a failure stops trimming, nothing else. */
    if (rc == 0)
        (void)mnc_cache_trim_written(j->fd, &j->trim, need);
    if (drop_lock)
        pthread_mutex_lock(&j->mu);
    j->last_sync_us = took;
    if (rc == 0) {
        j->end = need;
        j->alloc_end = new_alloc;
        j->extends += extended;
        j->done_batch = id;
        j->syncs++;
    } else if (!j->poisoned) {
        j->poisoned = e ? e : EIO;
    }
    j->flushing = false;
    pthread_cond_broadcast(&j->cv);
}

/* Queues one record for the next batch; lock held. 0, or -1 with errno. */
static int enqueue(mnc_journal *j, const void *payload, size_t len, uint64_t *seq, uint64_t *batch)
{
    if (!payload || len == 0 || len > MNC_JOURNAL_MAX_PAYLOAD) {
        errno = EINVAL;
        return -1;
    }
    if (j->poisoned) {
        errno = EIO;
        return -1;
    }
    if (grow(&j->buf, &j->cap, j->len + MNC_JOURNAL_HDR + len) != 0) {
        errno = ENOMEM;
        return -1;
    }
    *seq = j->next_seq++;
    encode(j->buf + j->len, *seq, payload, (uint32_t)len);
    j->len += MNC_JOURNAL_HDR + len;
    j->queued++;
    *batch = j->cur_batch;
    if (j->gathering && j->queued >= j->gather_target)
        pthread_cond_signal(&j->arrive);
    return 0;
}

/* Before a leader writes a batch for concurrent appenders, it waits a little for the ones that
 * are on their way. Why: in a closed loop (each thread appends again as soon as its record is
 * durable) the threads a batch released come back one by one, and the first of them would
 * otherwise lead at once with its own record and one or two more; the rest then queue behind
 * that sync, and batches alternate between small and medium (~4 records per fdatasync with 8
 * threads in bench_ledger). The same idea as PostgreSQL's commit_delay/commit_siblings: the
 * leader waits until as many records are queued as there were threads in append() when the
 * last batch began (`peak`; a lone appender, mncd's flush and queue() never wait), and at most
 * half the last write + fdatasync, capped at 1 ms, so a thread that stopped appending costs at
 * most one such wait. Called with the lock held and nothing in flight; drops the lock while it
 * waits. Returns true if it waited (the caller must look at the state again). */
static bool gather(mnc_journal *j)
{
    if (j->no_gc || j->peak <= 1 || j->queued >= (size_t)j->peak || j->last_sync_us <= 1)
        return false;
    int64_t d = (j->last_sync_us / 2) * 1000; /* ns */
    if (d > 1000000)
        d = 1000000;
    struct timespec until;
    if (clock_gettime(CLOCK_MONOTONIC, &until) != 0)
        return false;
    until.tv_nsec += (long)d;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    j->gathering = true;
    j->gather_target = (size_t)j->peak;
    while (j->queued < j->gather_target && !j->poisoned)
        if (pthread_cond_timedwait(&j->arrive, &j->mu, &until) != 0)
            break; /* ETIMEDOUT; any other error must not turn this into a spin */
    j->gathering = false;
    return true;
}

/* Waits until batch `mine` is durable, leading a flush when nobody is; lock held. may_gather:
 * the caller is an appender, and as a leader may first gather() the others. 0, or -1 with
 * errno (the handle is poisoned). */
static int wait_durable(mnc_journal *j, uint64_t mine, bool may_gather)
{
    while (j->done_batch < mine && !j->poisoned) {
        if (j->flushing || j->gathering)
            pthread_cond_wait(&j->cv, &j->mu);
        else if (j->len > 0) {
            /* once per turn: after waiting, the state is looked at again (another thread,
             * compact() say, may have written the batch meanwhile) */
            if (may_gather && gather(j)) {
                may_gather = false;
                continue;
            }
            flush_batch(j, !j->no_gc);
        } else
            break; /* nothing queued, nothing in flight: cannot happen while mine is pending */
    }
    if (j->done_batch >= mine)
        return 0;
    errno = j->poisoned ? j->poisoned : EIO;
    return -1;
}

int mnc_journal_append(mnc_journal *j, const void *payload, size_t len, uint64_t *seq_out)
{
    if (!j) {
        errno = EINVAL;
        return -1;
    }
    uint64_t seq, mine;
    pthread_mutex_lock(&j->mu);
    if (++j->appenders > j->peak)
        j->peak = j->appenders;
    int rc = enqueue(j, payload, len, &seq, &mine);
    if (rc == 0)
        rc = wait_durable(j, mine, true);
    int e = errno;
    j->appenders--;
    pthread_mutex_unlock(&j->mu);
    errno = e;
    if (rc == 0 && seq_out)
        *seq_out = seq;
    return rc;
}

int mnc_journal_queue(mnc_journal *j, const void *payload, size_t len, uint64_t *seq_out)
{
    if (!j) {
        errno = EINVAL;
        return -1;
    }
    uint64_t seq, mine;
    pthread_mutex_lock(&j->mu);
    int rc = enqueue(j, payload, len, &seq, &mine);
    int e = errno;
    pthread_mutex_unlock(&j->mu);
    errno = e;
    if (rc == 0 && seq_out)
        *seq_out = seq;
    return rc;
}

int mnc_journal_flush(mnc_journal *j)
{
    if (!j) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&j->mu);
    /* everything queued so far: the accumulating batch if it has records, else the one a
     * leader is writing, else nothing is pending */
    uint64_t mine = j->len > 0 ? j->cur_batch : j->flushing ? j->cur_batch - 1 : j->done_batch;
    int rc = j->poisoned ? (errno = j->poisoned, -1) : wait_durable(j, mine, false);
    int e = errno;
    pthread_mutex_unlock(&j->mu);
    errno = e;
    return rc;
}

/* One uint64_t field of j, read under j's lock (the getters below). */
static uint64_t read_locked(mnc_journal *j, const uint64_t *field)
{
    pthread_mutex_lock(&j->mu);
    uint64_t v = *field;
    pthread_mutex_unlock(&j->mu);
    return v;
}

uint64_t mnc_journal_next_seq(mnc_journal *j) { return read_locked(j, &j->next_seq); }

uint64_t mnc_journal_syncs(mnc_journal *j) { return read_locked(j, &j->syncs); }

void mnc_journal_set_prealloc(mnc_journal *j, size_t chunk)
{
    pthread_mutex_lock(&j->mu);
    j->prealloc = chunk;
    pthread_mutex_unlock(&j->mu);
}

void mnc_journal_set_direct(mnc_journal *j, int on)
{
    pthread_mutex_lock(&j->mu);
    while (j->flushing || j->gathering) /* dfd, tail and stage are the leader's */
        pthread_cond_wait(&j->cv, &j->mu);
    j->direct_off = !on;
    direct_setup(j); /* closes it when off */
    pthread_mutex_unlock(&j->mu);
}

int mnc_journal_direct(mnc_journal *j)
{
    pthread_mutex_lock(&j->mu);
    int d = j->dfd >= 0;
    pthread_mutex_unlock(&j->mu);
    return d;
}

uint64_t mnc_journal_direct_batches(mnc_journal *j) { return read_locked(j, &j->direct_batches); }

uint64_t mnc_journal_prealloc_rounds(mnc_journal *j) { return read_locked(j, &j->extends); }

uint64_t mnc_journal_size(mnc_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t s = (uint64_t)j->end;
    pthread_mutex_unlock(&j->mu);
    return s;
}

void mnc_journal_set_no_group_commit(mnc_journal *j, int on)
{
    pthread_mutex_lock(&j->mu);
    j->no_gc = on;
    pthread_mutex_unlock(&j->mu);
}

/* ---- rewrite / compaction ----------------------------------------------------------- */

/* Writes PATH.tmp with the records and fsyncs it. Returns the open fd (caller renames), or -1. */
static int write_tmp(const char *tmp, uint64_t first_seq, const void *const *payloads, const size_t *lens, size_t n,
                     off_t *size_out)
{
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    uint8_t *b = NULL;
    size_t cap = 0;
    off_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (!payloads[i] || lens[i] == 0 || lens[i] > MNC_JOURNAL_MAX_PAYLOAD) {
            errno = EINVAL;
            goto fail;
        }
        if (grow(&b, &cap, MNC_JOURNAL_HDR + lens[i]) != 0) {
            errno = ENOMEM;
            goto fail;
        }
        encode(b, first_seq + i, payloads[i], (uint32_t)lens[i]);
        if (write_all(fd, b, MNC_JOURNAL_HDR + lens[i], off) != 0)
            goto fail;
        off += (off_t)(MNC_JOURNAL_HDR + lens[i]);
    }
    if (fsync(fd) != 0)
        goto fail;
    free(b);
    *size_out = off;
    return fd;
fail:;
    int e = errno;
    free(b);
    close(fd);
    unlink(tmp);
    errno = e;
    return -1;
}

static char *tmp_name(const char *path)
{
    size_t l = strlen(path) + 5;
    char *t = malloc(l);
    if (t)
        snprintf(t, l, "%s.tmp", path);
    return t;
}

int mnc_journal_rewrite(const char *path, uint64_t first_seq, const void *const *payloads, const size_t *lens, size_t n)
{
    if (!path || first_seq == 0 || (n && (!payloads || !lens))) {
        errno = EINVAL;
        return -1;
    }
    char *tmp = tmp_name(path);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    off_t size;
    int fd = write_tmp(tmp, first_seq, payloads, lens, n, &size);
    int rc = -1;
    if (fd >= 0) {
        if (rename(tmp, path) == 0 && fsync_dir(path) == 0)
            rc = 0;
        else
            unlink(tmp);
        int e = errno;
        close(fd);
        errno = e;
    }
    free(tmp);
    return rc;
}

int mnc_journal_compact(mnc_journal *j, const void *const *payloads, const size_t *lens, size_t n)
{
    if (!j || (n && (!payloads || !lens))) {
        errno = EINVAL;
        return -1;
    }
    char *tmp = tmp_name(j->path);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    pthread_mutex_lock(&j->mu);
    /* Drain: records already queued carry sequence numbers below next_seq and belong to the
     * old file; write them before switching. */
    while (!j->poisoned && (j->flushing || j->len > 0)) {
        if (!j->flushing)
            flush_batch(j, false);
        else
            pthread_cond_wait(&j->cv, &j->mu);
    }
    int rc = -1, e = EIO;
    if (j->poisoned)
        goto out;
    off_t size;
    int fd = write_tmp(tmp, j->next_seq, payloads, lens, n, &size);
    if (fd < 0) {
        e = errno;
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(tmp, j->path) != 0) {
        e = errno;
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (fsync_dir(j->path) != 0) {
        /* The rename happened but may not be durable: the new file is in place and valid
         * either way, so switch to it; report the error. */
        e = errno;
        close(j->fd);
        j->fd = fd;
        j->end = size;
        j->alloc_end = size;
        j->next_seq += n;
        (void)mnc_cache_trim_reset(fd, &j->trim, size);
        direct_setup(j);
        goto out;
    }
    close(j->fd);
    j->fd = fd;
    j->end = size;
    j->alloc_end = size;
    j->next_seq += n;
    (void)mnc_cache_trim_reset(fd, &j->trim, size);
    direct_setup(j);
    rc = 0;
out:
    pthread_mutex_unlock(&j->mu);
    free(tmp);
    if (rc != 0)
        errno = e;
    return rc;
}

int mnc_journal_close(mnc_journal *j)
{
    if (!j)
        return 0;
    pthread_mutex_lock(&j->mu);
    while (j->flushing || j->gathering)
        pthread_cond_wait(&j->cv, &j->mu);
    if (j->len > 0 && !j->poisoned)
        flush_batch(j, false);
    int rc = j->poisoned ? -1 : 0;
    /* Give back the preallocated zeros so a cleanly closed journal is exactly its records
     * (the legacy layout; tools and people that look at the size see the logical end).
     * Crash-safe: only zero bytes past the last durable record are cut, and a crash before
     * the truncation is durable leaves zeros, which open() treats as the clean end - so no
     * sync is needed. A failure is deliberately not an error: the file is valid with or
     * without the zeros. Skipped after an I/O error: open() will judge what is there. */
    if (!j->poisoned && j->alloc_end > j->end && ftruncate(j->fd, j->end) != 0) {
        /* ignored, see above */
    }
    pthread_mutex_unlock(&j->mu);
    direct_close(j);
    if (close(j->fd) != 0)
        rc = -1;
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    pthread_cond_destroy(&j->arrive);
    free(j->buf);
    free(j->spare);
    free(j->tail);
    free(j->stage);
    free(j->path);
    free(j);
    return rc;
}
