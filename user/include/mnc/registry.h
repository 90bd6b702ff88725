/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* registry.h - the table of live disclosure objects, keyed by object id.
 *
 * Open addressing, linear probing (ids are random, so their first 8 bytes are a good hash).
 * Each slot keeps those 8 bytes next to the object pointer, so a probe compares them without
 * touching the object: with 10^5 objects every object is a cache miss, and a lookup that misses
 * (every put checks first) walks a whole probe run. The registry owns the objects it holds.
 * Not thread-safe: mncd calls it from its event loop.
 * Lookup is O(1) expected, which keeps the monitor's cost independent of the number of live
 * objects (see tests/bench/bench_monitor.c).
 */
#ifndef MNC_REGISTRY_H
#define MNC_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "mnc/disclosure.h"

typedef struct mnc_registry_slot {
    uint64_t tag;        /* the object id's first 8 bytes */
    mnc_disclosure *obj; /* NULL = empty, the registry's tombstone = deleted */
} mnc_registry_slot;

typedef struct mnc_registry {
    mnc_registry_slot *slot; /* cap slots */
    size_t cap;              /* power of two */
    size_t n;                /* live objects */
    size_t used;             /* live + tombstones */
} mnc_registry;

void mnc_registry_init(mnc_registry *r);
/* Frees every object and the table. */
void mnc_registry_free(mnc_registry *r);

/* Moves *d (a heap object from malloc) into the registry. Returns 0, -1 on OOM (d untouched,
 * still owned by the caller) or -2 if an object with the same id exists. */
int mnc_registry_put(mnc_registry *r, mnc_disclosure *d);

/* The live object with this id, or NULL. The pointer stays valid until it is removed. */
mnc_disclosure *mnc_registry_get(const mnc_registry *r, const mnc_oid *id);

/* Removes and frees the object. Returns 0 or -1 if absent. */
int mnc_registry_del(mnc_registry *r, const mnc_oid *id);

/* Calls fn for each live object (order unspecified); stops early if fn returns non-zero. */
void mnc_registry_each(const mnc_registry *r, int (*fn)(mnc_disclosure *d, void *arg), void *arg);

#endif
