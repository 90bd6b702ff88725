/* SPDX-License-Identifier: GPL-2.0 */
/* lsm_common.bpf.h - shared by the lsm_*.bpf.c programs: who the caller is (agent, unknown
 * cgroup inside the mnc tree, or not ours), what a dentry is (sink file, below a sink
 * directory, or neither), and the common verdict/count/event path.
 *
 * LSM programs run for every task on the system, unlike cgroup programs that only run inside
 * the tree they are attached to; so every hook first decides whether the caller is ours, and
 * returns 0 at once when it is not. Keep that first step cheap: it is on every write(). */
#ifndef MNC_LSM_COMMON_BPF_H
#define MNC_LSM_COMMON_BPF_H

#include "mnc_maps.bpf.h"
#include "lsm_abi.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#ifndef EPERM
#define EPERM 1
#endif
#define MNC_FMODE_WRITE 0x2u /* FMODE_WRITE */
#define MNC_MAY_WRITE 0x2    /* MAY_WRITE */

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_IPC_SINKS);
    __type(key, struct mnc_ipc_key);
    __type(value, struct mnc_sink);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ipc_sinks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct mnc_lsm_tree);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} lsm_tree SEC(".maps");

/* Data at rest: the label of what was written into a file or directory (mnc_abi.h, struct
 * mnc_label), by (dev, ino). Allocated on demand: most hosts label few inodes. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_FILE_LABELS);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct mnc_file_key);
    __type(value, struct mnc_label);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} file_labels SEC(".maps");

/* Who is calling. */
#define MNC_SUBJ_NONE 0    /* not an mnc agent and not inside the tree: never gated */
#define MNC_SUBJ_AGENT 1   /* registered agent cgroup */
#define MNC_SUBJ_UNKNOWN 2 /* inside the mnc tree but not registered: fail closed */

struct mnc_subject {
    __u64 cgid;
    struct mnc_agent *a;
    int kind;
};

static __always_inline int mnc_lsm_subject(struct mnc_subject *s)
{
    __u32 zero = 0;
    s->a = 0;
    s->cgid = 0;
    s->kind = MNC_SUBJ_NONE;
    struct mnc_lsm_tree *lt = bpf_map_lookup_elem(&lsm_tree, &zero);
    if (lt && lt->tree_level) {
        /* fast path: outside the tree (nearly every write on the host) costs one helper */
        if (bpf_get_current_ancestor_cgroup_id(lt->tree_level) != lt->tree_cgroup_id)
            return MNC_SUBJ_NONE;
        s->a = mnc_current_agent(&s->cgid);
        s->kind = s->a ? MNC_SUBJ_AGENT : MNC_SUBJ_UNKNOWN;
        return s->kind;
    }
    /* lsm_tree not written (older loader): agents first, then search the tree upwards */
    s->a = mnc_current_agent(&s->cgid);
    if (s->a) {
        s->kind = MNC_SUBJ_AGENT;
        return s->kind;
    }
    struct mnc_config *c = bpf_map_lookup_elem(&settings, &zero);
    if (!c || !c->tree_cgroup_id)
        return s->kind;
    __u64 tree = c->tree_cgroup_id;
    for (int lvl = 1; lvl <= MNC_LSM_CG_LEVELS; lvl++) {
        __u64 anc = bpf_get_current_ancestor_cgroup_id(lvl);
        if (anc == 0)
            break; /* deeper than the caller's own cgroup */
        if (anc == tree) {
            s->kind = MNC_SUBJ_UNKNOWN;
            break;
        }
    }
    return s->kind;
}

/* Verdict for a caller of kind MNC_SUBJ_AGENT/UNKNOWN towards a destination (cls, id). *tp gets
 * the taint entry used (NULL if none). Same rules as the cgroup backend: mnc_decide. */
static __always_inline __u32 mnc_lsm_verdict(const struct mnc_subject *s, __u32 cls, __u32 id, struct mnc_taint **tp)
{
    *tp = 0;
    if (cls == MNC_SINK_MNCD)
        return MNC_K_ALLOW_MNCD;
    if (s->kind != MNC_SUBJ_AGENT || !s->a)
        return MNC_K_DENY_UNKNOWN_AGENT;
    __u32 aid = s->a->agent_id;
    *tp = bpf_map_lookup_elem(&taint, &aid);
    return mnc_decide(*tp, cls, id);
}

/* For hooks judged by the caller's taint alone (socket_setsockopt, file_lock): the taint entry of
 * an agent caller; NULL for an unknown cgroup or an agent without one. */
static __always_inline struct mnc_taint *mnc_lsm_taint(const struct mnc_subject *s)
{
    if (s->kind != MNC_SUBJ_AGENT || !s->a)
        return 0;
    __u32 aid = s->a->agent_id;
    return bpf_map_lookup_elem(&taint, &aid);
}

/* Ends such a hook with its verdict r: counts it; a denial gets an event with no destination,
 * protocol and port saying what was refused, and -EPERM. 0 if r allows. */
static __always_inline int mnc_lsm_taint_end(const struct mnc_subject *s, struct mnc_taint *t, __u32 r, __u8 hook,
                                             __u32 protocol, __u16 port)
{
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = mnc_event_begin(s->cgid, s->a, t, r, hook);
    if (ev) {
        ev->protocol = protocol;
        ev->port = port;
        ev->dst_class = MNC_SINK_NONE;
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

/* ---- files */
#define MNC_WALK_NONE 0 /* no sink on the way up to the filesystem root */
#define MNC_WALK_SINK 1 /* *out is the sink found (the dentry itself or a directory above) */
#define MNC_WALK_DEEP 2 /* bound exceeded */

/* Direct loads through BTF pointers (d->d_inode->i_sb->s_dev), not BPF_CORE_READ: in LSM
 * programs the verifier turns them into single fault-safe loads, where every BPF_CORE_READ
 * step would be a bpf_probe_read_kernel() helper call. This is the hot path of every write()
 * an agent makes, so it matters (docs/lsm.md, performance). Field offsets are still CO-RE
 * relocated (vmlinux.h marks every struct preserve_access_index). */
static __always_inline int mnc_file_key_of(struct dentry *d, struct mnc_file_key *k)
{
    struct inode *ino = d->d_inode;
    if (!ino)
        return 0; /* negative dentry (a name being created) */
    k->dev = ino->i_sb->s_dev;
    k->ino = ino->i_ino;
    return 1;
}

/* Walks from d up through its parents (on its superblock; mounts do not matter because sinks
 * are keyed by (dev, ino)) and reports the first registered sink. */
static __always_inline int mnc_dentry_walk(struct dentry *d, struct mnc_sink *out, struct mnc_file_key *hit)
{
    for (int i = 0; i < MNC_LSM_WALK_MAX; i++) {
        struct mnc_file_key k = {};
        if (!d)
            return MNC_WALK_NONE;
        if (mnc_file_key_of(d, &k)) {
            struct mnc_sink *s = bpf_map_lookup_elem(&file_sinks, &k);
            if (s) {
                *out = *s;
                *hit = k;
                return MNC_WALK_SINK;
            }
        }
        struct dentry *p = d->d_parent;
        if (p == d)
            return MNC_WALK_NONE; /* the root of this filesystem */
        d = p;
    }
    return MNC_WALK_DEEP;
}

/* Walks from d up through its parents (on its superblock: a bind mount of a directory inside a
 * labelled one still reaches it) and reports the first label that taint t does not imply
 * (mnc_label_allows): 1 with its key in *hit, else 0. An inode labelled for another file that
 * once had its number (gen differs) is not a label. A file deeper than the walk is judged by
 * the labels on the way: every inode mncd labels has its own entry, which is looked up first. */
static __always_inline int mnc_label_walk(struct dentry *d, const struct mnc_taint *t, struct mnc_file_key *hit)
{
    for (int i = 0; i < MNC_LSM_WALK_MAX; i++) {
        if (!d)
            return 0;
        struct inode *ino = d->d_inode;
        if (ino) {
            struct mnc_file_key k = {.dev = ino->i_sb->s_dev, .ino = ino->i_ino};
            struct mnc_label *l = bpf_map_lookup_elem(&file_labels, &k);
            if (l && (!(l->flags & MNC_LABEL_F_GEN) || l->gen == ino->i_generation) && !mnc_label_allows(t, l)) {
                *hit = k;
                return 1;
            }
        }
        struct dentry *p = d->d_parent;
        if (p == d)
            return 0; /* the root of this filesystem */
        d = p;
    }
    return 0;
}

/* The data-at-rest gate of an agent opening (or receiving) file f for reading or writing: 0, or
 * -EPERM with a deny event (reason MNC_K_DENY_LABEL; the file's key, never its name, which the
 * writer chose) when f or a directory above it carries a label the caller's taint does not
 * already imply. Callers outside the mnc tree are never gated. */
static __always_inline int mnc_lsm_label_gate(struct file *f, __u8 hook)
{
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct mnc_taint *t = mnc_lsm_taint(&s);
    struct mnc_file_key hit = {};
    if (!mnc_label_walk(f->f_path.dentry, t, &hit))
        return 0;
    mnc_count(MNC_K_DENY_LABEL);
    struct mnc_event *ev = mnc_event_begin(s.cgid, s.a, t, MNC_K_DENY_LABEL, hook);
    if (ev) {
        ev->dst_class = MNC_SINK_NONE;
        ev->dst_id = MNC_ID_NONE;
        __builtin_memcpy(ev->addr, &hit.dev, 8);
        __builtin_memcpy(ev->addr + 8, &hit.ino, 8);
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

static __always_inline void mnc_event_file(struct mnc_event *ev, const struct mnc_file_key *k, struct dentry *d)
{
    __builtin_memcpy(ev->addr, &k->dev, 8);
    __builtin_memcpy(ev->addr + 8, &k->ino, 8);
    if (d) {
        const unsigned char *name = BPF_CORE_READ(d, d_name.name);
        if (name)
            bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), name);
    }
}

/* The whole file gate: 0 to allow, -EPERM to deny. `d` is where the walk starts (the file,
 * or the directory a name is created in); `name` (may be NULL) names the object in events. */
static __always_inline int mnc_lsm_file_gate(struct dentry *d, struct dentry *name, __u8 hook)
{
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct mnc_sink sink = {};
    struct mnc_file_key hit = {};
    int w = mnc_dentry_walk(d, &sink, &hit);
    if (w == MNC_WALK_NONE)
        return 0; /* not a sink and not below one: an ordinary file */
    struct mnc_taint *t = 0;
    __u32 r;
    if (w == MNC_WALK_DEEP) {
        r = MNC_K_DENY_WALK_DEPTH; /* the event says dst_class = MNC_SINK_NONE */
        sink.cls = MNC_SINK_NONE;
        sink.id = MNC_ID_NONE;
        if (s.a) {
            __u32 aid = s.a->agent_id;
            t = bpf_map_lookup_elem(&taint, &aid);
        }
    } else {
        r = mnc_lsm_verdict(&s, (__u32)sink.cls, sink.id, &t);
    }
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = mnc_event_begin(s.cgid, s.a, t, r, hook);
    if (ev) {
        ev->dst_class = (__u8)sink.cls;
        ev->dst_id = sink.id;
        mnc_event_file(ev, &hit, name ? name : d);
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

#endif
