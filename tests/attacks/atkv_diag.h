/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_diag.h - what sock_diag and /proc tell any user about the agent's sockets (queues, pacing,
 * UNIX peers, UDP receive queues) and the verifiers that read it
 * (atkv_diag.c). */
#ifndef MNC_ATKV_DIAG_H
#define MNC_ATKV_DIAG_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

/* The sock_diag attacks (udp_sockmem_diag, udp_shutdown_*, tcp_pacing_rate_diag,
 * uring_setsockopt_diag): a NETLINK_SOCK_DIAG dump of every AF_INET socket of protocol proto in
 * the TCP states `states` (a bitmask; ~0u: all), with the extensions ext (bits 1 << (INET_DIAG_x
 * - 1)), as any user may make it. each(m, type, payload, n, arg) for every attribute of every
 * socket (m: its struct inet_diag_msg). The number of sockets, or -1. */
struct inet_diag_msg;
int atkv_diag_dump(int proto, unsigned ext, unsigned states,
                   void (*each)(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg),
                   void *arg);
/* tcp_pacing_rate_diag, uring_setsockopt_diag: at sync "set", uid 65534 reads the max pacing rates
 * of every TCP listener and reassembles chunk i (first byte 0xa0 + i, then `chunk` bytes); evidence
 * if the canary is in it. */
void atkv_pacing_verify(struct atk_ctx *c, const char *tag, int chunk);

/* The lock attacks (getlk_outsider, proc_locks): a file every uid can open for reading, the same
 * for the agent and the outsider: /etc/hostname, or /bin/busybox where there is none (the qemu
 * guest's initramfs). */
const char *atkv_shared_file(void);

/* unix_pair_shutdown, unix_pair_rqlen: every established UNIX stream socket of the network
 * namespace as any user dumps it over NETLINK_SOCK_DIAG (unix_diag), with its peer's inode, its
 * receive queue length and its shutdown state (RCV 1, SEND 2), sorted by inode. At most cap into
 * out; the count, or -1. */
struct atkv_unix_sock {
    uint32_t ino, peer, rq;
    int sd;
};
int atkv_unix_streams(struct atkv_unix_sock *out, int cap);

/* udp_recvq_diag (when 'A'), udp_recvq_bound_before (when 'B'), udp_recvq_filled_before ('F'):
 * the tainted agent reads a secret-dependent number of the datagrams an outsider queued on its
 * autobound UDP sockets; uid 65534 reads the rest as /proc/net/udp rx_queue. `when` is when the
 * sockets get their port and their datagrams relative to the taint: 'A' both after, 'B' port
 * before and datagrams after, 'F' both before. */
int atkv_udp_recvq_agent(struct atk_ctx *c, char when);
void atkv_udp_recvq_on_sync(struct atk_ctx *c, const char *tag);

/* mncd_reply_rqlen, unix_dgram_rqlen_*, unix_stream_pretaint_rqlen: every UNIX socket of type
 * `type` in the network namespace as any user dumps it over NETLINK_SOCK_DIAG, with its name,
 * peer inode, receive-queue length (UNIX_DIAG_RQLEN: a stream's queued bytes, a datagram
 * socket's head datagram's length) and owner uid. At most cap into out; the count, or -1.
 * atkv_unix_diag_cmp orders them by inode (qsort). */
struct atkv_unix_diag {
    uint32_t ino, uid, rq, peer;
    int has_uid;
    char name[108];
    int namelen;
};
int atkv_unix_dump(int type, struct atkv_unix_diag *out, int cap);
int atkv_unix_diag_cmp(const void *a, const void *b);
/* The *_rqlen attacks' outsider. snap_take, at the "pre" sync: the inodes of every UNIX socket
 * of type now. atkv_unix_new: of the sockets of type made since, those owned by uid that are
 * autobound ("\0" + 5 hex digits; ATKV_AUTOBOUND) and/or connected with bytes queued
 * (ATKV_QUEUED), ordered by inode, into out (at most cap). How many. */
struct atkv_unix_snap {
    uint32_t ino[8192];
    int n;
};
#define ATKV_AUTOBOUND 1
#define ATKV_QUEUED 2
void atkv_unix_snap_take(int type, struct atkv_unix_snap *s);
int atkv_unix_new(int type, const struct atkv_unix_snap *s, uint32_t uid, int want, struct atkv_unix_diag *out,
                  int cap);
/* unix_dgram_rqlen_*: to each of the k sockets a (a sender socket of its own per target: what
 * sits unread is charged to the sender's buffer), a 1-byte datagram carrying its index, then n
 * datagrams of lengths 2..n+1; a summary ("F of K sockets filled; ERR") into out. */
void atkv_dgram_fill(const struct atkv_unix_diag *a, int k, int n, char *out, size_t outn);
/* ...and what the agent left: socket j's head datagram length - 2 is the 2-bit chunk j, four a
 * byte, into msg (NUL-terminated; at most msgn - 1 bytes). */
void atkv_dgram_chunks(const struct atkv_unix_diag *a, int k, int n, char *msg, size_t msgn);

/* The number the first line of file `path` matching scanf format `fmt` (one %ld) gives; -1 if
 * the file cannot be read or no line matches. For /proc fields ("SigQ: %ld/", "Uid: %ld"). */
long atkv_file_long(const char *path, const char *fmt);
/* "/proc/PID/<rel>" of the first process of the agent's uid (c->agent_uid > 0) in out; 0, or -1
 * when none is found (root mode, or the agent gone). Readable by any user for net/... files:
 * what an outsider learns about the agent's network namespace. */
int atkv_agent_proc_path(struct atk_ctx *c, const char *rel, char *out, size_t n);
/* Byte i of what a verifier decoded from watch w (bytes of c->slot[base + w]). */
void atkv_byte_set(struct atk_ctx *c, int base, int w, int i, unsigned v);
/* Evidence "uid 65534 read the canary from <what> in <where[w]>" for the first of nw watches
 * whose six bytes (atkv_byte_set) spell the canary's 12 hex digits. */
void atkv_bytes6_evidence(struct atk_ctx *c, int base, int nw, const char *what, const char *const *where);

/* udp_cork_txq (connected = 1) and udp_cork_pending (0): before its recv the agent takes
 * ATKV_CK_SOCKS UDP sockets towards the collector's udp4 port, connected (1) or with one byte
 * corked by sendto(MSG_MORE) to that address (0); after it, on socket i it appends
 * i * 256 + canary[i] bytes with send(MSG_MORE) (after one byte with MSG_MORE when connected),
 * then says `sync set` and keeps them open. 0. */
#define ATKV_CK_SOCKS 14 /* "mk" + 12 hex: one byte each */
int atkv_cork_agent(struct atk_ctx *c, int connected);
/* ...their verifier at sync "set": uid 65534 reads tx_queue (sk_wmem_alloc) of the agent's UDP
 * sockets in /proc/net/udp less the base (one corked byte on a socket of its own) as index and
 * byte: evidence if that spells the canary. */
void atkv_cork_on_sync(struct atk_ctx *c, const char *tag, const char *evidence);

/* The udp_recvq family's outsider (atk_recvq.h, udp_recvq_*, udp_errqueue_self_source): the rows
 * of a /proc/net/udp-like table (path): inode, uid, local IPv4 address as the table prints it
 * (0 in an IPv6 table), local port, rx_queue. How many, or -1. */
struct atkv_udp_sock {
    unsigned long ino;
    unsigned uid, addr, port, rx;
};
int atkv_udp_list(const char *path, struct atkv_udp_sock *out, int cap);
/* The inodes of path's sockets now (the "pre" sync), and whether ino was among them. */
struct atkv_udp_snap {
    unsigned long ino[4096];
    int n;
};
void atkv_udp_snap_take(const char *path, struct atkv_udp_snap *s);
int atkv_udp_snap_has(const struct atkv_udp_snap *s, unsigned long ino);
/* "p,p,...;err" (what an outsider's sender reported) into ports (at most cap): how many. */
int atkv_udp_ports(const char *list, unsigned *ports, int cap);
/* The decoder: in path, the rx_queue of each of ports[0..nports) in units of one datagram (the
 * rx_queue of the reader's own socket at myport, holding one); nibble j is rq_n less that
 * count, two a byte, into msg (NUL-terminated, cap bytes). 0, or -1 if the unit is unknown. */
int atkv_udp_nibbles(const char *path, unsigned myport, const unsigned *ports, int nports, int rq_n, char *msg,
                     size_t cap);

#endif
