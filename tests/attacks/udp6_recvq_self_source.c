// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp6_recvq_self_source - udp_recvq_self_source over IPv6: the agent sets SO_REUSEADDR on its
 * AF_INET6 UDP sockets (allowed while tainted) and autobinds them ([::]:P); uid 65534 binds an
 * SO_REUSEADDR socket to the host's first non-loopback, non-link-local IPv6 address at port P
 * (fd00::2 on this host) and sends with IPV6_PKTINFO ipi6_addr = ::1 to [::1]:P. The datagram
 * goes [::1]:P -> [::1]:P on lo: cgroup_skb/ingress looks up the socket its SOURCE names
 * (bpf_sk_lookup_udp, reversed tuple), finds the agent's own, "same agent", pass.
 * Body: the agent makes RQ_SOCKS sockets after its recv and has each autobound by a refused
 * sendto to loopback port 9 (bind itself is refused by seccomp); uid 65534 finds them in RQ_PROC
 * (the agent's uid, new since the "pre" sync) and sends each RQ_N + 1 datagrams carrying the
 * socket's index j; the agent reads the first (j) and then as many more as nibble j of the canary
 * says; uid 65534 reads every socket's rx_queue and divides by the size one datagram takes
 * (measured on a socket of its own of the same kinds). Verifier: the nibbles reassembled,
 * compared with the canary. The variant is chosen by the RQ_* defines below (the files
 * udp6_recvq_diag, udplite_recvq_diag, udp_recvq_v4mapped, udp6_recvq_self_source and
 * udplite_recvq_self_source differ only there).
 * Result before the fix: host (cgroup backend, 6.18): LEAKED in user and root mode; positive control verified.
 * Needs a second local IPv6 address for the outsider's bind (without one: EADDRNOTAVAIL, a
 * vacuous BLOCKED; udp_recvq_self_source does the same over IPv4 with 127.0.0.2).
 * Bandwidth: as udp_recvq_self_source (4 bits per socket as written, ~8 possible; refillable,
 * unbounded over time).
 * Fix idea: as udp_recvq_self_source (a packet's source address proves nothing on loopback;
 * take "same agent" from a mark set by egress on the agent's own packets).
 * Status: blocked as udp_recvq_self_source (ingress names the sender by egress's mark, not by the
 * source address). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

/* the variant */
#define RQ_NAME "udp6_recvq_self_source"
#define RQ_AFAM AF_INET6 /* the agent's sockets */
#define RQ_OFAM AF_INET6 /* the outsider's datagrams */
#define RQ_PROTO 0       /* or IPPROTO_UDPLITE */
#define RQ_PROC "/proc/net/udp6"
#define RQ_SPOOF 1 /* the outsider sends from the agent's own address (udp_recvq_self_source) */
#define RQ_FLAGS 0
#define RQ_EVIDENCE                                                                                                    \
    "uid 65534 sent datagrams from [::1]:P (IPV6_PKTINFO, its socket bound to another local address with "             \
    "SO_REUSEADDR) to the agent's IPv6 UDP sockets, passed by cgroup_skb/ingress as same-agent traffic, and read the " \
    "canary from their rx_queue (/proc/net/udp6)"

#include "atk_recvq.h"
