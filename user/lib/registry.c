// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* registry.c - open-addressing hash table of live disclosure objects (see registry.h). */
#include <stdlib.h>
#include <string.h>

#include "mnc/registry.h"

static mnc_disclosure tombstone_obj;
#define TOMBSTONE (&tombstone_obj)

static uint64_t tag_of(const mnc_oid *id)
{
    uint64_t t;
    memcpy(&t, id->b, sizeof(t));
    return t;
}

static size_t home(uint64_t tag, size_t cap) { return (size_t)(tag ^ (tag >> 29)) & (cap - 1); }

void mnc_registry_init(mnc_registry *r) { memset(r, 0, sizeof(*r)); }

void mnc_registry_free(mnc_registry *r)
{
    for (size_t i = 0; i < r->cap; i++) {
        mnc_disclosure *d = r->slot[i].obj;
        if (d && d != TOMBSTONE) {
            mnc_disclosure_free(d);
            free(d);
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
    mnc_registry_slot *ns = calloc(cap, sizeof(*ns));
    if (!ns)
        return -1;
    for (size_t i = 0; i < r->cap; i++) {
        mnc_registry_slot s = r->slot[i];
        if (!s.obj || s.obj == TOMBSTONE)
            continue;
        size_t j = home(s.tag, cap);
        while (ns[j].obj)
            j = (j + 1) & (cap - 1);
        ns[j] = s;
    }
    free(r->slot);
    r->slot = ns;
    r->cap = cap;
    r->used = r->n;
    return 0;
}

/* The slot holding id, or SIZE_MAX. The object is read only when its tag matches: with random
 * ids, almost only for the object sought. */
static size_t find(const mnc_registry *r, const mnc_oid *id)
{
    uint64_t tag = tag_of(id);
    size_t j = home(tag, r->cap);
    for (size_t probes = 0; probes < r->cap; probes++, j = (j + 1) & (r->cap - 1)) {
        const mnc_registry_slot *s = &r->slot[j];
        if (!s->obj)
            return SIZE_MAX;
        if (s->tag == tag && s->obj != TOMBSTONE && memcmp(&s->obj->id, id, sizeof(*id)) == 0)
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
    uint64_t tag = tag_of(&d->id);
    size_t j = home(tag, r->cap);
    while (r->slot[j].obj && r->slot[j].obj != TOMBSTONE)
        j = (j + 1) & (r->cap - 1);
    if (!r->slot[j].obj)
        r->used++;
    r->slot[j] = (mnc_registry_slot){.tag = tag, .obj = d};
    r->n++;
    return 0;
}

mnc_disclosure *mnc_registry_get(const mnc_registry *r, const mnc_oid *id)
{
    if (!r->cap)
        return NULL;
    size_t j = find(r, id);
    return j == SIZE_MAX ? NULL : r->slot[j].obj;
}

int mnc_registry_del(mnc_registry *r, const mnc_oid *id)
{
    if (!r->cap)
        return -1;
    size_t j = find(r, id);
    if (j == SIZE_MAX)
        return -1;
    mnc_disclosure_free(r->slot[j].obj);
    free(r->slot[j].obj);
    r->slot[j].obj = TOMBSTONE;
    r->n--;
    return 0;
}

void mnc_registry_each(const mnc_registry *r, int (*fn)(mnc_disclosure *d, void *arg), void *arg)
{
    for (size_t i = 0; i < r->cap; i++)
        if (r->slot[i].obj && r->slot[i].obj != TOMBSTONE && fn(r->slot[i].obj, arg))
            return;
}
