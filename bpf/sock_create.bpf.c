// SPDX-License-Identifier: GPL-2.0
/* sock_create.bpf.c - cgroup/sock_create: no raw IP sockets for agents (they would let an
 * agent craft traffic that the sock_addr hooks never see), and no IP sockets at all for an
 * unknown cgroup inside the mnc tree (fail closed).
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
