/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* enforcer.h - mncd's enforcer: the root half that holds the kernel layer and parses nothing
 * (docs/privsep.md). Internal to user/mncd/enforcer/.
 *
 * Files, bottom up (a file calls only files on lower lines):
 *   ek_proc.c    a process's cgroup from /proc, checked against its pidfd
 *   ek_out.c     notices and replies to the monitor: an ordered queue, flushed without blocking
 *                between requests and before every reply (ek_audit, ek_reply, ...)
 *   ek_boot.c    start-up: OPEN, the configuration tables, the state dir handed to the monitor,
 *                the agent and admin sockets
 *   ek_kern*.c   the kernel layer (attach, adopt, holds, registrations, watches, admin verbs)
 *   enforcer.c   the event loop: the monitor's pair, the admin socket, signals, kernel fds
 *
 * Everything the enforcer reads from the monitor or an admin has passed psp_check (privsep.h)
 * first; it includes neither cJSON nor libpq (tests/integration/test_layout checks every object
 * of this directory). One thread; nothing here is reentrant.
 */
#ifndef MNCD_ENFORCER_H
#define MNCD_ENFORCER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../privsep.h"
#include "../psp_io.h"

/* One principal of the sealed configuration (PRINCIPAL). */
typedef struct ek_principal {
    char name[PSP_NAME_MAX];
    uint32_t cls, flags, addr;
    struct mnc_unix_key ukey;
    struct mnc_inet_key ikey;
    char *path; /* heap; "" when none */
} ek_principal;

typedef struct ek_idmap {
    uint32_t kind, agent, uid;
    char cgroup[PSP_CGROUP_MAX];
} ek_idmap;

/* An outgoing message waiting for room on the monitor's pair. */
typedef struct ek_outq {
    struct ek_outq *next;
    size_t len;
    psp_buf *m; /* heap, len bytes used */
} ek_outq;

#define EK_MAX_ADMIN 16 /* admin connections at once */

typedef struct ek_admin_conn {
    int fd;
    psp_ctx cx;
} ek_admin_conn;

struct ek_kern;

typedef struct ek {
    int mon_fd;    /* the monitor's end of the pair, -1 once it is gone */
    pid_t mon_pid; /* the monitor process (excluded from the host scan: it is mncd) */
    psp_ctx cx;    /* the monitor's session */
    bool sealed;   /* SEAL accepted and the start done (STARTED sent) */
    bool start_failed;
    struct psp_config cfg;       /* valid after CONFIG */
    ek_principal *pr;            /* cfg.n_principals entries */
    char (*names)[PSP_NAME_MAX]; /* their names, contiguous (wsrec.h wants them so) */
    ek_idmap *idm;               /* cfg.n_idmap entries */
    uint32_t n_idm;
    int state_fd;  /* the state dir (handed to the monitor, kept for nothing else) */
    int listen_fd; /* the agent socket until STARTED hands it over, then -1 */
    int admin_fd;  /* the admin socket (SOCK_SEQPACKET) */
    char sock_path[PSP_SOCK_MAX], admin_path[PSP_SOCK_MAX + 8];
    bool pidfd_creds; /* SO_PASSPIDFD on the agent socket */
    ek_admin_conn admin[EK_MAX_ADMIN];
    int n_admin;
    ek_outq *q_head, *q_tail; /* notices waiting for room, in order */
    size_t q_len;
    bool q_epollout;
    int ep;               /* epoll */
    struct ek_kern *kern; /* the kernel layer; NULL when off */
    uint64_t n_malformed, n_kevents_lost;
    bool stopping; /* SIGTERM forwarded, or the monitor gone: exit when it is reaped */
    int exit_code;
} ek;

/* ---- ek_proc.c */

/* The cgroup v2 path of pid as /proc/PID/cgroup shows it ("0::" line) into cg, then checked:
 * pidfd (may be -1: unchecked) still names a live process, so the pid was not reused meanwhile.
 * 0, or -errno (-ESRCH: gone). */
int ek_proc_cgroup(pid_t pid, int pidfd, char *cg, size_t n);

/* ---- ek_out.c: what goes to the monitor */

/* Queues an audit record for the monitor's log (PSP_AUDIT). sender/receiver: principal ids or
 * PSP_NONE; oid: 16 bytes or NULL; reason: [a-z0-9_]{1,31}. Sent in order with every other
 * notice; never blocks (ek_flush sends the queue). */
void ek_audit(ek *e, unsigned op, unsigned decision, uint32_t sender, uint32_t receiver, const uint8_t *oid,
              const char *reason, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* Queues any notice (KEVENT, REG_ADD, REG_DEL, RESET, REG_SOURCE) as built by the caller (its
 * header initialised). droppable: a KEVENT, dropped (and counted) when the queue is long. */
void ek_notice(ek *e, const void *msg, bool droppable);
/* Sends queued notices while there is room (nonblock) or all of them (block: a request is
 * waiting for its reply, so the monitor is reading). Returns 0, or -errno when the monitor is
 * gone (e->mon_fd is then closed and -1). */
int ek_flush(ek *e, bool block);
/* Sends a reply (after flushing every queued notice, in order), with nfds fds. 0 or -errno. */
int ek_reply(ek *e, void *msg, const int *fds, int nfds);
/* REFUSED for request seq, code and errno err, with a detail. 0 or -errno. */
int ek_refuse(ek *e, uint32_t seq, unsigned code, int err, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same on an admin connection (blocking: one reply per request). */
int ek_refuse_to(int fd, uint32_t seq, unsigned code, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Frees the queue (the monitor is gone). */
void ek_out_free(ek *e);

/* ---- ek_boot.c: start-up */

/* OPEN: the file opened read-only for the monitor (a regular file of at most EK_OPEN_MAX
 * bytes). Replies OPENED with the fd, or REFUSED. */
#define EK_OPEN_MAX (16u << 20)
void ek_open(ek *e, const struct psp_open *m);
/* CONFIG, PRINCIPAL, IDMAP: stored. 0, or -ENOMEM (the enforcer refuses the seal later). */
int ek_config(ek *e, const struct psp_config *m);
int ek_principal_add(ek *e, const struct psp_principal *m);
int ek_idmap_add(ek *e, const struct psp_idmap *m);
/* SEAL's preparation: the state dir created if absent and handed to the monitor's user (the
 * directory, its regular files and its quarantine directory, never through a link), the agent
 * socket bound (0666, SO_PASSCRED, SO_PASSPIDFD when the kernel has it), the admin socket bound
 * (0600, owned by the admin uid). 0, or -1 with why. */
int ek_prepare(ek *e, char *why, size_t n);
/* Part of SEAL's answer: each log sink's file opened for appending (created when absent) and
 * handed to the monitor (SINKFD), which appends the log verb's lines to it. Returns how many
 * were sent. */
uint32_t ek_sinkfds(ek *e);
/* The name of principal id, or NULL when id is none. */
const char *ek_name(const ek *e, uint32_t id);
/* Unlinks the sockets it bound and closes what it holds (at exit). */
void ek_boot_cleanup(ek *e);

/* ---- the kernel layer (ek_kern*.c). With the kernel layer off these answer as such. */

/* After ek_prepare: attach or adopt as configured (never wipes pinned state), register names
 * and sinks, adopt the registrations still pinned (REG_ADD and AUDIT notices), and fill s.
 * Off: one kernel.start record. 0, or -1 with why (the start is refused). */
int ek_kern_start(ek *e, struct psp_started *s, char *why, size_t n);
void ek_kern_stop(ek *e);
/* Requests of the SERVE phase; each sends its reply (or REFUSED). */
void ek_kern_hold(ek *e, const struct psp_hold *m);
void ek_kern_reg_begin(ek *e, const struct psp_reg_begin *m);
void ek_kern_reg_path(ek *e, const struct psp_reg_path *m);
void ek_kern_reg_commit(ek *e, const struct psp_reg_commit *m);
void ek_kern_taint_get(ek *e, const struct psp_taint_get *m);
void ek_kern_status(ek *e, const struct psp_status *m);
/* Admin requests (the peer was checked): the reply goes to fd. */
void ek_kern_adm_reset(ek *e, int fd, const struct psp_adm_reset *m);
void ek_kern_adm_ws_clear(ek *e, int fd, const struct psp_adm_ws_clear *m);
/* fds for the event loop (EPOLLIN) and their handler. */
#define EK_KERN_MAX_FDS 4
int ek_kern_fds(ek *e, int fds[EK_KERN_MAX_FDS]);
void ek_kern_ready(ek *e, int fd);
/* The agent whose registered cgroup contains cg (a path as /proc/PID/cgroup shows it): its id,
 * -1 inside the mnc tree but in no registered cgroup, -2 outside the tree (or the layer off). */
int ek_kern_cgroup_agent(ek *e, const char *cg);
/* The bound Landlock audit socket that STARTED hands to the monitor (PSP_SF_LLAUDIT), and its
 * release once sent (the enforcer keeps no copy). */
int ek_kern_audit_fd(ek *e);
void ek_kern_audit_fd_done(ek *e);

/* ---- enforcer.c */

/* Asks the monitor to stop (STOP) and exits once it has; also on SIGTERM and SIGINT. */
void ek_stop(ek *e);

/* The enforcer's life: serves the monitor's pair (mon_fd) until the monitor exits, then exits
 * with its status. Called in the parent right after the fork. Never returns. */
__attribute__((noreturn)) void ek_main(int mon_fd, pid_t mon_pid);

#endif
