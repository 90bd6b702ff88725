/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mncd.h - internal interfaces of the mncd daemon (not a public API).
 *
 * Layers, bottom up. A file calls only files on lower lines (tests/integration/test_layout
 * fails on a cycle); everything may call libmnc (user/lib) and the loader (loader/mnc_kern.h).
 *   core.c         the audit writer (mncd_audit, mncd_audit_named) and principal names
 *   store.c        durable state: object registry, inboxes, memory store; persisted through the
 *                  journal (one journal record per event-loop iteration = group commit)
 *   flow.c         per agent, the scopes of the objects it holds: what it may still disclose
 *   ident.c        caller identity from the kernel, per request: the sender credentials the
 *                  kernel attaches to each chunk (SCM_CREDENTIALS + SCM_PIDFD) -> pid -> cgroup
 *                  -> agent, else uid; the mnc-tree rule (mncd_ident_tree_rule)
 *   wstaint.c      the taint record a workspace carries to the next instance (wstaint.h)
 *   enforcer/      the pre-taint sweep and the fd scan (used by kern_hold.c here, and by the
 *                  enforcer under --privsep): fdscan*.c (non-socket objects), hostscan.c (other
 *                  processes' fds), inflight.c (fds in SCM_RIGHTS queues), sockdiag.c
 *                  (sock_diag), freeze.c (the cgroup freezer), and the sweep itself (sockscan.h:
 *                  sockproc.c, sockbase.c, sockjudge*.c, sockscan.c); with enforcer.h's files
 *                  (ek_*.c), the enforcer of --privsep (docs/privsep.md)
 *   monitor/       under --privsep, the monitor's side: mon_psp.c (the protocol), mon_kern.c
 *                  (the kernel layer's entry points over it)
 *   llaudit.c      Landlock denials as audit records (llaudit.h); llaudit_rec.c reads one record
 *   quarantine.c   output of a tainted agent that `mncctl run` withheld
 *   mncl_gate.c    MNC-L: the leakage ledger as a gate inside selection
 *   mncd_dreq.c    MNC-D's request table and its journal; starts and stops MNC-L and MNC-D
 *   mncd_failure.c MNC-D: delegate, approval, abstain when nothing is admissible
 *   kern_watch.c, kern_hold.c, kern.c, kern_verbs.c, kern_records.c
 *                  the kernel layer (kern_layer.h): cgroup watches and registrations; taint
 *                  holds (map, workspaces, sweep, fd scan); start, stop; admin verbs and
 *                  status; the option, deny events as records, whoami's taint object
 *   config.c       the JSON config file and command line -> mncd_config
 *   verbs.c        one handler per protocol verb; every operation goes through mnc_monitor_check
 *   reload.c       SIGHUP: checks that a restart on the edited config and policy would start
 *   loop_client.c  connections: accept (accept-time identity, connection caps), the listening
 *                  socket, output queues and their bounds
 *   loop.c         the epoll event loop: framing (JSON lines, 1 MiB limit), requests and jobs,
 *                  commit (journal + audit fsync) before any response of the iteration is sent
 *   main.c         startup, shutdown, and the restart in place of a reload
 * Headers other than this one: one per module with its own contract (enforcer/fdscan.h,
 * freeze.h, hostscan.h, inflight.h, sockdiag.h, sockscan.h; llaudit.h, wstaint.h, privsep.h,
 * psp_io.h, privdrop.h, wsrec.h) and some internal to a group of files (enforcer/sockscan_int.h,
 * enforcer/fdscan_int.h, enforcer/enforcer.h, mncl_int.h, kern_layer.h, loop_int.h).
 */
#ifndef MNCD_H
#define MNCD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "mnc/audit.h"
#include "mnc/disclosure.h"
#include "mnc/journal.h"
#include "mnc/metrics.h"
#include "mnc/policy.h"
#include "mnc/protocol.h"
#include "mnc/registry.h"
#include "mnc/select.h"
#include "mnc_htab.h"
#include "mnc_util.h"

#define MNCD_VERSION "0.1.0"
#define MNCD_DEFAULT_SOCKET "/run/mnc/mncd.sock"
#define MNCD_DEFAULT_STATE "/var/lib/mnc"
#define MNCD_MAX_POLICIES 16
#define MNCD_MAX_MAP 256
#define MNCD_DEFAULT_MAX_CLIENTS 1024
#define MNCD_DEFAULT_MAX_CLIENTS_PER_AGENT 64   /* connections opened from one agent's cgroup */
#define MNCD_DEFAULT_MAX_CLIENTS_PER_UID 256    /* from one uid (not an agent cgroup, not admin) */
#define MNCD_DEFAULT_MAX_OUTPUT (8u << 20)      /* per-client queued response bytes */
#define MNCD_MAX_INBOX 1000000                  /* queued deliveries per agent (~64 B each) */
#define MNCD_DEFAULT_QUARANTINE_MAX (16u << 20) /* per agent and stream */
#define MNCD_MAX_READS 32                       /* agent.register "reads" (== mncctl run's RUN_MAX_READ) */

typedef struct mncd_config {
    char socket[108];
    char state_dir[PATH_MAX];
    char *policies[MNCD_MAX_POLICIES]; /* heap */
    int n_policies;
    uint32_t admin_uid;
    size_t max_clients;
    size_t max_clients_per_agent;
    size_t max_clients_per_uid;
    size_t max_output;
    /* quarantine.c: bytes kept per agent output stream (STATE_DIR/quarantine/<agent>.<stream>) */
    uint64_t quarantine_max;
    /* audit log rotation (mnc/audit.h, mnc_audit_set_rotation): 0 turns a limit off; keep 0
     * keeps every rotated segment */
    uint64_t audit_rotate_bytes, audit_rotate_age_ms;
    uint32_t audit_keep;
    /* uid -> agent (checked before the policy's own "uids") */
    struct {
        char agent[MNC_NAME_MAX];
        uint32_t uid;
    } uids[MNCD_MAX_MAP];
    int n_uids;
    /* cgroup v2 path (as in /proc/PID/cgroup, e.g. "/mnc/worker") -> agent */
    struct {
        char path[512];
        char agent[MNC_NAME_MAX];
    } cgroups[MNCD_MAX_MAP];
    int n_cgroups;
    /* MNC-D (mncd_failure.c): how long a delegation waits for the broker's reply, and how long an
     * approval request waits for `mncctl approve` before it is denied */
    uint32_t broker_timeout_ms;
    uint32_t approval_timeout_ms;
    /* kernel layer (kern.c): --kernel / "kernel", --pin-root / "pin_root", --cgroup-tree /
     * "cgroup_tree"; "" = the loader's default */
    int kernel; /* enum mncd_kmode */
    char pin_root[PATH_MAX];
    char cgroup_tree[256];
    /* fleet mode (fleet.c, docs/fleet.md): "ledger": {"backend", "conninfo", "host",
     * "anchor_interval_ms"} */
    int ledger_backend;          /* mnc_lb_kind: journal (default) or postgres */
    char ledger_conninfo[1024];  /* libpq conninfo, never with a password */
    char fleet_host[64];         /* this host's name in the shared tables */
    uint32_t anchor_interval_ms; /* audit head anchoring period (postgres) */
    /* --privsep (docs/privsep.md): mncd runs as the enforcer (root) and a monitor of user
     * --user (default "mncd") that serves the socket; off by default */
    bool privsep;
    char user[64];
} mncd_config;

/* Fills defaults, then applies --config FILE, then the other flags (flags win). Resolves the
 * default policy when none is given. Returns 0, 1 if --help/--version was printed, or -1 after
 * printing a clear message to stderr. */
int mncd_config_load(mncd_config *c, int argc, char **argv);
void mncd_config_free(mncd_config *c);

/* ---- identity
 *
 * Identity is per request, never per connection: a connected fd can be passed to another
 * process (SCM_RIGHTS), and the process that writes a request line is the caller. loop.c sets
 * SO_PASSCRED and SO_PASSPIDFD on every accepted socket and reads with recvmsg; the kernel
 * attaches the writer's pid/uid/gid (and a pidfd, Linux 6.5+) to every chunk and never returns
 * bytes of two writers in one recvmsg. (A chunk of the connecting process itself is vouched for
 * by that process's pidfd instead: mncd_peer_vouch.) A line whose bytes came from more than one sender is
 * refused. The identity resolved at accept time (SO_PEERCRED) only does connection accounting
 * (the per-agent / per-uid caps, "is a broker connected").
 * Forgery: a sender may put its own SCM_CREDENTIALS on a message, but the kernel only accepts
 * another pid with CAP_SYS_ADMIN and another uid/gid with CAP_SETUID/CAP_SETGID (in the user
 * namespace that owns them). `mncctl run` drops those capabilities from every agent, also with
 * --as-root, and denies namespace creation; a process that has them is a trusted outsider. */
typedef enum mncd_via { MNCD_VIA_NONE = 0, MNCD_VIA_CGROUP, MNCD_VIA_UID } mncd_via;

typedef struct mncd_ident {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    int agent; /* principal id, or -1 */
    mncd_via via;
    bool admin;       /* uid == admin uid, not an agent (by cgroup or uid), and (kernel
                       * layer on) not inside the mnc cgroup tree */
    char cgroup[512]; /* "" if unknown */
} mncd_ident;

/* The sender of one chunk of bytes, as the kernel recorded it (control messages of recvmsg). */
typedef struct mncd_cred {
    bool known; /* SCM_CREDENTIALS arrived (and the control data was not truncated) */
    pid_t pid;
    uid_t uid;
    gid_t gid;
    int pidfd;     /* SCM_PIDFD (owned by the caller), or the connection's peer pidfd lent by
                    * loop.c when the peer vouches for the chunk (mncd_peer_vouch); -1 if none */
    bool gone;     /* SCM_PIDFD said the sender no longer exists */
    uint64_t ino;  /* pidfs inode of pidfd (unique per process, Linux 6.9+), 0 if unknown */
    uint64_t cgid; /* its cgroup id when the chunk was read (valid iff ino != 0) */
} mncd_cred;

/* Per-connection cache of the last resolved sender. Valid only while the same process (pid +
 * pidfs inode) is in the same cgroup (cgroup id from PIDFD_GET_INFO, Linux 6.13+) and the
 * registration table has not changed; without those kernel features nothing is cached. */
typedef struct mncd_ident_cache {
    bool valid;
    pid_t pid;
    uid_t uid;
    gid_t gid;
    uint64_t ino, cgid;
    uint64_t gen;
    mncd_ident id;
} mncd_ident_cache;

/* The registration table the kernel layer fills (cgroup path -> agent). Config entries are
 * registered at startup. Returns 0 or -1 (table full / unknown agent). Every change bumps the
 * table's generation, which invalidates every mncd_ident_cache. */
int mncd_ident_register_cgroup(const char *cgroup_path, int agent);
void mncd_ident_clear(void);
/* The mnc cgroup tree as /proc/PID/cgroup shows it (e.g. "/mnc"), set by the kernel layer when
 * it starts; "" (the initial value) turns the tree rule off. Bumps the table's generation.
 * Returns 0, or -1 if the path is too long (nothing changed). */
int mncd_ident_set_tree(const char *tree_rel);
/* The tree rule: a caller inside the mnc cgroup tree that is not a registered agent is nobody
 * (not admin, not an agent by uid): fail closed. Applied by mncd_ident_request, and by the
 * caller right after mncd_ident_resolve. */
void mncd_ident_tree_rule(mncd_ident *id);
/* Resolves the peer of a connected UNIX socket as of connect() (SO_PEERCRED): for connection
 * accounting only, never for authorisation. Returns 0 (id->agent may be -1: unknown) or -1 if
 * the kernel gave no credentials. If peer_pidfd is not NULL it receives the peer's pidfd
 * (SO_PEERPIDFD, owned by the caller) or -1; else that pidfd is closed. */
int mncd_ident_resolve(int fd, const mnc_policy *p, const mncd_config *c, mncd_ident *id, int *peer_pidfd);
struct mncd;
/* Resolves the sender of one request (cr: the credentials of its bytes) to an identity,
 * including the mnc-tree rule (mncd_ident_tree_rule). A sender that has exited, or whose cgroup
 * cannot be read while it is provably alive, is nobody (agent -1, not admin). cache may be
 * NULL. Returns 0, or -1 if cr carries no credentials (the caller refuses the request). */
int mncd_ident_request(struct mncd *d, const mncd_cred *cr, mncd_ident_cache *cache, mncd_ident *id);
/* Fills cr->ino (pidfs inode of cr->pidfd) and cr->cgid when the kernel can say (pidfs and
 * PIDFD_GET_INFO, 6.13+); leaves ino 0 otherwise. */
void mncd_cred_inode(mncd_cred *cr);
/* The kernel attaches a pidfd to every chunk read (SO_PASSPIDFD took on the listener): from
 * then on mncd_ident_request makes a chunk that has none (neither its own nor the connector's,
 * lent) nobody, instead of trusting its pid unproven as it must before Linux 6.5. */
void mncd_ident_expect_pidfd(void);
/* Does the connection's peer vouch for a chunk written by pid chunk_pid? peer_pidfd/peer_pid:
 * the peer as of connect() (mncd_ident_resolve). 1 if chunk_pid is the peer's pid and the peer
 * is not reaped: then the chunk's writer is the peer (ident.c says why), and *cgid is its
 * cgroup id now (PIDFD_GET_INFO, Linux 6.13+). 0 otherwise: the chunk needs its own pidfd. This
 * spares mncd a pidfd per chunk (SO_PASSPIDFD), the costliest part of reading a request. */
int mncd_peer_vouch(int peer_pidfd, pid_t peer_pid, pid_t chunk_pid, uint64_t *cgid);
/* Do two chunks come from the same sender (pid, uid, gid, and process inode when known)? */
bool mncd_cred_same(const mncd_cred *a, const mncd_cred *b);

/* ---- durable state */
typedef struct mncd_msg {
    mnc_oid id;
    uint16_t from;
    bool forwarded; /* queued by forward (re-checked as a forward at delivery) */
    uint64_t time_ms;
    struct mncd_msg *next;
} mncd_msg;

typedef struct mncd_inbox {
    mncd_msg *head, *tail;
    size_t n;
} mncd_inbox;

typedef struct mncd_mem {
    mnc_hnode h;     /* key: key */
    const char *key; /* "store/H": the node's key (in the entry's block); H is the keyed hash of
                      * the agent's key (mncd_hv_id), never the key itself */
    mnc_oid id;
    uint16_t writer;
    uint64_t time_ms;
} mncd_mem;

typedef struct mncd_store {
    const mnc_policy *p;
    mnc_registry reg;
    mncd_inbox *inbox; /* indexed by principal id */
    mnc_htab mem;      /* mncd_mem by "store/key" */
    mnc_journal *j;
    /* this iteration's change records as JSON array text "[r1,r2,...", built as they come
     * (printed once each, no tree kept); the buffer is reused across iterations */
    char *batch;
    size_t batch_len, batch_cap;
    mnc_audit *audit;     /* its deferred lines ride in the journal record (store.c) */
    mnc_metrics *metrics; /* commit latencies (mnc/metrics.h); may be NULL */
    /* the per-host key of the keyed hashes (mnc/audit.h: STATE_DIR/audit.key), loaded (made at
     * the first start) by mncd_store_open: memory keys are stored as hashes under it */
    unsigned char hkey[MNC_AUDIT_KEY_LEN];
    bool hkey_ok;
    /* per memory store (principal id), the key label: the ⊓ of the labels of every agent that
     * ever wrote a key there (label.c); NULL: none yet. Every lookup there confers it. */
    struct mncd_label **mlbl;
    char path[PATH_MAX];
    char err[PATH_MAX + 2048];
} mncd_store;

/* Opens STATE_DIR/state.journal, replays it, reconciles `audit` (the open audit log) with the
 * audit records the journal holds (re-appends missing ones; a conflicting one refuses), then
 * compacts it. Returns 0 or -1 with s->err. */
int mncd_store_open(mncd_store *s, const mnc_policy *p, const char *state_dir, mnc_audit *audit);
/* Closes the state journal (everything appended is durable). at_exit: the process exits right
 * after, so the objects, inboxes and memory entries are left for the exit to reclaim (see
 * main.c, free_at_exit); s must not be used again either way. */
void mncd_store_close(mncd_store *s, bool at_exit);
/* Changes (applied in memory at once, journaled at the next commit). 0 or -1 (OOM). */
int mncd_store_put_object(mncd_store *s, mnc_disclosure *heap_obj); /* takes ownership on 0 */
int mncd_store_touch(mncd_store *s, const mnc_disclosure *d);       /* object changed */
int mncd_store_push(mncd_store *s, int agent, const mnc_oid *id, int from, bool forwarded, uint64_t now_ms);
/* Pops the head of agent's inbox into *out. Returns 1 if popped, 0 if empty, -1 on OOM. */
int mncd_store_pop(mncd_store *s, int agent, mncd_msg *out);
/* Memory entries by hashed key (hkey: mncd_hv_id of the agent's key). put: wl is the writer's
 * label (mncd_label_of; NULL or empty: none), met into the store's key label and journaled. */
#define MNCD_KEY_HEX 32
struct mncd_label;
int mncd_store_mem_put(mncd_store *s, int store, const char *hkey, const mnc_oid *id, int writer, uint64_t now_ms,
                       const struct mncd_label *wl);
const mncd_mem *mncd_store_mem_get(const mncd_store *s, int store, const char *hkey);
/* The store's key label (NULL: no labelled writer yet). */
const struct mncd_label *mncd_store_mem_label(const mncd_store *s, int store);
/* Writes this iteration's changes and the audit log's pending (deferred) lines as one journal
 * record (durable on return), then writes those lines to the audit log. 0 or -1. */
int mncd_store_commit(mncd_store *s);
size_t mncd_store_inbox_total(const mncd_store *s);

/* ---- flow (flow.c): what an agent holds limits what it may disclose in bytes of its own.
 * Per agent and contract: the sinks ∩ of the objects of that contract delivered to the agent. */
struct mncd_flow;
typedef struct mncd mncd;
/* Builds the record from the objects the store holds (after mncd_store_open). 0 or -1 (OOM). */
int mncd_flow_open(mncd *d);
void mncd_flow_close(mncd *d);
/* Before a delivery of o to agent: records it. 0, or -1 (OOM: the caller must not deliver). */
int mncd_flow_hold(mncd *d, int agent, const mnc_disclosure *o);
/* taint.reset: forgets what agent held. */
void mncd_flow_reset(mncd *d, int agent);
/* May agent disclose under contract to recipient, given what it holds? MNC_OK, MNC_R_SINK with
 * *blocking = the held contract whose scope forbids it, or MNC_R_INTERNAL without a record. */
mnc_reason mncd_flow_check(const mncd *d, int agent, int contract, int recipient, int *blocking);

/* ---- labels (label.c; docs/protocol.md, "Identifiers an agent chooses"): what an identifier
 * an agent writes into mncd carries - the intersection of the scopes of everything it holds.
 * Per contract of a held object the ∩ of their sinks and the AND of their memory bits (one of
 * the objects' ids stands for them), and the agent's kernel taint when it says tainted. */
#define MNCD_LABEL_MAX 32
typedef struct mncd_label_e {
    uint16_t contract;
    mnc_set sinks;
    bool memory;
    mnc_oid rep;
} mncd_label_e;
typedef struct mncd_label {
    int n;
    mncd_label_e e[MNCD_LABEL_MAX];
    bool kt; /* the kernel part below is set */
    mnc_set kt_sinks;
    bool kt_memory;
} mncd_label;
/* The label of what agent chooses now (flow.c's record + its kernel taint entry; an entry that
 * cannot be read counts as the tightest). 0, or -1 without a flow record. */
int mncd_label_of(mncd *d, int agent, mncd_label *out);
/* flow.c's part of it. 0, or -1 without a flow record. */
int mncd_flow_label(const mncd *d, int agent, mncd_label *out);
bool mncd_label_empty(const mncd_label *l);
/* l := l ⊓ the scope (contract, sinks, memory); rep: an object of it. */
void mncd_label_add(mncd_label *l, uint16_t contract, const mnc_set *sinks, bool memory, const mnc_oid *rep);
void mncd_label_meet(mncd_label *a, const mncd_label *b); /* a := a ⊓ b */
/* Where something carrying l may go, as one scope: the ∩ of all sinks, the AND of memory. */
void mncd_label_scope(const mncd_label *l, mnc_set *sinks, bool *memory);
/* Gives agent the label (a reader learnt something that carries it): flow.c's record, then its
 * kernel taint (mncd_kern_hold: map, workspace, sweep, fd scan). 0, or -1: the caller must not
 * answer with what it learnt (fail closed; the failure is audited). */
int mncd_label_confer(mncd *d, int agent, const mncd_label *l, const char *op);
/* Does agent's kernel taint entry say tainted (or can it not be read)? false with the layer off. */
bool mncd_label_kernel_tainted(mncd *d, int agent);
/* {"c":[{"k":contract,"o":hex,"s":[sinks],"m":bool}...][,"kt":{"s":[..],"m":bool}]} */
struct mnc_jbuf;
int mncd_label_write_json(struct mnc_jbuf *b, const mnc_policy *p, const mncd_label *l);
int mncd_label_from_json(const mnc_policy *p, const cJSON *j, mncd_label *out); /* 0 or -1 */

/* ---- the daemon */
typedef struct mncd {
    mncd_config cfg;
    mnc_policy *policy;
    mncd_store store;
    mnc_audit *audit;
    char audit_path[PATH_MAX];
    mnc_metrics *metrics; /* counters and histograms for `status` and mncctl metrics (mnc/metrics.h) */
    uint64_t started_ms;
    size_t n_clients;
    uint64_t n_requests;
    bool fatal;             /* a durability failure: stop serving (fail closed) */
    struct mncd_mncl *mncl; /* MNC-L ledger + MNC-D queue (mncl_gate.c, mncd_failure.c) */
    /* The MNC-L ledger backend: opened and closed by mncd_mncl_open/close (which own it),
     * NULL outside; read here by fleet.c and loop.c so that they need not call MNC-D. */
    struct mnc_lbackend *ledger;
    struct mncd_kern *kern; /* kernel layer (kern.c); NULL with --kernel off */
    struct mncd_flow *flow; /* flow.c */
    /* reload.c: the command line main() re-executes on SIGHUP (after the loop stopped and
     * reload was set) */
    int argc;
    char **argv;
    bool reload;
    struct mncd_recs *recs; /* core.c: record budgets and the scrub */
    /* --privsep: this process is the monitor, and the kernel layer is the enforcer's, reached
     * through psp (monitor/mon_kern.c); kern stays NULL. psp_kernel: the enforcer's layer is on. */
    struct mon_psp *psp;
    bool psp_kernel;
    bool psp_broken; /* the enforcer is gone or out of protocol: stop, exit non-zero */
} mncd;

/* Is the kernel layer on (in this process, or in the enforcer under --privsep)? */
static inline bool mncd_kern_on(const mncd *d) { return d->kern || d->psp_kernel; }

/* ---- core (core.c): the audit writer and principal names, below every other mncd module */

/* The name of principal id, or NULL when id is not a principal (e.g. -1: nobody). */
const char *mncd_peer_name(const mncd *d, long id);
/* Records one decision in the audit log, stamped with mnc_now_ms(). On failure sets d->fatal
 * (mncd stops serving: fail closed). */
void mncd_audit(mncd *d, const char *op, int sender, int receiver, const mnc_oid *obj, const char *decision,
                mnc_reason reason, const char *detail);
/* The same with names and a reason string given as they are (kernel and Landlock records,
 * whose reasons are not monitor reasons; NULL fields are left out of the record). */
void mncd_audit_named(mncd *d, const char *op, const char *sender, const char *receiver, const mnc_oid *obj,
                      const char *decision, const char *reason, const char *detail);

/* Records about agents (docs/threat-model.md, "Records about agents"; core.c says how).
 * A record about an agent holds names and ids mncd chose, classes, coarse counts, and keyed
 * hashes of whatever the agent chose: callers hash such values with mncd_hv* before they put
 * them into a detail. Every record about a tainted agent takes a token of its budget (rate
 * MNCD_REC_RATE per second, burst MNCD_REC_BURST); without one it is folded into a count that
 * an "audit.folded" record reports (a power-of-two class, at most once a second per agent). */
#define MNCD_REC_RATE 20
#define MNCD_REC_BURST 200
/* A record's token for v: "h:" + a fresh salt + "." + 16 hex digits of the keyed hash
 * (mnc/audit.h, mnc_audit_hv_token); out, "h:?" without the key. */
const char *mncd_hv(mncd *d, const void *v, size_t n, char out[MNC_AUDIT_HV_MAX]);
const char *mncd_hv_str(mncd *d, const char *s, char out[MNC_AUDIT_HV_MAX]);
const char *mncd_hv_u64(mncd *d, uint64_t v, char out[MNC_AUDIT_HV_MAX]); /* the decimal text */
/* "h:" + 32 hex digits: identifiers mncd stores in place of an agent's (memory keys, release
 * ids), where two values must not share one by chance. */
const char *mncd_hv_id(mncd *d, const void *v, size_t n, char out[MNC_AUDIT_HV_MAX]);
/* An agent's records count against its budget from now on (true: it holds something; flow.c)
 * or no longer (false: taint.reset). */
void mncd_rec_tainted(mncd *d, int agent, bool tainted);
bool mncd_rec_is_tainted(mncd *d, int agent);
/* A record of an event the kernel reported about agent (a denial, withheld output): budgeted
 * whether or not mncd knows the agent tainted; sender = the agent's name. */
void mncd_audit_event(mncd *d, const char *op, int agent, const char *receiver, const mnc_oid *obj,
                      const char *decision, const char *reason, const char *detail);
/* A record that summarises others (drop and fold reports), bounded by its writer to one per
 * agent per second: not charged to a budget. */
void mncd_audit_summary(mncd *d, const char *op, const char *sender, const char *decision, const char *reason,
                        const char *detail);
/* Writes the audit.folded records that are due (tick) or all of them (flush, at shutdown). */
void mncd_audit_tick(mncd *d);
void mncd_audit_flush(mncd *d);
/* Records folded, and request strings the scrub replaced, since start (status). */
uint64_t mncd_audit_folded(const mncd *d);
uint64_t mncd_audit_scrubbed(const mncd *d);
/* The strings the request being handled carried (pointers valid until the next call; NULL, 0
 * after it): replaced by their hash wherever a record would carry them. */
void mncd_rec_scrub_set(mncd *d, const char *const *vals, int n);
void mncd_recs_free(mncd *d);

/* ---- what an agent chooses (chosen.c) */
/* The strings of q (from anyone but the admin) for the record scrub; q NULL: none. */
void mncd_scrub_request(mncd *d, const mncd_ident *w, const mnc_request *q);
/* An agent the kernel says tainted (and mncd's record not yet): its records count against its
 * budget from now on. */
void mncd_note_kernel_taint(mncd *d, const mncd_ident *w);
/* The identifiers a tainted issuer names in a disclose (subject, release): sets mx->release;
 * NULL, or a refusal (audited). */
struct mncd_mncl_ctx;
cJSON *mncd_tainted_identifiers(mncd *d, const mncd_ident *w, const mnc_request *q, int contract,
                                struct mncd_mncl_ctx *mx);
/* A tainted deriver's lifetime: each part rounded down to mncd's ladder. */
void mncd_ladder_lifetime(mnc_lifetime *life);
/* The whoami verb (whoami.c). */
cJSON *mncd_whoami(mncd *d, const mncd_ident *w, const mnc_request *q);

/* Handles one parsed request from caller `who`; returns the response (never NULL unless OOM). */
cJSON *mncd_handle(mncd *d, const mncd_ident *who, const mnc_request *req);

/* Runs the event loop until SIGTERM/SIGINT, or SIGHUP with a reload that mncd_reload_check
 * accepts (d->reload set: the caller re-executes mncd). Returns the process exit code. */
int mncd_run(mncd *d);

/* ---- reload (reload.c): SIGHUP is a validated restart in place. 0 if the config, the policy
 * it names and everything the state journal holds load anew (why: a summary), else -1 with
 * why: the daemon keeps running on its old policy. */
int mncd_reload_check(mncd *d, char *why, size_t n);

/* ---- MNC-L and MNC-D (mncl_gate.c: the ledger gate; mncd_failure.c: the failure handler)
 *
 * MNC-L: the leakage ledger STATE_DIR/ledger (mnc/ledger.h). A disclose whose state names a
 * subject is selected against the subject's realised history and the contract's ε/B; the
 * chosen release is charged durably before the object is stored, queued or answered.
 * MNC-D: when nothing is admissible, the contract's failure order (delegate to the broker
 * agent, approval queue, abstain). Pending requests live in STATE_DIR/mncd-d.journal. */
#define MNCD_DEFAULT_BROKER_TIMEOUT_MS 5000u
#define MNCD_DEFAULT_APPROVAL_TIMEOUT_MS 600000u
#define MNCD_DELEGATED_FORM "mnc-d:delegated" /* form name of a broker-computed receipt */

/* Per-disclose MNC-L context (the history and limits the selection request points into). */
typedef struct mncd_mncl_ctx {
    bool ledger;      /* the release will be charged (the state names a subject) */
    mnc_obs *history; /* heap block from mnc_ledger_history, or NULL */
    size_t n_history;
    mnc_limits limits; /* ε, B (< 0: none) and Σ spent so far */
    bool capped;       /* the contract declares ε or B */
    double charged;    /* ΔR charged for the release (after mncd_mncl_charge) */
    uint64_t version;  /* the history version `history` is (ledger_backend.h) */
    bool replayed;     /* a retried release id already charged: handed out uncharged */
    /* the release id the ledger keys the charge by: the request's, or for a tainted issuer the
     * keyed hash of (issuer, release) (verbs.c: an identifier it chose); NULL: the object id */
    const char *release;
} mncd_mncl_ctx;

/* Opens the ledger and the MNC-D queue. A torn ledger tail is truncated, printed and audited;
 * a corrupt record makes it return -1 after printing the error naming it (refuse to start). */
int mncd_mncl_open(mncd *d);
/* Closes the ledger and the MNC-D queue; at_exit as for mncd_store_close. */
void mncd_mncl_close(mncd *d, bool at_exit);
/* Connection accounting (is a broker connected?): delta +1 on accept, -1 on close. */
void mncd_mncl_conn(mncd *d, const mncd_ident *who, int delta);
/* Expires overdue delegations (next failure step) and approvals (denied). Cheap when idle. */
void mncd_mncl_tick(mncd *d);
/* Before selection: loads the subject's history and the contract's limits into sr. Returns
 * NULL, or an error response (e.g. a budgeted contract without state.subject). */
cJSON *mncd_mncl_prepare(mncd *d, const mnc_request *q, int contract, const mnc_state *st, mnc_select_req *sr,
                         mncd_mncl_ctx *x);
void mncd_mncl_ctx_free(mncd_mncl_ctx *x);
/* After the first-hop check, before the object is stored: durably charges the chosen
 * release (release id = object id). Returns NULL, or a deny/error response (nothing may be
 * released then). */
cJSON *mncd_mncl_charge(mncd *d, const mnc_request *q, int contract, int issuer, const mnc_state *st,
                        const mnc_disclosure *o, double risk, mncd_mncl_ctx *x);
/* Adds outcome "selected" and the MNC-L figures to a successful disclose response. */
void mncd_mncl_selected(mncd *d, cJSON *resp, const mncd_mncl_ctx *x);
/* Nothing admissible: runs the contract's failure order; returns the response. */
cJSON *mncd_mncl_failure(mncd *d, const mncd_ident *w, const mnc_request *q, int contract, const mnc_state *st,
                         const mnc_selection *sel, mncd_mncl_ctx *x);
/* Verbs: disclose.status, broker.next, broker.reply, approve, approvals. */
cJSON *mncd_mncl_verb(mncd *d, const mncd_ident *w, const mnc_request *q);
/* Adds "mnc_l" and "mnc_d" objects to a status response. */
void mncd_mncl_status(mncd *d, cJSON *resp);

/* ---- fleet mode (fleet.c, docs/fleet.md) */
/* Parses the config's "ledger" object into c. 0, or -1 after printing why. */
int mncd_fleet_config(mncd_config *c, const cJSON *it, const char *path);
/* Fills fleet defaults after the config is read (host name). 0 or -1 after printing why. */
int mncd_fleet_defaults(mncd_config *c);
/* epoll_wait timeout for the fleet's periodic work (ms; -1: none); pending_approvals: this
 * host's requests waiting for approval (mncd_mncl_pending_approvals), which are polled. */
int mncd_fleet_timeout(mncd *d, size_t pending_approvals);
/* Periodic work: reconnects a lost database (audited once per state change). Returns true in
 * fleet mode while the database is reachable (the caller then polls decisions and runs
 * mncd_mncl_tick for approval deadlines), false otherwise. */
bool mncd_fleet_tick(mncd *d);
/* Applies one decision another host took on this host's request (mncd_mncl_apply_remote). */
typedef void (*mncd_fleet_apply_fn)(mncd *d, const char *request_id, const char *decision, const char *by);
/* Polls the shared queue for decisions other hosts took on this host's requests and hands
 * each to apply (at most 64 per call; the rest next call). A database error marks the
 * backend down (reconnected by mncd_fleet_tick). No-op outside fleet mode. */
void mncd_fleet_poll(mncd *d, mncd_fleet_apply_fn apply);
/* true in fleet mode (the postgres ledger backend). */
bool mncd_fleet_on(mncd *d);
/* Publishes a request waiting for approval to the shared queue. 0, or -1 with err. */
int mncd_fleet_publish(mncd *d, const char *subject, const char *request_id, const char *contract, uint64_t deadline_ms,
                       const char *detail_json, char *err, size_t err_len);
/* Decides this host's request in the shared queue ("approved", "denied", "timeout"). 0: decided
 * by this call, or not in the shared queue / not fleet mode (decide locally); 1: decided
 * before (prev, by say how and where); -1: the database is unavailable (do not decide). */
int mncd_fleet_decide(mncd *d, const char *request_id, const char *decision, char *prev, size_t prev_len, char *by,
                      size_t by_len);
/* `approve` of a request this host does not hold: decides it in the shared queue for its
 * origin host, which releases (or denies) it. Audited here. Returns the response. */
cJSON *mncd_fleet_decide_remote(mncd *d, const mnc_request *q, bool deny);
/* Marks a fleet decision on this host's request applied (no-op outside fleet mode). */
void mncd_fleet_applied(mncd *d, const char *request_id);
/* Adds "fleet_approvals" (every host's pending requests) to an approvals response. */
void mncd_fleet_list(mncd *d, cJSON *resp, int max);
/* After a successful commit (the audit head is durable): writes the head (host, seq, hash) to
 * the fleet's anchor table if anchor_interval_ms passed since the last one, or always if
 * force (shutdown). Skipped while the database is unavailable. */
void mncd_fleet_anchor(mncd *d, bool force);
/* mncd_failure.c: applies a decision another host took on this host's request r (by = that host). */
void mncd_mncl_apply_remote(mncd *d, const char *request_id, const char *decision, const char *by);
/* mncd_failure.c: number of this host's requests waiting for approval. */
size_t mncd_mncl_pending_approvals(mncd *d);

/* ---- kernel layer (kern.c, kern_watch.c, kern_hold.c, kern_verbs.c): the BPF enforcement programs and their pinned maps
 * (loader/mnc_kern.h). mncd attaches (or adopts) them at start, fills names and sinks from the
 * policy, registers agent cgroups for `mncctl run` (agent.register), tightens the recipient's
 * taint before every delivery, clears an agent's taint and registrations when its cgroup
 * empties or disappears, and turns the kernel's deny events into audit records. */
typedef enum mncd_kmode {
    MNCD_KERN_AUTO = 0, /* default: the best backend the host runs; refuse if none */
    MNCD_KERN_OFF,      /* explicit: userspace monitor only (unprivileged / test runs) */
    MNCD_KERN_CGROUP,
    MNCD_KERN_LSM,
} mncd_kmode;
#define MNCD_KERN_MAX_FDS 5 /* 3 + MNCD_LLAUDIT_MAX_FDS (llaudit.h) */

/* Config/flag values. key: "kernel" (off|auto|cgroup|lsm), "pin_root", "cgroup_tree".
 * Returns 0, 1 if key is not a kernel key, -1 after printing a clear message. */
int mncd_kern_option(mncd_config *c, const char *key, const char *val, const char *where);
/* Starts the layer as configured (after the policy, audit log and store are open). Off: records
 * that in the audit log and returns 0. Otherwise attaches or adopts (never wipes pinned state),
 * requires the functional self-test to pass, registers names and sinks, adopts the agent
 * cgroups still registered. Returns 0, or -1 after printing why (mncd must refuse to start:
 * a requested enforcement mode that is unavailable is never replaced by monitor-only). */
int mncd_kern_start(mncd *d);

/* ---- observe mode (observe.c): "enforce": "observe" agents */
bool mncd_observed(const mncd *d, int agent);
/* Does a failed scope check (reason r) of actor's own operation pass as would_deny? */
bool mncd_observe_pass(mncd *d, int actor, mnc_reason r);
/* At start: refuses (-1, printed) with the kernel layer on or auto; logs and audits each agent
 * and the contracts it leaves unenforced. */
int mncd_observe_start(mncd *d);
void mncd_observe_status(const mncd *d, cJSON *r); /* "observe": [{agent, contracts_unenforced}] */
void mncd_kern_stop(mncd *d);                      /* closes fds; enforcement stays pinned */
/* fds for the event loop (EPOLLIN): deny events, cgroup watches, a 1 s timer, and the Landlock
 * audit listener and its timer (llaudit.h; none when that is off). Returns how many
 * were written to fds (0 when off). mncd_kern_ready handles one of them being readable. */
int mncd_kern_fds(mncd *d, int fds[MNCD_KERN_MAX_FDS]);
void mncd_kern_ready(mncd *d, int fd);
/* Before a delivery of o to agent (recv, mem.get): tightens the agent's taint by o's scope.
 * Returns 0 (also when off), -1 if the map update failed: the caller must refuse the delivery
 * (fail closed); the failure is already audited. */
int mncd_kern_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op);
/* agent.register / taint.reset / workspace.clear (admin checked by the caller). Returns a
 * response. */
cJSON *mncd_kern_verb(mncd *d, const mncd_ident *w, const mnc_request *q);
/* whoami: adds "kernel" to the taint object t: the agent's taint entry in the kernel's map as
 * the kernel enforces it ({"entry", "tainted", "sinks" (names), "log", "memory", "forward",
 * "external", "generation"}; "entry": false and untainted when the agent has no entry yet), or
 * null when the layer is off. Returns 0, or -1 with why filled (map read failure, OOM). */
int mncd_kern_whoami(mncd *d, int agent, cJSON *t, char *why, size_t n);
/* whoami's "kernel" object from a taint entry (entry: the agent has one). 0, or -1 with why. */
struct mnc_taint;
int mncd_kern_taint_json(mncd *d, bool entry, const struct mnc_taint *kt, cJSON *t, char *why, size_t n);
/* Adds the "kernel" object (mode, backend, counters...) to a status response. */
void mncd_kern_status(mncd *d, cJSON *resp);
/* What `mncctl run` told mncd about one agent instance at agent.register: the uid it runs as,
 * whether it runs --as-root, and its workspaces. Kept with the registration (and in a trusted.*
 * xattr on the cgroup directory, so a restarted mncd adopts it). */
typedef struct mncd_reg {
    char agent[MNC_NAME_MAX]; /* the agent registered, by name ("" from an older mncd): a restart
                               * adopts the cgroup by this name, never by a number alone */
    bool known;               /* uid given (registrations by an older launcher carry nothing) */
    uint32_t uid;
    bool root;
    int n_ws;
    char *ws[MNC_MAX_WORKSPACE]; /* realpaths, heap */
    int n_rd;
    char *rd[MNCD_MAX_READS]; /* read grants (--read), realpaths, heap (labels.h) */
} mncd_reg;
void mncd_reg_free(mncd_reg *r);
/* ---- quarantine (quarantine.c): output of a tainted agent that `mncctl run`'s stdio relay
 * withheld (user/mncctl/run_relay.h). Admin verb quarantine.put {agent, stream, data (base64),
 * lost}: appends the bytes to STATE_DIR/quarantine/<agent>.<stream> (dir 0700, file 0600,
 * O_NOFOLLOW) up to cfg.quarantine_max bytes per file, and writes ONE audit record per call
 * (op "quarantine", decision "withheld") naming the agent, the stream, whether all of it was
 * kept (a class, no byte counts: they are the agent's choice), and the objects the agent holds
 * (the ids its taint comes from); the record counts against the agent's budget. The
 * caller is the admin (mncd_handle checked); a caller identified by cgroup is refused here
 * too. Returns a response. */
cJSON *mncd_quarantine_put(mncd *d, const mncd_ident *w, const mnc_request *q);

/* Removes one registration from the identity table (agent exited). 0, or -1 if absent. */
int mncd_ident_unregister_cgroup(const char *cgroup_path);

struct mnc_event;
struct mon_psp;
/* One deny event of the kernel's ring buffer as an audit record (kern.c; keyed hashes for what
 * the agent chose). Returns d->fatal. */
int mncd_kern_event(mncd *d, const struct mnc_event *ev);

/* ---- --privsep, the monitor's side (monitor/mon_kern.c, docs/privsep.md): the kernel layer's
 * entry points above, when d->psp is set, go to the enforcer over the typed protocol. */
/* In main(), as root, before anything is read: when argv asks for --privsep, forks; the parent
 * becomes the enforcer (never returns), the child drops to the monitor's user and returns 1
 * with *psp set (the opener of configuration files installed). 0: no --privsep (nothing done).
 * -1: refused (printed). */
int mon_kern_split(int argc, char **argv, struct mon_psp **psp);
/* After the policy loaded: CONFIG, PRINCIPAL, IDMAP and SEAL to the enforcer, then the state dir
 * (fchdir; cfg.state_dir becomes "."), the listening socket and the kernel layer's facts it
 * hands back. 0, or -1 after printing why. */
int mon_kern_configure(mncd *d);
/* The listening socket the enforcer bound (-1 without --privsep), taken once. */
int mon_kern_listen_fd(mncd *d);
/* A log sink's file the enforcer opened for appending (SINKFD): a new fd, or -1 (errno). */
int mon_kern_sink_fd(mncd *d, int id);
int mon_kern_start(mncd *d);
void mon_kern_stop(mncd *d);
int mon_kern_fds(mncd *d, int fds[MNCD_KERN_MAX_FDS]);
void mon_kern_ready(mncd *d, int fd);
int mon_kern_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op);
cJSON *mon_kern_verb(mncd *d, const mncd_ident *w, const mnc_request *q);
int mon_kern_whoami(mncd *d, int agent, cJSON *t, char *why, size_t n);
void mon_kern_status(mncd *d, cJSON *resp);

#endif
