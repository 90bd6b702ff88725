// SPDX-License-Identifier: GPL-2.0
/* sock_egress.bpf.c - the cgroup_skb hooks: every IPv4/IPv6 packet sent (egress) or received
 * (ingress) by a socket that was created inside the mnc tree is judged against its agent's
 * CURRENT taint. One rule for both directions: a tainted agent exchanges packets only with the
 * endpoints it may send to (mnc_decide, mnc_abi.h).
 *
 * Why egress: the sock_addr hooks (sock_addr.bpf.c) run at connect() and at sendmsg() with an
 * address only. A TCP connection or a connected UDP socket opened while the agent was
 * untainted, and a socket accepted from a listener, would otherwise keep sending after the
 * agent received a no-forward disclosure. The packet's destination (daddr, dport) is looked up
 * in sock_inet exactly like connect4/6 do. Denied packets are dropped (return 0); the sender
 * sees EPERM from send() for UDP/ICMP; for TCP the data is queued, never leaves the host, and
 * the connection stalls (docs/kernel.md, "Egress").
 *
 * Why ingress: what a tainted agent does with what it RECEIVES is visible to every user. It
 * reads a secret-dependent number of the datagrams an outsider queued on its socket and
 * /proc/net/udp (sock_diag) shows the rest as rx_queue (attack udp_recvq_diag): the outsider
 * supplies the carrier, the agent modulates it by reading. On this backend a refused sendto
 * still autobinds the socket (cgroup/sendmsg4 runs inside udp_sendmsg, after inet_sendmsg gave
 * the socket a port), so the agent can always get a port an outsider can address. Ingress
 * drops a tainted agent's packets whose SOURCE (saddr, sport) it could not send to, so nothing
 * but its permitted peers can fill its queues. Replies from permitted sinks pass.
 *
 * The agent is identified by the SOCKET's cgroup (bpf_skb_cgroup_id; on ingress the kernel
 * sets skb->sk to the receiving socket for the program), not the current task: both hooks run
 * in softirq context, where "current" is whatever task was interrupted. Costs, per packet: a
 * registered untainted agent pays two hash lookups (agents, taint) and returns; only tainted
 * agents parse headers and look up the peer.
 *
 * Loopback: when the peer is not registered and the packet crosses the loopback device, egress
 * looks the receiving socket up (bpf_sk_lookup_tcp/udp, unicast loopback addresses only:
 * mnc_inet_loopback_unicast, since a broadcast reaches every socket on the port); if a registered
 * agent created it, the peer is that agent (class agent, its principal id). Egress also marks
 * every registered agent's loopback packet with its sender (mnc_skb_mark_of), and ingress names
 * the peer by that mark, never by the source address, which any local process can choose. So
 * replies on sockets accepted from another agent's connection are judged as sends to that agent,
 * and traffic between processes of the same agent is not blocked.
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

/* Per socket and direction: 1 + the taint generation of the last deny event sent for it. A
 * TCP connection whose packets are dropped retransmits for minutes; one event per socket,
 * direction and taint generation is enough for the audit log (the counter still counts every
 * dropped packet). Not pinned: it is only de-duplication state, a reload may start afresh. */
struct mnc_skb_seen {
    __u64 gen1[2]; /* [MNC_DIR_EGRESS], [MNC_DIR_INGRESS] */
};
struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct mnc_skb_seen);
} egress_seen SEC(".maps");

enum { MNC_DIR_EGRESS = 0, MNC_DIR_INGRESS = 1 };

/* The packet's peer (its destination on egress, its source on ingress), parsed from its headers
 * (the skb starts at the network header in both directions). */
struct mnc_pkt {
    struct mnc_inet_key k;
    struct bpf_sock_tuple tuple; /* for the loopback peer lookup: addressed TO the peer's socket */
    __u32 tuple_size;
    __u8 proto;
    __u8 has_ports;
    __u8 suspicious; /* IPv6 routing header: the real destination is not daddr */
};

static __always_inline int mnc_ports_proto(__u8 p)
{
    return p == MNC_IPPROTO_TCP || p == MNC_IPPROTO_UDP || p == MNC_IPPROTO_UDPLITE || p == MNC_IPPROTO_SCTP;
}

/* Returns 0 if the headers were read, -1 otherwise (then the caller treats the peer as
 * unregistered, the strictest class for a tainted agent). `in`: the packet is incoming, so the
 * peer is its source (the tuple, used by egress's loopback lookup only, is then the reverse). */
static __always_inline int mnc_parse(struct __sk_buff *skb, struct mnc_pkt *p, int in)
{
    __u32 off;
    __u16 ports[2];

    if (skb->protocol == bpf_htons(MNC_ETH_P_IP)) {
        struct iphdr ip;
        if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) != 0)
            return -1;
        p->k.family = AF_INET;
        __builtin_memcpy(p->k.addr, in ? &ip.saddr : &ip.daddr, 4);
        p->proto = ip.protocol;
        p->tuple.ipv4.saddr = in ? ip.daddr : ip.saddr;
        p->tuple.ipv4.daddr = in ? ip.saddr : ip.daddr;
        p->tuple_size = sizeof(p->tuple.ipv4);
        off = (__u32)ip.ihl * 4;
        if (ip.frag_off & bpf_htons(MNC_IP_OFFSET_MASK))
            return 0; /* a non-first fragment carries no ports: (daddr, 0) */
    } else if (skb->protocol == bpf_htons(MNC_ETH_P_IPV6)) {
        struct ipv6hdr ip6;
        if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) != 0)
            return -1;
        __u8 pa[16];
        if (in)
            __builtin_memcpy(pa, &ip6.saddr, 16);
        else
            __builtin_memcpy(pa, &ip6.daddr, 16);
        mnc_inet_key_set6(&p->k, pa); /* v4-mapped as connect6 does; never on the wire, kept for symmetry */
        __builtin_memcpy(p->tuple.ipv6.saddr, in ? &ip6.daddr : &ip6.saddr, 16);
        __builtin_memcpy(p->tuple.ipv6.daddr, pa, 16);
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
    __u16 mine = in ? ports[1] : ports[0], peer = in ? ports[0] : ports[1];
    p->k.port = bpf_ntohs(peer);
    if (p->tuple_size == sizeof(p->tuple.ipv4)) {
        p->tuple.ipv4.sport = mine;
        p->tuple.ipv4.dport = peer;
    } else {
        p->tuple.ipv6.sport = mine;
        p->tuple.ipv6.dport = peer;
    }
    return 0;
noports:
    p->proto = 0;
    return 0;
}

/* Egress on loopback only: the agent that owns the receiving socket, or NULL. (Ingress never
 * looks the sender up: its source address is the sender's choice; it reads egress's mark.) */
static __always_inline struct mnc_agent *mnc_loopback_peer(struct __sk_buff *skb, struct mnc_pkt *p)
{
    struct bpf_sock *sk = 0;
    if (!p->has_ports || !mnc_inet_loopback_unicast(&p->k))
        return 0; /* broadcast, multicast, or not a loopback address: one lookup is not the receiver */
    /* a constant length per call: Linux 6.1's verifier refuses a length it cannot prove non-zero
     * ("invalid zero-sized read"), which a bounded variable is once both directions inline this */
    int v6 = p->tuple_size == sizeof(p->tuple.ipv6);
    if (!v6 && p->tuple_size != sizeof(p->tuple.ipv4))
        return 0;
    if (p->proto == MNC_IPPROTO_TCP)
        sk = v6 ? bpf_sk_lookup_tcp(skb, &p->tuple, sizeof(p->tuple.ipv6), BPF_F_CURRENT_NETNS, 0)
                : bpf_sk_lookup_tcp(skb, &p->tuple, sizeof(p->tuple.ipv4), BPF_F_CURRENT_NETNS, 0);
    else if (p->proto == MNC_IPPROTO_UDP)
        sk = v6 ? bpf_sk_lookup_udp(skb, &p->tuple, sizeof(p->tuple.ipv6), BPF_F_CURRENT_NETNS, 0)
                : bpf_sk_lookup_udp(skb, &p->tuple, sizeof(p->tuple.ipv4), BPF_F_CURRENT_NETNS, 0);
    if (!sk)
        return 0;
    struct mnc_agent_key pk = {.cgroup_id = bpf_sk_cgroup_id(sk)};
    bpf_sk_release(sk);
    return bpf_map_lookup_elem(&agents, &pk);
}

/* The verdict on one packet of an agent's socket: 1 pass, 0 drop. `in` as for mnc_parse. */
static __always_inline int mnc_skb_judge(struct __sk_buff *skb, int in)
{
    struct mnc_agent_key ak = {.cgroup_id = bpf_skb_cgroup_id(skb)};
    struct mnc_agent *a = bpf_map_lookup_elem(&agents, &ak);
    struct mnc_taint *t = 0;

    if (a) {
        /* egress on lo: the packet carries its sender (mnc_skb_mark_of) for the receiver's ingress */
        if (!in && skb->ifindex == MNC_LOOPBACK_IFINDEX)
            skb->mark = mnc_skb_mark_of(a->agent_id);
        t = bpf_map_lookup_elem(&taint, &a->agent_id);
        /* Fast path. An untainted agent's destinations were checked at connect()/sendmsg()
         * with the same untainted rules (base rights for log/memory sinks); these hooks exist
         * for taint acquired afterwards, and for what a tainted agent is sent. */
        if (t && !t->tainted)
            return 1;
    }

    struct mnc_pkt p = {};
    __u32 cls = MNC_SINK_EXTERNAL, id = MNC_ID_NONE, r;
    int parsed = mnc_parse(skb, &p, in) == 0;
    if (parsed && !p.suspicious) {
        struct mnc_sink *s = mnc_sock_inet_lookup(&p.k);
        if (s) {
            cls = (__u32)s->cls;
            id = s->id;
        } else if (a && skb->ifindex == MNC_LOOPBACK_IFINDEX) {
            /* egress: the receiving socket's agent; ingress: the sender's, from the mark */
            __u32 pid;
            struct mnc_agent *peer = in ? 0 : mnc_loopback_peer(skb, &p);
            int known = in ? mnc_skb_mark_agent(skb->mark, &pid) : peer != 0;
            if (known) {
                cls = MNC_SINK_AGENT;
                id = in ? pid : peer->agent_id;
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
    /* one event per socket, direction and taint generation (see egress_seen) */
    __u64 gen1 = (t ? t->generation : 0) + 1;
    struct bpf_sock *sk = skb->sk;
    if (sk)
        sk = bpf_sk_fullsock(sk);
    if (sk) {
        struct mnc_skb_seen *seen = bpf_sk_storage_get(&egress_seen, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
        if (seen) {
            __u64 *g = in ? &seen->gen1[MNC_DIR_INGRESS] : &seen->gen1[MNC_DIR_EGRESS];
            if (*g == gen1)
                return 0;
            *g = gen1;
        }
    }
    struct mnc_event *ev = mnc_event_reserve(ak.cgroup_id, a, t, r, in ? MNC_HOOK_INGRESS : MNC_HOOK_EGRESS);
    if (ev) {
        ev->protocol = p.proto;
        mnc_event_submit_dst(ev, cls, id, &p.k, 0);
    }
    return 0;
}

/* drop: the sender gets EPERM (UDP) or a stalled connection (TCP) */
SEC("cgroup_skb/egress")
int mnc_egress(struct __sk_buff *skb) { return mnc_skb_judge(skb, 0); }

/* drop: the datagram or segment is never queued on the agent's socket (TCP retransmits; a
 * handshake from a peer the agent may not send to never completes) */
SEC("cgroup_skb/ingress")
int mnc_ingress(struct __sk_buff *skb) { return mnc_skb_judge(skb, 1); }
