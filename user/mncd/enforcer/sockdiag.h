/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sockdiag.h - the sock_diag netlink client of mncd's sweep (sockscan.c): one host-wide dump of
 * UNIX sockets (name, peer inode, shutdown state, queue lengths) and of TCP and UDP sockets
 * (tuple, state, INET_DIAG_CGROUP_ID), and SOCK_DESTROY. Private to the sweep.
 */
#ifndef MNCD_SOCKDIAG_H
#define MNCD_SOCKDIAG_H

#include <linux/inet_diag.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc_kern.h"

#define UNIX_LISTEN 10 /* TCP_LISTEN: unix sockets reuse the TCP state numbers */
#define UNIX_ESTABLISHED 1
#define UNIX_UNCONNECTED 7 /* TCP_CLOSE: a stream or seqpacket socket never connected */

/* One UNIX socket of the host (UNIX_DIAG_*). */
typedef struct uent {
    uint32_t ino, peer;
    uint8_t type, state, shut, namelen; /* namelen 0: unnamed */
    uint32_t rqlen, wqlen;              /* bytes queued to read; truesize sent and not yet read by the peer */
    char name[MNC_UNIX_PATH_MAX];       /* sun_path bytes; abstract: leading NUL */
} uent;

/* One TCP or UDP socket of the host (inet_diag). */
typedef struct tent {
    uint8_t family, state; /* as dumped (AF_INET / AF_INET6) */
    uint8_t proto;         /* IPPROTO_TCP or IPPROTO_UDP */
    struct inet_diag_sockid id;
    uint8_t src[16], dst[16]; /* v4 as v4-mapped v6, for matching the two ends of a pair */
    uint16_t sport, dport;    /* host order */
    bool v4;                  /* IPv4 or v4-mapped */
    bool has_cg;
    uint64_t cgid;
    uint32_t ino;
} tent;

/* The dumps (u sorted by ino) and the netlink socket they came from. */
typedef struct diag {
    int nl;
    uint32_t seq;
    uent *u;
    int nu, cu;
    tent *t;
    int nt, ct;
    uint8_t proto;   /* of the inet dump being read */
    bool inet_done;  /* the TCP and UDP dumps were made (mncd_diag_load_inet) */
    int inet_failed; /* they failed: every later call fails the same way */
} diag;

/* Dumps every UNIX socket. 0, or -1 with a reason in err. g->nl must be -1 before. */
int mncd_diag_load(diag *g, char *err, size_t errlen);

/* Dumps TCP and UDP over IPv4 and IPv6 (no IPv6 or no udp_diag in the kernel: those dumps are
 * skipped), once: a later call returns the first one's result. Made only when the sweep meets
 * an IP socket: walking the TCP hash tables costs milliseconds whatever they hold. 0, or -1
 * with a reason in err. */
int mncd_diag_load_inet(diag *g, char *err, size_t errlen);

/* The UNIX socket with inode ino, or NULL. */
uent *mncd_diag_unix_find(diag *g, uint32_t ino);

/* SOCK_DESTROY on one TCP socket (by its dumped tuple). 0, or -errno: -EOPNOTSUPP without
 * CONFIG_INET_DIAG_DESTROY, -ENOENT when it is gone. */
int mncd_diag_destroy_tcp(diag *g, const tent *e);

void mncd_diag_free(diag *g);

#endif
