// SPDX-License-Identifier: GPL-2.0
/* sock_egress.bpf.c - cgroup_skb/egress: every IPv4/IPv6 packet sent by a socket that was
 * created inside the mnc tree is re-checked against its agent's CURRENT taint.
 *
 * Why: the sock_addr hooks (sock_addr.bpf.c) run at connect() and at sendmsg() with an
 * address only. A TCP connection or a connected UDP socket opened while the agent was
 * untainted, and a socket accepted from a listener, would otherwise keep sending after the
 * agent received a no-forward disclosure. This program closes that gap for IP: the packet's
 * destination (daddr, dport) is looked up in sock_inet exactly like connect4/6 do, and
 * mnc_decide (mnc_abi.h) decides with the taint entry as it is now. Denied packets are dropped
 * (return 0); the sender sees EPERM from send() for UDP/ICMP; for TCP the data is queued, never
 * leaves the host, and the connection stalls (docs/kernel.md, "Egress").
 *
 * The agent is identified by the SOCKET's cgroup (bpf_skb_cgroup_id), not the current task:
 * the hook also runs in softirq context (ACKs, retransmissions), where "current" is whatever
 * task was interrupted. Costs, per packet: a registered untainted agent pays two hash lookups
 * (agents, taint) and returns; only tainted agents parse headers and look up the destination.
 *
 * Loopback: when the destination is not registered and the packet leaves through the loopback
 * device, the receiving socket is looked up (bpf_sk_lookup_tcp/udp); if it was created by a
 * registered agent, the destination is that agent (class agent, its principal id). So replies on
 * sockets accepted from another agent's connection are judged as sends to that agent, and
 * traffic between processes of the same agent is not blocked.
 */
#include "mnc_maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MNC_ETH_P_IP 0x0800
#define MNC_ETH_P_IPV6 0x86DD
#define MNC_LOOPBACK_IFINDEX 1 /* the loopback device is always ifindex 1 in its netns */
#define MNC_IPPROTO_TCP 6
#define MNC_IPPROTO_UDP 17
#define MNC_IPPROTO_UDPLITE 136
#define MNC_IPPROTO_SCTP 132
#define MNC_NEXTHDR_HOP 0
#define MNC_NEXTHDR_ROUTING 43
#define MNC_NEXTHDR_FRAGMENT 44
#define MNC_NEXTHDR_DEST 60
#define MNC_IP_OFFSET_MASK 0x1fff

/* Per socket: 1 + the taint generation of the last deny event sent for it. A TCP connection
 * whose packets are dropped retransmits for minutes; one event per socket and taint generation
 * is enough for the audit log (the counter still counts every dropped packet). Not pinned:
 * it is only de-duplication state, a reload may start afresh. */
struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, __u64);
} egress_seen SEC(".maps");

/* The packet's destination, parsed from its headers (the skb starts at the network header). */
struct mnc_pkt {
    struct mnc_inet_key k;
    struct bpf_sock_tuple tuple; /* for the loopback peer lookup */
    __u32 tuple_size;
    __u8 proto;
    __u8 has_ports;
    __u8 suspicious; /* IPv6 routing header: the real destination is not daddr */
};

static __always_inline int mnc_ports_proto(__u8 p)
{
    return p == MNC_IPPROTO_TCP || p == MNC_IPPROTO_UDP || p == MNC_IPPROTO_UDPLITE || p == MNC_IPPROTO_SCTP;
}

/* Returns 0 if the headers were read, -1 otherwise (then the caller treats the destination as
 * unregistered, the strictest class for a tainted agent). */
static __always_inline int mnc_parse(struct __sk_buff *skb, struct mnc_pkt *p)
{
    __u32 off;
    __u16 ports[2];

    if (skb->protocol == bpf_htons(MNC_ETH_P_IP)) {
        struct iphdr ip;
        if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) != 0)
            return -1;
        p->k.family = AF_INET;
        __builtin_memcpy(p->k.addr, &ip.daddr, 4);
        p->proto = ip.protocol;
        p->tuple.ipv4.saddr = ip.saddr;
        p->tuple.ipv4.daddr = ip.daddr;
        p->tuple_size = sizeof(p->tuple.ipv4);
        off = (__u32)ip.ihl * 4;
        if (ip.frag_off & bpf_htons(MNC_IP_OFFSET_MASK))
            return 0; /* a non-first fragment carries no ports: (daddr, 0) */
    } else if (skb->protocol == bpf_htons(MNC_ETH_P_IPV6)) {
        struct ipv6hdr ip6;
        if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) != 0)
            return -1;
        __u8 da[16];
        __builtin_memcpy(da, &ip6.daddr, 16);
        mnc_inet_key_set6(&p->k, da); /* as connect6 does; never on the wire, kept for symmetry */
        __builtin_memcpy(p->tuple.ipv6.saddr, &ip6.saddr, 16);
        __builtin_memcpy(p->tuple.ipv6.daddr, &ip6.daddr, 16);
        p->tuple_size = sizeof(p->tuple.ipv6);
        __u8 nh = ip6.nexthdr;
        off = sizeof(ip6);
        /* a few extension headers; anything deeper is treated as unregistered */
#pragma unroll
        for (int i = 0; i < 4; i++) {
            if (nh != MNC_NEXTHDR_HOP && nh != MNC_NEXTHDR_DEST && nh != MNC_NEXTHDR_ROUTING &&
                nh != MNC_NEXTHDR_FRAGMENT)
                break;
            __u8 eh[2];
            if (bpf_skb_load_bytes(skb, off, eh, sizeof(eh)) != 0)
                return -1;
            if (nh == MNC_NEXTHDR_ROUTING)
                p->suspicious = 1;
            if (nh == MNC_NEXTHDR_FRAGMENT) {
                __u16 fo;
                if (bpf_skb_load_bytes(skb, off + 2, &fo, sizeof(fo)) != 0)
                    return -1;
                nh = eh[0];
                off += 8;
                if (bpf_ntohs(fo) & 0xfff8)
                    goto noports; /* not the first fragment */
                continue;
            }
            nh = eh[0];
            off += ((__u32)eh[1] + 1) * 8;
        }
        p->proto = nh;
    } else {
        return -1;
    }
    if (!mnc_ports_proto(p->proto))
        return 0; /* ICMP and friends: the whole host (daddr, 0) */
    if (bpf_skb_load_bytes(skb, off, ports, sizeof(ports)) != 0)
        return -1;
    p->has_ports = 1;
    p->k.port = bpf_ntohs(ports[1]);
    if (p->tuple_size == sizeof(p->tuple.ipv4)) {
        p->tuple.ipv4.sport = ports[0];
        p->tuple.ipv4.dport = ports[1];
    } else {
        p->tuple.ipv6.sport = ports[0];
        p->tuple.ipv6.dport = ports[1];
    }
    return 0;
noports:
    p->proto = 0;
    return 0;
}

/* Loopback only: the agent that owns the receiving socket, or NULL. */
static __always_inline struct mnc_agent *mnc_loopback_peer(struct __sk_buff *skb, struct mnc_pkt *p)
{
    struct bpf_sock *sk = 0;
    if (!p->has_ports)
        return 0;
    /* the verifier wants a bounded tuple length (the helper checks v4/v6 sizes itself) */
    __u32 sz = p->tuple_size;
    if (sz > sizeof(p->tuple))
        return 0;
    if (p->proto == MNC_IPPROTO_TCP)
        sk = bpf_sk_lookup_tcp(skb, &p->tuple, sz, BPF_F_CURRENT_NETNS, 0);
    else if (p->proto == MNC_IPPROTO_UDP)
        sk = bpf_sk_lookup_udp(skb, &p->tuple, sz, BPF_F_CURRENT_NETNS, 0);
    if (!sk)
        return 0;
    struct mnc_agent_key pk = {.cgroup_id = bpf_sk_cgroup_id(sk)};
    bpf_sk_release(sk);
    return bpf_map_lookup_elem(&agents, &pk);
}

SEC("cgroup_skb/egress")
int mnc_egress(struct __sk_buff *skb)
{
    struct mnc_agent_key ak = {.cgroup_id = bpf_skb_cgroup_id(skb)};
    struct mnc_agent *a = bpf_map_lookup_elem(&agents, &ak);
    struct mnc_taint *t = 0;

    if (a) {
        t = bpf_map_lookup_elem(&taint, &a->agent_id);
        /* Fast path. An untainted agent's destinations were checked at connect()/sendmsg()
         * with the same untainted rules (base rights for log/memory sinks); egress exists for
         * taint acquired afterwards. */
        if (t && !t->tainted)
            return 1;
    }

    struct mnc_pkt p = {};
    __u32 cls = MNC_SINK_EXTERNAL, id = MNC_ID_NONE, r;
    int parsed = mnc_parse(skb, &p) == 0;
    if (parsed && !p.suspicious) {
        struct mnc_sink *s = mnc_sock_inet_lookup(&p.k);
        if (s) {
            cls = (__u32)s->cls;
            id = s->id;
        } else if (a && skb->ifindex == MNC_LOOPBACK_IFINDEX) {
            struct mnc_agent *peer = mnc_loopback_peer(skb, &p);
            if (peer) {
                cls = MNC_SINK_AGENT;
                id = peer->agent_id;
                if (id == a->agent_id)
                    return 1; /* between processes of the same agent: no boundary crossed */
            }
        }
    }

    if (cls == MNC_SINK_MNCD)
        r = MNC_K_ALLOW_MNCD; /* the monitor stays reachable, even for an unknown cgroup */
    else if (!a)
        r = MNC_K_DENY_UNKNOWN_AGENT; /* e.g. a socket that outlived its agent's registration */
    else if (t && t->tainted && (!parsed || p.suspicious))
        r = MNC_K_DENY_EXTERNAL; /* unreadable or re-routed (IPv6 routing header): fail closed */
    else
        r = mnc_decide(t, cls, id);
    if (mnc_kreason_allows(r))
        return 1; /* allows are not counted: per packet they would swamp the per-call counters */

    mnc_count(r);
    /* one event per socket and taint generation (see egress_seen) */
    __u64 gen1 = (t ? t->generation : 0) + 1;
    struct bpf_sock *sk = skb->sk;
    if (sk)
        sk = bpf_sk_fullsock(sk);
    if (sk) {
        __u64 *seen = bpf_sk_storage_get(&egress_seen, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
        if (seen) {
            if (*seen == gen1)
                return 0;
            *seen = gen1;
        }
    }
    struct mnc_event *ev = mnc_event_reserve(ak.cgroup_id, a, t, r, MNC_HOOK_EGRESS);
    if (ev) {
        ev->protocol = p.proto;
        mnc_event_submit_dst(ev, cls, id, &p.k, 0);
    }
    return 0; /* drop: the sender gets EPERM (UDP) or a stalled connection (TCP) */
}
