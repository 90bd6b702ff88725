/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* loop_int.h - the event loop's types, shared by loop.c (the loop, framing, requests, jobs,
 * group commit) and loop_client.c (connections: accept, connection caps, output queues). Internal
 * to mncd. */
#ifndef MNCD_LOOP_INT_H
#define MNCD_LOOP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "coro.h"
#include "json_write.h"
#include "mnc/ledger_backend.h"
#include "mncd.h"

#define MAX_EVENTS 256
#define READ_CHUNK 65536
#define READ_BUDGET (2u << 20) /* bytes read per client per iteration (fairness) */
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04
#endif
#define SCM_MAX_FDS 253 /* the kernel's SCM_MAX_FD: at most this many fds per message */
/* credentials + pidfd + a full SCM_RIGHTS batch + an SCM_SECURITY label, with room to spare */
#define CMSG_BUF                                                                                                       \
    (CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int)) + CMSG_SPACE(SCM_MAX_FDS * sizeof(int)) +              \
     CMSG_SPACE(4096))

enum cap_kind { CAP_NONE = 0, CAP_AGENT, CAP_UID };

typedef struct client {
    int fd;
    mncd_ident who;         /* accept-time identity: connection accounting only */
    enum cap_kind cap;      /* which per-principal count this connection holds */
    uint32_t cap_key;       /* agent id or uid */
    mncd_ident_cache cache; /* last resolved request sender (ident.c) */
    mncd_cred line_from;    /* sender of the current line's first byte */
    bool line_started;      /* the current line has at least one byte (or its newline) */
    bool line_mixed;        /* ... and bytes from another (or an unknown) sender */
    bool fds_noted;         /* received fds were reported once */
    /* The connecting process (SO_PEERPIDFD), held while peer_vouches: SO_PASSPIDFD is then off
     * and a chunk of that process is vouched for by this pidfd (mncd_peer_vouch) instead of
     * a pidfd made for every chunk. Off (for good) once another process writes. */
    int peer_pidfd;
    pid_t peer_pid;
    uint64_t peer_ino;
    bool peer_vouches;
    bool refused; /* refused by a cap: only its error line is sent, then closed */
    char *in;
    size_t in_len, in_cap;
    bool discarding;
    char *out;
    size_t out_len, out_off, out_cap;
    bool eof, dead, touched, epollout;
    bool busy;                      /* a request of this client is suspended in a job (its answer comes first) */
    bool zombie;                    /* closed while busy: freed when the job ends */
    struct queued *q_head, *q_tail; /* its later requests, parsed and identified, in order */
    struct client *prev, *next;     /* all clients, so shutdown can free them */
} client;

/* Fleet mode: a disclose runs as a job, in a coroutine (coro.h), and suspends while it waits
 * for PostgreSQL (mnc_lb_set_wait): the loop serves other requests meanwhile, so up to
 * MAX_JOBS charges are in flight and PostgreSQL commits them together. A client's requests are
 * still answered in order: while one of them is suspended, its later ones wait in its queue
 * (already identified: identity is per request and resolved when the line arrives). Like any
 * request, a job's state changes and audit records are made durable by the commit of the
 * iteration in which it finishes, before its answer is sent. */
#define MAX_JOBS MNC_LB_PG_POOL
#define DEFER_US 2000 /* longest a commit waits for more jobs to finish (group commit) */

typedef struct queued {
    mnc_request q;
    mncd_ident who;
    struct queued *next;
} queued;

typedef struct job {
    bool used;
    struct loop *l;
    client *c;
    mnc_request q;
    mncd_ident who;
    cJSON *resp;
    mncd_coro *co;
} job;

typedef struct uid_count {
    uint32_t uid, n;
} uid_count;

typedef struct loop {
    mncd *d;
    int ep, lfd, sfd;
    int spare; /* an fd kept in reserve: freed to accept the admin when the fd table is full */
    bool stopping;
    bool reload; /* SIGHUP: stop like SIGTERM, then main() re-executes mncd (docs/mncd.md) */
    client **touched;
    size_t n_touched, cap_touched;
    client *clients;
    uint32_t agent_conns[MNC_MAX_PRINCIPALS]; /* open connections per agent (accept identity) */
    uid_count *uid_conns;                     /* open connections per uid, n > 0 entries */
    size_t n_uid_conns, cap_uid_conns;
    job jobs[MAX_JOBS]; /* epoll data of a waiting job points here */
    int n_jobs;
    bool commit_deferred; /* the last iteration's changes are not durable yet */
    struct timespec deferred_since;
    mnc_jbuf resp; /* a response's line, printed here then copied to its client's queue */
} loop;

/* ---- loop_client.c */
/* Marks c for the iteration's send pass. */
void lp_touch(loop *l, client *c);
/* Queues n bytes of output for c (lp_touch); past cfg.max_output the client is dropped. 0 or -1. */
int lp_out_append(loop *l, client *c, const char *s, size_t n);
/* Sends queued output. Returns false if the client must be closed. */
bool lp_client_flush(loop *l, client *c);
/* Closes and frees c (or leaves it to its job, if one is suspended for it). */
void lp_client_free(loop *l, client *c);
/* Accepts every pending connection: identity at accept, connection caps, epoll. */
void lp_accept(loop *l);
/* The listening socket at path (SO_PASSCRED, SO_PASSPIDFD), or -1 after printing why. */
int lp_listener(const char *path);

#endif
