// SPDX-License-Identifier: GPL-2.0
/* sock_addr.bpf.c - cgroup sock_addr hooks: connect and sendmsg (with an address) for IPv4,
 * IPv6 and UNIX sockets of processes inside the mnc cgroup tree, gated by the caller's taint
 * and the destination's sink label (mnc_decide in mnc_abi.h).
 *
 * Coverage (docs/kernel.md): connect(2) on any socket, and sendto/sendmsg with a destination
 * address (UDP, unconnected UNIX datagrams). Sends on an already connected socket carry no
 * address and do not reach these hooks: such a connection was checked when it was made.
 */
#include "mnc_maps.bpf.h"
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

static __always_inline int mnc_gate(__u8 hook, const struct mnc_sink *dst, int path_bad, const struct mnc_inet_key *ik,
                                    const struct mnc_unix_key *uk)
{
    __u64 cgid = 0;
    struct mnc_agent *a = mnc_current_agent(&cgid);
    struct mnc_taint *t = 0;
    __u32 cls = dst ? (__u32)dst->cls : MNC_SINK_EXTERNAL;
    __u32 id = dst ? dst->id : MNC_ID_NONE;
    __u32 r;

    if (cls == MNC_SINK_MNCD) {
        r = MNC_K_ALLOW_MNCD; /* even before registration: the launcher talks to mncd */
    } else if (!a) {
        r = MNC_K_DENY_UNKNOWN_AGENT;
    } else {
        t = bpf_map_lookup_elem(&taint, &a->agent_id);
        /* Every registered agent must name UNIX peers by absolute canonical path: "/a//log" or
         * "./log" would dodge the path key (an untainted agent would reach a socket-addressed
         * log sink it has no right to; a tainted one any registered peer). */
        if (path_bad)
            r = MNC_K_DENY_UNIX_PATH;
        else
            r = mnc_decide(t, cls, id);
    }
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 1;

    struct mnc_event *ev = mnc_event_begin(cgid, a, t, r, hook);
    if (ev)
        mnc_event_submit_dst(ev, cls, id, ik, uk);
    return 0; /* EPERM */
}

static __always_inline int mnc_gate4(struct bpf_sock_addr *ctx, __u8 hook)
{
    struct mnc_inet_key k = {.family = AF_INET};
    __u32 ip = ctx->user_ip4;
    __builtin_memcpy(k.addr, &ip, 4);
    k.port = bpf_ntohs((__u16)ctx->user_port);
    return mnc_gate(hook, mnc_sock_inet_lookup(&k), 0, &k, 0);
}

static __always_inline int mnc_gate6(struct bpf_sock_addr *ctx, __u8 hook)
{
    struct mnc_inet_key k = {};
    /* whole-word ctx reads: the empty asm keeps clang from narrowing them into byte loads of
     * ctx at an offset, which the verifier refuses */
    __u32 w0 = ctx->user_ip6[0], w1 = ctx->user_ip6[1], w2 = ctx->user_ip6[2], w3 = ctx->user_ip6[3];
    asm volatile("" : "+r"(w0), "+r"(w1), "+r"(w2), "+r"(w3));
    __u8 a[16];
    __builtin_memcpy(a, &w0, 4);
    __builtin_memcpy(a + 4, &w1, 4);
    __builtin_memcpy(a + 8, &w2, 4);
    __builtin_memcpy(a + 12, &w3, 4);
    mnc_inet_key_set6(&k, a); /* IPv4-mapped: a dual-stack socket reaching an IPv4 destination */
    k.port = bpf_ntohs((__u16)ctx->user_port);
    return mnc_gate(hook, mnc_sock_inet_lookup(&k), 0, &k, 0);
}

static __always_inline int mnc_gate_unix(struct bpf_sock_addr *ctx, __u8 hook)
{
    struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
    /* The kernel's own copy of the address (a struct sockaddr_storage that the socket call
     * filled before the hook), typed as what it is, so that sun_path is read with plain loads
     * rather than a bpf_probe_read_kernel call. The verifier marks them PTR_UNTRUSTED and the
     * JIT guards each one; they cannot fault on that copy. */
    const struct sockaddr_un *su = bpf_core_cast(sa->uaddr, struct sockaddr_un);
    union mnc_unix_buf b = {};
    __u32 n = sa->uaddrlen;

    /* sun_path follows the 2-byte sun_family. mnc_unix_key_build drops what lies past n and,
     * of a pathname, what lies past its first NUL: so only the words up to the one holding byte
     * n - 1 (word nw), and of a pathname up to the one holding its NUL, are loaded; the others
     * stay zero. (Callers mostly pass sizeof(struct sockaddr_un) for a path of a few words.) */
    n = n > 2 ? n - 2 : 0;
    __u32 nw = (n < MNC_UNIX_PATH_MAX ? n : MNC_UNIX_PATH_MAX) / 8;
    int pathname = 0, ended = 0;
    MNC_NOUNROLL
    for (__u32 i = 0; i < MNC_UNIX_KEY_WORDS - 1; i++) {
        __u64 w = *(const __u64 *)(su->sun_path + 8 * i);
        b.w[i] = w;
        if (i >= nw)
            break;
        if (i == 0)
            pathname = (mnc_w_le(w) & 0xff) != 0;
        if (pathname && mnc_w_zero(mnc_w_le(w))) {
            ended = 1;
            break;
        }
    }
    if (!ended && nw >= MNC_UNIX_KEY_WORDS - 1) {
        /* the last 4 bytes of sun_path; the buffer's 4 bytes past them are not part of the key */
        __u32 last = *(const __u32 *)(su->sun_path + 8 * (MNC_UNIX_KEY_WORDS - 1));
        __builtin_memcpy(&b.key.path[8 * (MNC_UNIX_KEY_WORDS - 1)], &last, sizeof(last));
    }
    int kind = mnc_unix_key_build(&b, n, ctx->type);
    struct mnc_sink *dst = mnc_sock_unix_lookup(&b);
    return mnc_gate(hook, dst, mnc_unix_refused(kind, dst != 0, &b), 0, &b.key);
}

SEC("cgroup/connect4")
int mnc_connect4(struct bpf_sock_addr *ctx) { return mnc_gate4(ctx, MNC_HOOK_CONNECT4); }

SEC("cgroup/sendmsg4")
int mnc_sendmsg4(struct bpf_sock_addr *ctx) { return mnc_gate4(ctx, MNC_HOOK_SENDMSG4); }

SEC("cgroup/connect6")
int mnc_connect6(struct bpf_sock_addr *ctx) { return mnc_gate6(ctx, MNC_HOOK_CONNECT6); }

SEC("cgroup/sendmsg6")
int mnc_sendmsg6(struct bpf_sock_addr *ctx) { return mnc_gate6(ctx, MNC_HOOK_SENDMSG6); }

SEC("cgroup/connect_unix")
int mnc_connect_unix(struct bpf_sock_addr *ctx) { return mnc_gate_unix(ctx, MNC_HOOK_CONNECT_UNIX); }

SEC("cgroup/sendmsg_unix")
int mnc_sendmsg_unix(struct bpf_sock_addr *ctx) { return mnc_gate_unix(ctx, MNC_HOOK_SENDMSG_UNIX); }
