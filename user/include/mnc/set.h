/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* set.h - fixed-size bitsets over small integer ids (fields, sinks, agents).
 *
 * Why bitsets: every check in the model is a subset test (F' ⊆ F, φ' ⊆ φ, receiver ∈ φ).
 * With ids bounded by MNC_SET_BITS those tests are four AND/compare operations, which keeps
 * the monitor well under a microsecond and lets the same representation go into BPF maps.
 */
#ifndef MNC_SET_H
#define MNC_SET_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MNC_SET_WORDS 4
#define MNC_SET_BITS (MNC_SET_WORDS * 64) /* 256 ids per namespace */

typedef struct mnc_set {
    uint64_t w[MNC_SET_WORDS];
} mnc_set;

static inline void mnc_set_clear(mnc_set *s) { memset(s, 0, sizeof(*s)); }

/* Adds id; ids >= MNC_SET_BITS are ignored (callers validate ids at policy load). */
static inline void mnc_set_add(mnc_set *s, unsigned id)
{
    if (id < MNC_SET_BITS)
        s->w[id / 64] |= (uint64_t)1 << (id % 64);
}

static inline void mnc_set_del(mnc_set *s, unsigned id)
{
    if (id < MNC_SET_BITS)
        s->w[id / 64] &= ~((uint64_t)1 << (id % 64));
}

static inline bool mnc_set_has(const mnc_set *s, unsigned id)
{
    return id < MNC_SET_BITS && (s->w[id / 64] >> (id % 64)) & 1;
}

/* a ⊆ b */
static inline bool mnc_set_subset(const mnc_set *a, const mnc_set *b)
{
    for (int i = 0; i < MNC_SET_WORDS; i++)
        if (a->w[i] & ~b->w[i])
            return false;
    return true;
}

static inline bool mnc_set_empty(const mnc_set *s)
{
    for (int i = 0; i < MNC_SET_WORDS; i++)
        if (s->w[i])
            return false;
    return true;
}

static inline bool mnc_set_eq(const mnc_set *a, const mnc_set *b) { return memcmp(a, b, sizeof(*a)) == 0; }

static inline mnc_set mnc_set_and(const mnc_set *a, const mnc_set *b)
{
    mnc_set r;
    for (int i = 0; i < MNC_SET_WORDS; i++)
        r.w[i] = a->w[i] & b->w[i];
    return r;
}

static inline mnc_set mnc_set_or(const mnc_set *a, const mnc_set *b)
{
    mnc_set r;
    for (int i = 0; i < MNC_SET_WORDS; i++)
        r.w[i] = a->w[i] | b->w[i];
    return r;
}

/* a \ b */
static inline mnc_set mnc_set_minus(const mnc_set *a, const mnc_set *b)
{
    mnc_set r;
    for (int i = 0; i < MNC_SET_WORDS; i++)
        r.w[i] = a->w[i] & ~b->w[i];
    return r;
}

static inline unsigned mnc_set_count(const mnc_set *s)
{
    unsigned n = 0;
    for (int i = 0; i < MNC_SET_WORDS; i++)
        n += (unsigned)__builtin_popcountll(s->w[i]);
    return n;
}

/* Iterate: for (int id = mnc_set_next(s, -1); id >= 0; id = mnc_set_next(s, id)) */
static inline int mnc_set_next(const mnc_set *s, int after)
{
    int id = after + 1;
    while (id >= 0 && id < MNC_SET_BITS) {
        int w = id / 64;
        uint64_t bits = s->w[w] >> (id % 64);
        if (bits)
            return id + __builtin_ctzll(bits);
        id = (w + 1) * 64;
    }
    return -1;
}

#endif
