// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_filled_before - udp_recvq_diag with the datagrams queued BEFORE the taint: the agent
 * makes RQ_SOCKS UDP sockets, autobinds them while untainted, and waits while the outsider sends
 * each RQ_N + 1 datagrams (allowed: the agent is untainted). Then it receives the disclosure and
 * reads the index and a nibble's worth of the rest of each queue; uid 65534 reads the remainder
 * from /proc/net/udp rx_queue. Filtering what arrives after the taint cannot help: the carrier
 * is already in the queue. Body: atkv_udp_recvq_agent, variant 'F'.
 * Blocked on the cgroup backend by mncd's sweep at the delivery (sockjudge.c,
 * drain_own_datagrams): with the agent frozen and its taint already in the map, every datagram
 * queued on its own UDP/ping sockets (held or in flight) is dropped, so the queues are empty when
 * the agent gets the object and cgroup_skb/ingress admits no outsider afterwards. On the lsm
 * backend by the same drain: mncd's sweep runs there too (sockscan.h). Bandwidth without it: about
 * 8 bits per UDP socket the agent held with a queue at its taint (log2 of the datagrams a
 * receive buffer holds), up to its fd limit, once (a queue cannot be refilled after the taint;
 * reading it down over time, at most one bit per queued datagram). */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_udp_recvq_agent(c, 'F'); }

static const struct atk A = {"udp_recvq_filled_before",
                             "rx_queue of UDP sockets filled before the taint, read from after it",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             atkv_udp_recvq_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
