// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udplite_recvq_diag - udp_recvq_diag over UDP-Lite (IPPROTO_UDPLITE, /proc/net/udplite): a
 * protocol whose sockets live in their own table (bpf_sk_lookup_udp does not find them) and
 * whose header cgroup_skb/ingress must parse for ports (MNC_IPPROTO_UDPLITE).
 * Body: the agent makes RQ_SOCKS sockets after its recv and has each autobound by a refused
 * sendto to loopback port 9 (bind itself is refused by seccomp); uid 65534 finds them in RQ_PROC
 * (the agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the
 * socket's index j; the agent reads the first (j) and then as many more as nibble j of the canary
 * says; uid 65534 reads every socket's rx_queue and divides by the size one datagram takes
 * (measured on a socket of its own of the same kinds). Verifier: the nibbles reassembled,
 * compared with the canary. The variant is chosen by the RQ_* defines below (the files
 * udp6_recvq_diag, udplite_recvq_diag, udp_recvq_v4mapped, udp6_recvq_self_source and
 * udplite_recvq_self_source differ only there).
 * Result: host (cgroup backend, 6.18): BLOCKED in user and root mode (ingress drops the
 * outsider's datagrams); positive control verified.
 * Bandwidth if open: as udp_recvq_diag. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

/* the variant */
#define RQ_NAME "udplite_recvq_diag"
#define RQ_AFAM AF_INET
#define RQ_OFAM AF_INET
#define RQ_PROTO IPPROTO_UDPLITE
#define RQ_PROC "/proc/net/udplite"
#define RQ_SPOOF 0 /* the outsider sends from the agent's own address (udp_recvq_self_source) */
#define RQ_FLAGS 0
#define RQ_EVIDENCE "uid 65534 read the canary from the rx_queue of the agent's UDP-Lite sockets (/proc/net/udplite)"

#include "atk_recvq.h"
