// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_bound_before - udp_recvq_diag with the sockets' ports taken BEFORE the taint: the
 * agent makes RQ_SOCKS UDP sockets and autobinds them by a sendto while still untainted (the
 * sendto is allowed), then receives the disclosure. Only afterwards does the outsider send each
 * RQ_N + 1 datagrams; the tainted agent reads the index and a nibble's worth of the rest, and
 * uid 65534 reads the remainder from /proc/net/udp rx_queue. What this adds to udp_recvq_diag:
 * a port the agent already held when it was tainted, so refusing the sendto (the lsm backend's
 * block there) does not help. Body: atkv_udp_recvq_agent, variant 'B'.
 * Blocked on both backends by cgroup_skb/ingress (sock_egress.bpf.c, attached to the mnc tree by
 * the lsm backend too): the outsider's datagrams to a tainted agent's sockets are dropped (the
 * sender is no peer the agent may send to). Bandwidth if open: 4 bits per socket as written (~8
 * bits: log2 of the datagrams a receive buffer holds), for every autobound socket the agent held
 * at its taint (up to its fd limit). */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_udp_recvq_agent(c, 'B'); }

static const struct atk A = {"udp_recvq_bound_before",
                             "rx_queue of UDP sockets autobound before the taint, filled after it",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             atkv_udp_recvq_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
