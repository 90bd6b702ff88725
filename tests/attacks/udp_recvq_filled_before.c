// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_filled_before - udp_recvq_diag with the datagrams queued BEFORE the taint: the agent
 * makes RQ_SOCKS UDP sockets, autobinds them while untainted, and waits while the outsider sends
 * each RQ_N + 1 datagrams (allowed: the agent is untainted). Then it receives the disclosure and
 * reads the index and a nibble's worth of the rest of each queue; uid 65534 reads the remainder
 * from /proc/net/udp rx_queue. Filtering what arrives after the taint cannot help: the carrier
 * is already in the queue. Body: atkv_udp_recvq_agent, variant 'F'.
 * Status: see docs/threat-model.md ("socket state that sock_diag shows"). Bandwidth: about 8
 * bits per UDP socket the agent held with a queue at its taint (log2 of the datagrams a receive
 * buffer holds), up to its fd limit, once (a queue cannot be refilled after the taint). */
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_udp_recvq_agent(c, 'F'); }

static const struct atk A = {"udp_recvq_filled_before",
                             "rx_queue of UDP sockets filled before the taint, read from after it",
                             ATK_NO_RECV | ATK_OPEN,
                             NULL,
                             agent,
                             atkv_udp_recvq_on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
