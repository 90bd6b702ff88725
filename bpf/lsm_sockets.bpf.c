// SPDX-License-Identifier: GPL-2.0
/* lsm_sockets.bpf.c - BPF LSM: sockets of agents.
 *
 * - socket_create: no raw IP or packet sockets for agents, no sockets for an unknown cgroup
 *   inside the tree (as the cgroup backend's sock_create).
 * - socket_connect / socket_sendmsg for IPv4 and IPv6: the destination (connect address,
 *   sendto address, or - for a socket connected earlier - its current peer) against sock_inet.
 *   Checking the peer on every send is what makes a connection opened before the taint
 *   useless after it.
 * - unix_stream_connect / unix_may_send, and socket_sendmsg on connected UNIX stream sockets:
 *   the peer socket itself, first by the inode of its bound path (file_sinks: immune to
 *   relative paths, symlinks and renamed directories), then by its bound name (sock_unix, as
 *   registered for the cgroup backend; abstract names as "@name").
 * - socket_sendmsg on UNIX sockets also reads the message's control data: an agent, tainted or
 *   not, may pass fds (SCM_RIGHTS) only to a socket made in its own cgroup
 *   (mnc_fds_out_verdict). The kernel copied the control data before calling the hook
 *   (____sys_sendmsg), so what is read here is what the kernel will act on.
 * - socket_setsockopt: once tainted, an agent sets only the options whose value no dump
 *   reports (mnc_sockopt_verdict), as the cgroup backend's cgroup/setsockopt.
 * Unregistered destinations are MNC_SINK_EXTERNAL, exactly as in the cgroup backend. */
#include "lsm_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MNC_SOCK_STREAM 1
#define MNC_SOCK_SEQPACKET 5

static __always_inline int mnc_lsm_deny_sock(const struct mnc_subject *s, struct mnc_taint *t, __u32 r, __u8 hook,
                                             __u32 cls, __u32 id, const struct mnc_inet_key *ik,
                                             const struct mnc_unix_key *uk)
{
    struct mnc_event *ev = mnc_event_begin(s->cgid, s->a, t, r, hook);
    if (ev)
        mnc_event_submit_dst(ev, cls, id, ik, uk);
    return -EPERM;
}

static __always_inline int mnc_lsm_inet_gate(const struct mnc_subject *s, struct mnc_inet_key *k, __u8 hook)
{
    struct mnc_sink *dst = mnc_sock_inet_lookup(k);
    __u32 cls = dst ? (__u32)dst->cls : MNC_SINK_EXTERNAL;
    __u32 id = dst ? dst->id : MNC_ID_NONE;
    struct mnc_taint *t = 0;
    __u32 r = mnc_lsm_verdict(s, cls, id, &t);
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    return mnc_lsm_deny_sock(s, t, r, hook, cls, id, k, 0);
}

/* sockaddr (kernel copy) -> key; 0 if it is not an IPv4/IPv6 address */
static __always_inline int mnc_inet_key_of_sockaddr(const struct sockaddr *sa, int len, struct mnc_inet_key *k)
{
    __u16 fam = 0;
    if (!sa || len < 2 || bpf_probe_read_kernel(&fam, sizeof(fam), &sa->sa_family))
        return 0;
    if (fam == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const void *)sa;
        k->family = AF_INET;
        k->port = bpf_ntohs(BPF_CORE_READ(in, sin_port));
        __u32 a = BPF_CORE_READ(in, sin_addr.s_addr);
        __builtin_memcpy(k->addr, &a, 4);
        return 1;
    }
    if (fam == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        __u8 a[16];
        if (bpf_probe_read_kernel(a, sizeof(a), &in6->sin6_addr))
            return 0;
        k->port = bpf_ntohs(BPF_CORE_READ(in6, sin6_port));
        mnc_inet_key_set6(k, a); /* IPv4-mapped: judged as IPv4 */
        return 1;
    }
    return 0;
}

/* the current peer of a connected inet socket; 0 if it has none */
static __always_inline int mnc_inet_key_of_peer(struct sock *sk, __u16 fam, struct mnc_inet_key *k)
{
    __u16 dport = BPF_CORE_READ(sk, __sk_common.skc_dport);
    if (dport == 0)
        return 0; /* not connected */
    k->port = bpf_ntohs(dport);
    if (fam == AF_INET) {
        __u32 a = BPF_CORE_READ(sk, __sk_common.skc_daddr);
        k->family = AF_INET;
        __builtin_memcpy(k->addr, &a, 4);
        return 1;
    }
    __u8 a[16];
    if (bpf_probe_read_kernel(a, sizeof(a), &sk->__sk_common.skc_v6_daddr))
        return 0;
    mnc_inet_key_set6(k, a);
    return 1;
}

/* A UNIX peer: by the inode of its bound path, else by its bound name. */
static __always_inline int mnc_lsm_unix_gate(const struct mnc_subject *s, struct sock *peer, __u8 hook)
{
    struct unix_sock *u = (struct unix_sock *)peer;
    struct mnc_sink *dst = 0;
    union mnc_unix_buf b = {};
    struct dentry *d = BPF_CORE_READ(u, path.dentry);
    if (d) {
        struct mnc_file_key fk = {};
        /* d came through bpf_probe_read_kernel (a plain scalar to the verifier, since a cast
         * to unix_sock is not a BTF-typed access): read on with BPF_CORE_READ too */
        struct inode *ino = BPF_CORE_READ(d, d_inode);
        if (ino) {
            fk.dev = BPF_CORE_READ(ino, i_sb, s_dev);
            fk.ino = BPF_CORE_READ(ino, i_ino);
            dst = bpf_map_lookup_elem(&file_sinks, &fk);
        }
    }
    struct unix_address *ua = BPF_CORE_READ(u, addr);
    if (ua) {
        int len = BPF_CORE_READ(ua, len);
        __u32 n = len > 2 ? (__u32)len - 2 : 0;
        /* Constant-size read (the verifier cannot follow a clamped variable size through
         * clang's register copies); the key is built as for the cgroup hooks, which drops
         * what lies beyond the bound name. */
        if (n > 0 && bpf_probe_read_kernel(b.key.path, sizeof(b.key.path), ua->name[0].sun_path) == 0) {
            /* a connect or send reaches only a peer of its own type: the peer's type is it */
            mnc_unix_key_build(&b, n, BPF_CORE_READ(peer, sk_type));
            if (!dst)
                dst = mnc_sock_unix_lookup(&b);
        }
    }
    __u32 cls = dst ? (__u32)dst->cls : MNC_SINK_EXTERNAL;
    __u32 id = dst ? dst->id : MNC_ID_NONE;
    struct mnc_taint *t = 0;
    __u32 r = mnc_lsm_verdict(s, cls, id, &t);
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    return mnc_lsm_deny_sock(s, t, r, hook, cls, id, 0, &b.key);
}

SEC("lsm/socket_create")
int BPF_PROG(mnc_lsm_sock_create, int family, int type, int protocol, int kern, int ret)
{
    if (ret)
        return ret;
    if (kern)
        return 0; /* sockets the kernel makes for itself */
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    __u32 r;
    int t = type & 0xf; /* without SOCK_NONBLOCK / SOCK_CLOEXEC */
    if (s.kind != MNC_SUBJ_AGENT)
        r = MNC_K_DENY_UNKNOWN_AGENT;
    else if (family == AF_PACKET)
        r = MNC_K_DENY_PACKET_SOCKET;
    else if ((family == AF_INET || family == AF_INET6) && t == SOCK_RAW)
        r = MNC_K_DENY_RAW_SOCKET;
    else
        r = MNC_K_ALLOW_SOCKET;
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = mnc_event_begin(s.cgid, s.a, 0, r, MNC_HOOK_LSM_SOCKET_CREATE);
    if (ev) {
        ev->family = (__u16)family;
        ev->port = (__u16)type;
        ev->protocol = (__u32)protocol;
        ev->dst_class = MNC_SINK_NONE;
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

SEC("lsm/socket_connect")
int BPF_PROG(mnc_lsm_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
    if (ret)
        return ret;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct mnc_inet_key k = {};
    if (!mnc_inet_key_of_sockaddr(address, addrlen, &k)) {
        /* AF_UNSPEC on an IP socket: a disconnect, which /proc/net/udp shows every user
         * (state, rem_address; attack udp_disconnect_state): judged as an unregistered
         * destination (k all zero). UNIX: unix_stream_connect / unix_may_send. */
        struct sock *sk = BPF_CORE_READ(sock, sk);
        __u16 fam = sk ? BPF_CORE_READ(sk, __sk_common.skc_family) : 0;
        if ((fam != AF_INET && fam != AF_INET6) || addrlen < 2 || BPF_CORE_READ(address, sa_family) != 0)
            return 0;
    }
    return mnc_lsm_inet_gate(&s, &k, MNC_HOOK_LSM_SOCKET_CONNECT);
}

/* Does msg carry SCM_RIGHTS? 1 also when its control data cannot be read to the end (user
 * memory that faults, more headers than MNC_LSM_CMSG_MAX): fail closed. */
#define MNC_LSM_CMSG_MAX 8
static __always_inline int mnc_msg_has_rights(struct msghdr *msg)
{
    __u64 clen = BPF_CORE_READ(msg, msg_controllen);
    if (clen < MNC_CMSG_HDR)
        return 0; /* no header fits: the kernel sees no control message either */
    int user = BPF_CORE_READ_BITFIELD_PROBED(msg, msg_control_is_user);
    const char *ctl = BPF_CORE_READ(msg, msg_control);
    __u64 off = 0;
    for (int i = 0; i < MNC_LSM_CMSG_MAX; i++) {
        struct {
            __u64 len;
            int level, type;
        } h;
        long e = user ? bpf_probe_read_user(&h, sizeof(h), ctl + off) : bpf_probe_read_kernel(&h, sizeof(h), ctl + off);
        if (e)
            return 1;
        if (h.level == MNC_SOL_SOCKET && h.type == MNC_SCM_RIGHTS)
            return 1;
        off = mnc_cmsg_next(h.len, off, clen);
        if (!off)
            return 0;
    }
    return 1;
}

/* For an agent's connected UNIX stream/seqpacket socket: the cgroup the listener it connected to
 * was made in (unix_stream_connect records it). The peer of such a socket is the server's end,
 * which the kernel makes in the *connecting* task (unix_create1 in unix_stream_connect), so its
 * own cgroup says nothing about who accepts it. Not pinned: it lives with the programs. */
struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, __u64);
} unix_listener_cg SEC(".maps");

/* The cgroup id the receiving end of sk (an agent's UNIX socket, a BTF pointer) was made in, as
 * far as the kernel says; 0 when unknown (no peer, an address given with the message, a stream
 * connected to a listener whose cgroup was not recorded). */
static __always_inline __u64 mnc_unix_peer_cgroup(struct sock *sk, struct socket *sock, struct msghdr *msg)
{
    struct sock *peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
    if (!peer || BPF_CORE_READ(msg, msg_name))
        return 0;
    int type = BPF_CORE_READ(sock, type);
    if ((type == MNC_SOCK_STREAM || type == MNC_SOCK_SEQPACKET) && BPF_CORE_READ((struct unix_sock *)peer, addr)) {
        /* the server's end of a connection to a named listener: judged by the listener */
        __u64 *lc = bpf_sk_storage_get(&unix_listener_cg, sk, 0, 0);
        return lc ? *lc : 0;
    }
    /* a socketpair's other end, or the bound socket a datagram socket is connected to */
    return BPF_CORE_READ(peer, sk_cgrp_data.cgroup, kn, id);
}

/* SCM_RIGHTS from an agent to a socket made outside its cgroup: -EPERM with a deny event; 0
 * otherwise (the caller goes on with the destination checks). */
static __always_inline int mnc_lsm_fds_out(const struct mnc_subject *s, struct sock *sk, struct socket *sock,
                                           struct msghdr *msg)
{
    if (!mnc_msg_has_rights(msg))
        return 0;
    __u64 peer_cg = mnc_unix_peer_cgroup(sk, sock, msg);
    __u32 r = s->kind == MNC_SUBJ_AGENT ? mnc_fds_out_verdict(s->cgid, peer_cg) : MNC_K_DENY_UNKNOWN_AGENT;
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_taint *t = 0;
    if (s->a) {
        __u32 aid = s->a->agent_id;
        t = bpf_map_lookup_elem(&taint, &aid);
    }
    return mnc_lsm_deny_sock(s, t, r, MNC_HOOK_LSM_SOCKET_SENDMSG, MNC_SINK_EXTERNAL, MNC_ID_NONE, 0, 0);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(mnc_lsm_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
    if (ret)
        return ret;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct sock *sk = BPF_CORE_READ(sock, sk);
    if (!sk)
        return 0;
    __u16 fam = BPF_CORE_READ(sk, __sk_common.skc_family);
    struct mnc_inet_key k = {};
    if (fam == AF_INET || fam == AF_INET6) {
        void *name = BPF_CORE_READ(msg, msg_name);
        int nlen = BPF_CORE_READ(msg, msg_namelen);
        if (name && !mnc_inet_key_of_sockaddr(name, nlen, &k)) {
            __u16 nf = 0;
            if (nlen < 2 || bpf_probe_read_kernel(&nf, sizeof(nf), name) || nf != 0)
                return 0; /* not AF_UNSPEC: the kernel refuses the address (EINVAL, EAFNOSUPPORT) */
            /* AF_UNSPEC: udp_sendmsg reads it as AF_INET on an IPv4 socket (direct_udp4_unspec);
             * udpv6_sendmsg as "no address", the connected peer */
            if (fam == AF_INET && nlen >= (int)sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = name;
                k.family = AF_INET;
                k.port = bpf_ntohs(BPF_CORE_READ(in, sin_port));
                __u32 a = BPF_CORE_READ(in, sin_addr.s_addr);
                __builtin_memcpy(k.addr, &a, 4);
            } else {
                name = 0;
            }
        }
        if (!name && !mnc_inet_key_of_peer(sk, fam, &k)) {
            /* unconnected and no address: EDESTADDRREQ, unless a UDP cork is pending, which
             * this send would grow unseen (tx_queue; attack udp_cork_pending): judged as an
             * unregistered destination (k all zero) */
            __builtin_memset(&k, 0, sizeof(k));
        }
        return mnc_lsm_inet_gate(&s, &k, MNC_HOOK_LSM_SOCKET_SENDMSG);
    }
    if (fam == AF_UNIX) {
        int fo = mnc_lsm_fds_out(&s, sock->sk, sock, msg); /* sock->sk: a BTF pointer, for sk storage */
        if (fo)
            return fo;
        /* datagrams are checked by unix_may_send; streams here, against the current peer */
        int type = BPF_CORE_READ(sock, type);
        if (type != MNC_SOCK_STREAM && type != MNC_SOCK_SEQPACKET)
            return 0;
        struct sock *peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
        if (!peer)
            return 0;
        return mnc_lsm_unix_gate(&s, peer, MNC_HOOK_LSM_SOCKET_SENDMSG);
    }
    return 0;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(mnc_lsm_ustream, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
    if (ret)
        return ret;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    /* whose listener this is, for the fds the agent may pass on the connection later */
    __u64 *lc = bpf_sk_storage_get(&unix_listener_cg, sock, 0, BPF_SK_STORAGE_GET_F_CREATE);
    if (lc)
        *lc = BPF_CORE_READ(other, sk_cgrp_data.cgroup, kn, id);
    return mnc_lsm_unix_gate(&s, other, MNC_HOOK_LSM_UNIX_STREAM_CONNECT);
}

SEC("lsm/unix_may_send")
int BPF_PROG(mnc_lsm_umaysend, struct socket *sock, struct socket *other, int ret)
{
    if (ret)
        return ret;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct sock *peer = BPF_CORE_READ(other, sk);
    if (!peer)
        return 0;
    return mnc_lsm_unix_gate(&s, peer, MNC_HOOK_LSM_UNIX_MAY_SEND);
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(mnc_lsm_setsockopt, struct socket *sock, int level, int optname, int ret)
{
    if (ret)
        return ret;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct mnc_taint *t = mnc_lsm_taint(&s);
    __u32 r = s.kind == MNC_SUBJ_AGENT ? mnc_sockopt_verdict(t, level, optname) : MNC_K_DENY_UNKNOWN_AGENT;
    return mnc_lsm_taint_end(&s, t, r, MNC_HOOK_LSM_SOCKET_SETSOCKOPT, (__u32)level, (__u16)optname);
}
