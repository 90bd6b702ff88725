/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ek_kern.h - internal to the enforcer's kernel layer (ek_watch.c, ek_hold.c, ek_register.c,
 * ek_admin.c, ek_audit.c, ek_kern.c): its state and the functions its files share. The public
 * side is the "kernel layer" section of enforcer.h.
 *
 * Contract: one ek_kern per enforcer (e->kern), NULL when the layer is off. Layers inside, bottom
 * up: ek_watch.c (cgroup watches, registration facts, exits), ek_audit.c (the kernel audit
 * socket for Landlock denials), ek_hold.c (taint holds: map, workspace labels, sweep, fd scan,
 * netns), ek_register.c (registrations), ek_admin.c (the admin socket's verbs), ek_kern.c (start,
 * stop, deny events, status).
 *
 * The invariants it keeps whatever the monitor says (docs/privsep.md): taint only tightens; a
 * registered cgroup is never re-labelled; workspace labels only tighten; untaint only when the
 * layer itself sees the agent's last cgroup gone or emptied, or on the admin socket; nothing is
 * detached or unpinned.
 */
#ifndef MNCD_EK_KERN_H
#define MNCD_EK_KERN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "fdscan.h"
#include "sockscan.h"
#include "../wsrec.h"
#include "enforcer.h"
#include "mnc_kern.h"

#define EK_MAX_WATCH 4096

/* What `mncctl run` registered for one agent instance (uid, --as-root, workspaces). */
typedef struct ek_reg {
    bool known;
    uint32_t uid;
    bool root;
    int n_ws;
    char *ws[REGREC_MAX_WS]; /* realpaths, heap */
} ek_reg;

typedef struct ek_watch {
    char path[PATH_MAX]; /* absolute cgroup directory */
    uint64_t cgid;
    uint32_t agent;
    uint32_t flags;      /* MNC_AGENT_F_* of its registration */
    int wd;              /* inotify watch on cgroup.events, -1 if none */
    bool populated_seen; /* a process has been in it: from now on, empty means exited */
    ek_reg reg;
} ek_watch;

/* A registration being received (REG_BEGIN .. REG_COMMIT). */
typedef struct ek_pending_reg {
    struct psp_reg_begin begin;
    int n_ws, n_tainted;
    char *ws[REGREC_MAX_WS];
    char **tainted; /* n_tainted, heap */
} ek_pending_reg;

typedef struct ek_kern {
    mnc_kern *k;
    unsigned backend;
    char cg2[256];
    char tree[MNC_TREE_PATH_MAX]; /* absolute */
    char tree_rel[512];           /* as /proc/PID/cgroup shows it */
    int ino_fd, timer_fd, ev_fd;
    int tree_wd;
    ek_watch *w;
    int n_w;
    mnc_selftest st;
    uint64_t n_deny_events, n_holds, n_hold_failures, n_registered, n_exited, n_adopted;
    uint64_t n_ws_holds, n_ws_inherited, n_ws_cleared;
    uint64_t n_sweeps, n_sweep_failures, n_swept, n_fdscan_refusals, n_netns_refusals;
    mncd_sweep_stats last_sweep;
    mncd_fdscan_stats last_fdscan;
    /* the Landlock audit socket (ek_audit.c): handed to the monitor in STARTED */
    int audit_fd;
    bool audit_enabled_by_us;
    uint32_t audit_lost_at_start;
    char ll_why[600];
    ek_pending_reg reg;
} ek_kern;

/* ---- ek_watch.c */
/* abs (a path under the cgroup2 mount) as /proc/PID/cgroup shows it. */
const char *ek_rel(const ek_kern *kk, const char *abs);
/* cgroup.events "populated": 1, 0, or -1 (gone or unreadable). */
int ek_read_populated(const char *cg);
/* cpu.stat usage_usec of cg (> 0: a process has run in it), or -1. */
long long ek_read_usage_usec(const char *cg);
void ek_reg_free(ek_reg *r);
/* Registration facts on cgroup cg (trusted.mnc.reg, wsrec.h's regrec): 0 or -errno. */
int ek_reg_save(const char *cg, const ek_reg *r);
/* Reads them back: 0, or -errno (-ENODATA: none; -EBADMSG: not a record). */
int ek_reg_load(const char *cg, ek_reg *r);
/* Starts watching agent's cgroup path (cgid), taking over reg: 0 or -errno. */
int ek_watch_add(ek *e, const char *path, uint64_t cgid, uint32_t agent, uint32_t flags, ek_reg *reg);
/* Re-reads every watched cgroup's state and retires the agents whose cgroups are gone
 * (REG_DEL and agent.exit notices; the taint goes with the agent's last cgroup). */
void ek_check_watches(ek *e);
/* The REG_ADD notice for watch w. */
void ek_notice_reg(ek *e, const ek_watch *w, bool add);

/* ---- ek_audit.c: the Landlock audit socket, opened and bound here, read by the monitor */
/* Sets up the audit multicast socket (enabling kernel audit when it is off and no auditd owns
 * it, raising the backlog): kk->audit_fd, or -1 with kk->ll_why. Never fails the start. */
void ek_audit_setup(ek *e);
/* The kernel's live audit status for STATUS_R. 0, or -errno. */
int ek_audit_status(uint32_t *enabled, uint32_t *pid, uint32_t *lost, uint32_t *backlog);

/* ---- ek_hold.c */
/* The workspace record equivalent to the kernel taint k of agent. */
void ek_wt_from_kernel(const ek *e, uint32_t agent, const struct mnc_taint *k, wsrec *t);
/* Tightens dir's record by now (*first: none before; *corrupt: an invalid one was replaced by
 * the tightest). 0 or -errno. */
int ek_ws_tighten_one(ek *e, const char *dir, const wsrec *now, bool *first, bool *corrupt);
/* Reads dir's record (getxattr + wsrec_decode): 0, -ENODATA, -ENOTSUP, -EBADMSG, -errno. */
int ek_ws_read(ek *e, const char *dir, wsrec *t);
/* The principal names as wsrec.h wants them. */
wsrec_names ek_names(const ek *e);

#endif
