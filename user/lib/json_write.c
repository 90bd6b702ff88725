// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* json_write.c - see json_write.h. */
#include "json_write.h"

#include <stdbool.h>

#include <float.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *mnc_json_add_u64(cJSON *o, const char *name, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return cJSON_AddRawToObject(o, name, buf);
}

size_t mnc_json_str_len(const char *s)
{
    if (!s)
        return 4;
    size_t n = 2;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '\b' || *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t')
            n += 2;
        else if (*p < 0x20)
            n += 6;
        else
            n++;
    }
    return n;
}

/* 1 for the bytes cJSON escapes: those below 0x20, '"' and '\\'. */
static const unsigned char escaped[256] = {[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1};

/* The bytes of the 8-byte word w that cJSON escapes (below 0x20, '"', '\\'), as the high bit of
 * each: the "has a byte less than n" test (n <= 128) and the "has a zero byte" test on w xor
 * the quote and the backslash. Non-zero iff there is such a byte, and the lowest set bit marks
 * the first one exactly (a borrow only runs upwards from a byte that is one): in memory order
 * on a little-endian machine. */
static inline uint64_t word_escapes(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & high;
}

/* The second byte of a two-byte escape ("\\n"), 0 for a byte written as \\u00XX or as is. */
static const char esc2[256] = {
    ['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};

/* c, escaped as cJSON does. Inline: a quote every few bytes is the usual case (a JSON text
 * written as a string, as the journal holds the audit lines). */
static inline char *put_byte(char *o, unsigned char c)
{
    static const char hx[] = "0123456789abcdef";
    if (!escaped[c]) {
        *o++ = (char)c;
        return o;
    }
    o[0] = '\\';
    if (esc2[c]) {
        o[1] = esc2[c];
        return o + 2;
    }
    memcpy(o + 1, "u00", 3);
    o[4] = hx[c >> 4];
    o[5] = hx[c & 15];
    return o + 6;
}

/* The n bytes at p, escaped, between quotes. Eight bytes are copied at a time up to the first
 * that needs an escape (out has room for 6 per input byte, so copying a whole word ahead is
 * safe while 8 or more remain), which is written and the scan goes on after it. */
static size_t put_strn(char *out, const unsigned char *p, size_t n)
{
    char *o = out;
    *o++ = '"';
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t m = word_escapes(w);
        memcpy(o, p, 8);
        if (!m) {
            o += 8;
            p += 8;
            n -= 8;
            continue;
        }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        size_t k = (size_t)__builtin_ctzll(m) >> 3; /* bytes before the first escaped one */
#else
        size_t k = 0;
        while (!escaped[p[k]])
            k++;
#endif
        o += k;
        p += k;
        n -= k;
        o = put_byte(o, *p++);
        n--;
    }
    while (n--)
        o = put_byte(o, *p++);
    *o++ = '"';
    return (size_t)(o - out);
}

size_t mnc_json_put_str(char *out, const char *s)
{
    if (!s) {
        memcpy(out, "null", 4);
        return 4;
    }
    return put_strn(out, (const unsigned char *)s, strlen(s));
}

size_t mnc_json_put_u64(char *out, uint64_t v)
{
    static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                             "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                             "8081828384858687888990919293949596979899";
    char t[20];
    size_t i = sizeof(t); /* digits are written backwards from the end of t, two at a time */
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        t[--i] = d2[2 * r + 1];
        t[--i] = d2[2 * r];
    }
    if (v >= 10) {
        t[--i] = d2[2 * v + 1];
        t[--i] = d2[2 * v];
    } else {
        t[--i] = (char)('0' + v);
    }
    size_t n = sizeof(t) - i;
    memcpy(out, t + i, n);
    return n;
}

int mnc_jbuf_reserve(mnc_jbuf *b, size_t n)
{
    if (n <= b->cap - b->len)
        return 0;
    if (n > SIZE_MAX / 2 - b->len)
        return -1;
    size_t nc = b->cap ? b->cap : 256;
    while (nc - b->len < n)
        nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np)
        return -1;
    b->p = np;
    b->cap = nc;
    return 0;
}

int mnc_jbuf_put_grow(mnc_jbuf *b, const char *s, size_t n)
{
    if (mnc_jbuf_reserve(b, n) != 0)
        return -1;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

#define put mnc_jbuf_put

static int put_jstr(mnc_jbuf *b, const char *s)
{
    if (!s) /* cJSON prints a string item without text as an empty string */
        return put(b, "\"\"", 2);
    /* room for the worst case (every byte a \u00xx escape) after one strlen, rather than a
     * second byte-by-byte pass to size it exactly */
    size_t n = strlen(s);
    if (n > (SIZE_MAX - 2) / 6 || mnc_jbuf_reserve(b, 6 * n + 2) != 0)
        return -1;
    b->len += put_strn(b->p + b->len, (const unsigned char *)s, n);
    return 0;
}

/* cJSON's text for a finite, non-integral d with 1e-4 <= |d| < 1e15, without printf when it
 * can be had exactly: "%1.15g" rounds |d| to 15 significant digits, m / 10^k with 10^14 <= m
 * < 10^15; x = |d| * 10^k is one multiplication off the exact product (10^k is exact up to
 * 10^22) by at most 1/16, so the nearest integer to x is m unless x is within 1/4 of a
 * half-integer (printf decides those). Trailing zeros go, fixed notation (the exponent is
 * -4..14; an m rounded up to 10^15 is 10^14 one exponent up, e.g. 1 - 2^-52 prints as "1",
 * unless that exponent is 15: printf). cJSON then keeps the text if it
 * reads back within DBL_EPSILON (relative) of d, which is checked as cJSON does, on the value
 * strtod gives for it: m' / 10^k', exact below 2^53 and 10^22 and one correctly rounded
 * division; else cJSON prints "%1.17g" (printf). Writes into t (room for 32) and returns the
 * length, or 0: printf decides, or FRAC_NEEDS_17: the 15 digits do not read back, so cJSON
 * prints "%1.17g" (put_g17). test_audit compares it with cJSON on 240k numbers. */
#define FRAC_NEEDS_17 ((size_t)-1)

static size_t put_frac15(char *t, double d)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
                                 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    double a = fabs(d);
    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    int e = 14; /* decimal exponent of a: 10^e <= a < 10^(e+1), found by comparison */
    while (e > -4 && a < (e >= 0 ? p10[e] : 1.0 / p10[-e]))
        e--;
    int k = 14 - e; /* 0..18 */
    double x = a * p10[k];
    if (!(x >= 1e14 && x < 1e15)) /* a boundary misjudged: printf */
        return 0;
    double fl = floor(x);
    if (fabs(x - fl - 0.5) < 0.25)
        return 0;
    uint64_t m = (uint64_t)fl + (x - fl > 0.5);
    if (m >= 1000000000000000ull) { /* rounded up to 10^(e+1): one exponent up */
        if (e >= 14)
            return 0; /* 10^15: "%1.15g" turns to exponent notation (printf) */
        m = 100000000000000ull;
        k--;
    }
    while (k > 0 && m % 10 == 0) { /* %g drops trailing zeros */
        m /= 10;
        k--;
    }
    double back = (double)m / p10[k];
    double mx = back > a ? back : a;
    if (!(fabs(back - a) <= mx * DBL_EPSILON))
        return FRAC_NEEDS_17; /* exact: cJSON prints "%1.17g" */
    char dg[20];
    size_t nd = mnc_json_put_u64(dg, m), n = 0;
    if (signbit(d))
        t[n++] = '-';
    if (k == 0) { /* rounded to an integer */
        memcpy(t + n, dg, nd);
        return n + nd;
    }
    if (nd <= (size_t)k) { /* 0.00ddd */
        t[n++] = '0';
        t[n++] = '.';
        for (size_t z = nd; z < (size_t)k; z++)
            t[n++] = '0';
        memcpy(t + n, dg, nd);
        n += nd;
    } else { /* iii.ddd */
        memcpy(t + n, dg, nd - (size_t)k);
        n += nd - (size_t)k;
        t[n++] = '.';
        memcpy(t + n, dg + nd - (size_t)k, (size_t)k);
        n += (size_t)k;
    }
    return n;
}

/* mnc_fmt_g6: "%.6g" rounds |v| to 6 significant digits, m / 10^k with 10^5 <= m < 10^6: x =
 * |v| * 10^k is one multiplication off the exact product (10^k exact) by at most 2^-33, so
 * the nearest integer to x is m unless x is within 1e-6 of a half-integer (then printf,
 * which rounds exactly). The exponent is -4..5 (fixed notation) unless m rounded up to 10^6
 * (printf); trailing zeros and a bare point are dropped as %g does. */
size_t mnc_fmt_g6(char *out, double v)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    double a = fabs(v);
    if (a == 0) {
        memcpy(out, signbit(v) ? "-0" : "0", signbit(v) ? 3 : 2);
        return signbit(v) ? 2 : 1;
    }
    if (a >= 1e-4 && a < 1e6) {
        int e = 5;
        while (e > -4 && a < (e >= 0 ? p10[e] : 1.0 / p10[-e]))
            e--;
        int k = 5 - e; /* 0..9 */
        double x = a * p10[k];
        double fl = floor(x);
        if (x >= 1e5 && x < 1e6 && fabs(x - fl - 0.5) >= 1e-6) {
            uint64_t m = (uint64_t)fl + (x - fl > 0.5);
            if (m < 1000000) {
                while (k > 0 && m % 10 == 0) {
                    m /= 10;
                    k--;
                }
                char dg[20];
                size_t nd = mnc_json_put_u64(dg, m), n = 0;
                if (signbit(v))
                    out[n++] = '-';
                if (k == 0) {
                    memcpy(out + n, dg, nd);
                    n += nd;
                } else if (nd <= (size_t)k) {
                    out[n++] = '0';
                    out[n++] = '.';
                    for (size_t z = nd; z < (size_t)k; z++)
                        out[n++] = '0';
                    memcpy(out + n, dg, nd);
                    n += nd;
                } else {
                    memcpy(out + n, dg, nd - (size_t)k);
                    n += nd - (size_t)k;
                    out[n++] = '.';
                    memcpy(out + n, dg + nd - (size_t)k, (size_t)k);
                    n += (size_t)k;
                }
                out[n] = '\0';
                return n;
            }
        }
    }
    int r = snprintf(out, 32, "%.6g", v);
    return r < 0 ? 0 : (size_t)r < 32 ? (size_t)r : 31;
}

/* "%1.17g" of a finite, non-integral d with 1e-4 <= |d| < 1e15, computed exactly: |d| = m *
 * 2^-s (m < 2^53), so |d| * 10^k = m * 10^k / 2^s with m * 10^k < 2^120 in 128-bit integers;
 * q = that rounded to the nearest integer, ties to even (printf's rounding), is the 17-digit
 * significand when 10^16 <= q < 10^17 (else the decimal exponent X moves by one and q is
 * computed again). %g then prints fixed notation (-4 <= X < 17) without trailing zeros.
 * Returns the length written into t (room for 32), or 0 (outside that range: printf).
 * test_audit compares it with printf's through cJSON on random doubles of every exponent. */
static size_t put_g17(char *t, double d)
{
    static const double p10d[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14};
    double a = fabs(d);
    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    int be;
    double f = frexp(a, &be); /* a = f * 2^be, 0.5 <= f < 1 */
    uint64_t m = (uint64_t)ldexp(f, 53);
    int s = 53 - be; /* a = m * 2^-s */
    if (s < 1 || s > 100)
        return 0;
    int x = 14; /* decimal exponent, first guess; corrected by the range of q */
    while (x > -4 && a < (x >= 0 ? p10d[x] : 1.0 / p10d[-x]))
        x--;
    const unsigned __int128 lo = (unsigned __int128)10000000000000000ull, hi = lo * 10;
    for (int tries = 0; tries < 4; tries++) {
        int k = 16 - x;
        if (k < 0 || k > 20)
            return 0;
        unsigned __int128 p = 1;
        for (int i = 0; i < k; i++)
            p *= 10;
        unsigned __int128 n = (unsigned __int128)m * p;
        unsigned __int128 q = n >> s, rem = n - (q << s), half = (unsigned __int128)1 << (s - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        if (q >= hi) {
            x++;
            continue;
        }
        if (q < lo) {
            x--;
            continue;
        }
        if (x < -4 || x >= 17)
            return 0;
        char dg[17];
        for (int i = 16; i >= 0; i--) {
            dg[i] = (char)('0' + (int)(q % 10));
            q /= 10;
        }
        int nd = 17;                 /* %g drops trailing zeros of the fraction */
        int ip = x >= 0 ? x + 1 : 0; /* digits before the point */
        while (nd > ip && dg[nd - 1] == '0')
            nd--;
        size_t o = 0;
        if (signbit(d))
            t[o++] = '-';
        if (x >= 0) {
            memcpy(t + o, dg, (size_t)ip);
            o += (size_t)ip;
            if (nd > ip) {
                t[o++] = '.';
                memcpy(t + o, dg + ip, (size_t)(nd - ip));
                o += (size_t)(nd - ip);
            }
        } else {
            t[o++] = '0';
            t[o++] = '.';
            for (int z = 0; z < -x - 1; z++)
                t[o++] = '0';
            memcpy(t + o, dg, (size_t)nd);
            o += (size_t)nd;
        }
        return o;
    }
    return 0;
}

/* cJSON's print_number, with integral values below 10^15 written as digits (the same text). */
static int put_num(mnc_jbuf *b, double d)
{
    char t[32];
    size_t n;
    if (isnan(d) || isinf(d))
        return put(b, "null", 4);
    if (d == trunc(d) && fabs(d) < 1e15) { /* "%1.15g" prints these as their digits */
        long long v = (long long)d;
        n = 0;
        if (v < 0 || signbit(d))
            t[n++] = '-';
        n += mnc_json_put_u64(t + n, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v);
        return put(b, t, n);
    }
    n = put_frac15(t, d);
    if (n == FRAC_NEEDS_17)
        n = put_g17(t, d);
    if (n > 0)
        return put(b, t, n);
    int k = snprintf(t, sizeof(t), "%1.15g", d);
    double back = k > 0 ? strtod(t, NULL) : 0;
    double mx = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
    if (k <= 0 || !(fabs(back - d) <= mx * DBL_EPSILON))
        k = snprintf(t, sizeof(t), "%1.17g", d);
    if (k <= 0 || (size_t)k >= sizeof(t))
        return -1;
    return put(b, t, (size_t)k);
}

static int print_item(mnc_jbuf *b, const cJSON *it)
{
    switch (it->type & 0xFF) {
    case cJSON_NULL:
        return put(b, "null", 4);
    case cJSON_False:
        return put(b, "false", 5);
    case cJSON_True:
        return put(b, "true", 4);
    case cJSON_Number:
        return put_num(b, it->valuedouble);
    case cJSON_Raw:
        return it->valuestring ? put(b, it->valuestring, strlen(it->valuestring)) : -1;
    case cJSON_String:
        return put_jstr(b, it->valuestring);
    case cJSON_Array:
    case cJSON_Object: {
        bool obj = (it->type & 0xFF) == cJSON_Object;
        if (put(b, obj ? "{" : "[", 1) != 0)
            return -1;
        for (const cJSON *c = it->child; c; c = c->next) {
            if (c != it->child && put(b, ",", 1) != 0)
                return -1;
            if (obj && (put_jstr(b, c->string) != 0 || put(b, ":", 1) != 0))
                return -1;
            if (print_item(b, c) != 0)
                return -1;
        }
        return put(b, obj ? "}" : "]", 1);
    }
    default:
        return -1;
    }
}

int mnc_json_print(mnc_jbuf *b, const cJSON *item)
{
    size_t len0 = b->len;
    if (!item || print_item(b, item) != 0) {
        b->len = len0;
        return -1;
    }
    return 0;
}

int mnc_jbuf_str(mnc_jbuf *b, const char *s) { return s ? put_jstr(b, s) : -1; }

int mnc_jbuf_num(mnc_jbuf *b, double v) { return put_num(b, v); }

int mnc_jbuf_u64(mnc_jbuf *b, uint64_t v)
{
    if (mnc_jbuf_reserve(b, 20) != 0)
        return -1;
    b->len += mnc_json_put_u64(b->p + b->len, v);
    return 0;
}

/* mnc_json_use_pool: list c holds blocks whose glibc chunk is at least 16 * c bytes (usable
 * size 16 * c - 8 or more), for c = 2..POOL_CLASSES - 1; a request of n bytes takes from list
 * (n + 23) / 16, the smallest chunk glibc itself would give it. A list keeps at most 64 KiB
 * of blocks (2048 of the smallest), so all of them together stay below 8.5 MiB.
 * Thread-local: no locking, and a block freed on another thread merely lands on that
 * thread's lists. */
#define POOL_CLASSES 130 /* chunks of 32..2064 bytes: items, keys, texts of objects */
#define POOL_BYTES 65536 /* per list */

static _Thread_local struct {
    void *head;
    unsigned n;
} pool[POOL_CLASSES];

static void *pool_malloc(size_t n)
{
    size_t c = n < 9 ? 2 : (n + 23) / 16;
    if (c < POOL_CLASSES && pool[c].head) {
        void *p = pool[c].head;
        pool[c].head = *(void **)p;
        pool[c].n--;
        return p;
    }
    return malloc(n);
}

static void pool_free(void *p)
{
    if (!p)
        return;
    size_t c = (malloc_usable_size(p) + 8) / 16;
    if (c >= 2 && c < POOL_CLASSES && pool[c].n < POOL_BYTES / (16 * c)) {
        *(void **)p = pool[c].head;
        pool[c].head = p;
        pool[c].n++;
        return;
    }
    free(p);
}

void mnc_json_use_pool(void)
{
    cJSON_Hooks h = {.malloc_fn = pool_malloc, .free_fn = pool_free};
    cJSON_InitHooks(&h);
}
