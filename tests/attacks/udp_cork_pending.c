// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_cork_pending - udp_cork_txq on UNCONNECTED UDP sockets: a cork opened before the taint
 * keeps taking data after it with no hook at all. Before its recv the agent (untainted) sends 1
 * byte with MSG_MORE and an address (the collector's UDP port) on each of CK_SOCKS unconnected
 * UDP sockets: the cgroup/sendmsg4 hook allows it (untainted), the byte stays corked (pending).
 * After its recv, on socket i it appends i * 256 + canary[i] bytes with send(MSG_MORE): while a
 * cork is pending udp_sendmsg goes straight to do_append_data, before the sendmsg4 hook; no
 * packet is made, so egress sees nothing either. Each append adds exactly its length to
 * sk_wmem_alloc; uid 65534 reads tx_queue of the agent's UDP sockets in /proc/net/udp,
 * subtracts the base (one corked byte on a socket of its own) and decodes index and byte.
 * Verifier: the bytes reassembled, compared with the canary.
 * Unlike udp_cork_txq no connected socket is involved: disconnecting the agent's connected UDP
 * sockets at the taint would not close this one.
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Status: blocked: cgroup backend, mncd's sweep pushes out pending corks (UDP_CORK off) before
 * the delivery, and a new cork needs an address (sendmsg4); lsm backend, socket_sendmsg judges a
 * send with neither address nor peer as one to an unregistered destination.
 * Bandwidth: ~16 bits per socket corked before the taint (up to the fd limit); a flush (send
 * without MSG_MORE) ends the cork, and a new one needs an allowed destination, so: once.
 * Fix idea: at the taint, flush or drop the agent's pending UDP corks (mncd on its pidfd_getfd
 * copy: setsockopt UDP_CORK 0 pushes the pending frames, which egress then drops), or have the
 * launcher refuse MSG_MORE/UDP_CORK to agents; a network namespace per agent hides the table. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_cork_agent(c, 0); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    atkv_cork_on_sync(c, tag,
                      "uid 65534 read the canary from the tx_queue (sk_wmem_alloc) of the agent's unconnected UDP "
                      "sockets in /proc/net/udp: bytes it appended after the taint to corks opened before it");
}

static const struct atk A = {"udp_cork_pending",
                             "bytes appended after the taint to UDP corks opened before it (unconnected sockets), as "
                             "/proc/net/udp tx_queue shows",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
