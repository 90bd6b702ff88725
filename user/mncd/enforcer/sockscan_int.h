/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sockscan_int.h - internal to the pre-taint sweep (sockscan.h): the types and entry points
 * its files share.
 *
 * Files, bottom up: freeze.c (the cgroup freezer), sockproc.c (the agent's processes and their
 * socket fds, sets of inodes), sockbase.c (what the judges share: each action's report, the
 * creator test by uid, the host pass), sockjudge.c (the kernel's rules applied to the peer of each
 * existing UNIX connection, and what is done about a disallowed one; other families; what is in
 * flight), sockjudge_inet.c (the same for IP sockets), sockscan.c (mncd_sweep: the order of it
 * all). Contract of each function below: as in its comment; all of them run while
 * the agent's cgroups are frozen, and report every action through mncd_judge_report.
 */
#ifndef MNCD_SOCKSCAN_INT_H
#define MNCD_SOCKSCAN_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostscan.h"
#include "sockdiag.h"
#include "sockscan.h"

/* ---- sets of inodes and pids (sockproc.c) */

typedef struct u32set {
    uint32_t *v;
    int n, cap;
    bool sorted;
} u32set;

/* Adds x (unsorted until the next mncd_u32set_has). 0, or -1 out of memory. */
int mncd_u32set_add(u32set *s, uint32_t x);
/* Whether x is in s (sorts s and removes duplicates first if needed). */
bool mncd_u32set_has(u32set *s, uint32_t x);

/* ---- the agent's processes and their socket fds (sockproc.c) */

typedef struct sfd {
    pid_t pid;
    int fd;
    uint32_t ino;
} sfd;

/* qsort order: by inode, then pid and fd (a stable choice of which fd acts for a shared socket). */
int mncd_sfd_cmp(const void *a, const void *b);

typedef struct scan {
    sfd *s;
    int n, cap;
    u32set inos; /* every socket inode the agent holds */
    u32set mine; /* mncd's own sockets (the monitor's end of the agents' connections) */
    u32set pids; /* the agent's processes (sorted, unique) */
    int npids;
} scan;

/* Fills sc with every socket fd of every process in cgs[0..ncg) (and mncd's own sockets in
 * sc->mine). 0, or -1 with the reason in err. */
int mncd_scan_cgroups(scan *sc, const mncd_sweep_cg *cgs, int ncg, char *err, size_t errlen);
/* A copy (pidfd_getfd) of fd `fd` of pid, checked to still be socket inode ino: the fd, or
 * -errno (-EBADF/-ESTALE/-ESRCH: closed, reused or exited meanwhile). */
int mncd_grab(pid_t pid, int fd, uint32_t ino);

/* ---- judging: the state (sockjudge.c, sockjudge_inet.c, sockbase.c) */

/* A pair of the agent's own sockets kept while frozen, whose outside holders are looked for
 * after the thaw (mncd_judge_pairs): the agent's fd, its sock_diag entry, mncd's copy. */
typedef struct pend {
    sfd s;
    uent e;
    int fd;
} pend;

typedef struct ctx {
    mnc_kern *k;
    uint32_t agent;
    const struct mnc_taint *t;
    const mncd_sweep_cg *cgs;
    int ncg;
    int sock_unix, sock_inet;
    diag g;
    scan sc;
    mncd_hostscan hs;
    bool hs_done;    /* the host pass ran: hs holds the outside holders of `interest` */
    u32set interest; /* the agent's sockets and their peers */
    bool saw_inet;   /* an IP socket was met (held or in flight): the inet dumps were needed */
    bool defer;      /* pairs: judged after the thaw (mncd_sweep_finish), not here */
    pend *pend;
    int npend, cpend;
    bool lsm;          /* the lsm backend: sends are judged in the kernel (sockscan.h) */
    bool out_inflight; /* the agent has data queued at a peer outside it: it may carry its fds */
    char out_what[128];
    mncd_sweep_fn fn;
    void *fctx;
    mncd_sweep_stats *st;
    char *err;
    size_t errlen;
    bool failed;
} ctx;

/* ---- what the judges share (sockbase.c) */

/* Reports one action to the caller's callback and the stats; non-zero: abort the sweep. */
int mncd_judge_report(ctx *c, mncd_sweep_act *a);
/* 1: uid (a socket inode's owner: its creator's fsuid) is the uid an instance of the agent runs
 * as; 0: it is not; -1: the uid cannot tell (an instance runs as root or with an unknown uid). */
int mncd_judge_own_by_uid(const ctx *c, uid_t uid);
/* Runs the host pass over c->interest once (hostscan.h); 0, or -1 (c->failed, err set). */
int mncd_sweep_hostscan(ctx *c);

/* ---- judging (sockjudge.c; IP sockets: sockjudge_inet.c) */

/* One UNIX socket of the agent (fd: our copy; e: its sock_diag entry). */
void mncd_judge_unix(ctx *c, const sfd *s, const uent *e, int fd);
/* One IP socket the agent holds but did not create (why: for the report), or one in flight. */
void mncd_judge_inet(ctx *c, const sfd *s, int fd, uint32_t ino, const char *why, bool in_flight);
/* Any other socket (netlink, packet, ...). */
void mncd_judge_other(ctx *c, const sfd *s, int fd);
/* The agent's TCP connections that egress would drop: aborted at once (SOCK_DESTROY). */
void mncd_judge_tcp(ctx *c, const mncd_sweep_cg *cgs, int ncg);
/* After the thaw: each pair kept in c->pend that a process outside also holds an end of is
 * shut and drained (the delivery is refused anyway: the fd scan finds the holder). */
void mncd_judge_pairs(ctx *c);

#endif
