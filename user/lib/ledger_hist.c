// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger_hist.c - distinct observation set of a ledger subject (see ledger_hist.h). */
#include "ledger_hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/ledger.h"

struct mnc_hist_ent {
    mnc_hnode h;         /* key: field "\x01" value */
    const char *field;   /* NUL-terminated copy after the key */
    const char *value;   /* the value part of the key (it ends the key) */
    const mnc_policy *p; /* field id cache: the policy `id` was looked up in */
    int id;
    bool listed;
    char key[]; /* field \x01 value \0 field \0 */
};

void mnc_hist_init(mnc_hist *h)
{
    memset(h, 0, sizeof(*h));
    mnc_htab_init(&h->seen, 1, 1, 4); /* most histories hold a few facts: grow 1, 4, 16, ... */
}

static int free_ent(mnc_hnode *n, void *arg)
{
    (void)arg;
    free(MNC_HTAB_ENTRY(n, mnc_hist_ent, h));
    return 0;
}

void mnc_hist_fini(mnc_hist *h)
{
    mnc_htab_each(&h->seen, free_ent, NULL);
    mnc_htab_fini(&h->seen);
    free(h->ord);
    mnc_hist_init(h);
}

int mnc_hist_add(mnc_hist *h, const char *field, const char *value, const char **field_out, const char **value_out)
{
    char key[MNC_NAME_MAX + 1 + MNC_LEDGER_VALUE_MAX];
    size_t fl = field ? strnlen(field, MNC_NAME_MAX) : MNC_NAME_MAX;
    size_t vl = value ? strnlen(value, MNC_LEDGER_VALUE_MAX) : MNC_LEDGER_VALUE_MAX;
    if (fl == 0 || fl >= MNC_NAME_MAX || vl >= MNC_LEDGER_VALUE_MAX || memchr(field, '\x01', fl)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(key, field, fl);
    key[fl] = '\x01';
    memcpy(key + fl + 1, value, vl + 1);
    mnc_hist_ent *e = MNC_HTAB_ENTRY(mnc_htab_find(&h->seen, key), mnc_hist_ent, h);
    if (!e) {
        size_t kl = fl + 1 + vl + 1;
        e = malloc(sizeof(*e) + kl + fl + 1);
        if (!e)
            return -1;
        /* the struct first: its assignment may write the padding the key starts in */
        *e = (mnc_hist_ent){.field = e->key + kl, .value = e->key + fl + 1, .id = -1};
        memcpy(e->key, key, kl);
        memcpy(e->key + kl, field, fl);
        e->key[kl + fl] = '\0';
        e->h.key = e->key;
        if (mnc_htab_insert(&h->seen, &e->h) != 0) {
            free(e);
            return -1;
        }
    }
    if (!e->listed) {
        if (h->n == h->cap) {
            size_t nc = h->cap ? h->cap * 2 : 2;
            mnc_hist_ent **no = realloc(h->ord, nc * sizeof(*no));
            if (!no)
                return -1; /* e stays in the set, unlisted: not part of the history */
            h->ord = no;
            h->cap = nc;
        }
        e->listed = true;
        h->ord[h->n++] = e;
        h->vbytes += vl + 1;
    }
    if (field_out)
        *field_out = e->field;
    if (value_out)
        *value_out = e->value;
    return 0;
}

void mnc_hist_unlist(mnc_hist *h)
{
    for (size_t i = 0; i < h->n; i++)
        h->ord[i]->listed = false;
    h->n = 0;
    h->vbytes = 0;
}

/* e's field id in p. The cache is checked against p's field name: a policy reloaded at the
 * same address cannot hand out a stale id. */
static int field_id(mnc_hist_ent *e, const mnc_policy *p)
{
    if (e->p == p && e->id >= 0 && e->id < p->n_fields && strcmp(p->fields[e->id].name, e->field) == 0)
        return e->id;
    e->p = p;
    e->id = mnc_policy_field(p, e->field);
    return e->id;
}

int mnc_hist_block(mnc_hist *h, const mnc_policy *p, mnc_obs **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (h->n == 0)
        return 0;
    mnc_obs *o = malloc(h->n * sizeof(mnc_obs) + h->vbytes);
    if (!o)
        return -1;
    char *str = (char *)(o + h->n);
    for (size_t i = 0; i < h->n; i++) {
        mnc_hist_ent *e = h->ord[i];
        int id = field_id(e, p);
        if (id < 0) {
            free(o);
            return -1;
        }
        size_t vl = strlen(e->value) + 1;
        memcpy(str, e->value, vl);
        o[i] = (mnc_obs){.field = (uint16_t)id, .value = str};
        str += vl;
    }
    *out = o;
    *n = h->n;
    return 0;
}
