/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kern_layer.h - internal to mncd's kernel layer (kern.c, kern_watch.c, kern_hold.c,
 * kern_verbs.c): its state and the functions its files share. The public side is the "kernel
 * layer" section of mncd.h.
 *
 * Contract: one mncd_kern per mncd (d->kern), NULL when the layer is off. Only the event-loop
 * thread touches it. Layers inside: kern_watch.c (cgroup watches, registration facts) at the
 * bottom, kern_hold.c (taint holds) on it, kern.c (start, stop, events) and kern_verbs.c (admin
 * verbs, status) on top.
 */
#ifndef MNCD_KERN_LAYER_H
#define MNCD_KERN_LAYER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "fdscan.h"
#include "mnc_kern.h"
#include "mncd.h"
#include "sockscan.h"
#include "wstaint.h"

#define MAX_WATCH 4096

typedef struct kwatch {
    char path[PATH_MAX]; /* absolute cgroup directory */
    uint64_t cgid;
    int agent;
    int wd;              /* inotify watch on cgroup.events, -1 if none */
    bool populated_seen; /* a process has been in it: from now on, empty means exited */
    mncd_reg reg;        /* uid, --as-root, workspaces (agent.register or the cgroup's xattr) */
} kwatch;

typedef struct mncd_kern {
    mnc_kern *k;
    unsigned backend;
    char cg2[256];
    char tree[MNC_TREE_PATH_MAX]; /* absolute */
    char tree_rel[512];           /* as /proc/PID/cgroup shows it, e.g. "/mnc" */
    int ino_fd, timer_fd, ev_fd;
    int tree_wd; /* inotify watch on the tree directory (IN_DELETE of a child), -1 if none */
    kwatch *w;
    int n_w;
    mnc_selftest st;
    uint64_t n_deny_events, n_holds, n_hold_failures, n_registered, n_exited, n_adopted;
    uint64_t n_ws_holds, n_ws_inherited, n_ws_cleared; /* workspace taint (wstaint.h) */
    /* pre-taint connection sweeps (cgroup backend, sockscan.c) */
    uint64_t n_sweeps, n_sweep_failures, n_swept;
    mncd_sweep_stats last_sweep;
    /* non-socket objects leading outside (fdscan.c) */
    uint64_t n_fdscan_refusals;
    uint64_t n_netns_refusals; /* deliveries refused: confinement netns not met */
    mncd_fdscan_stats last_fdscan;
    struct mncd_llaudit *ll; /* Landlock denials -> audit records (llaudit.c) */
} mncd_kern;

/* "auto", "off", "cgroup", "lsm" for an MNCD_KERN_* mode; "?" otherwise. */
const char *mncd_kern_mode_name(int mode);

/* ---- cgroup watches and registration facts (kern_watch.c) */
/* abs (a path under the cgroup2 mount) as /proc/PID/cgroup shows it. */
const char *kl_rel_path(const mncd_kern *kk, const char *abs);
/* cgroup.events "populated": 1, 0, or -1 (gone or unreadable). */
int kl_read_populated(const char *cg);
/* cpu.stat usage_usec of cg (> 0: a process has run in it), or -1. */
long long kl_read_usage_usec(const char *cg);
/* Stores registration facts r on cgroup cg (xattr trusted.mnc.reg): 0 or -1. */
int kl_reg_save(const char *cg, const mncd_reg *r);
/* Loads what kl_reg_save stored: 0, or -1 (none or unreadable; r then empty). */
int kl_reg_load(const char *cg, mncd_reg *r);
/* Registration facts from an agent.register request into r: NULL, or why not. */
const char *kl_reg_from_request(const mnc_request *q, mncd_reg *r, char *why, size_t n);
/* Starts watching the agent cgroup path (cgid) of agent, taking over reg: 0 or -errno. */
int kl_watch_add(mncd_kern *kk, const char *path, uint64_t cgid, int agent, mncd_reg *reg);
/* Re-reads every watched cgroup's state and retires the agents whose cgroups are gone. */
void kl_check_watches(mncd *d);

/* ---- taint holds (kern_hold.c) */
/* The workspace taint record equivalent to the kernel taint k of agent. */
void kl_wt_from_kernel(const mncd *d, int agent, const struct mnc_taint *k, mncd_wtaint *t);
/* Tightens the taint record of workspace dir by now (*first: none before; *corrupt: an
 * unreadable record was replaced; *scoped (may be NULL): its scope changed, so the files
 * below need labelling anew, labels.h). 0 or -errno. */
int kl_ws_tighten_one(mncd *d, const char *dir, const mncd_wtaint *now, bool *first, bool *corrupt, bool *scoped);

/* ---- principals (kern_principals.c): the pinned numbers keep their names */
/* Before anything is written in the running policy's numbering: translates every pinned
 * reference by name (stopping live instances of agents the policy lacks), writes the new
 * binding, audits what changed (kernel.principals). 0, or -1 with err: refuse to start. */
int kl_principals_bind(mncd *d, char *err, size_t errlen);
/* After the policy's sinks are registered: deletes the sink entries it no longer names. 0 or
 * -1 with err. */
int kl_principals_prune(mncd *d, char *err, size_t errlen);

#endif
