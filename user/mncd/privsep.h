/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* privsep.h - the message protocol between mncd's monitor and its enforcer, defined once
 * (docs/privsep.md).
 *
 * The monitor (uid mncd, no capabilities) parses everything agents, policies and the database
 * send; the enforcer (uid 0, a few capabilities) holds the kernel layer and parses nothing. They
 * talk over a socketpair(AF_UNIX, SOCK_SEQPACKET): one message per recvmsg, each a fixed-layout
 * struct of fixed-width integers and fixed-size strings that starts with struct psp_hdr. An
 * administrator reaches the enforcer directly, with the same header, on its admin socket.
 *
 * Rules of the layouts (as bpf/mnc_abi.h's): no enum, pointer, bool or long in a message; every
 * padding byte is a named field that must be zero; a string field is NUL-terminated inside the
 * field and zero after its NUL (so a message has one encoding, and no stale bytes leave a
 * process); sizes are checked by _Static_assert below. A message's length is exactly its type's
 * size: psp_size() gives it. Changing a layout bumps PSP_VERSION (both ends are one binary, so
 * this guards against a stale process, not a rolling upgrade).
 *
 * Who checks what (user/mncd/privsep.c): psp_check() checks a message from the monitor or the
 * admin against the enforcer's view of the session (psp_ctx: phase, the sealed configuration,
 * an open registration) field by field and refuses anything malformed; psp_advance() moves the
 * session on after an accepted message. psp_check_reply() checks a message from the enforcer
 * (the monitor does not trust a broken enforcer with its memory either).
 */
#ifndef MNCD_PRIVSEP_H
#define MNCD_PRIVSEP_H

#include <stddef.h>
#include <stdint.h>

#include "mnc_abi.h"

#define PSP_VERSION 1

#define PSP_PATH_MAX 4096  /* == PATH_MAX */
#define PSP_NAME_MAX 64    /* == MNC_NAME_LEN: [A-Za-z0-9_.:-]{1,63} */
#define PSP_CGROUP_MAX 512 /* a cgroup path as /proc/PID/cgroup shows it (relative to the mount) */
#define PSP_TREE_MAX 256   /* == MNC_TREE_PATH_MAX */
#define PSP_SOCK_MAX 108   /* sun_path */
#define PSP_DETAIL_MAX 8192
#define PSP_REASON_MAX 32         /* [a-z0-9_]{1,31} */
#define PSP_MAX_PRINCIPALS 256    /* == MNC_MAX_PRINCIPALS */
#define PSP_MAX_IDMAP 8192        /* uid and static cgroup entries: the config's and the policy's uids */
#define PSP_MAX_OPENS 64          /* files the monitor may have opened before CONFIG */
#define PSP_MAX_WS 16             /* == MNC_MAX_WORKSPACE */
#define PSP_MAX_TAINTED 1024      /* == MNCD_WS_MAX_TAINTED_DIRS */
#define PSP_KCOUNT_MAX 64         /* kernel reason counters carried by STATUS_R (>= MNC_K__COUNT) */
#define PSP_NOT_RUN_MAX 4         /* self-test cases not run, with why */
#define PSP_NONE 0xffffffffu      /* no principal (sender / receiver of an audit record) */
#define PSP_MAX_MSG (16u * 1024u) /* every message fits (checked below) */
#define PSP_MAX_FDS 3             /* STARTED: state dir, agent socket, audit socket */
#define PSP_ALIGN 8               /* a message buffer's alignment (psp_check refuses another) */

/* ---- message types. Requests are answered in order, one reply each; notices come at any
 * time, also between a request and its reply. */
enum psp_type {
    /* monitor -> enforcer, before SEAL */
    PSP_OPEN = 1,      /* -> OPENED + 1 fd | REFUSED */
    PSP_CONFIG = 2,    /* no reply */
    PSP_PRINCIPAL = 3, /* no reply */
    PSP_IDMAP = 4,     /* no reply */
    PSP_SEAL = 5,      /* -> STARTED + fds | REFUSED */
    /* monitor -> enforcer, after SEAL */
    PSP_HOLD = 16,       /* -> HELD | REFUSED */
    PSP_REG_BEGIN = 17,  /* no reply: a registration opens */
    PSP_REG_PATH = 18,   /* no reply: one workspace or tainted dir of it */
    PSP_REG_COMMIT = 19, /* -> REG_SOURCE* then REGISTERED | REFUSED */
    PSP_TAINT_GET = 20,  /* -> TAINT | REFUSED */
    PSP_STATUS = 21,     /* -> STATUS_R */
    /* admin -> enforcer (admin socket) */
    PSP_ADM_RESET = 32,    /* -> ADM_RESET_R | REFUSED */
    PSP_ADM_WS_CLEAR = 33, /* -> ADM_WS_CLEAR_R | REFUSED */
    /* enforcer -> monitor or admin: replies */
    PSP_OPENED = 64,
    PSP_STARTED = 65,
    PSP_HELD = 66,
    PSP_REGISTERED = 67,
    PSP_TAINT = 68,
    PSP_STATUS_R = 69,
    PSP_REFUSED = 70,
    PSP_REG_SOURCE = 71, /* part of REG_COMMIT's answer: one label the registration inherits */
    PSP_ADM_RESET_R = 72,
    PSP_ADM_WS_CLEAR_R = 73,
    PSP_SINKFD = 74, /* part of SEAL's answer: a log sink file, open O_APPEND for the monitor (1 fd) */
    /* enforcer -> monitor: notices */
    PSP_AUDIT = 96,   /* an audit record for the monitor's log */
    PSP_KEVENT = 97,  /* a kernel deny event (the ring buffer's struct mnc_event) */
    PSP_REG_ADD = 98, /* the registration table gained a cgroup (identity mirror) */
    PSP_REG_DEL = 99, /* ... lost one */
    PSP_RESET = 100,  /* the admin reset an agent's taint (the flow record forgets it) */
    PSP_STOP = 101,   /* stop as on SIGTERM (the enforcer got one; it may not signal the monitor) */
};

/* Every message starts with this. */
struct psp_hdr {
    uint16_t version; /* PSP_VERSION */
    uint16_t type;    /* enum psp_type */
    uint32_t len;     /* bytes of the whole message: psp_size(type) */
    uint32_t seq;     /* request: the sender's counter; reply: its request's; notice: 0 */
    uint32_t flags;   /* 0 */
};

/* ---- monitor -> enforcer, before SEAL */

enum psp_open_what { PSP_OPEN_CONFIG = 1, PSP_OPEN_POLICY = 2, PSP_OPEN_MODEL = 3, PSP_OPEN_DEFAULT = 4 };

struct psp_open {
    struct psp_hdr h;
    uint32_t what; /* enum psp_open_what (DEFAULT: a candidate of the default policy search) */
    uint32_t pad;
    char path[PSP_PATH_MAX]; /* absolute, or relative to mncd's working directory */
};

enum psp_kmode { PSP_KERN_AUTO = 0, PSP_KERN_OFF = 1, PSP_KERN_CGROUP = 2, PSP_KERN_LSM = 3 };

struct psp_config {
    struct psp_hdr h;
    uint32_t admin_uid;
    uint32_t monitor_uid; /* the user the monitor runs as (the state dir is handed to it) */
    uint32_t monitor_gid;
    uint32_t kernel;       /* enum psp_kmode */
    uint32_t n_principals; /* PRINCIPAL messages that follow (1..PSP_MAX_PRINCIPALS) */
    uint32_t n_idmap;      /* IDMAP messages that follow */
    uint32_t pad[2];
    char pin_root[PSP_PATH_MAX]; /* "" = the loader's default; else absolute */
    char cgroup_tree[PSP_TREE_MAX];
    char state_dir[PSP_PATH_MAX];
    char socket[PSP_SOCK_MAX]; /* the agent socket; the admin socket is socket + ".admin" */
    uint32_t pad2;
};

#define PSP_PF_NETNS 0x1u /* agent: "confinement": "netns" (checked at each hold) */

enum psp_addr { PSP_ADDR_NONE = 0, PSP_ADDR_UNIX = 1, PSP_ADDR_INET = 2 };

struct psp_principal {
    struct psp_hdr h;
    uint32_t id;    /* 0, 1, ... in order */
    uint32_t cls;   /* enum mnc_sink_class, AGENT..EXTERNAL */
    uint32_t flags; /* PSP_PF_* (agents only) */
    uint32_t addr;  /* enum psp_addr: which key below is set (the other is all zero) */
    char name[PSP_NAME_MAX];
    struct mnc_unix_key ukey; /* as mnc_kern_unix_key builds it */
    struct mnc_inet_key ikey; /* as mnc_kern_inet_key builds it */
    char path[PSP_PATH_MAX];  /* log file / memory directory to protect, absolute; "" none */
    uint32_t pad;
};

enum psp_idmap_kind { PSP_IDMAP_UID = 1, PSP_IDMAP_CGROUP = 2 };

struct psp_idmap {
    struct psp_hdr h;
    uint32_t kind;  /* enum psp_idmap_kind */
    uint32_t agent; /* an agent of the configuration */
    uint32_t uid;   /* UID: the uid; CGROUP: 0 */
    uint32_t pad;
    char cgroup[PSP_CGROUP_MAX]; /* CGROUP: "/path" as /proc/PID/cgroup shows it; UID: "" */
};

struct psp_seal {
    struct psp_hdr h;
    uint32_t n_principals; /* as sent: the enforcer compares */
    uint32_t n_idmap;
};

/* ---- monitor -> enforcer, after SEAL */

enum psp_op { PSP_OP_RECV = 1, PSP_OP_MEM_GET = 2 };

/* Before a delivery of an object to `agent`: tighten its taint by the object's scope (already
 * in the kernel's terms: bpf/mnc_abi.h, struct mnc_taint), label its workspaces, and sweep. */
struct psp_hold {
    struct psp_hdr h;
    uint64_t sinks[MNC_SET_WORDS_ABI]; /* bit i: principal i (i < n_principals) */
    uint8_t oid[16];                   /* the object (audit records, workspace labels) */
    uint32_t agent;
    uint8_t op;                                             /* enum psp_op */
    uint8_t may_log, may_memory, may_forward, may_external; /* 0 or 1 */
    uint8_t pad[3];
    uint32_t pad2;
};

#define PSP_RF_UID_KNOWN 0x1u  /* the launcher said which uid the agent runs as */
#define PSP_RF_ROOT 0x2u       /* --as-root (uid must be 0) */
#define PSP_RF_STDIO_PASS 0x4u /* --stdio passthrough */

struct psp_reg_begin {
    struct psp_hdr h;
    uint32_t agent;
    uint32_t uid;   /* 0 unless PSP_RF_UID_KNOWN */
    uint32_t flags; /* PSP_RF_* */
    uint32_t pad;
    char cgroup[PSP_PATH_MAX]; /* absolute path of a child of the mnc tree (resolved by the enforcer) */
};

enum psp_reg_path_kind { PSP_REG_WORKSPACE = 1, PSP_REG_TAINTED = 2 };

struct psp_reg_path {
    struct psp_hdr h;
    uint32_t kind; /* enum psp_reg_path_kind */
    uint32_t pad;
    char path[PSP_PATH_MAX]; /* absolute; any bytes but NUL (an agent may have named it) */
};

struct psp_reg_commit {
    struct psp_hdr h;
    uint32_t n_ws; /* REG_PATH messages of each kind since REG_BEGIN: the enforcer compares */
    uint32_t n_tainted;
};

struct psp_taint_get {
    struct psp_hdr h;
    uint32_t agent;
    uint32_t pad;
};

struct psp_status {
    struct psp_hdr h;
};

/* ---- admin -> enforcer (admin socket; the peer's credentials come from the kernel) */

struct psp_adm_reset {
    struct psp_hdr h;
    char agent[PSP_NAME_MAX];
};

struct psp_adm_ws_clear {
    struct psp_hdr h;
    char path[PSP_PATH_MAX];
};

/* ---- enforcer -> monitor or admin: replies */

struct psp_opened {
    struct psp_hdr h;
    uint64_t size; /* of the regular file whose fd comes with it */
};

#define PSP_SF_LLAUDIT 0x1u       /* the Landlock audit socket comes with it (third fd) */
#define PSP_SF_AUDIT_ENABLED 0x2u /* ... and the enforcer enabled kernel audit for it */
#define PSP_SF_PIDFD 0x4u         /* the agent socket has SO_PASSPIDFD (Linux 6.5+) */
#define PSP_SF_NOTICE 0x8u        /* notice is set (e.g. why lsm was not used) */

struct psp_started {
    struct psp_hdr h;
    uint32_t backend; /* 0 (kernel layer off), MNC_BACKEND_CGROUP, MNC_BACKEND_LSM */
    uint32_t flags;   /* PSP_SF_* */
    uint32_t n_fds;   /* 2 or 3: state dir, agent socket, [audit socket] */
    uint32_t selftest_n, selftest_pass, n_not_run;
    uint32_t ll_lost_at_start; /* the kernel's audit "lost" counter at start */
    uint32_t n_sinkfds;        /* SINKFD messages sent before this one: one per log sink file */
    uint64_t n_adopted;
    char pin_root[PSP_PATH_MAX];
    char tree[PSP_TREE_MAX];       /* absolute */
    char tree_rel[PSP_CGROUP_MAX]; /* as /proc/PID/cgroup shows it */
    char cg2[PSP_TREE_MAX];        /* the cgroup2 mount */
    char not_run[PSP_NOT_RUN_MAX][96];
    char notice[512];
    char ll_why[600]; /* why the Landlock audit socket is not there, or "" */
};

struct psp_held {
    struct psp_hdr h;
    uint64_t generation; /* of the agent's taint entry after the hold */
};

enum psp_refusal {
    PSP_NO_MALFORMED = 1, /* psp_check refused it */
    PSP_NO_STATE = 2,     /* wrong phase or sequence */
    PSP_NO_OFF = 3,       /* the kernel layer is off */
    PSP_NO_INVALID = 4,   /* refused on its merits (e.g. a cgroup outside the tree) */
    PSP_NO_DENIED = 5,    /* the sweep, fd scan or netns check refuses the delivery */
    PSP_NO_INTERNAL = 6,  /* a map, xattr or /proc failure: fail closed */
    PSP_NO_NOT_ADMIN = 7, /* admin socket: the peer is not the admin */
    PSP_NO_UNKNOWN = 8,   /* admin socket: no such agent */
    PSP_NO__MAX = 8,
};

struct psp_refused {
    struct psp_hdr h;
    uint32_t code; /* enum psp_refusal */
    int32_t err;   /* errno behind it (> 0), or 0 */
    char detail[PSP_DETAIL_MAX];
};

#define PSP_GF_NETNS 0x1u /* the agent's confinement is "netns" */

struct psp_registered {
    struct psp_hdr h;
    uint64_t cgid;
    uint32_t agent;
    uint32_t flags;     /* PSP_GF_* */
    uint32_t n_sources; /* REG_SOURCE messages sent before this one */
    uint32_t pad;
    char cgroup_rel[PSP_CGROUP_MAX];
};

struct psp_reg_source {
    struct psp_hdr h;
    char dir[PSP_PATH_MAX];
};

/* The monitor appends the log verb's lines to log sinks; their files are root's (and keyed by
 * inode in the kernel's file_sinks map), so the enforcer opens each one (O_WRONLY | O_APPEND,
 * created when absent) at the seal and hands the fd over; the monitor opens no sink itself. */
struct psp_sinkfd {
    struct psp_hdr h;
    uint32_t id; /* the log sink (principal id) */
    uint32_t pad;
};

struct psp_taint {
    struct psp_hdr h;
    uint32_t entry; /* 1: the agent has an entry; 0: none (t is zero: untainted) */
    uint32_t pad;
    struct mnc_taint t;
};

struct psp_status_r {
    struct psp_hdr h;
    uint32_t backend; /* as STARTED */
    uint32_t n_links, n_links_expected;
    uint32_t n_agents, n_taints, n_unix, n_inet, n_files;
    uint32_t watched;
    uint32_t audit_ok; /* 1: the audit fields are the kernel's answer now (AUDIT_GET) */
    uint32_t audit_enabled, audit_pid, audit_lost, audit_backlog;
    uint32_t n_kcount; /* MNC_K__COUNT */
    uint32_t pad;
    uint64_t registered, exited, adopted, holds, hold_failures, deny_events;
    uint64_t ws_holds, ws_inherited, ws_cleared;
    uint64_t sweeps, sweep_failures, swept, fdscan_refusals, netns_refusals;
    uint64_t kevents_lost; /* KEVENTs not sent (socket full) */
    /* the last fd scan and sweep (fdscan.h, sockscan.h) */
    uint32_t fd_fds, fd_shared, fd_host_pids, fd_pad;
    uint64_t fd_total_us;
    uint32_t sw_pids, sw_sockets, sw_kept, sw_acted, sw_tcp_destroy_unsupported, sw_foreign, sw_inflight_fds,
        sw_host_pids, sw_host_fds, sw_pad;
    uint64_t sw_hostscan_us, sw_freeze_us, sw_total_us;
    uint64_t kcount[PSP_KCOUNT_MAX]; /* per enum mnc_kreason; n_kcount of them */
    char missing[256];               /* links missing, space separated */
};

struct psp_adm_reset_r {
    struct psp_hdr h;
    uint32_t agent;
    uint32_t had_entry, was_tainted; /* 0 or 1 */
    int32_t live_cgroups;
};

#define PSP_WSREC_MAX 4096 /* >= WSREC_MAX (wsrec.h) */

struct psp_adm_ws_clear_r {
    struct psp_hdr h;
    uint32_t was_tainted; /* a record was there and is removed */
    uint32_t pad;
    char path[PSP_PATH_MAX]; /* the directory (realpath) */
    uint32_t previous_len;   /* bytes of the removed record (wsrec.h), 0 if none or unreadable */
    uint32_t pad2;
    uint8_t previous[PSP_WSREC_MAX]; /* the record as it was (mncctl shows it) */
};

/* ---- enforcer -> monitor: notices */

enum psp_audit_op {
    PSP_A_KERNEL_START = 1,
    PSP_A_KERNEL_TAINT,
    PSP_A_KERNEL_SWEEP,
    PSP_A_KERNEL_FDSCAN,
    PSP_A_KERNEL_NETNS,
    PSP_A_WORKSPACE_TAINT,
    PSP_A_WORKSPACE_CLEAR,
    PSP_A_AGENT_ADOPT,
    PSP_A_AGENT_EXIT,
    PSP_A_AGENT_REGISTER,
    PSP_A_TAINT_RESET,
    PSP_A_LANDLOCK_AUDIT,
    PSP_A_PRIVSEP, /* the enforcer refused a malformed message */
    PSP_A__MAX = PSP_A_PRIVSEP,
};

enum psp_decision { PSP_D_ALLOW = 1, PSP_D_DENY = 2, PSP_D_ERROR = 3 };

struct psp_audit {
    struct psp_hdr h;
    uint16_t op;       /* enum psp_audit_op */
    uint8_t decision;  /* enum psp_decision */
    uint8_t has_oid;   /* 0 or 1 */
    uint32_t sender;   /* principal id or PSP_NONE */
    uint32_t receiver; /* principal id or PSP_NONE */
    uint32_t pad;
    uint8_t oid[16]; /* zero unless has_oid */
    char reason[PSP_REASON_MAX];
    char detail[PSP_DETAIL_MAX];
};

struct psp_kevent {
    struct psp_hdr h;
    struct mnc_event ev;
};

struct psp_reg_change {
    struct psp_hdr h;
    uint64_t cgid;
    uint32_t agent;
    uint32_t flags; /* MNC_AGENT_F_* of the registration */
    char cgroup_rel[PSP_CGROUP_MAX];
};

struct psp_reset {
    struct psp_hdr h;
    uint32_t agent;
    uint32_t pad;
};

struct psp_stop {
    struct psp_hdr h;
};

/* ---- layouts: every size is fixed; a change must be deliberate (bump PSP_VERSION) */
_Static_assert(sizeof(struct psp_hdr) == 16, "psp_hdr");
_Static_assert(sizeof(struct psp_open) == 16 + 8 + PSP_PATH_MAX, "psp_open");
_Static_assert(sizeof(struct psp_config) == 16 + 32 + 2 * PSP_PATH_MAX + PSP_TREE_MAX + PSP_SOCK_MAX + 4, "psp_config");
_Static_assert(sizeof(struct mnc_unix_key) == 112 && sizeof(struct mnc_inet_key) == 20, "sink keys");
_Static_assert(sizeof(struct psp_principal) == 16 + 16 + PSP_NAME_MAX + 112 + 20 + PSP_PATH_MAX + 4, "psp_principal");
_Static_assert(sizeof(struct psp_idmap) == 16 + 16 + PSP_CGROUP_MAX, "psp_idmap");
_Static_assert(sizeof(struct psp_seal) == 24, "psp_seal");
_Static_assert(sizeof(struct psp_hold) == 80 && offsetof(struct psp_hold, agent) == 64, "psp_hold");
_Static_assert(sizeof(struct psp_reg_begin) == 32 + PSP_PATH_MAX, "psp_reg_begin");
_Static_assert(sizeof(struct psp_reg_path) == 24 + PSP_PATH_MAX, "psp_reg_path");
_Static_assert(sizeof(struct psp_reg_commit) == 24 && sizeof(struct psp_taint_get) == 24, "small requests");
_Static_assert(sizeof(struct psp_status) == 16, "psp_status");
_Static_assert(sizeof(struct psp_adm_reset) == 16 + PSP_NAME_MAX, "psp_adm_reset");
_Static_assert(sizeof(struct psp_adm_ws_clear) == 16 + PSP_PATH_MAX, "psp_adm_ws_clear");
_Static_assert(sizeof(struct psp_opened) == 24 && sizeof(struct psp_held) == 24, "small replies");
_Static_assert(sizeof(struct psp_started) ==
                   16 + 32 + 8 + PSP_PATH_MAX + 2 * PSP_TREE_MAX + PSP_CGROUP_MAX + PSP_NOT_RUN_MAX * 96 + 512 + 600,
               "psp_started");
_Static_assert(sizeof(struct psp_refused) == 24 + PSP_DETAIL_MAX, "psp_refused");
_Static_assert(sizeof(struct psp_registered) == 40 + PSP_CGROUP_MAX, "psp_registered");
_Static_assert(sizeof(struct psp_reg_source) == 16 + PSP_PATH_MAX, "psp_reg_source");
_Static_assert(sizeof(struct psp_sinkfd) == 24, "psp_sinkfd");
_Static_assert(sizeof(struct mnc_taint) == 48 && sizeof(struct psp_taint) == 72, "psp_taint");
_Static_assert(sizeof(struct psp_adm_reset_r) == 32, "psp_adm_reset_r");
_Static_assert(sizeof(struct psp_adm_ws_clear_r) == 32 + PSP_PATH_MAX + PSP_WSREC_MAX, "psp_adm_ws_clear_r");
_Static_assert(sizeof(struct psp_audit) == 16 + 16 + 16 + PSP_REASON_MAX + PSP_DETAIL_MAX, "psp_audit");
_Static_assert(sizeof(struct psp_kevent) == 16 + sizeof(struct mnc_event), "psp_kevent");
_Static_assert(sizeof(struct mnc_event) % 8 == 0, "mnc_event is 8-byte padded");
_Static_assert(sizeof(struct psp_reg_change) == 32 + PSP_CGROUP_MAX, "psp_reg_change");
_Static_assert(sizeof(struct psp_reset) == 24 && sizeof(struct psp_stop) == 16, "psp_reset, psp_stop");
_Static_assert(sizeof(struct psp_status_r) == 1056 && offsetof(struct psp_status_r, registered) == 80, "psp_status_r");
_Static_assert(sizeof(struct psp_status_r) <= PSP_MAX_MSG && sizeof(struct psp_started) <= PSP_MAX_MSG &&
                   sizeof(struct psp_config) <= PSP_MAX_MSG && sizeof(struct psp_audit) <= PSP_MAX_MSG,
               "every message fits PSP_MAX_MSG");
_Static_assert(MNC_K__COUNT <= PSP_KCOUNT_MAX, "kernel reason counters fit STATUS_R");
_Static_assert(PSP_NAME_MAX == MNC_NAME_LEN && PSP_TREE_MAX == MNC_TREE_PATH_MAX && PSP_SOCK_MAX == MNC_UNIX_PATH_MAX,
               "psp and mnc_abi.h agree");

/* ---- the session as the enforcer sees it (one per connection: the monitor's socket pair, or
 * an admin connection) */
enum psp_phase {
    PSP_PH_BOOT = 0,   /* OPEN, then CONFIG */
    PSP_PH_CONFIG = 1, /* PRINCIPAL, IDMAP, then SEAL */
    PSP_PH_SERVE = 2,  /* HOLD, REG_*, TAINT_GET, STATUS */
    PSP_PH_ADMIN = 3,  /* an admin connection: ADM_* only */
};

typedef struct psp_ctx {
    uint32_t phase; /* enum psp_phase */
    uint32_t n_opens;
    uint32_t n_principals; /* from CONFIG */
    uint32_t n_idmap;      /* from CONFIG */
    uint32_t next_principal, idmap_seen;
    uint8_t cls[PSP_MAX_PRINCIPALS];              /* class of each principal announced (0: none yet) */
    char names[PSP_MAX_PRINCIPALS][PSP_NAME_MAX]; /* their names (no two alike) */
    uint32_t in_reg;                              /* a REG_BEGIN is open */
    uint32_t reg_ws, reg_tainted;                 /* REG_PATHs of each kind in it */
} psp_ctx;

/* A fresh session: the monitor's pair starts in PSP_PH_BOOT, an admin connection in
 * PSP_PH_ADMIN. */
void psp_ctx_init(psp_ctx *cx, enum psp_phase phase);

/* The exact size of a message of `type`, or 0 if there is no such type. */
size_t psp_size(uint32_t type);
/* "hold", "reg_begin", ...; "?" for an unknown type. */
const char *psp_type_name(uint32_t type);
/* "kernel.sweep", ... (the audit log's op); NULL for an unknown op. */
const char *psp_audit_op_name(uint32_t op);
/* "allow", "deny", "error"; NULL if unknown. */
const char *psp_decision_name(uint32_t d);
/* "malformed", "state", ...; "?" if unknown. */
const char *psp_refusal_name(uint32_t code);

/* Fills a header for a message of `type` (len = psp_size(type)); the caller zeroes the body
 * first (memset the whole struct). */
void psp_hdr_init(struct psp_hdr *h, uint32_t type, uint32_t seq);

/* Checks a message the enforcer received (msg, len bytes, PSP_ALIGN-aligned; nfds fds came with
 * it) against the session cx: the header, the type for the phase, the exact length, then every field. Returns
 * the type (> 0) when it is well formed; -EBADMSG (malformed: a field out of range, a byte
 * where zeros must be, a wrong length), -EPROTO (another PSP_VERSION) or -EPERM (a type this
 * phase or direction does not accept, or a sequence error such as REG_PATH outside a
 * registration), -EINVAL (msg not aligned); why (may be NULL) says which field. Never reads past len; cx is not changed. */
int psp_check(const psp_ctx *cx, const void *msg, size_t len, int nfds, char *why, size_t whylen);

/* After psp_check accepted msg: moves the session on (phase, counts, open registration). */
void psp_advance(psp_ctx *cx, const void *msg);

/* Checks a message the monitor (or an admin client) received from the enforcer: header, a
 * reply or notice type, exact length, fds only where they belong, every field in range and every
 * string terminated. n_principals: of the sealed configuration (0 before: ids unchecked).
 * Returns the type or -errno as psp_check. */
int psp_check_reply(const void *msg, size_t len, int nfds, uint32_t n_principals, char *why, size_t whylen);

#endif
