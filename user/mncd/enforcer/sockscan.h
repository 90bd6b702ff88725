/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sockscan.h - mncd's sweep of a tainted agent's EXISTING sockets (both backends; on the lsm
 * backend only what can still reach the agent, "On the lsm backend" below).
 *
 * Why: the cgroup backend's sock_addr hooks judge a UNIX destination at connect() and at
 * sendto() with an address. A UNIX stream/seqpacket connection, a connected datagram socket or
 * a listening socket that the agent set up while it was untainted stays usable after mncd
 * taints it (nothing on a kernel without BPF LSM sees a send on a connected UNIX socket). TCP
 * is gated per packet by cgroup_skb/egress, but a denied connection only stalls. So, after
 * the taint map update and before the object leaves mncd, mncd freezes the agent's cgroups,
 * lists every socket its processes hold (/proc/PID/fd, sock_diag), judges each connection's
 * peer with the kernel's own rules (mnc_decide, the sock_unix/sock_inet/agents maps), and:
 *   - UNIX stream/seqpacket connection to a disallowed peer: shutdown(SHUT_RDWR) on a copy of
 *     the fd (pidfd_getfd); the copy shares the socket, so the agent's next send gets EPIPE
 *     and the peer sees EOF;
 *   - connected UNIX datagram socket to a disallowed peer: disconnected (connect AF_UNSPEC);
 *     a later send() without address gets ENOTCONN, a sendto() goes through sendmsg_unix;
 *   - listening UNIX socket of a tainted agent: shut down (connect() to it gets ECONNREFUSED,
 *     accept() EINVAL) and its pending, not yet accepted connections are taken and shut too:
 *     anyone could connect in, and the kernel never judges sends on an accepted socket;
 *   - TCP socket created in the agent's cgroups whose destination egress would drop: aborted
 *     with SOCK_DESTROY (the agent gets ECONNABORTED at once instead of a silent stall);
 *   - datagram IP socket of its own (UDP, UDP-Lite, ping; held or in flight): its receive queue
 *     is drained, since how much of it the agent reads is visible to every user (rx_queue) and
 *     an outsider may have filled it while the agent was untainted; after the taint
 *     cgroup_skb/ingress admits only peers the agent may send to.
 * Kept: peers that are sockets of the same agent, mncd's own sockets (the monitor), peers the
 * taint allows (in-scope sinks).
 *
 * Sockets the agent did not create (passed in with SCM_RIGHTS, or inherited): the cgroup hooks
 * and egress judge a socket by the cgroup that CREATED it, so such a socket is treated as
 * leading to an unregistered external destination (mnc_decide(external, none)). Creator proof:
 * IP sockets by INET_DIAG_CGROUP_ID (TCP and UDP dumps; remembered per inode for sockets that
 * later drop out of the dumps); UNIX (and other) sockets by the socket inode's owner uid (the
 * creator's fsuid) against the instance's registered uid; where the uid cannot tell (--as-root
 * or uid unknown) a connected UNIX stream/seqpacket socket is the agent's when the task that
 * connected it (SO_PEERPIDFD on an outside holder's copy of the peer) is one of the agent's
 * processes; anything else has no proof and counts as foreign. Linux 6.18 has no
 * SO_PEERCGROUPID. Foreign and disallowed:
 *   - UNIX connected: shutdown(SHUT_RDWR) (datagram: disconnected first), then drained;
 *     unconnected: shutdown(SHUT_WR): a later connect() works but every send gets EPIPE, a
 *     sendto() too (the hooks would not judge it);
 *   - UDP, raw, ping: shutdown(SHUT_RDWR): sendto gets EPIPE, also after a new connect();
 *   - TCP: SOCK_DESTROY and shutdown, AND the delivery is refused: connect(AF_UNSPEC) clears a
 *     TCP socket's shutdown, and its new connection would be judged by its creator's cgroup;
 *   - other families (NETLINK_ROUTE excepted): the delivery is refused.
 * Socket pairs: a connection whose peer is one of the agent's own sockets is kept only while no
 * process outside the agent holds either end (hostscan.h; looked for after the thaw, see
 * mncd_sweep's `later`) and no data of the agent is still queued at an outside peer
 * (UNIX_DIAG_RQLEN's wqueue; it may carry an end of the pair): else both ends are shut and
 * drained.
 * In flight (inflight.h): every socket the sweep shuts both ways is drained (fds queued to the
 * agent closed); every socket it keeps receiving on is peeked, and each socket queued on it is
 * judged as foreign (except IP sockets created in the agent's cgroups, and NETLINK_ROUTE).
 * Files in flight are not judged.
 * Every action and refusal is one mncd_sweep_fn call. See docs/kernel.md, "Pre-taint
 * connections".
 *
 * On the lsm backend (lsm true) the kernel judges every send, connect and fd received by the
 * task that does it, so a connection of the agent's leads nowhere it may not send. What no send
 * hook sees is what reaches the agent: bytes an outsider queued before the taint, or writes on
 * a connection, listener or socket handed in from outside after it; how much of them the agent
 * reads shows in sock_diag (udp_recvq_filled_before, unix_stream_pretaint_rqlen,
 * unix_dgram_rqlen_given). So the UNIX judgment above runs unchanged (shut and drained), the
 * agent's own datagram IP sockets are settled, and foreign IP sockets are shut; left out, as the
 * hooks cover them: the TCP aborts of the agent's own connections (socket_sendmsg, ingress), the
 * refusal for a foreign TCP socket (connect(AF_UNSPEC) is judged there), and the refusals for
 * sockets of other families and for non-socket fds in flight (file_receive).
 */
#ifndef MNCD_SOCKSCAN_H
#define MNCD_SOCKSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mnc_kern.h"

/* One registered cgroup of the agent: absolute path and cgroup id. */
typedef struct mncd_sweep_cg {
    const char *path;
    uint64_t cgid;
    /* what the launcher registered (agent.register): the uid the instance runs as (uid_known
     * false: adopted from an older registration, unknown), whether it runs --as-root, and its
     * workspaces (realpaths) */
    bool uid_known;
    uint32_t uid;
    bool root;
    const char *const *ws;
    int n_ws;
} mncd_sweep_cg;

/* One socket that was shut down, disconnected or destroyed (or that failed to be). */
typedef struct mncd_sweep_act {
    pid_t pid;          /* process whose fd was used; 0 for TCP (destroyed by tuple) */
    int fd;             /* that fd; -1 for a drained pending connection or TCP */
    uint32_t ino;       /* socket inode */
    const char *kind;   /* "unix_stream", "unix_seqpacket", "unix_dgram", "unix_listener",
                           "unix_pending", "tcp", "udp", "inet", "netlink", "socket" */
    const char *action; /* "shutdown", "disconnect", "destroy", "drain", "inspect", "refuse" */
    const char *why;    /* NULL (a pre-taint connection to a disallowed peer), or why the socket
                           counts as leading outside: "created outside the agent", "peer also
                           held outside", "in flight", ... */
    bool refuse;        /* the delivery is refused because of this socket (err is then
                           EPERM); audited as a deny */
    char peer[256];     /* "/path", "@abstract", "(unnamed)", "127.0.0.1:80", "[::1]:80" */
    unsigned reason;    /* enum mnc_kreason that denied the peer */
    unsigned dst_cls;   /* enum mnc_sink_class of the peer */
    uint32_t dst_id;    /* principal id, MNC_ID_NONE if unregistered */
    int err;            /* 0 done; else the errno of the failed action */
} mncd_sweep_act;

typedef struct mncd_sweep_stats {
    int pids;                    /* processes scanned */
    int sockets;                 /* distinct socket inodes held by them */
    int kept;                    /* connections/listeners judged and kept */
    int acted;                   /* shut down, disconnected, drained or destroyed */
    int tcp_destroy_unsupported; /* SOCK_DESTROY not in this kernel: TCP left to egress */
    int foreign;                 /* sockets held by the agent that it did not create */
    int inflight_fds;            /* fds found queued (SCM_RIGHTS) on the agent's sockets, peeked or drained */
    int host_pids;               /* processes outside the agent scanned by the host pass (hostscan.h) */
    int host_fds;                /* their fds looked at */
    long hostscan_us;            /* duration of the host pass (the agent is frozen meanwhile) */
    long freeze_us;              /* time to freeze (the agent's processes are stopped meanwhile) */
    long total_us;               /* freeze + scan + actions + thaw */
} mncd_sweep_stats;

/* Called for every action (success or failure); returning non-zero aborts the sweep (it then
 * fails: the caller must refuse the delivery). */
typedef int (*mncd_sweep_fn)(void *ctx, const mncd_sweep_act *a);

/* What is left of a sweep for after the thaw (mncd_sweep_finish). */
typedef struct mncd_sweep_later mncd_sweep_later;

/* Sweeps the sockets of the processes in cgs[0..ncg) (all registered cgroups of one agent)
 * against taint t (as stored in the taint map AFTER the hold). Freezes the cgroups for the
 * duration (a cgroup that was already frozen stays frozen), so no process forks, moves an fd,
 * accepts or sends meanwhile. Returns 0 when every disallowed connection was handled; -1 with
 * a one-line reason in err when the enumeration, the freeze or any action failed (fail closed:
 * the caller refuses the delivery). Needs root (pidfd_getfd, sock_diag, SOCK_DESTROY).
 * lsm: the lsm backend's part only (above).
 * later NULL: the whole sweep runs here. Else, on success, *later holds what is left for after
 * the caller's thaw: pairs of the agent's own sockets are kept (and peeked) here, and
 * mncd_sweep_finish then looks for processes outside holding an end of one (the host pass,
 * hostscan.h) and shuts and drains those pairs; it is not needed frozen, because such an
 * outside holder makes the fd scan refuse the delivery anyway (fdscan.h: held_outside), so the
 * agent is not stopped for a walk of the whole host. (A connection whose creator only the host
 * pass can prove - an --as-root instance's - is judged here, from the peer's usual holder, else
 * from a host pass made here.) The caller frees *later with mncd_sweep_later_free, finished or
 * not. */
int mncd_sweep(mnc_kern *k, uint32_t agent, const struct mnc_taint *t, const mncd_sweep_cg *cgs, int ncg, bool lsm,
               mncd_sweep_fn fn, void *ctx, mncd_sweep_stats *st, char *err, size_t errlen, mncd_sweep_later **later);
/* The rest of the sweep, after the thaw; t, cgs, fn, ctx, st and err of the mncd_sweep call
 * must still be valid. 0 (also for NULL), or -1 with the reason in that err. */
int mncd_sweep_finish(mncd_sweep_later *l);
void mncd_sweep_later_free(mncd_sweep_later *l);

#endif
