// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mnc_htab.c - chained string-keyed hash table (see mnc_htab.h). */
#include "mnc_htab.h"

#include <stdlib.h>
#include <string.h>

uint64_t mnc_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, 64-bit offset basis and prime */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void mnc_htab_init(mnc_htab *t, size_t cap, unsigned max_load, unsigned grow)
{
    size_t c = 1;
    while (c < cap)
        c <<= 1;
    *t = (mnc_htab){.cap = c, .max_load = max_load ? max_load : 1, .grow = grow >= 2 ? grow : 2};
}

mnc_hnode *mnc_htab_find(const mnc_htab *t, const char *key)
{
    if (!t->b)
        return NULL;
    uint64_t h = mnc_hash_str(key);
    for (mnc_hnode *n = t->b[h & (t->cap - 1)]; n; n = n->next)
        if (n->hash == h && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

static void rehash(mnc_htab *t)
{
    size_t nc = t->cap * t->grow;
    mnc_hnode **nb = calloc(nc, sizeof(*nb));
    if (!nb)
        return; /* keep the old buckets: still correct, only longer chains */
    for (size_t i = 0; i < t->cap; i++)
        for (mnc_hnode *n = t->b[i], *nx; n; n = nx) {
            nx = n->next;
            size_t k = n->hash & (nc - 1);
            n->next = nb[k];
            nb[k] = n;
        }
    free(t->b);
    t->b = nb;
    t->cap = nc;
}

int mnc_htab_insert(mnc_htab *t, mnc_hnode *n)
{
    if (!t->b && !(t->b = calloc(t->cap, sizeof(*t->b))))
        return -1;
    if (t->n + 1 > t->cap * t->max_load)
        rehash(t);
    n->hash = mnc_hash_str(n->key);
    size_t k = n->hash & (t->cap - 1);
    n->next = t->b[k];
    t->b[k] = n;
    t->n++;
    return 0;
}

mnc_hnode *mnc_htab_remove(mnc_htab *t, const char *key)
{
    if (!t->b)
        return NULL;
    uint64_t h = mnc_hash_str(key);
    for (mnc_hnode **pp = &t->b[h & (t->cap - 1)]; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && strcmp((*pp)->key, key) == 0) {
            mnc_hnode *n = *pp;
            *pp = n->next;
            t->n--;
            return n;
        }
    return NULL;
}

int mnc_htab_each(const mnc_htab *t, int (*fn)(mnc_hnode *n, void *arg), void *arg)
{
    for (size_t i = 0; t->b && i < t->cap; i++)
        for (mnc_hnode *n = t->b[i], *nx; n; n = nx) {
            nx = n->next;
            int r = fn(n, arg);
            if (r)
                return r;
        }
    return 0;
}

void *mnc_htab_add_new(mnc_htab *t, const char *key, size_t size, size_t member)
{
    size_t kl = strlen(key) + 1;
    if (member + sizeof(mnc_hnode) > size || size > SIZE_MAX - kl)
        return NULL;
    char *e = calloc(1, size + kl);
    if (!e)
        return NULL;
    memcpy(e + size, key, kl);
    mnc_hnode *n = (mnc_hnode *)(void *)(e + member);
    n->key = e + size;
    if (mnc_htab_insert(t, n) != 0) {
        free(e);
        return NULL;
    }
    return e;
}

void mnc_htab_fini(mnc_htab *t)
{
    free(t->b);
    t->b = NULL;
    t->n = 0;
}
