/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mnc_abi.h - the kernel/user ABI of mnc, defined once.
 *
 * Included by the BPF programs (after vmlinux.h) and by user space (libmnc, loader, mncd).
 * Everything here must be plain data plus static inline pure functions: no helpers, no maps.
 * Changing a layout here changes the pinned maps; bump MNC_ABI_VERSION when you do (the loader
 * refuses to adopt pinned maps whose key/value sizes differ: libbpf checks on reuse).
 *
 * Every map key and value is a named struct so that `bpftool map dump pinned ...` prints named
 * fields (the maps are declared with __type(key, ...) / __type(value, ...)).
 */
#ifndef MNC_ABI_H
#define MNC_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* 3: struct mnc_sink / mnc_name hold the class as __u32 (was an enum); reason 19
 * (MNC_K_DENY_WALK_DEPTH) and the counters map grew to MNC_K__COUNT = 20 entries.
 * 4: struct mnc_unix_key carries an abstract name's length and socket type (alen, type), and
 * struct mnc_event the length, so that "\0name" and "\0name\0", or a stream and a datagram
 * socket bound to one name - different sockets to the kernel - are different keys.
 * 5: reasons 4 (MNC_K_ALLOW_OWN_FDS) and 20 (MNC_K_DENY_FDS_OUT): fds an agent passes out;
 * the counters map grew to MNC_K__COUNT = 21 entries.
 * 6: reason 21 (MNC_K_DENY_SOCKOPT): options a tainted agent sets; MNC_K__COUNT = 22.
 * 7: reason 22 (MNC_K_DENY_LOCK): file locks a tainted agent takes or drops (lsm backend);
 * MNC_K__COUNT = 23.
 * 8: sock_unix is keyed by a 64-bit hash of the mnc_unix_key (struct mnc_unix_hkey), and its
 * value (struct mnc_unix_sink) holds the sink and the whole key, which every lookup compares:
 * hashing 112 bytes in the kernel's jhash2 was a third of each UNIX connect/send's cost.
 * 9: the principals map (struct mnc_bind: the name and class each pinned principal id stands
 * for, written by mncd alone, so that a restart on an edited policy binds the pinned numbers
 * by name), the lsm backend's file_labels map (struct mnc_label: the label of data at rest,
 * by (dev, ino)), and reason 23 (MNC_K_DENY_LABEL); MNC_K__COUNT = 24. */
#define MNC_ABI_VERSION 9

/* Address families as the kernel numbers them (vmlinux.h has no AF_* macros). */
#define MNC_AF_INET 2
#define MNC_AF_INET6 10

/* Sink classes. Agents are sinks too (the receivers of messages and forwards). Ids of agents
 * and sinks share one namespace of at most 256 entries (see user/include/mnc/set.h). */
enum mnc_sink_class {
    MNC_SINK_NONE = 0,
    MNC_SINK_AGENT = 1,
    MNC_SINK_LOG = 2,
    MNC_SINK_MEMORY = 3,
    MNC_SINK_TOOL = 4,
    MNC_SINK_EXTERNAL = 5, /* also the class of any unregistered destination */
    MNC_SINK_MNCD = 6,     /* the monitor's own socket: always reachable */
};

/* ---- sizes (the maps are sized for 1e4 agent cgroups and 1e5 sinks of each kind) */
#define MNC_SET_WORDS_ABI 4           /* == MNC_SET_WORDS in mnc/set.h: 256 principal ids */
#define MNC_MAX_CGROUPS 10000         /* agents map: live agent cgroups */
#define MNC_MAX_TAINTS 1024           /* taint map: agent ids (policy ids < 256, plus reserved) */
#define MNC_MAX_SOCK_SINKS 100000     /* sock_unix and sock_inet, each */
#define MNC_MAX_FILE_SINKS 100000     /* file_sinks */
#define MNC_EVENTS_BYTES (256 * 1024) /* ring buffer of deny events */
#define MNC_UNIX_PATH_MAX 108         /* sizeof(((struct sockaddr_un *)0)->sun_path) */
#define MNC_NAME_LEN 64               /* == MNC_NAME_MAX in mnc/policy.h */
#define MNC_TREE_PATH_MAX 256

/* Destination id of a destination that no map names (class MNC_SINK_EXTERNAL). */
#define MNC_ID_NONE 0xffffu
/* Agent ids >= this are the loader's functional self-tests (base | (pid & 0xfffff)), so that
 * concurrent self-tests never share an entry; never policy ids. */
#define MNC_SELFTEST_AGENT_BASE 0xfff00000u

/* ---- agents: cgroup id (the inode number of the cgroup v2 directory) -> agent */
struct mnc_agent_key {
    __u64 cgroup_id;
};

#define MNC_AGENT_F_LAUNCHED 0x1u /* registered by `mncctl run` (or mncd on its behalf) */
#define MNC_AGENT_F_SELFTEST 0x2u /* the loader's scratch self-test cgroup */
#define MNC_AGENT_F_ROOT 0x4u     /* launched --as-root (uid 0, reduced capabilities): doctor warns */
#define MNC_AGENT_F_STDIO_PASS                                                                                         \
    0x8u /* launched --stdio passthrough: its stdout/stderr are the
                                     * caller's, not governed by taint (audited; doctor warns) */

struct mnc_agent {
    __u32 agent_id; /* principal id in the policy (key of the taint map) */
    __u32 flags;    /* MNC_AGENT_F_* */
};

/* ---- taint: agent id -> what the agent may still reach given the disclosures it holds.
 * mncd computes it: sinks = intersection of φ over held disclosures (all ones is never
 * written for a tainted agent: an agent holding nothing is `tainted = 0`); may_memory = AND of μ;
 * may_log = every held disclosure names at least one log sink; may_forward = φ names onward
 * agents; may_external = every held disclosure allows unregistered external destinations.
 * For an untainted agent (tainted = 0) sinks/may_log/may_memory are the agent's *base rights*
 * to reach log and memory sinks directly (normally none: those are reachable through mncd only).
 * generation increases with every update (mncd); deny events carry it. */
struct mnc_taint {
    __u64 sinks[MNC_SET_WORDS_ABI]; /* bit i of sinks[i / 64]: principal id i allowed */
    __u8 may_log;
    __u8 may_memory;
    __u8 may_forward; /* informational in the cgroup backend (agent ids are checked in sinks) */
    __u8 may_external;
    __u8 tainted;
    __u8 pad[3];
    __u64 generation;
};

/* ---- socket sinks */
/* UNIX socket address, stored as the sun_path bytes the caller passed, zero padded. An
 * abstract address (leading NUL) is stored with '@' in place of that NUL, so that bpftool
 * prints it; registered paths are absolute, so '@...' never collides with a pathname.
 * An abstract name is binary and its length is part of it (unix(7): the kernel compares
 * addrlen bytes), so zero padding alone would make "\0name", "\0name\0" and "\0name" padded
 * to 108 bytes one key though they are three sockets: alen keeps them apart. The kernel also
 * keeps abstract names per socket type (net/unix/af_unix.c, unix_abstract_hash: a stream, a
 * datagram and a seqpacket socket can each hold the same name, and a connect or send reaches
 * the one of its own type): type keeps those apart. A pathname is one inode, bound once, so
 * it needs neither. */
struct mnc_unix_key {
    char path[MNC_UNIX_PATH_MAX];
    __u16 alen; /* abstract name: its length in sun_path (the leading NUL counted); pathname: 0 */
    __u16 type; /* abstract name: the socket type (SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_SEQPACKET 5);
                   pathname: 0 */
};

/* sock_unix's key: mnc_unix_key_hash of the mnc_unix_key it stands for. The map's own hash of
 * 8 bytes is cheap where one of 112 was not, and most of a path's words are zero padding, which
 * mnc_unix_key_hash skips. Two keys may share a hash: the value carries the whole key, every
 * lookup compares it (mnc_unix_key_same), and a different key is an unregistered destination,
 * which it is. Two registered keys with one hash cannot both be stored: the loader refuses the
 * second (mnc_kern_sink_unix_add, -EEXIST); not expected to happen (2^-64 per pair). */
struct mnc_unix_hkey {
    __u64 hash;
};

/* IP destination. family is AF_INET (2) or AF_INET6 (10); addr holds the address in network
 * order (IPv4 in addr[0..3], rest zero; IPv4-mapped IPv6 destinations are looked up as IPv4);
 * port in host order. port 0 = every port of addr; an all-zero addr = port on every address
 * (use it for listeners bound to the wildcard address, reachable via 127.0.0.x and 0.0.0.0). */
struct mnc_inet_key {
    __u16 family;
    __u16 port;
    __u8 addr[16];
};

/* Map values hold fixed-width integers only: an enum's size is the compiler's choice (gcc
 * -fshort-enums, clang for BPF), and the same bytes are read by both. */
struct mnc_sink {
    __u32 id;  /* principal id (agent, log, memory, tool, external) */
    __u32 cls; /* enum mnc_sink_class */
};

/* sock_unix's value: the sink label, and the key it labels (printed by bpftool as is). */
struct mnc_unix_sink {
    struct mnc_sink sink;
    struct mnc_unix_key key __attribute__((aligned(8)));
};

/* ---- file sinks: (dev, ino) of log files and memory directories. dev is the kernel's
 * encoding of i_sb->s_dev: (major << 20) | minor (not glibc's st_dev encoding). Inode keying
 * defeats symlinks and hard links. Used by the lsm backend and by the launcher's workspace
 * check (cgroup backend). */
struct mnc_file_key {
    __u64 dev;
    __u64 ino;
};

/* ---- names: principal id -> name, so that dumps and events are readable */
struct mnc_name {
    char name[MNC_NAME_LEN];
    __u32 cls; /* enum mnc_sink_class */
};

/* ---- principals: principal id -> the name and class that id stands for in the pinned maps
 * (agents' values, taint keys and sink bits, sink ids, file labels). Written only by mncd,
 * after it wrote the other maps in those terms; read at its next start, which translates every
 * pinned reference to the running policy's ids BY NAME before using them (docs/kernel.md,
 * "Principals keep their names"). The names map, which launchers and tools also write, is for
 * display only. */
struct mnc_bind {
    char name[MNC_NAME_LEN];
    __u32 cls;   /* enum mnc_sink_class */
    __u32 pad;   /* 0 */
    __u64 epoch; /* the binding's epoch: +1 at every start that changed it (same in every entry) */
};

/* ---- file_labels (lsm backend): (dev, ino) of a file or directory -> the label of the data
 * written there: the taint of the agent that wrote it, as a scope (a label is always tainted).
 * An agent may open a labelled file, or one below a labelled directory, only if its taint
 * already implies the label (mnc_label_allows); mncd gives it the label at launch (docs/
 * kernel.md, "Data at rest"). gen: the inode's i_generation when MNC_LABEL_F_GEN is set (an
 * inode number the filesystem reused for another file then no longer matches). */
#define MNC_LABEL_F_GEN 0x1u
#define MNC_MAX_FILE_LABELS 262144
struct mnc_label {
    __u64 sinks[MNC_SET_WORDS_ABI];
    __u8 may_log;
    __u8 may_memory;
    __u8 may_forward;
    __u8 may_external;
    __u8 flags; /* MNC_LABEL_F_* */
    __u8 pad[3];
    __u32 gen;
    __u32 pad2;
};

/* ---- config: one entry (key 0) written at attach time */
#define MNC_BACKEND_CGROUP 1u
#define MNC_BACKEND_LSM 2u
struct mnc_config {
    __u32 abi_version;
    __u32 backend;                     /* MNC_BACKEND_* */
    __u64 tree_cgroup_id;              /* cgroup id of the mnc tree the programs are attached to */
    char tree_path[MNC_TREE_PATH_MAX]; /* its absolute path (under the cgroup2 mount) */
};

/* ---- kernel decision reasons. Values < MNC_K_DENY_FIRST allow. Also the index of the
 * per-reason counter map. Stable: they go into audit logs. */
enum mnc_kreason {
    MNC_K_ALLOW_MNCD = 0,      /* the monitor's socket */
    MNC_K_ALLOW_UNTAINTED = 1, /* agent holds no disclosure */
    MNC_K_ALLOW_SCOPE = 2,     /* destination is within the taint's scope */
    MNC_K_ALLOW_SOCKET = 3,    /* sock_create: ordinary socket */
    MNC_K_ALLOW_OWN_FDS = 4,   /* fds passed to a socket made in the agent's own cgroup */
    MNC_K_DENY_FIRST = 8,
    MNC_K_DENY_UNKNOWN_AGENT = 8,  /* cgroup inside the mnc tree not in the agents map */
    MNC_K_DENY_NO_TAINT = 9,       /* agent registered but no taint entry */
    MNC_K_DENY_EXTERNAL = 10,      /* tainted; external/unregistered and not allowed */
    MNC_K_DENY_SCOPE = 11,         /* tainted; agent/tool destination not in the allowed set */
    MNC_K_DENY_LOG = 12,           /* log sink without may_log or not in the set */
    MNC_K_DENY_MEMORY = 13,        /* memory sink without may_memory or not in the set */
    MNC_K_DENY_UNIX_PATH = 14,     /* agent; relative or non-canonical UNIX path */
    MNC_K_DENY_RAW_SOCKET = 15,    /* SOCK_RAW on AF_INET/AF_INET6 */
    MNC_K_DENY_PACKET_SOCKET = 16, /* AF_PACKET */
    MNC_K_DENY_BAD_CLASS = 17,     /* corrupt sink entry */
    MNC_K_EVENT_LOST = 18,         /* counter only: a deny event did not fit the ring buffer */
    MNC_K_DENY_WALK_DEPTH = 19,    /* lsm file hooks: the file is nested deeper than the walk
                                     bound (MNC_LSM_WALK_MAX), so it cannot be proven outside
                                     every sink directory: denied (fail closed) */
    MNC_K_DENY_FDS_OUT = 20,       /* lsm socket_sendmsg: an agent (tainted or not) passing fds
                                (SCM_RIGHTS) to a socket made outside its cgroup */
    MNC_K_DENY_SOCKOPT = 21,       /* a tainted agent setting a socket option whose value other
                                      processes read back (mnc_sockopt_verdict) */
    MNC_K_DENY_LOCK = 22,          /* lsm file_lock: a tainted agent taking, changing or dropping
                                      a file lock, whose range others read back (mnc_lock_verdict) */
    MNC_K_DENY_LABEL = 23,         /* lsm file_open/file_receive: the file (or a directory above
                                      it) carries a label (file_labels) that the agent's taint
                                      does not already imply (mnc_label_allows) */
    MNC_K__COUNT = 24,
};

static inline int mnc_kreason_allows(unsigned r) { return r < MNC_K_DENY_FIRST; }

/* May an agent with taint t read data labelled l? Only if t already implies l: t is tainted,
 * every principal t may reach l allows too, and no may_* flag of t is wider than l's. Reading
 * would otherwise teach the agent something it could then send where l forbids. t == 0 (no
 * taint entry): no. Pure. */
static inline int mnc_label_allows(const struct mnc_taint *t, const struct mnc_label *l)
{
    if (!t || !t->tainted)
        return 0;
    __u64 wider = 0;
    for (int i = 0; i < MNC_SET_WORDS_ABI; i++)
        wider |= t->sinks[i] & ~l->sinks[i];
    return wider == 0 && (!t->may_log || l->may_log) && (!t->may_memory || l->may_memory) &&
           (!t->may_forward || l->may_forward) && (!t->may_external || l->may_external);
}

/* ---- hooks (deny events say which one fired) */
enum mnc_hook {
    MNC_HOOK_CONNECT4 = 1,
    MNC_HOOK_CONNECT6 = 2,
    MNC_HOOK_CONNECT_UNIX = 3,
    MNC_HOOK_SENDMSG4 = 4,
    MNC_HOOK_SENDMSG6 = 5,
    MNC_HOOK_SENDMSG_UNIX = 6,
    MNC_HOOK_SOCK_CREATE = 7,
    MNC_HOOK_EGRESS = 8,     /* cgroup_skb/egress: a packet of an agent's socket (pid 0, no comm) */
    MNC_HOOK_SETSOCKOPT = 9, /* cgroup/setsockopt; events: protocol = level, port = optname */
    MNC_HOOK_INGRESS = 10,   /* cgroup_skb/ingress: a packet TO an agent's socket; the event's
                                address and port are the packet's source (pid 0, no comm) */
};

/* ---- deny event (ring buffer "events") */
struct mnc_event {
    __u64 ts_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
    __u64 cgroup_id;
    __u64 generation; /* taint generation at the decision (0 if no taint) */
    __u32 pid;        /* tgid */
    __u32 agent_id;   /* 0xffffffff if the cgroup is unknown */
    __u32 dst_id;     /* MNC_ID_NONE if unregistered */
    __u16 reason;     /* enum mnc_kreason */
    __u8 hook;        /* enum mnc_hook */
    __u8 dst_class;   /* enum mnc_sink_class */
    __u16 family;     /* AF_* (sock_create: socket family) */
    __u16 port;       /* host order (sock_create: socket type) */
    __u32 protocol;   /* sock_create only */
    __u8 addr[16];
    char path[MNC_UNIX_PATH_MAX];
    char comm[16];
    __u16 path_alen; /* an abstract path's length (mnc_unix_key.alen); 0 for a pathname */
    __u16 path_type; /* an abstract path's socket type (mnc_unix_key.type); 0 for a pathname */
};

/* ---- THE decision: may an agent with taint t reach a destination of class cls and id id?
 * t == 0 means the agent has no taint entry (fail closed). Unregistered destinations are
 * passed as (MNC_SINK_EXTERNAL, MNC_ID_NONE). Pure: used by the BPF programs and user space.
 *
 * Rules (docs/kernel.md):
 *  1. MNCD is always reachable (agents must be able to use the monitor).
 *  2. No taint entry: deny.
 *  3. LOG needs may_log and the id in sinks; MEMORY needs may_memory and the id in sinks -
 *     for untainted agents too, so log/memory sinks are reachable through mncd only unless
 *     the admin granted a base right.
 *  4. Untainted: everything else is allowed.
 *  5. Tainted: AGENT and TOOL need the id in sinks; a registered EXTERNAL needs the id in
 *     sinks or may_external; an unregistered destination needs may_external.
 *  6. Anything else (corrupt class): deny.
 */
static inline int mnc_set_has_abi(const __u64 *w, __u32 id)
{
    if (id >= MNC_SET_WORDS_ABI * 64)
        return 0;
    /* constant offsets only: with w[id / 64] the compiler may re-read id from a spilled
     * register, and the BPF verifier then loses the bound and rejects the load */
    __u64 word = id < 64 ? w[0] : id < 128 ? w[1] : id < 192 ? w[2] : w[3];
    return (int)((word >> (id % 64)) & 1);
}

static inline enum mnc_kreason mnc_decide(const struct mnc_taint *t, __u32 cls, __u32 id)
{
    if (cls == MNC_SINK_MNCD)
        return MNC_K_ALLOW_MNCD;
    if (!t)
        return MNC_K_DENY_NO_TAINT;
    switch (cls) {
    case MNC_SINK_LOG:
        return (t->may_log && mnc_set_has_abi(t->sinks, id)) ? (t->tainted ? MNC_K_ALLOW_SCOPE : MNC_K_ALLOW_UNTAINTED)
                                                             : MNC_K_DENY_LOG;
    case MNC_SINK_MEMORY:
        return (t->may_memory && mnc_set_has_abi(t->sinks, id))
                   ? (t->tainted ? MNC_K_ALLOW_SCOPE : MNC_K_ALLOW_UNTAINTED)
                   : MNC_K_DENY_MEMORY;
    case MNC_SINK_AGENT:
    case MNC_SINK_TOOL:
        if (!t->tainted)
            return MNC_K_ALLOW_UNTAINTED;
        return mnc_set_has_abi(t->sinks, id) ? MNC_K_ALLOW_SCOPE : MNC_K_DENY_SCOPE;
    case MNC_SINK_EXTERNAL:
        if (!t->tainted)
            return MNC_K_ALLOW_UNTAINTED;
        if (t->may_external)
            return MNC_K_ALLOW_SCOPE;
        if (id != MNC_ID_NONE && mnc_set_has_abi(t->sinks, id))
            return MNC_K_ALLOW_SCOPE;
        return MNC_K_DENY_EXTERNAL;
    default:
        return MNC_K_DENY_BAD_CLASS;
    }
}

/* ---- fds a tainted agent receives (SCM_RIGHTS; pidfd_getfd): may the agent keep this one?
 * mode: the inode's st_mode; writable: the open file can be written (FMODE_WRITE; O_WRONLY or
 * O_RDWR). A socket is harmless (every send on it is judged: socket_sendmsg, the sock_addr
 * hooks), and so is a read-only regular file or directory (writing needs a new open, which
 * Landlock and file_open judge). Anything else - a file open for writing, a pipe, FIFO,
 * device, memfd, eventfd - lets the agent write where no hook looks (the lsm file hooks judge
 * writes to sink files only), so it counts as an unregistered external destination:
 * mnc_decide(t, MNC_SINK_EXTERNAL, MNC_ID_NONE). Used by the lsm file_receive hook and by
 * mncd's sweep for fds queued on an agent's sockets. Pure. */
#define MNC_S_IFMT 0170000
#define MNC_S_IFSOCK 0140000
#define MNC_S_IFREG 0100000
#define MNC_S_IFDIR 0040000
static inline int mnc_receive_harmless(__u32 mode, int writable)
{
    __u32 t = mode & MNC_S_IFMT;
    return t == MNC_S_IFSOCK || ((t == MNC_S_IFREG || t == MNC_S_IFDIR) && !writable);
}

/* ---- fds an agent passes out (SCM_RIGHTS on a UNIX socket; lsm socket_sendmsg).
 * Whoever receives an agent's fd can keep the object where no later check looks - in flight in
 * a queue of its own, registered in an io_uring, or as a page spliced into a pipe - and read what
 * the agent writes there after its taint (attacks workspace_fd_passed_out, memfd_page_outsider,
 * outsider_uring_fds). So an agent, tainted or not, passes fds only to a socket made in its own
 * cgroup (its own processes). */

/* The control messages are read one header (struct cmsghdr: a 64-bit length, level, type) at a
 * time, as the kernel walks them (CMSG_FIRSTHDR, CMSG_NXTHDR, CMSG_OK). The offset of the header
 * after the one at off whose cmsg_len is len, in a control buffer of clen bytes; 0 when there is
 * none, or when len is malformed (the kernel refuses that message: __scm_send). Pure. */
#define MNC_CMSG_HDR 16u
#define MNC_SOL_SOCKET 1
#define MNC_SCM_RIGHTS 1
static inline __u64 mnc_cmsg_next(__u64 len, __u64 off, __u64 clen)
{
    if (off > clen || len < MNC_CMSG_HDR || len > clen - off)
        return 0;
    __u64 next = off + ((len + 7) & ~7ULL);
    return next <= clen && clen - next >= MNC_CMSG_HDR ? next : 0;
}

/* Verdict on a message from an agent that carries SCM_RIGHTS (or whose control data could not
 * be read to the end: taken as carrying it). sender_cg: the agent's cgroup id; peer_cg: the
 * cgroup the receiving socket was made in, 0 if unknown (a datagram sent to an address, no
 * peer). Pure. */
static inline unsigned mnc_fds_out_verdict(__u64 sender_cg, __u64 peer_cg)
{
    return peer_cg && peer_cg == sender_cg ? MNC_K_ALLOW_OWN_FDS : MNC_K_DENY_FDS_OUT;
}

/* ---- socket options (cgroup/setsockopt, lsm/socket_setsockopt)
 *
 * What a socket option stores, other processes read back: sock_diag (what `ss` shows, any
 * user) and /proc/net report buffer sizes (SO_SNDBUF, SO_RCVBUF: skmeminfo, UNIX sockets too),
 * TOS and traffic class, the pacing rate, MSS, keepalive timers, the congestion control, the
 * priority, v6only. A tainted agent that sets them writes ~20-64 bits per socket where an
 * outsider dumps them (attacks udp_sockmem_diag, tcp_pacing_rate_diag). So once tainted, an
 * agent sets only switches and timeouts an ordinary client sets on a new connection, none of
 * them a value any dump reports (SO_KEEPALIVE and IPV6_V6ONLY: one bit each, see
 * docs/threat-model.md). Before its taint the values carry nothing: every option. The
 * options seccomp refuses for every agent (docs/kernel.md) stay refused. State other calls set
 * (shutdown(2) directions, queue lengths, which sockets exist) is not covered here: an open
 * channel of docs/threat-model.md. */
#define MNC_SOL_IP 0
#define MNC_SOL_TCP 6
#define MNC_SOL_IPV6 41
static inline int mnc_sockopt_switch(int level, int optname)
{
    switch (level) {
    case MNC_SOL_SOCKET:
        /* SO_REUSEADDR 2, SO_BROADCAST 6, SO_KEEPALIVE 9, SO_REUSEPORT 15, SO_RCVTIMEO_OLD 20,
         * SO_SNDTIMEO_OLD 21, SO_RCVTIMEO_NEW 66, SO_SNDTIMEO_NEW 67 */
        return optname == 2 || optname == 6 || optname == 9 || optname == 15 || optname == 20 || optname == 21 ||
               optname == 66 || optname == 67;
    case MNC_SOL_TCP:
        return optname == 1; /* TCP_NODELAY */
    case MNC_SOL_IPV6:
        return optname == 26; /* IPV6_V6ONLY */
    }
    /* not IP_RECVERR / IPV6_RECVERR: the error queue they enable counts in rx_queue, and an
     * outsider can fill it with ICMP errors in the agent's name (attack udp_errqueue_self_source) */
    return 0;
}

/* Verdict on setsockopt(level, optname) by a registered agent whose taint entry is t (NULL: none,
 * fail closed as mnc_decide). Pure. */
static inline unsigned mnc_sockopt_verdict(const struct mnc_taint *t, int level, int optname)
{
    if (!t)
        return MNC_K_DENY_NO_TAINT;
    if (!t->tainted)
        return MNC_K_ALLOW_UNTAINTED;
    return mnc_sockopt_switch(level, optname) ? MNC_K_ALLOW_SCOPE : MNC_K_DENY_SOCKOPT;
}

/* Verdict on a file lock operation (flock(2), or fcntl F_SETLK, F_SETLKW, F_OFD_SETLK*: taking,
 * changing or dropping a lock) by a registered agent whose taint entry is t (NULL: none, fail
 * closed as mnc_decide). Once tainted, none: a lock's range (two 63-bit numbers) and its mere
 * presence are read back by every process that can open the file (fcntl F_GETLK, no /proc
 * needed) and by everyone through /proc/locks, whichever file it is on - the agent's own
 * workspace included. Dropping is refused too: unlocking the middle of a held range splits it
 * into two whose ends carry data. Pure. */
static inline unsigned mnc_lock_verdict(const struct mnc_taint *t)
{
    if (!t)
        return MNC_K_DENY_NO_TAINT;
    return t->tainted ? MNC_K_DENY_LOCK : MNC_K_ALLOW_UNTAINTED;
}

/* ---- IP destinations: one normalisation and one lookup order for every hook (connect and
 * sendmsg, egress, the LSM socket hooks) and for mncd's sweep of existing connections. */

/* Is the 16-byte IPv6 address a (network order) IPv4-mapped, ::ffff:a.b.c.d? */
static inline int mnc_ipv6_is_v4mapped(const __u8 *a)
{
    __u32 z = 0;
    for (int i = 0; i < 10; i++)
        z |= a[i];
    return z == 0 && a[10] == 0xff && a[11] == 0xff;
}

/* Sets k's family and addr from an IPv6 destination a (16 bytes, network order); k's port is
 * left alone. An IPv4-mapped destination becomes the IPv4 key a.b.c.d: a dual-stack socket
 * reaching an IPv4 destination is judged as that IPv4 destination, so one sink entry covers
 * both ways of reaching it. */
static inline void mnc_inet_key_set6(struct mnc_inet_key *k, const __u8 *a)
{
    int m = mnc_ipv6_is_v4mapped(a);
    k->family = m ? MNC_AF_INET : MNC_AF_INET6;
    for (int i = 0; i < 16; i++)
        k->addr[i] = m ? (i < 4 ? a[12 + i] : 0) : a[i];
}

/* May a packet to (or from) k on the loopback device be judged by the ONE socket a lookup
 * finds there (cgroup_skb's loopback peer: another agent, or the same one)? Only for a unicast
 * loopback address: 127.0.0.0/8 less the addresses a broadcast or network route can cover (last
 * byte 0 or 255: 127.255.255.255 is lo's broadcast), and ::1. A broadcast or multicast datagram
 * reaches EVERY socket bound to its port, an outsider's included, while a lookup names one
 * (attack udp_broadcast_self_peer). Anything else is judged by sock_inet alone. Pure. */
static inline int mnc_inet_loopback_unicast(const struct mnc_inet_key *k)
{
    if (k->family == MNC_AF_INET)
        return k->addr[0] == 127 && k->addr[3] != 0 && k->addr[3] != 255;
    if (k->family != MNC_AF_INET6)
        return 0;
    __u32 z = 0;
    for (int i = 0; i < 15; i++)
        z |= k->addr[i];
    return z == 0 && k->addr[15] == 1;
}

/* The mark egress puts on a registered agent's packets that leave through the loopback device:
 * MNC_SKB_MARK_TAG in the high half, the agent id in the low half (ids from 2^16 up, self-test
 * agents, are not marked). Ingress names the SENDER of a loopback packet by it, not by its source
 * address: on lo any local process can send from any local address (IP_PKTINFO) and share the
 * agent's port (SO_REUSEADDR), so a lookup of the source finds the agent's own socket for an
 * outsider's packet (attack udp_recvq_self_source). Setting a mark takes CAP_NET_ADMIN (SO_MARK),
 * which no agent and no unprivileged outsider has. */
#define MNC_SKB_MARK_TAG 0x6d6e0000u
#define MNC_SKB_MARK_MASK 0xffff0000u
static inline __u32 mnc_skb_mark_of(__u32 agent_id) { return agent_id < 0x10000u ? MNC_SKB_MARK_TAG | agent_id : 0; }

/* 1 and the sending agent's id in *id if mark is one of mnc_skb_mark_of's, else 0. Pure. */
static inline int mnc_skb_mark_agent(__u32 mark, __u32 *id)
{
    if ((mark & MNC_SKB_MARK_MASK) != MNC_SKB_MARK_TAG)
        return 0;
    *id = mark & ~MNC_SKB_MARK_MASK;
    return 1;
}

/* The lookup order of a destination k in sock_inet: step 0 the exact (addr, port), step 1 the
 * whole host (addr, port 0), step 2 the port on every address (all-zero addr, port). The first
 * step whose key names a sink decides; none: the destination is unregistered (external).
 * Writes step i's key to *out and returns 1, or returns 0 when step i does not apply (step 1
 * for port 0 would repeat step 0; i outside 0..2). */
#define MNC_INET_LOOKUP_STEPS 3
static inline int mnc_inet_lookup_key(const struct mnc_inet_key *k, int i, struct mnc_inet_key *out)
{
    out->family = k->family;
    out->port = k->port;
    for (int j = 0; j < 16; j++)
        out->addr[j] = i == 2 ? 0 : k->addr[j];
    if (i == 1) {
        out->port = 0;
        return k->port != 0;
    }
    return i == 0 || i == 2;
}

/* ---- layout: the kernel and user space read the same bytes (fixed-width fields only) */
_Static_assert(sizeof(struct mnc_agent_key) == 8, "mnc_agent_key layout");
_Static_assert(sizeof(struct mnc_agent) == 8, "mnc_agent layout");
_Static_assert(sizeof(struct mnc_taint) == 4 * 8 + 8 + 8, "mnc_taint layout");
_Static_assert(sizeof(struct mnc_unix_key) == MNC_UNIX_PATH_MAX + 4, "mnc_unix_key layout");
_Static_assert(sizeof(struct mnc_inet_key) == 20, "mnc_inet_key layout");
_Static_assert(sizeof(struct mnc_sink) == 8, "mnc_sink layout");
_Static_assert(sizeof(struct mnc_file_key) == 16, "mnc_file_key layout");
_Static_assert(sizeof(struct mnc_name) == MNC_NAME_LEN + 4, "mnc_name layout");
_Static_assert(sizeof(struct mnc_config) == 16 + MNC_TREE_PATH_MAX, "mnc_config layout");
_Static_assert(sizeof(struct mnc_bind) == MNC_NAME_LEN + 16, "mnc_bind layout");
_Static_assert(sizeof(struct mnc_label) == 4 * 8 + 16, "mnc_label layout");
/* 192 bytes of fields, no padding; the BPF side zeroes the whole event */
_Static_assert(sizeof(struct mnc_event) == 192, "mnc_event layout");

/* ---- UNIX destinations: the sock_unix key of a sun_path, and whether a pathname is absolute
 * and canonical (starts with '/', no empty, "." or ".." component, no trailing '/'). Every
 * registered agent may only use such paths, because a relative or non-canonical spelling of a
 * registered sink's path would not match its map key (the cgroup hooks see the string, not the
 * inode). The same functions serve the BPF hooks and user space.
 *
 * They run on every UNIX connect and datagram send, so they work on 8-byte words instead of
 * walking the path byte by byte: exact SWAR byte compares (no false positives) give each
 * word's NUL, '/' and '.' bytes; the '/' and '.' positions of the whole path become two 64-bit
 * masks each (positions 0..63 and 64..127), and the forbidden components become shifts and
 * ANDs. Both stop at the word holding the path's end. Reference: "Bit Twiddling Hacks"
 * (S. E. Anderson), "Determine if a word has a zero byte".
 *
 * Their loops over the key's words stay loops in BPF (MNC_NOUNROLL; the verifier walks each
 * iteration, at most 14). Unrolled, they made mnc_sendmsg_unix 10.7 KB of JIT code, of which a
 * send runs a few hundred bytes spread over the whole; as loops it is 3.6 KB, and a UNIX
 * datagram sendto costs about 30-55 ns less (docs/kernel.md, "Where a gated call's time goes"):
 * the kernel's own sendto path leaves little instruction cache to a program that size. */
#define MNC_UNIX_KEY_WORDS 14 /* 112 bytes: the key's 108 rounded up to whole words */
#ifdef __clang__
#define MNC_NOUNROLL _Pragma("nounroll")
#else
#define MNC_NOUNROLL
#endif

/* A key buffer: the key's bytes, as words (the path in bytes 0..107, alen and type in 108..111). */
union mnc_unix_buf {
    struct mnc_unix_key key;
    __u64 w[MNC_UNIX_KEY_WORDS];
};
_Static_assert(sizeof(union mnc_unix_buf) == 8 * MNC_UNIX_KEY_WORDS, "mnc_unix_buf layout");

/* mnc_unix_key_build's results: what kind of address it was */
#define MNC_UNIX_EMPTY 0    /* no sun_path byte at all (n == 0) */
#define MNC_UNIX_PATHNAME 1 /* a pathname, canonical or not (see mnc_unix_key_canonical) */
#define MNC_UNIX_ABSTRACT 2 /* an abstract name (first byte NUL), stored as '@' + the rest */

#define MNC_W_01 0x0101010101010101ull
#define MNC_W_7F 0x7f7f7f7f7f7f7f7full

/* 0x80 in each byte of x that is zero, 0 in the others (exact: no carry crosses a byte) */
static inline __u64 mnc_w_zero(__u64 x) { return ~(((x & MNC_W_7F) + MNC_W_7F) | x | MNC_W_7F); }

/* the 0x80 bits of a mnc_w_zero mask packed into 8 bits: bit j = byte j (the multiply moves
 * byte j's bit, and only it, to bit 56 + j) */
static inline __u64 mnc_w_pack(__u64 m) { return ((m >> 7) * 0x0102040810204080ull) >> 56; }

/* a word as the bytes lie in memory: byte j (the path's character 8i + j) in bits 8j..8j+7 */
static inline __u64 mnc_w_le(__u64 x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

/* all ones if a == b, else 0 (both < 2^63; no branch) */
static inline __u64 mnc_w_eq(__u64 a, __u64 b) { return 0 - (((a ^ b) - 1) >> 63); }

/* 128-bit (lo, hi) shifted right by k, 0 < k < 64: bit i+k becomes bit i (the low word) */
static inline __u64 mnc_w_shr_lo(__u64 lo, __u64 hi, int k) { return (lo >> k) | (hi << (64 - k)); }

/* Builds the sock_unix key of a sun_path in place.
 * On entry b's first n bytes are sun_path exactly as the caller passed it (n = the address
 * length minus the 2-byte sun_family; values above MNC_UNIX_PATH_MAX count as that); the
 * bytes after them may hold anything (a fixed-size copy, say).
 * type is the socket type of the connecting or sending socket (SOCK_*), which is also the
 * type of any socket it can reach by that address.
 * On return b->key is the key, zero padded, with alen and type set:
 *  - abstract name (n > 0, first byte NUL): '@' and then the other n - 1 bytes unchanged (they
 *    are binary: NULs included), alen = n and type;
 *  - pathname: the bytes before its first NUL. The kernel ends a pathname there and ignores
 *    the rest of sun_path, so "/run/peer.sock\0junk" reaches /run/peer.sock; keyed with the
 *    junk it would miss the sink entry and be taken for an unregistered destination;
 *  - n == 0: all zero.
 * alen and type are 0 for the last two.
 * Returns MNC_UNIX_ABSTRACT, MNC_UNIX_PATHNAME or MNC_UNIX_EMPTY. */
static inline int mnc_unix_key_build(union mnc_unix_buf *b, __u32 n, __u32 type)
{
    if (n > MNC_UNIX_PATH_MAX)
        n = MNC_UNIX_PATH_MAX;
    /* word nw byte n % 8 is the first byte past sun_path: lim keeps the bytes before it */
    __u64 nw = n >> 3, lim = (1ull << (8 * (n & 7))) - 1;
    if (n > 0 && (b->w[0] & mnc_w_le(0xff)) == 0) {
        MNC_NOUNROLL
        for (__u64 i = 0; i < MNC_UNIX_KEY_WORDS; i++) {
            __u64 keep = i < nw ? ~0ull : i == nw ? lim : 0;
            b->w[i] &= mnc_w_le(keep);
        }
        b->w[0] |= mnc_w_le('@');
        /* the last word held only bytes below n, and no path byte is at 108+ */
        b->key.alen = (__u16)n;
        b->key.type = (__u16)type;
        return MNC_UNIX_ABSTRACT;
    }
    /* A pathname ends at its first NUL or at n, whichever comes first: so the end is in word
     * nw at the latest. The words after the one holding it are only cleared. */
    __u64 e = MNC_UNIX_KEY_WORDS - 1;
    MNC_NOUNROLL
    for (__u64 i = 0; i < MNC_UNIX_KEY_WORDS; i++) {
        __u64 x = mnc_w_le(b->w[i]) & (lim | ~mnc_w_eq(i, nw));
        __u64 z = mnc_w_zero(x);
        if (z) {
            x &= ((z & (0 - z)) >> 7) - 1; /* the bytes before the first NUL */
            b->w[i] = mnc_w_le(x);
            e = i;
            break;
        }
    }
    for (__u64 i = 1; i < MNC_UNIX_KEY_WORDS; i++)
        if (i > e)
            b->w[i] = 0;
    return n ? MNC_UNIX_PATHNAME : MNC_UNIX_EMPTY;
}

/* Is the pathname key b (as mnc_unix_key_build leaves it: the path, zero padded, at most 108
 * bytes) absolute and canonical? "/" is (never a socket, harmless); "" is not. */
static inline int mnc_unix_key_canonical(const union mnc_unix_buf *b)
{
    /* s*, d*: bit i set if character i is '/' or '.'; t*: the end (the first NUL) alone */
    __u64 slo = 0, shi = 0, dlo = 0, dhi = 0, tlo = 0, thi = 0;
    MNC_NOUNROLL
    for (int i = 0; i < MNC_UNIX_KEY_WORDS; i++) {
        __u64 x = mnc_w_le(b->w[i]);
        __u64 z = mnc_w_zero(x);
        __u64 ss = mnc_w_pack(mnc_w_zero(x ^ ('/' * MNC_W_01)));
        __u64 ds = mnc_w_pack(mnc_w_zero(x ^ ('.' * MNC_W_01)));
        __u64 ts = mnc_w_pack(z & (0 - z));
        if (i < 8) {
            slo |= ss << (8 * i);
            dlo |= ds << (8 * i);
            tlo |= ts << (8 * i);
        } else {
            shi |= ss << (8 * (i - 8));
            dhi |= ds << (8 * (i - 8));
            thi |= ts << (8 * (i - 8));
        }
        if (z)
            break; /* the key is zero padded: nothing after its first NUL */
    }
    if ((slo & 1) == 0)
        return 0; /* empty or relative */
    if (tlo == 2)
        return 1; /* "/" */
    /* the end closes the last component like a '/' would */
    slo |= tlo;
    shi |= thi;
    /* a component "" ("//"), "." ("/./") or ".." ("/../") after the '/' at character i */
    __u64 s1l = mnc_w_shr_lo(slo, shi, 1), s1h = shi >> 1;
    __u64 s2l = mnc_w_shr_lo(slo, shi, 2), s2h = shi >> 2;
    __u64 s3l = mnc_w_shr_lo(slo, shi, 3), s3h = shi >> 3;
    __u64 d1l = mnc_w_shr_lo(dlo, dhi, 1), d1h = dhi >> 1;
    __u64 d2l = mnc_w_shr_lo(dlo, dhi, 2), d2h = dhi >> 2;
    __u64 badl = slo & (s1l | (d1l & s2l) | (d1l & d2l & s3l));
    __u64 badh = shi & (s1h | (d1h & s2h) | (d1h & d2h & s3h));
    return (badl | badh) == 0;
}

/* sock_unix's key hash of the key b (as mnc_unix_key_build leaves it). Mixes the words up to
 * the first zero word after word 0: for a pathname, the path without its zero padding; an
 * abstract name's words after a zero word are left out (a collision, which the comparison on
 * lookup resolves). Not a secret: a collision only makes two registrations conflict, and a
 * colliding unregistered address is still compared and found unregistered. Pure. */
static inline __u64 mnc_unix_key_hash(const union mnc_unix_buf *b)
{
    __u64 h = 0x9e3779b97f4a7c15ull;
    MNC_NOUNROLL
    for (int i = 0; i < MNC_UNIX_KEY_WORDS; i++) {
        __u64 w = b->w[i];
        if (i > 0 && w == 0)
            break;
        h = (h ^ w) * 0xff51afd7ed558ccdull; /* murmur3's fmix64 multiplier */
        h ^= h >> 32;
    }
    return h;
}

/* Is k (a sock_unix value's key, 8-byte aligned there: struct mnc_unix_sink) the key b?
 * Compares all 112 bytes as words (the alignment lets BPF load each in one instruction rather
 * than byte by byte). Pure. */
static inline int mnc_unix_key_same(const union mnc_unix_buf *b, const struct mnc_unix_key *k)
{
    typedef __u64 __attribute__((may_alias, aligned(8))) word;
    const word *kw = (const word *)k;
    __u64 d = 0;
    MNC_NOUNROLL
    for (int i = 0; i < MNC_UNIX_KEY_WORDS; i++)
        d |= kw[i] ^ b->w[i];
    return d == 0;
}

/* Must a registered agent's UNIX address be refused as an unusable spelling
 * (MNC_K_DENY_UNIX_PATH)? kind: mnc_unix_key_build's result for b; registered: b->key names a
 * sink in sock_unix. Abstract names never are; an empty address always is; a pathname is
 * unless it is canonical. A registered key is canonical by construction (mnc_kern_unix_key
 * stores no other pathname), so only an unregistered pathname is looked at: the hooks pay for
 * the check only on the way to an unregistered socket. */
static inline int mnc_unix_refused(int kind, int registered, const union mnc_unix_buf *b)
{
    if (kind == MNC_UNIX_ABSTRACT)
        return 0;
    if (kind != MNC_UNIX_PATHNAME)
        return 1;
    return !registered && !mnc_unix_key_canonical(b);
}

/* Is p[0..n) (n bytes of a sun_path as passed by the caller, NUL-terminated or not; only the
 * first MNC_UNIX_PATH_MAX count) an absolute canonical pathname? */
static inline int mnc_unix_path_canonical(const char *p, __u32 n)
{
    union mnc_unix_buf b;
    if (n > MNC_UNIX_PATH_MAX)
        n = MNC_UNIX_PATH_MAX;
    for (__u32 i = 0; i < MNC_UNIX_KEY_WORDS; i++)
        b.w[i] = 0;
    for (__u32 i = 0; i < n; i++)
        b.key.path[i] = p[i];
    return mnc_unix_key_build(&b, n, 0) == MNC_UNIX_PATHNAME && mnc_unix_key_canonical(&b);
}

#endif
