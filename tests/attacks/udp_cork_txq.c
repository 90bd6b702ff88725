// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_cork_txq - the SEND queue of the agent's own connected UDP sockets, which /proc/net/udp
 * (and inet sock_diag) shows every user as tx_queue (sk_wmem_alloc): data appended with MSG_MORE
 * is corked in the socket's write queue and never becomes a packet, so no hook on packets sees
 * it. Before the taint the agent connects CK_SOCKS UDP sockets to the collector's UDP port
 * (allowed: untainted). After its recv, on socket i it sends 1 byte with MSG_MORE (the first
 * skb: a fixed truesize) and then appends i * 256 + canary[i] bytes with MSG_MORE: each append
 * adds exactly its length to sk_wmem_alloc (page frags, truesize += copy; measured on 6.18 up to
 * 60000 bytes). A connected UDP socket's send() runs no cgroup/sendmsg4 hook (udp_sendmsg calls
 * it only for an address given with the call), and corked data reaches neither cgroup_skb/egress
 * nor the collector. uid 65534 reads tx_queue of every UDP socket of the agent's uid in
 * /proc/net/udp, subtracts the base (one corked byte on a socket of its own, same route), and
 * decodes index and byte. Verifier: the bytes reassembled, compared with the canary.
 * The pre-taint sweep keeps the agent's own IP sockets (their packets are judged by egress).
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Status: blocked: cgroup backend, mncd's sweep pushes out pending corks (UDP_CORK off) and
 * disconnects the agent's own datagram sockets connected to a peer its taint disallows, so send()
 * needs an address again (sendmsg4); lsm backend, socket_sendmsg judges the connected peer on
 * every send, MSG_MORE ones included.
 * Bandwidth: ~16 bits per connected UDP socket (a datagram's 65507 bytes), up to the fd limit;
 * presumably re-writable: send() without MSG_MORE flushes the cork (egress drops the datagram,
 * the queue empties) and a new MSG_MORE starts again (not measured under taint here), which
 * would make it unbounded over time from sockets connected once before the taint.
 * Fix idea: the sweep could disconnect (connect AF_UNSPEC) a tainted agent's connected UDP
 * sockets whose peer it may not send to, so a later send() needs an address and meets the
 * sendmsg4 hook; or a cgroup/sendmsg hook that also runs for connected sockets (none on 6.18);
 * or a network namespace per agent (/proc/net/udp is per namespace). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c) { return atkv_cork_agent(c, 1); }

static void on_sync(struct atk_ctx *c, const char *tag)
{
    atkv_cork_on_sync(c, tag,
                      "uid 65534 read the canary from the tx_queue (sk_wmem_alloc) of the agent's connected UDP "
                      "sockets in /proc/net/udp: bytes it corked with MSG_MORE after the taint");
}

static const struct atk A = {"udp_cork_txq",
                             "bytes corked (MSG_MORE) on the agent's connected UDP sockets, as /proc/net/udp tx_queue "
                             "shows",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
