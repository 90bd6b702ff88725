/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mnc_htab.h - one chained hash table with string keys, intrusive (the ledger's subjects and
 * releases, mncd's memory store).
 *
 * Contract: the table never frees entries (and allocates them only in mnc_htab_add_new). An
 * entry embeds an mnc_hnode, sets
 * node.key to a NUL-terminated string it owns (the key must not change while the entry is in
 * the table) and is linked in with mnc_htab_insert; MNC_HTAB_ENTRY gets the entry back from its
 * node. Keys are unique: insert a key only after mnc_htab_find found none. Buckets are a power
 * of two, hashed with FNV-1a; the bucket array is allocated at the first insert and grows by
 * `grow`x when an insert would exceed `max_load` entries per bucket. A failed growth is not an
 * error (the table keeps working with longer chains); only a failed first allocation is.
 * Not thread-safe: callers hold their own lock. Internal to the mnc tree (not installed).
 */
#ifndef MNC_HTAB_H
#define MNC_HTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct mnc_hnode {
    struct mnc_hnode *next;
    const char *key;
    uint64_t hash; /* mnc_hash_str(key), set by mnc_htab_insert: a chain walk compares it first,
                    * so a non-matching entry's key (another cache line) is not read */
} mnc_hnode;

typedef struct mnc_htab {
    mnc_hnode **b;     /* cap buckets, NULL until the first insert */
    size_t cap, n;     /* buckets (power of two), entries */
    unsigned max_load; /* grow when n + 1 > cap * max_load */
    unsigned grow;     /* growth factor (power of two, >= 2) */
} mnc_htab;

/* The entry of type `type` whose mnc_hnode member `member` is node (node may be NULL). node is
 * evaluated once: MNC_HTAB_ENTRY(mnc_htab_remove(...), ...) removes one entry, not two. */
static inline void *mnc_htab_entry_at(const mnc_hnode *node, size_t member)
{
    return node ? (void *)((char *)(uintptr_t)node - member) : NULL;
}
#define MNC_HTAB_ENTRY(node, type, member) ((type *)mnc_htab_entry_at((node), offsetof(type, member)))

/* 64-bit FNV-1a of s. */
uint64_t mnc_hash_str(const char *s);

/* An empty table: cap initial buckets (rounded up to a power of two), growth rules as above.
 * Allocates nothing. */
void mnc_htab_init(mnc_htab *t, size_t cap, unsigned max_load, unsigned grow);

/* The entry with this key, or NULL. */
mnc_hnode *mnc_htab_find(const mnc_htab *t, const char *key);

/* Links n (n->key set, not present yet) in. Returns 0, or -1 if the bucket array could not be
 * allocated at all (n not linked). */
int mnc_htab_insert(mnc_htab *t, mnc_hnode *n);

/* The usual way to add a keyed entry: allocates one zeroed block of `size` bytes (the entry, an
 * mnc_hnode at byte `member` of it) followed by a copy of key, points the node's key at the
 * copy and links it in. Returns the entry (the block), or NULL if out of memory (nothing
 * linked). The key lives in the block: one free() of the entry frees both. Like
 * mnc_htab_insert, only for a key that mnc_htab_find found absent. */
void *mnc_htab_add_new(mnc_htab *t, const char *key, size_t size, size_t member);

/* Unlinks and returns the entry with this key, or NULL. The caller frees it. */
mnc_hnode *mnc_htab_remove(mnc_htab *t, const char *key);

/* Calls fn(node, arg) for every entry, in bucket order, until fn returns non-zero; returns
 * that value (0 if every call returned 0). fn may free the node it is given (the next one is
 * read before the call), but must not insert or remove others. */
int mnc_htab_each(const mnc_htab *t, int (*fn)(mnc_hnode *n, void *arg), void *arg);

/* Frees the bucket array (not the entries: free them first, e.g. with mnc_htab_each) and
 * leaves an empty table with the same growth rules. */
void mnc_htab_fini(mnc_htab *t);

#endif
