// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* journal_rec.c - the journal's record format, recovery and whole-file writes (journal_int.h;
 * format and recovery rules: mnc/journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <isa-l/crc.h>
#include <unistd.h>

#include "journal_int.h"

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

void mnc_jr_encode(uint8_t *out, uint64_t seq, const void *payload, uint32_t len)
{
    put32(out, MNC_JOURNAL_MAGIC);
    put32(out + 4, len);
    put64(out + 8, seq);
    memcpy(out + MNC_JOURNAL_HDR, payload, len);
    put32(out + 16, rec_crc(out, out + MNC_JOURNAL_HDR, len));
}

void mnc_jr_msg(char *b, size_t n, const char *fmt, ...)
{
    if (!b || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, n, fmt, ap);
    va_end(ap);
}

int mnc_jr_write_all(int fd, const uint8_t *p, size_t n, off_t off)
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
off_t mnc_jr_write_zeros(int fd, off_t from, off_t to)
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

static bool all_zero(const uint8_t *p, size_t n)
{
    /* memcmp against a shifted view of the same buffer: zero iff every byte equals the first */
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* fsync the directory holding `path`, so a created or renamed entry survives a crash. */
int mnc_jr_fsync_dir(const char *path)
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

static int parse(const char *path, const uint8_t *b, size_t size, mnc_journal_replay_fn cb, void *arg,
                 mnc_jr_parse_out *po, char *notice, size_t nn, char *err, size_t en)
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
                    mnc_jr_msg(err, en,
                               "%s: corrupt record #%" PRIu64 " at offset %zu: sequence number "
                               "%" PRIu64 " where %" PRIu64 " was expected",
                               path, expect ? expect : 1, o, hseq, expect ? expect : 1);
                    return -1;
                } else {
                    seq = hseq;
                    if (cb && cb(arg, seq, b + o + MNC_JOURNAL_HDR, len) != 0) {
                        mnc_jr_msg(err, en, "%s: replay callback refused record #%" PRIu64 " at offset %zu", path, seq,
                                   o);
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
            mnc_jr_msg(err, en,
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
        mnc_jr_msg(notice, nn, "%s: torn tail at offset %zu (%zu bytes, record #%" PRIu64 ": %s%s)", path, o, last - o,
                   name, why, last < size ? "; zero bytes follow" : "");
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
int mnc_jr_map_and_parse(int fd, const char *path, bool copy, mnc_journal_replay_fn cb, void *arg, mnc_jr_parse_out *po,
                         size_t *size_out, char *notice, size_t nn, char *err, size_t en)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        mnc_jr_msg(err, en, "%s: fstat: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        mnc_jr_msg(err, en, "%s: not a regular file", path);
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
            mnc_jr_msg(err, en, "%s: read: %s", path, strerror(errno));
            return -1;
        }
        *size_out = got;
        int rc = parse(path, b, got, cb, arg, po, notice, nn, err, en);
        free(b);
        return rc;
    }
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        mnc_jr_msg(err, en, "%s: mmap: %s", path, strerror(errno));
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
        mnc_jr_msg(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    mnc_jr_parse_out po;
    size_t size;
    int rc = mnc_jr_map_and_parse(fd, path, true, cb, arg, &po, &size, notice, notice_len, err, err_len);
    close(fd);
    if (rc == 0 && n_records)
        *n_records = po.n;
    return rc;
}

int mnc_jr_grow(uint8_t **b, size_t *cap, size_t need)
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

/* ---- rewrite ------------------------------------------------------------------------- */

/* Writes PATH.tmp with the records and fsyncs it. Returns the open fd (caller renames), or -1. */
int mnc_jr_write_tmp(const char *tmp, uint64_t first_seq, const void *const *payloads, const size_t *lens, size_t n,
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
        if (mnc_jr_grow(&b, &cap, MNC_JOURNAL_HDR + lens[i]) != 0) {
            errno = ENOMEM;
            goto fail;
        }
        mnc_jr_encode(b, first_seq + i, payloads[i], (uint32_t)lens[i]);
        if (mnc_jr_write_all(fd, b, MNC_JOURNAL_HDR + lens[i], off) != 0)
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

char *mnc_jr_tmp_name(const char *path)
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
    char *tmp = mnc_jr_tmp_name(path);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    off_t size;
    int fd = mnc_jr_write_tmp(tmp, first_seq, payloads, lens, n, &size);
    int rc = -1;
    if (fd >= 0) {
        if (rename(tmp, path) == 0 && mnc_jr_fsync_dir(path) == 0)
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
