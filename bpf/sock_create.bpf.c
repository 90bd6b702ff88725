// SPDX-License-Identifier: GPL-2.0
/* sock_create.bpf.c - the cgroup hooks on a socket itself rather than on its traffic.
 *
 * cgroup/sock_create: no raw IP sockets for agents (they would let an agent craft traffic that
 * the sock_addr hooks never see), and no IP sockets at all for an unknown cgroup inside the mnc
 * tree (fail closed).
 *
 * cgroup/setsockopt: once tainted, an agent sets only the options whose value no dump reports
 * (mnc_sockopt_verdict in mnc_abi.h); an unknown cgroup inside the tree sets none. The kernel
 * runs it for every family before the option is applied; optval is not read.
 *
 * The kernel runs this hook from inet_create/inet6_create only, so it sees AF_INET and
 * AF_INET6 sockets and nothing else: AF_PACKET is denied by the launcher's seccomp filter
 * (user/mncctl/cmd_run.c), AF_UNIX traffic by the connect/sendmsg_unix hooks. The AF_PACKET
 * test below is kept for kernels that extend the hook to other families. */
#include "mnc_maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("cgroup/sock_create")
int mnc_sock_create(struct bpf_sock *ctx)
{
    __u64 cgid = 0;
    struct mnc_agent *a = mnc_current_agent(&cgid);
    __u32 family = ctx->family, type = ctx->type, proto = ctx->protocol;
    __u32 r;

    if (!a)
        r = MNC_K_DENY_UNKNOWN_AGENT;
    else if (family == AF_PACKET)
        r = MNC_K_DENY_PACKET_SOCKET;
    else if ((family == AF_INET || family == AF_INET6) && type == SOCK_RAW)
        r = MNC_K_DENY_RAW_SOCKET;
    else
        r = MNC_K_ALLOW_SOCKET;
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 1;
    struct mnc_event *ev = mnc_event_begin(cgid, a, 0, r, MNC_HOOK_SOCK_CREATE);
    if (ev) {
        ev->family = (__u16)family;
        ev->port = (__u16)type;
        ev->protocol = proto;
        ev->dst_class = MNC_SINK_NONE;
        bpf_ringbuf_submit(ev, 0);
    }
    return 0;
}

/* Whether the caller is inside the mnc tree (or cannot be shown to be outside it: a tree
 * deeper than 16 levels, no settings entry). */
static __always_inline int mnc_current_in_tree(void)
{
    __u32 zero = 0;
    struct mnc_config *c = bpf_map_lookup_elem(&settings, &zero);
    if (!c || !c->tree_cgroup_id)
        return 1;
    for (int lvl = 1; lvl <= 16; lvl++) {
        __u64 anc = bpf_get_current_ancestor_cgroup_id(lvl);
        if (anc == 0)
            return 0; /* deeper than the caller's own cgroup */
        if (anc == c->tree_cgroup_id)
            return 1;
    }
    return 1;
}

/* The kernel runs this for the cgroup the socket was made in, which is not always the caller's:
 * the server end of a UNIX connection is made by the connecting task, so mncd setting
 * SO_PASSCRED on a connection an agent made runs it too. The caller is judged: an agent by its
 * taint, a process outside the tree (mncd, an outsider holding an agent's socket) not at all,
 * anything else inside the tree is refused. */
SEC("cgroup/setsockopt")
int mnc_setsockopt(struct bpf_sockopt *ctx)
{
    __u64 cgid = 0;
    struct mnc_agent *a = mnc_current_agent(&cgid);
    if (!a && !mnc_current_in_tree())
        return 1;
    struct mnc_taint *t = a ? bpf_map_lookup_elem(&taint, &a->agent_id) : 0;
    int level = ctx->level, optname = ctx->optname;
    __u32 r = a ? mnc_sockopt_verdict(t, level, optname) : MNC_K_DENY_UNKNOWN_AGENT;

    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 1;
    struct mnc_event *ev = mnc_event_begin(cgid, a, t, r, MNC_HOOK_SETSOCKOPT);
    if (ev) {
        ev->protocol = (__u32)level;
        ev->port = (__u16)optname;
        ev->dst_class = MNC_SINK_NONE;
        bpf_ringbuf_submit(ev, 0);
    }
    return 0; /* EPERM */
}
