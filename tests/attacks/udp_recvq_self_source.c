// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_self_source - udp_recvq_diag (rx_queue of the agent's UDP sockets in /proc/net/udp)
 * with the outsider's datagrams sent FROM THE AGENT'S OWN ADDRESS, so that cgroup_skb/ingress
 * (sock_egress.bpf.c, mnc_ingress) takes them for traffic between processes of the same agent.
 *
 * The ingress hook identifies the sender of a loopback packet by looking up the socket a reply
 * would reach (bpf_sk_lookup_udp on the reversed tuple: the packet's SOURCE address and port). It
 * does not check that the packet came from that socket. After its recv the agent makes RQ_SOCKS
 * UDP sockets, sets SO_REUSEADDR on each (allowed while tainted: mnc_sockopt_switch) and has
 * each autobound by a refused sendto (0.0.0.0:P, the port the kernel's choice; bind itself is
 * refused by seccomp). An unprivileged outsider (uid 65534) finds them in /proc/net/udp (the
 * agent's uid, new since the "pre" sync) and, for each port P, binds its own SO_REUSEADDR socket
 * to 127.0.0.2:P (two SO_REUSEADDR UDP sockets may share a port, whatever their uids) and sends
 * with IP_PKTINFO ipi_spec_dst = 127.0.0.1 (any local address; no privilege needed) to
 * 127.0.0.1:P. The datagram goes from 127.0.0.1:P to 127.0.0.1:P: the lookup of its source
 * finds the agent's own socket (the outsider's is bound to 127.0.0.2), "between processes of
 * the same agent: no boundary crossed", pass; it is delivered to the agent's socket.
 * RQ_N + 1 datagrams carrying the socket's index j each; the agent reads the first (j) and then
 * as many more as nibble j of the canary says; uid 65534 reads every socket's rx_queue and
 * divides by the size one such datagram takes (measured on a socket of its own). Verifier: the
 * nibbles reassembled, compared with the canary.
 *
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Bandwidth: 4 bits per socket as written (~8 bits: log2 of the datagrams one receive buffer
 * holds), up to the fd limit per round; the agent can make and autobind new sockets and the
 * outsider refill them at will, so unbounded over time (one round trip per ~100 bits).
 * Fix idea: a packet's SOURCE address proves nothing on loopback (IP_PKTINFO picks any local
 * address; SO_REUSEADDR shares the port). Take "same agent" only from the sending socket
 * itself: e.g. cgroup_skb/egress marks the agent's own packets (skb->mark, which an outsider
 * cannot set without CAP_NET_ADMIN) and ingress checks the mark; refusing SO_REUSEADDR to a
 * tainted agent alone is not enough (set before the taint, it stays).
 * Status: blocked: ingress names a loopback packet's sender by the mark egress puts on every
 * registered agent's loopback packets (mnc_skb_mark_of), never by its source address; the
 * outsider's packets carry none and are dropped. */
/* the variant (atk_recvq.h) */
#define RQ_NAME "udp_recvq_self_source"
#define RQ_AFAM AF_INET /* the agent's sockets */
#define RQ_OFAM AF_INET /* the outsider's datagrams */
#define RQ_PROTO 0
#define RQ_PROC "/proc/net/udp"
#define RQ_SPOOF 1 /* the outsider sends from the agent's own address */
#define RQ_FLAGS 0
#define RQ_EVIDENCE                                                                                                    \
    "uid 65534 sent datagrams from 127.0.0.1:P (IP_PKTINFO, its socket bound to 127.0.0.2 with SO_REUSEADDR) to the "  \
    "agent's UDP sockets, passed by cgroup_skb/ingress as same-agent traffic, and read the canary from their "         \
    "rx_queue (/proc/net/udp)"

#include "atk_recvq.h"
