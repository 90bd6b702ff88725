/* SPDX-License-Identifier: GPL-2.0 */
/* mnc_maps.bpf.h - the maps every mnc BPF object shares, and the helpers around them.
 *
 * Each hook family is its own object (sock_addr.bpf.c, sock_create.bpf.c, ...), and each
 * declares these maps. They are pinned by name (LIBBPF_PIN_BY_NAME) under the pin root the
 * loader passes as bpf_object_open_opts.pin_root_path (default /sys/fs/bpf/mnc), so every
 * object reuses the same map instances, and a reload adopts the existing maps instead of
 * creating empty ones. Map names are the pin file names: keep them <= 15 characters.
 */
#ifndef MNC_MAPS_BPF_H
#define MNC_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "mnc_abi.h"

#ifndef AF_UNIX
#define AF_UNIX 1
#endif
#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#ifndef AF_PACKET
#define AF_PACKET 17
#endif
#ifndef SOCK_RAW
#define SOCK_RAW 3
#endif

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_CGROUPS);
    __type(key, struct mnc_agent_key);
    __type(value, struct mnc_agent);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} agents SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_TAINTS);
    __type(key, __u32);
    __type(value, struct mnc_taint);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} taint SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_SOCK_SINKS);
    __type(key, struct mnc_unix_hkey);
    __type(value, struct mnc_unix_sink);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} sock_unix SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_SOCK_SINKS);
    __type(key, struct mnc_inet_key);
    __type(value, struct mnc_sink);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} sock_inet SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_FILE_SINKS);
    __type(key, struct mnc_file_key);
    __type(value, struct mnc_sink);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} file_sinks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_TAINTS);
    __type(key, __u32);
    __type(value, struct mnc_name);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} names SEC(".maps");

/* principal id -> the name it stands for in the other maps (mncd's binding; no program reads
 * it: declared here so that every object pins the same BTF-typed map) */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_TAINTS);
    __type(key, __u32);
    __type(value, struct mnc_bind);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} principals SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct mnc_config);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} settings SEC(".maps");

/* per-reason totals (allows too): per-CPU so the hot path never bounces a cache line */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, MNC_K__COUNT);
    __type(key, __u32);
    __type(value, __u64);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} counters SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, MNC_EVENTS_BYTES);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} events SEC(".maps");

static __always_inline void mnc_count(__u32 reason)
{
    __u64 *c = bpf_map_lookup_elem(&counters, &reason);
    if (c)
        *c += 1;
}

/* The caller's agent entry, or NULL (unknown cgroup inside the tree: deny).
 * The cgroup id is what bpf_get_current_cgroup_id() returns (task_dfl_cgroup(current)'s kn->id)
 * read through the task's BTF pointer: the verifier inlines bpf_get_current_task_btf and the
 * loads are plain (RCU-protected: every mnc program runs under rcu_read_lock), where the
 * helper call cost ~30 ns on each gated call on this host (measured next to a program that
 * only returns; docs/kernel.md, "Where a gated call's time goes"). */
static __always_inline struct mnc_agent *mnc_current_agent(__u64 *cgid)
{
    struct task_struct *task = bpf_get_current_task_btf();
    struct mnc_agent_key k = {.cgroup_id = task->cgroups->dfl_cgrp->kn->id};
    *cgid = k.cgroup_id;
    return bpf_map_lookup_elem(&agents, &k);
}

/* Reserves and fills the common part of a deny event, without anything about the current
 * task (pid 0, empty comm): for hooks that also run in softirq context (cgroup_skb), where
 * "current" is an unrelated interrupted task. Counts MNC_K_EVENT_LOST when the ring is full. */
static __always_inline struct mnc_event *mnc_event_reserve(__u64 cgid, const struct mnc_agent *a,
                                                           const struct mnc_taint *t, __u32 reason, __u8 hook)
{
    struct mnc_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
    if (!ev) {
        mnc_count(MNC_K_EVENT_LOST);
        return 0;
    }
    __builtin_memset(ev, 0, sizeof(*ev));
    ev->ts_ns = bpf_ktime_get_ns();
    ev->cgroup_id = cgid;
    ev->generation = t ? t->generation : 0;
    ev->agent_id = a ? a->agent_id : 0xffffffffu;
    ev->dst_id = MNC_ID_NONE;
    ev->reason = (__u16)reason;
    ev->hook = hook;
    return ev;
}

/* Fills and submits a deny event; counts MNC_K_EVENT_LOST when the ring is full. The caller
 * fills the destination part through `ev` before calling mnc_event_submit. For hooks that run
 * in the calling task's context: adds its pid and comm. */
static __always_inline struct mnc_event *mnc_event_begin(__u64 cgid, const struct mnc_agent *a,
                                                         const struct mnc_taint *t, __u32 reason, __u8 hook)
{
    struct mnc_event *ev = mnc_event_reserve(cgid, a, t, reason, hook);
    if (!ev)
        return 0;
    ev->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
    bpf_get_current_comm(ev->comm, sizeof(ev->comm));
    return ev;
}

/* Fills a deny event's destination (a sink label, and the IP or UNIX address if known) and
 * submits it. Shared by the cgroup and the LSM socket hooks. */
static __always_inline void mnc_event_submit_dst(struct mnc_event *ev, __u32 cls, __u32 id,
                                                 const struct mnc_inet_key *ik, const struct mnc_unix_key *uk)
{
    ev->dst_class = (__u8)cls;
    ev->dst_id = id;
    if (ik) {
        ev->family = ik->family;
        ev->port = ik->port;
        __builtin_memcpy(ev->addr, ik->addr, sizeof(ev->addr));
    }
    if (uk) {
        ev->family = AF_UNIX;
        __builtin_memcpy(ev->path, uk->path, sizeof(ev->path));
        ev->path_alen = uk->alen;
        ev->path_type = uk->type;
    }
    bpf_ringbuf_submit(ev, 0);
}

/* The sink label of an IP destination, in the ABI's lookup order (mnc_inet_lookup_key:
 * exact, whole host, port on every address). One order for connect/sendmsg, egress, the LSM
 * hooks and mncd's sweep. */
static __always_inline struct mnc_sink *mnc_sock_inet_lookup(const struct mnc_inet_key *k)
{
    struct mnc_inet_key q;
#pragma unroll
    for (int i = 0; i < MNC_INET_LOOKUP_STEPS; i++) {
        if (!mnc_inet_lookup_key(k, i, &q))
            continue;
        struct mnc_sink *s = bpf_map_lookup_elem(&sock_inet, &q);
        if (s)
            return s;
    }
    return 0;
}

/* The sink label of a UNIX address, keyed as mnc_unix_key_build leaves b: the sock_unix entry
 * of its hash, if that entry's key is b's (mnc_unix_hkey). One lookup for the sock_addr and the
 * LSM hooks. */
static __always_inline struct mnc_sink *mnc_sock_unix_lookup(const union mnc_unix_buf *b)
{
    struct mnc_unix_hkey hk = {.hash = mnc_unix_key_hash(b)};
    struct mnc_unix_sink *v = bpf_map_lookup_elem(&sock_unix, &hk);
    return v && mnc_unix_key_same(b, &v->key) ? &v->sink : 0;
}

#endif
