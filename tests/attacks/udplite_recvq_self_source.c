// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udplite_recvq_self_source - udp_recvq_self_source over UDP-Lite: uid 65534 binds an
 * SO_REUSEADDR UDP-Lite socket to 127.0.0.2:P and sends with IP_PKTINFO source 127.0.0.1 to the
 * agent's UDP-Lite socket at 127.0.0.1:P (SO_REUSEADDR, autobound [0.0.0.0]:P).
 * Body: the agent makes RQ_SOCKS sockets after its recv and has each autobound by a refused
 * sendto to loopback port 9 (bind itself is refused by seccomp); uid 65534 finds them in RQ_PROC
 * (the agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the
 * socket's index j; the agent reads the first (j) and then as many more as nibble j of the canary
 * says; uid 65534 reads every socket's rx_queue and divides by the size one datagram takes
 * (measured on a socket of its own of the same kinds). Verifier: the nibbles reassembled,
 * compared with the canary. The variant is chosen by the RQ_* defines below (the files
 * udp6_recvq_diag, udplite_recvq_diag, udp_recvq_v4mapped, udp6_recvq_self_source and
 * udplite_recvq_self_source differ only there).
 * Result: host (cgroup backend, 6.18): BLOCKED in user and root mode: ingress's loopback lookup
 * (bpf_sk_lookup_udp) searches the UDP table only, never finds the agent's UDP-Lite socket, so
 * the source counts as unregistered and the datagram is dropped. Positive control verified.
 * Bandwidth if open: as udp_recvq_self_source. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

/* the variant */
#define RQ_NAME "udplite_recvq_self_source"
#define RQ_AFAM AF_INET
#define RQ_OFAM AF_INET
#define RQ_PROTO IPPROTO_UDPLITE
#define RQ_PROC "/proc/net/udplite"
#define RQ_SPOOF 1 /* the outsider sends from the agent's own address (udp_recvq_self_source) */
#define RQ_FLAGS 0
#define RQ_EVIDENCE                                                                                                    \
    "uid 65534 sent UDP-Lite datagrams from 127.0.0.1:P (IP_PKTINFO) to the agent's UDP-Lite sockets and read the "    \
    "canary from their rx_queue (/proc/net/udplite)"

#include "atk_recvq.h"
