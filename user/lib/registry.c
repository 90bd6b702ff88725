// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* registry.c - open-addressing hash table of live disclosure objects (see registry.h). */
#include <stdlib.h>
#include <string.h>

#include "mnc/registry.h"

static mnc_disclosure tombstone_obj;
#define TOMBSTONE (&tombstone_obj)

static size_t hash_id(const mnc_oid *id)
{
    uint64_t h;
    memcpy(&h, id->b, sizeof(h));
    return (size_t)(h ^ (h >> 29));
}

void mnc_registry_init(mnc_registry *r) { memset(r, 0, sizeof(*r)); }

void mnc_registry_free(mnc_registry *r)
{
    for (size_t i = 0; i < r->cap; i++) {
        if (r->slot[i] && r->slot[i] != TOMBSTONE) {
            mnc_disclosure_free(r->slot[i]);
            free(r->slot[i]);
        }
    }
    free(r->slot);
    memset(r, 0, sizeof(*r));
}

static int grow(mnc_registry *r)
{
    size_t cap = r->cap ? r->cap : 16;
    while ((r->n + 1) * 2 > cap) /* keep the load factor (live) under 1/2 after a rebuild */
        cap *= 2;
    mnc_disclosure **ns = calloc(cap, sizeof(*ns));
    if (!ns)
        return -1;
    for (size_t i = 0; i < r->cap; i++) {
        mnc_disclosure *d = r->slot[i];
        if (!d || d == TOMBSTONE)
            continue;
        size_t j = hash_id(&d->id) & (cap - 1);
        while (ns[j])
            j = (j + 1) & (cap - 1);
        ns[j] = d;
    }
    free(r->slot);
    r->slot = ns;
    r->cap = cap;
    r->used = r->n;
    return 0;
}

static size_t find(const mnc_registry *r, const mnc_oid *id)
{
    size_t j = hash_id(id) & (r->cap - 1);
    for (size_t probes = 0; probes < r->cap; probes++, j = (j + 1) & (r->cap - 1)) {
        mnc_disclosure *d = r->slot[j];
        if (!d)
            return SIZE_MAX;
        if (d != TOMBSTONE && memcmp(&d->id, id, sizeof(*id)) == 0)
            return j;
    }
    return SIZE_MAX;
}

int mnc_registry_put(mnc_registry *r, mnc_disclosure *d)
{
    if (r->cap && find(r, &d->id) != SIZE_MAX)
        return -2;
    if ((r->used + 1) * 4 > r->cap * 3 && grow(r) != 0) /* rebuild above 3/4 occupancy */
        return -1;
    size_t j = hash_id(&d->id) & (r->cap - 1);
    while (r->slot[j] && r->slot[j] != TOMBSTONE)
        j = (j + 1) & (r->cap - 1);
    if (!r->slot[j])
        r->used++;
    r->slot[j] = d;
    r->n++;
    return 0;
}

mnc_disclosure *mnc_registry_get(const mnc_registry *r, const mnc_oid *id)
{
    if (!r->cap)
        return NULL;
    size_t j = find(r, id);
    return j == SIZE_MAX ? NULL : r->slot[j];
}

int mnc_registry_del(mnc_registry *r, const mnc_oid *id)
{
    if (!r->cap)
        return -1;
    size_t j = find(r, id);
    if (j == SIZE_MAX)
        return -1;
    mnc_disclosure_free(r->slot[j]);
    free(r->slot[j]);
    r->slot[j] = TOMBSTONE;
    r->n--;
    return 0;
}

void mnc_registry_each(const mnc_registry *r, int (*fn)(mnc_disclosure *d, void *arg), void *arg)
{
    for (size_t i = 0; i < r->cap; i++)
        if (r->slot[i] && r->slot[i] != TOMBSTONE && fn(r->slot[i], arg))
            return;
}
