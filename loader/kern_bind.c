// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_bind.c - principals keep their names (mnc_kern.h, "principal binding"; docs/kernel.md,
 * "Principals keep their names").
 *
 * Every pinned map refers to principals by number: an agent's cgroup by its id (agents), its
 * taint by id (taint keys) and what it may reach as bits over ids (taint sinks, file_labels),
 * each sink by id (sock_unix, sock_inet, file_sinks, ipc_sinks). The numbers are positions in
 * the policy that wrote them. The principals map says which name each number stood for; a
 * restart on an edited policy translates every reference by name (mnc_kern_renumber) before
 * anything uses the new numbers.
 *
 * The translation runs while agents run, so every state the programs can see on the way must
 * give each agent no more than it had, under either numbering (a destination's entry may carry
 * its old or its new id at any moment): first each taint keeps only the bits that are safe
 * both ways; then the sink entries get their new ids; then each agent's cgroups move to a
 * temporary key (MNC_BIND_TMP + new id) holding its final taint, so that no cgroup ever reads a
 * key another agent will own; then the final keys are written and the cgroups moved there.
 * While it runs the principals map holds the old binding under MNC_BIND_TRANSIT keys only: a
 * launcher that checks its agent's binding (mnc_kern_bind_check) fails closed meanwhile, and a
 * start that finds such keys knows a translation was interrupted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kern_int.h"
#include "lsm_abi.h"

#define BIND_IDS (MNC_SET_WORDS_ABI * 64) /* policy ids: 0..255 */

static int sys_rc(int rc) { return rc == 0 ? 0 : -errno; }

static int bit(const __u64 *w, int i) { return (int)((w[i / 64] >> (i % 64)) & 1); }
static void set_bit(__u64 *w, int i) { w[i / 64] |= 1ull << (i % 64); }

/* Every key of map fd (key_size bytes each) into a new array; *n keys. 0 or -errno. */
static int all_keys(int fd, size_t key_size, void **out, int *n)
{
    *out = NULL;
    *n = 0;
    int cap = 0;
    char cur[128], next[128];
    if (key_size > sizeof(cur))
        return -EINVAL;
    void *prev = NULL;
    while (bpf_map_get_next_key(fd, prev, next) == 0) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            void *t = realloc(*out, (size_t)cap * key_size);
            if (!t) {
                free(*out);
                *out = NULL;
                return -ENOMEM;
            }
            *out = t;
        }
        memcpy((char *)*out + (size_t)*n * key_size, next, key_size);
        (*n)++;
        memcpy(cur, next, key_size);
        prev = cur;
    }
    return 0;
}

int mnc_kern_bind_read(mnc_kern *k, struct mnc_bind *tab, int max, int *n, bool *interrupted)
{
    memset(tab, 0, (size_t)max * sizeof(*tab));
    *n = 0;
    *interrupted = false;
    __u32 *keys;
    int nk, rc = all_keys(k->fd_principals, sizeof(__u32), (void **)&keys, &nk);
    if (rc)
        return rc;
    for (int i = 0; i < nk; i++) {
        if (keys[i] & MNC_BIND_TRANSIT) {
            *interrupted = true;
            continue;
        }
        if (keys[i] >= (__u32)max)
            continue;
        if (bpf_map_lookup_elem(k->fd_principals, &keys[i], &tab[keys[i]]) != 0) {
            rc = -errno;
            break;
        }
        tab[keys[i]].name[MNC_NAME_LEN - 1] = 0;
        if ((int)keys[i] + 1 > *n)
            *n = (int)keys[i] + 1;
    }
    free(keys);
    return rc;
}

/* Deletes every key of the principals map (plain and MNC_BIND_TRANSIT). */
static int bind_clear(mnc_kern *k)
{
    __u32 *keys;
    int nk, rc = all_keys(k->fd_principals, sizeof(__u32), (void **)&keys, &nk);
    for (int i = 0; rc == 0 && i < nk; i++)
        if (bpf_map_delete_elem(k->fd_principals, &keys[i]) != 0 && errno != ENOENT)
            rc = -errno;
    free(keys);
    return rc;
}

int mnc_kern_bind_write(mnc_kern *k, const struct mnc_bind *tab, int n)
{
    /* the new entries first (a reader never finds the map empty), then the others go */
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (tab[i].cls == MNC_SINK_NONE)
            continue;
        __u32 key = (__u32)i;
        rc = sys_rc(bpf_map_update_elem(k->fd_principals, &key, &tab[i], BPF_ANY));
    }
    __u32 *keys;
    int nk;
    if (rc == 0)
        rc = all_keys(k->fd_principals, sizeof(__u32), (void **)&keys, &nk);
    else
        return rc;
    for (int i = 0; rc == 0 && i < nk; i++) {
        bool keep = keys[i] < (__u32)n && tab[keys[i]].cls != MNC_SINK_NONE;
        if (!keep && bpf_map_delete_elem(k->fd_principals, &keys[i]) != 0 && errno != ENOENT)
            rc = -errno;
    }
    free(keys);
    return rc;
}

int mnc_kern_bind_check(mnc_kern *k, const char *name, unsigned cls, uint32_t *id)
{
    struct mnc_bind b;
    __u32 key = *id;
    if (key < BIND_IDS && bpf_map_lookup_elem(k->fd_principals, &key, &b) == 0 && b.cls == cls &&
        strncmp(b.name, name, sizeof(b.name)) == 0)
        return 0;
    __u32 *keys;
    int nk, rc = all_keys(k->fd_principals, sizeof(__u32), (void **)&keys, &nk);
    if (rc)
        return rc;
    rc = nk == 0 ? 1 : -ENOENT; /* no binding at all: no mncd ever bound the numbers */
    for (int i = 0; i < nk; i++) {
        if (keys[i] & MNC_BIND_TRANSIT) {
            rc = -ENOENT; /* a translation is running: nothing is settled */
            break;
        }
        if (keys[i] < BIND_IDS && bpf_map_lookup_elem(k->fd_principals, &keys[i], &b) == 0 && b.cls == cls &&
            strncmp(b.name, name, sizeof(b.name)) == 0) {
            *id = keys[i];
            rc = 0;
            break;
        }
    }
    free(keys);
    return rc;
}

/* ---- renumbering */

typedef struct renum {
    const int *map; /* old id -> new id, -1 gone */
    int n_map;
    bool old_exists[BIND_IDS]; /* an old principal had this id */
    int inv[BIND_IDS];         /* new id -> the old id that becomes it, -1 none */
} renum;

/* The bits of w (old numbering) that are safe whichever numbering a destination's entry carries:
 * bit e stays only if every principal that can hold id e during the translation (the one that
 * had it, the one that gets it) is in w. */
static void safe_bits(const renum *r, const __u64 *w, __u64 *out)
{
    memset(out, 0, sizeof(__u64) * MNC_SET_WORDS_ABI);
    for (int e = 0; e < BIND_IDS; e++) {
        bool any = false, ok = true;
        if (r->old_exists[e]) {
            any = true;
            ok = ok && bit(w, e);
        }
        if (r->inv[e] >= 0) {
            any = true;
            ok = ok && bit(w, r->inv[e]);
        }
        if (any && ok)
            set_bit(out, e);
    }
}

/* w (old numbering) in the new numbering; bits of gone principals dropped. */
static void final_bits(const renum *r, const __u64 *w, __u64 *out)
{
    memset(out, 0, sizeof(__u64) * MNC_SET_WORDS_ABI);
    for (int o = 0; o < BIND_IDS && o < r->n_map; o++)
        if (bit(w, o) && r->map[o] >= 0 && r->map[o] < BIND_IDS)
            set_bit(out, r->map[o]);
}

static int new_id(const renum *r, __u32 old) { return old < (__u32)r->n_map ? r->map[old] : -1; }

static int open_pinned(mnc_kern *k, const char *name)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/%s", k->root, name);
    int fd = bpf_obj_get(p);
    return fd < 0 ? -errno : fd;
}

/* file_labels (lsm backend only; -ENOENT elsewhere): every label's sinks through fn. */
static int labels_each(mnc_kern *k, const renum *r, void (*fn)(const renum *, const __u64 *, __u64 *))
{
    int fd = open_pinned(k, "file_labels");
    if (fd == -ENOENT)
        return 0;
    if (fd < 0)
        return fd;
    struct mnc_file_key *keys;
    int nk, rc = all_keys(fd, sizeof(struct mnc_file_key), (void **)&keys, &nk);
    for (int i = 0; rc == 0 && i < nk; i++) {
        struct mnc_label l;
        if (bpf_map_lookup_elem(fd, &keys[i], &l) != 0)
            continue; /* removed meanwhile */
        __u64 w[MNC_SET_WORDS_ABI];
        fn(r, l.sinks, w);
        memcpy(l.sinks, w, sizeof(w));
        rc = sys_rc(bpf_map_update_elem(fd, &keys[i], &l, BPF_EXIST));
        if (rc == -ENOENT)
            rc = 0;
    }
    free(keys);
    close(fd);
    return rc;
}

/* One sink map: each entry's id to its new id; an entry of a principal that is gone (or that no
 * binding names) is deleted when `drop`, else keeps its class with id MNC_ID_NONE (a file or
 * IPC sink stays a sink nobody may reach: fail closed). value_size and the offset of its
 * struct mnc_sink. Counts in *moved and *dropped. */
static int sinks_renum(int fd, size_t key_size, size_t value_size, size_t sink_off, const renum *r, bool drop,
                       mnc_renum_stats *st)
{
    void *keys;
    int nk, rc = all_keys(fd, key_size, &keys, &nk);
    char v[256];
    if (value_size > sizeof(v))
        rc = -EINVAL;
    for (int i = 0; rc == 0 && i < nk; i++) {
        const void *key = (const char *)keys + (size_t)i * key_size;
        if (bpf_map_lookup_elem(fd, key, v) != 0)
            continue;
        struct mnc_sink s;
        memcpy(&s, v + sink_off, sizeof(s));
        if (s.cls == MNC_SINK_MNCD || s.id == MNC_ID_NONE)
            continue;
        int n = new_id(r, s.id);
        if (n == (int)s.id)
            continue;
        if (n < 0 && drop) {
            rc = sys_rc(bpf_map_delete_elem(fd, key));
            st->sinks_dropped++;
            continue;
        }
        s.id = n < 0 ? MNC_ID_NONE : (__u32)n;
        memcpy(v + sink_off, &s, sizeof(s));
        rc = sys_rc(bpf_map_update_elem(fd, key, v, BPF_EXIST));
        if (n < 0)
            st->sinks_dropped++;
        else
            st->sinks_moved++;
    }
    if (rc == -ENOENT)
        rc = 0;
    free(keys);
    return rc;
}

int mnc_kern_renumber(mnc_kern *k, const int *map, int n_map, mnc_renum_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    renum *r = calloc(1, sizeof(*r));
    if (!r)
        return mnc_errf(err, errlen, -ENOMEM, "out of memory");
    r->map = map;
    r->n_map = n_map < BIND_IDS ? n_map : BIND_IDS;
    for (int e = 0; e < BIND_IDS; e++)
        r->inv[e] = -1;
    struct mnc_bind *old = calloc(BIND_IDS, sizeof(*old));
    struct {
        __u32 key;
        struct mnc_taint t;
    } *tv = NULL;
    __u32 *tkeys = NULL;
    struct mnc_agent_key *akeys = NULL;
    int n_old = 0, nt = 0, na = 0, rc = 0;
    bool interrupted;
    const char *step = "read the binding";
    if (!old || (rc = mnc_kern_bind_read(k, old, BIND_IDS, &n_old, &interrupted)) != 0)
        goto out;
    for (int o = 0; o < n_old; o++)
        r->old_exists[o] = old[o].cls != MNC_SINK_NONE;
    for (int o = 0; o < r->n_map; o++)
        if (map[o] >= 0 && map[o] < BIND_IDS)
            r->inv[map[o]] = o;

    /* the old binding moves to MNC_BIND_TRANSIT keys: launchers fail closed meanwhile */
    step = "mark the translation";
    for (int o = 0; rc == 0 && o < n_old; o++) {
        __u32 key = (__u32)o | MNC_BIND_TRANSIT;
        if (old[o].cls != MNC_SINK_NONE)
            rc = sys_rc(bpf_map_update_elem(k->fd_principals, &key, &old[o], BPF_ANY));
    }
    for (int o = 0; rc == 0 && o < n_old; o++) {
        __u32 key = (__u32)o;
        if (old[o].cls != MNC_SINK_NONE && bpf_map_delete_elem(k->fd_principals, &key) != 0 && errno != ENOENT)
            rc = -errno;
    }
    if (rc)
        goto out;

    /* 1. every taint keeps only the bits safe under both numberings (only tighter); labels too */
    step = "read the taint map";
    int ntk;
    if ((rc = all_keys(k->fd_taint, sizeof(__u32), (void **)&tkeys, &ntk)) != 0)
        goto out;
    tv = calloc((size_t)(ntk ? ntk : 1), sizeof(*tv));
    if (!tv) {
        rc = -ENOMEM;
        goto out;
    }
    for (int i = 0; i < ntk; i++) {
        if (tkeys[i] >= BIND_IDS)
            continue; /* self-test agents; stale temporary keys are deleted below */
        if (bpf_map_lookup_elem(k->fd_taint, &tkeys[i], &tv[nt].t) != 0)
            continue;
        tv[nt++].key = tkeys[i];
    }
    step = "tighten the taint entries";
    for (int i = 0; rc == 0 && i < nt; i++) {
        struct mnc_taint t = tv[i].t;
        safe_bits(r, tv[i].t.sinks, t.sinks);
        t.generation++;
        rc = mnc_kern_taint_set(k, tv[i].key, &t);
    }
    step = "tighten the file labels";
    if (rc == 0)
        rc = labels_each(k, r, safe_bits);
    if (rc)
        goto out;

    /* 2. every sink entry gets its new id */
    step = "renumber the sinks";
    rc = sinks_renum(k->fd_unix, sizeof(struct mnc_unix_hkey), sizeof(struct mnc_unix_sink),
                     offsetof(struct mnc_unix_sink, sink), r, true, st);
    if (rc == 0)
        rc = sinks_renum(k->fd_inet, sizeof(struct mnc_inet_key), sizeof(struct mnc_sink), 0, r, true, st);
    if (rc == 0)
        rc = sinks_renum(k->fd_files, sizeof(struct mnc_file_key), sizeof(struct mnc_sink), 0, r, false, st);
    int ifd = rc == 0 ? open_pinned(k, "ipc_sinks") : -ENOENT;
    if (ifd >= 0) {
        rc = sinks_renum(ifd, sizeof(struct mnc_ipc_key), sizeof(struct mnc_sink), 0, r, false, st);
        close(ifd);
    } else if (ifd != -ENOENT) {
        rc = ifd;
    }
    if (rc)
        goto out;

    /* 3. each agent's final taint under a temporary key, and its cgroups there */
    step = "write the temporary taint entries";
    for (int i = 0; rc == 0 && i < nt; i++) {
        int n = new_id(r, tv[i].key);
        if (n < 0)
            continue;
        struct mnc_taint t = tv[i].t;
        final_bits(r, tv[i].t.sinks, t.sinks);
        t.generation += 2;
        tv[i].t = t; /* from now on: the final value */
        rc = mnc_kern_taint_set(k, MNC_BIND_TMP + (uint32_t)n, &t);
    }
    step = "read the agents map";
    if (rc || (rc = all_keys(k->fd_agents, sizeof(struct mnc_agent_key), (void **)&akeys, &na)) != 0)
        goto out;
    step = "move the cgroups to the temporary entries";
    for (int i = 0; rc == 0 && i < na; i++) {
        struct mnc_agent a;
        if (bpf_map_lookup_elem(k->fd_agents, &akeys[i], &a) != 0 || a.agent_id >= BIND_IDS ||
            (a.flags & MNC_AGENT_F_SELFTEST))
            continue;
        int n = new_id(r, a.agent_id);
        if (n < 0) { /* no principal of the new policy: unknown from now on (denied everything) */
            rc = sys_rc(bpf_map_delete_elem(k->fd_agents, &akeys[i]));
            st->cgroups_dropped++;
            continue;
        }
        if (n == (int)a.agent_id)
            st->cgroups_kept++;
        else
            st->cgroups_moved++;
        a.agent_id = MNC_BIND_TMP + (__u32)n;
        rc = sys_rc(bpf_map_update_elem(k->fd_agents, &akeys[i], &a, BPF_EXIST));
    }
    if (rc == -ENOENT)
        rc = 0; /* a cgroup removed meanwhile */
    if (rc)
        goto out;

    /* 4. the final keys, the cgroups there, the rest deleted */
    step = "write the final taint entries";
    bool keep[BIND_IDS] = {false};
    for (int i = 0; rc == 0 && i < nt; i++) {
        int n = new_id(r, tv[i].key);
        if (n < 0)
            continue;
        keep[n] = true;
        rc = mnc_kern_taint_set(k, (uint32_t)n, &tv[i].t);
        st->taints_moved += n != (int)tv[i].key;
    }
    step = "move the cgroups to the final entries";
    for (int i = 0; rc == 0 && i < na; i++) {
        struct mnc_agent a;
        if (bpf_map_lookup_elem(k->fd_agents, &akeys[i], &a) != 0 || a.agent_id < MNC_BIND_TMP ||
            a.agent_id >= MNC_BIND_TMP + BIND_IDS)
            continue;
        a.agent_id -= MNC_BIND_TMP;
        rc = sys_rc(bpf_map_update_elem(k->fd_agents, &akeys[i], &a, BPF_EXIST));
        if (rc == -ENOENT)
            rc = 0;
    }
    step = "delete the old taint entries";
    free(tkeys);
    tkeys = NULL;
    if (rc == 0)
        rc = all_keys(k->fd_taint, sizeof(__u32), (void **)&tkeys, &ntk);
    for (int i = 0; rc == 0 && i < ntk; i++) {
        bool tmp = tkeys[i] >= MNC_BIND_TMP && tkeys[i] < MNC_BIND_TMP + BIND_IDS;
        bool stale = tkeys[i] < BIND_IDS && !keep[tkeys[i]];
        if (tmp || stale) {
            if (bpf_map_delete_elem(k->fd_taint, &tkeys[i]) != 0 && errno != ENOENT)
                rc = -errno;
            st->taints_dropped += stale;
        }
    }
    step = "renumber the file labels";
    if (rc == 0)
        rc = labels_each(k, r, final_bits);
out:
    free(akeys);
    free(tkeys);
    free(tv);
    free(old);
    free(r);
    if (rc)
        return mnc_errf(err, errlen, rc, "renumbering principals: %s: %s", step, strerror(-rc));
    return 0;
}

int mnc_kern_bind_abandon(mnc_kern *k) { return bind_clear(k); }

/* ---- sinks the policy no longer names */

static int key_listed(const void *key, const void *list, int n, size_t size)
{
    for (int i = 0; i < n; i++)
        if (memcmp((const char *)list + (size_t)i * size, key, size) == 0)
            return 1;
    return 0;
}

/* Deletes every entry of fd whose key is not among list[0..n) (except mncd's own socket). */
static int prune(int fd, size_t key_size, size_t value_size, size_t sink_off, const void *list, int n, int *dropped)
{
    void *keys;
    int nk, rc = all_keys(fd, key_size, &keys, &nk);
    char v[256];
    for (int i = 0; rc == 0 && i < nk; i++) {
        const void *key = (const char *)keys + (size_t)i * key_size;
        if (key_listed(key, list, n, key_size) || value_size > sizeof(v) || bpf_map_lookup_elem(fd, key, v) != 0)
            continue;
        struct mnc_sink s;
        memcpy(&s, v + sink_off, sizeof(s));
        if (s.cls == MNC_SINK_MNCD)
            continue;
        if (bpf_map_delete_elem(fd, key) != 0 && errno != ENOENT)
            rc = -errno;
        else
            (*dropped)++;
    }
    free(keys);
    return rc;
}

int mnc_kern_sinks_prune(mnc_kern *k, const struct mnc_unix_hkey *u, int nu, const struct mnc_inet_key *in, int ni,
                         const struct mnc_file_key *f, int nf, int *dropped)
{
    *dropped = 0;
    int rc = prune(k->fd_unix, sizeof(*u), sizeof(struct mnc_unix_sink), offsetof(struct mnc_unix_sink, sink), u, nu,
                   dropped);
    if (rc == 0)
        rc = prune(k->fd_inet, sizeof(*in), sizeof(struct mnc_sink), 0, in, ni, dropped);
    if (rc == 0)
        rc = prune(k->fd_files, sizeof(*f), sizeof(struct mnc_sink), 0, f, nf, dropped);
    return rc;
}

int mnc_kern_names_prune(mnc_kern *k, int n)
{
    __u32 *keys;
    int nk, rc = all_keys(k->fd_names, sizeof(__u32), (void **)&keys, &nk);
    for (int i = 0; rc == 0 && i < nk; i++)
        if (keys[i] >= (__u32)n && bpf_map_delete_elem(k->fd_names, &keys[i]) != 0 && errno != ENOENT)
            rc = -errno;
    free(keys);
    return rc;
}

int mnc_kern_names_read(mnc_kern *k, struct mnc_bind *tab, int max, int *n)
{
    memset(tab, 0, (size_t)max * sizeof(*tab));
    *n = 0;
    __u32 *keys;
    int nk, rc = all_keys(k->fd_names, sizeof(__u32), (void **)&keys, &nk);
    for (int i = 0; rc == 0 && i < nk; i++) {
        struct mnc_name v;
        if (keys[i] >= (__u32)max || bpf_map_lookup_elem(k->fd_names, &keys[i], &v) != 0)
            continue;
        memcpy(tab[keys[i]].name, v.name, sizeof(v.name));
        tab[keys[i]].name[MNC_NAME_LEN - 1] = 0;
        tab[keys[i]].cls = v.cls;
        if ((int)keys[i] + 1 > *n)
            *n = (int)keys[i] + 1;
    }
    free(keys);
    return rc;
}
