// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_recvq_v4mapped - udp_recvq_diag on dual-stack sockets: the agent's AF_INET6 UDP sockets
 * (autobound by a refused sendto to ::ffff:127.0.0.1:9, so [::]:P, not V6ONLY) receive the
 * outsider's IPv4 datagrams to 127.0.0.1:P; rx_queue read from /proc/net/udp6. Checks that
 * ingress judges an IPv4 packet delivered to an IPv6 socket (skb->protocol is IPv4).
 * Body: the agent makes RQ_SOCKS sockets after its recv and has each autobound by a refused
 * sendto to loopback port 9 (bind itself is refused by seccomp); uid 65534 finds them in RQ_PROC
 * (the agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the
 * socket's index j; the agent reads the first (j) and then as many more as nibble j of the canary
 * says; uid 65534 reads every socket's rx_queue and divides by the size one datagram takes
 * (measured on a socket of its own of the same kinds). Verifier: the nibbles reassembled,
 * compared with the canary. The variant is chosen by the RQ_* defines below (the files
 * udp6_recvq_diag, udplite_recvq_diag, udp_recvq_v4mapped, udp6_recvq_self_source and
 * udplite_recvq_self_source differ only there).
 * Result: host (cgroup backend, 6.18): BLOCKED in user and root mode; positive control verified.
 * Bandwidth if open: as udp_recvq_diag. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

/* the variant */
#define RQ_NAME "udp_recvq_v4mapped"
#define RQ_AFAM AF_INET6 /* the agent's sockets */
#define RQ_OFAM AF_INET
#define RQ_PROTO 0 /* or IPPROTO_UDPLITE */
#define RQ_PROC "/proc/net/udp6"
#define RQ_SPOOF 0 /* the outsider sends from the agent's own address (udp_recvq_self_source) */
#define RQ_FLAGS 0
#define RQ_EVIDENCE                                                                                                    \
    "uid 65534 sent IPv4 datagrams to the agent's dual-stack IPv6 UDP sockets and read the canary from their "         \
    "rx_queue (/proc/net/udp6)"

#include "atk_recvq.h"
