// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_diag - how much of its receive queue a tainted agent reads, which /proc/net/udp
 * (and sock_diag) shows every user as rx_queue. No socket option is set: what is left after
 * setsockopt is gated by taint (mnc_sockopt_verdict) is the state the agent changes by reading.
 * After its recv the agent makes RQ_SOCKS UDP sockets and has each autobound by a refused
 * sendto (the ports are the kernel's choice). An outsider finds them in /proc/net/udp (the
 * agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the
 * socket's index. The agent reads the first (the index j) and then as many more as nibble j of
 * the canary says; uid 65534 reads every socket's rx_queue and divides by the size one such
 * datagram takes (measured on a socket of its own). Verifier: the nibbles reassembled, compared
 * with the canary. Body: atkv_udp_recvq_agent (atkv_diag.c), variant 'A' (port and datagrams
 * after the taint); udp_recvq_bound_before and udp_recvq_filled_before move them before it.
 * Blocked: cgroup backend by cgroup_skb/ingress (sock_egress.bpf.c: a tainted agent's sockets
 * take packets only from peers it may send to; the outsider's datagrams are dropped, so the
 * queues stay empty); lsm backend by socket_sendmsg, which refuses the sendto before the kernel
 * autobinds the socket (docs/lsm.md). Bandwidth if open: 4 bits per socket as written (log2 of
 * the datagrams a receive buffer holds: ~8 bits), re-read at will. */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_udp_recvq_agent(c, 'A'); }

static const struct atk A = {"udp_recvq_diag",
                             "how many datagrams a tainted agent reads, as /proc/net/udp rx_queue shows",
                             0,
                             NULL,
                             agent,
                             atkv_udp_recvq_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
