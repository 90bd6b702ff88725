// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_hold.c - the kernel layer's taint holds (mncd_kern_hold, kern_layer.h): before a
 * delivery, the recipient's taint map entry, its workspaces' taint records, and (cgroup
 * backend) the pre-taint sweep of its existing connections and the fd scan. */
#include <bpf/bpf.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "freeze.h"
#include "kern_layer.h"
#include "labels.h"

/* ---- pre-taint connections (cgroup backend): see sockscan.h and docs/kernel.md */

typedef struct sweep_ctx {
    mncd *d;
    int agent;
    const mnc_oid *obj;
    const char *op;
} sweep_ctx;

/* One audit record per socket shut down, disconnected or destroyed (or failing to be). */
static int sweep_audit(void *arg, const mncd_sweep_act *a)
{
    sweep_ctx *c = arg;
    char who[100], det[768], ph[MNC_AUDIT_HV_MAX], fh[MNC_AUDIT_HV_MAX], peer[MNC_AUDIT_HV_MAX];
    /* the agent chose the peer (address, port, path), its pid and fd number: keyed hashes
     * (docs/threat-model.md, "Records about agents") */
    if (a->pid && a->fd >= 0)
        snprintf(who, sizeof(who), "pid %s fd %s", mncd_hv_u64(c->d, (uint64_t)a->pid, ph),
                 mncd_hv_u64(c->d, (uint64_t)a->fd, fh));
    else if (a->pid)
        snprintf(who, sizeof(who), "pid %s", mncd_hv_u64(c->d, (uint64_t)a->pid, ph));
    else
        snprintf(who, sizeof(who), "the agent's cgroup");
    mncd_hv_str(c->d, a->peer, peer);
    if (a->refuse) /* a socket the sweep cannot shut for good: the delivery is refused */
        snprintf(det, sizeof(det), "%s refused: %s %s (%s, inode %" PRIu32 "): %s", c->op, a->kind, peer, who, a->ino,
                 a->why ? a->why : "");
    else
        snprintf(det, sizeof(det), "%s: pre-taint %s (socket %" PRIu32 ", %s) to %s: %s%s%s%s%s%s", c->op, a->kind,
                 a->ino, who, peer, a->action, a->why ? " (" : "", a->why ? a->why : "", a->why ? ")" : "",
                 a->err ? " FAILED: " : "", a->err ? strerror(a->err) : "");
    bool failed = a->err && !a->refuse;
    mncd_audit_named(c->d, "kernel.sweep", mncd_peer_name(c->d, c->agent),
                     a->dst_id == MNC_ID_NONE ? NULL : mncd_peer_name(c->d, (long)a->dst_id), c->obj,
                     failed ? "error" : "deny", failed ? "internal" : mnc_kreason_name(a->reason), det);
    if (!a->err)
        c->d->kern->n_swept++;
    return c->d->fatal;
}

/* After the taint map update and before the object leaves mncd: connections the agent made
 * while its taint was looser are judged with the new taint; disallowed ones are shut. The
 * lsm backend re-checks every send in the kernel: there the sweep only closes what can still
 * reach the agent (sockscan.h). Fails closed. */
/* What the fd scan found, for the record: the kernel's names of anonymous objects as they are
 * ("pipe:[N]", "socket:[N]", "anon_inode:[eventfd]", a device), a memfd and a file by the keyed
 * hash of the name the agent (or an accomplice) chose ("memfd h:...", "file h:..."). */
static const char *what_shown(mncd *d, const char *what, char *out, size_t n)
{
    char h[MNC_AUDIT_HV_MAX];
    if (!strncmp(what, "pipe:[", 6) || !strncmp(what, "socket:[", 8) || !strncmp(what, "anon_inode:", 11) ||
        !strncmp(what, "/dev/", 5))
        snprintf(out, n, "%s", what);
    else if (!strncmp(what, "/memfd:", 7)) {
        const char *e = strstr(what, " (deleted)");
        mncd_hv(d, what + 7, e ? (size_t)(e - what - 7) : strlen(what + 7), h);
        snprintf(out, n, "memfd %s", h);
    } else
        snprintf(out, n, "file %s", mncd_hv_str(d, what, h));
    return out;
}

/* Non-socket objects that lead outside (fdscan.h), on either backend: a writable fd on a file
 * passed in from outside, or an in-memory object (pipe, memfd...) or workspace file an outsider
 * also holds. Nothing can take the fd back: the delivery is refused. r, hit, err: the scan's
 * result (mncd_fdscan_agent, then mncd_fdscan_host). */
static int fdscan_report(mncd *d, int agent, const mnc_disclosure *o, const char *op, int r, const mncd_fdscan_hit *hit,
                         const char *err)
{
    mncd_kern *kk = d->kern;
    char det[900];
    if (r == 0)
        return 0;
    /* what the object is (a path), the agent's pid and fd number: the agent's choices, hashed */
    char wh[320], ph[MNC_AUDIT_HV_MAX], fh[MNC_AUDIT_HV_MAX];
    if (r > 0) {
        what_shown(d, hit->what, wh, sizeof(wh));
        mncd_hv_u64(d, (uint64_t)hit->pid, ph);
        mncd_hv_u64(d, (uint64_t)hit->fd, fh);
    }
    if (r > 0 && strcmp(hit->kind, "held_outside") == 0)
        snprintf(det, sizeof(det),
                 "%s refused: %s held by pid %s (fd %s) of the agent is also held by pid %d "
                 "(uid %u) outside it, through %s: what the agent writes there would reach that process; fail closed",
                 op, wh, ph, fh, (int)hit->holder, (unsigned)hit->holder_uid, hit->via ? hit->via : "an fd");
    else if (r > 0)
        snprintf(det, sizeof(det),
                 "%s refused: pid %s holds fd %s writable on %s, outside its workspaces "
                 "(passed in from outside?): writes there would leave the scope; fail closed",
                 op, ph, fh, wh);
    else
        snprintf(det, sizeof(det), "%s refused: fd scan failed (%s); fail closed", op, err);
    mncd_audit_named(d, "kernel.fdscan", mncd_peer_name(d, agent), NULL, &o->id, r > 0 ? "deny" : "error",
                     r > 0 ? hit->kind : "internal", det);
    kk->n_fdscan_refusals++;
    kk->n_hold_failures++;
    return -1;
}

/* "confinement": "netns" (policy.h): every thread of the instance in a network namespace
 * other than mncd's (mncd runs in the host's: its sweep and the kernel layer's sock_diag dumps
 * are made there, as an outsider's would be). Reads cgroup.threads of each cgroup (a thread can
 * unshare alone) and compares /proc/TID/ns/net. Called with the agent frozen: no thread appears
 * or moves meanwhile. 0: all isolated (a thread gone in between is skipped); 1: *tid shares
 * mncd's; -1: the check failed (err). */
typedef struct netns_ctx {
    struct stat own; /* mncd's network namespace */
    pid_t tid;       /* the first thread found in it */
} netns_ctx;

static int netns_thread(void *arg, pid_t tid, char *err, size_t errlen)
{
    netns_ctx *x = arg;
    char np[64];
    struct stat st;
    snprintf(np, sizeof(np), "/proc/%d/ns/net", (int)tid);
    if (stat(np, &st) != 0) {
        if (errno == ENOENT)
            return 0; /* exited */
        snprintf(err, errlen, "thread %d: %s", (int)tid, strerror(errno));
        return -1;
    }
    if (st.st_dev != x->own.st_dev || st.st_ino != x->own.st_ino)
        return 0;
    x->tid = tid;
    return 1;
}

static int netns_shared(const mncd_sweep_cg *cgs, int n, pid_t *tid, char *err, size_t errlen)
{
    netns_ctx x = {.tid = 0};
    if (stat("/proc/self/ns/net", &x.own) != 0) {
        snprintf(err, errlen, "stat /proc/self/ns/net: %s", strerror(errno));
        return -1;
    }
    int r = mncd_cg_each_id(cgs, n, "cgroup.threads", netns_thread, &x, err, errlen);
    *tid = x.tid;
    return r;
}

/* Refuses the delivery (audited) unless every thread of a "confinement": "netns" agent is in a
 * network namespace of its own. 0 when it may go on, -1 refused. */
static int netns_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op, const mncd_sweep_cg *cgs, int n)
{
    mncd_kern *kk = d->kern;
    pid_t tid = 0;
    char err[400] = "", det[900];
    int r = n == 0 ? 2 : netns_shared(cgs, n, &tid, err, sizeof(err));
    if (r == 0)
        return 0;
    if (r == 2)
        snprintf(det, sizeof(det),
                 "%s refused: confinement netns, and the agent has no instance launched by mncctl run; fail closed",
                 op);
    else if (r == 1)
        snprintf(det, sizeof(det),
                 "%s refused: confinement netns, but thread %d of the agent is in mncd's network namespace "
                 "(the host's; mncctl run unshares one for it); fail closed",
                 op, (int)tid);
    else
        snprintf(det, sizeof(det), "%s refused: confinement netns: the check failed (%s); fail closed", op, err);
    mncd_audit_named(d, "kernel.netns", mncd_peer_name(d, agent), NULL, &o->id, r < 0 ? "error" : "deny",
                     r < 0 ? "internal" : "netns_required", det);
    kk->n_netns_refusals++;
    kk->n_hold_failures++;
    return -1;
}

static int sweep(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    mncd_kern *kk = d->kern;
    mncd_sweep_cg cgs[64];
    int n = 0;
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent != agent)
            continue;
        if (n == (int)(sizeof(cgs) / sizeof(cgs[0]))) {
            n = -1;
            break;
        }
        const mncd_reg *rg = &kk->w[i].reg;
        cgs[n++] = (mncd_sweep_cg){.path = kk->w[i].path,
                                   .cgid = kk->w[i].cgid,
                                   .uid_known = rg->known,
                                   .uid = rg->uid,
                                   .root = rg->root,
                                   .ws = (const char *const *)rg->ws,
                                   .n_ws = rg->n_ws};
    }
    char err[400] = "";
    struct mnc_taint t;
    bool need_netns = d->policy->principals[agent].confinement_netns;
    int r = n < 0 ? -E2BIG : mnc_kern_taint_get(kk->k, (uint32_t)agent, &t);
    if (r == 0 && n == 0) /* no registered cgroup (not launched by mncctl run): nothing to sweep */
        return need_netns ? netns_hold(d, agent, o, op, cgs, 0) : 0;
    /* lsm: sends, connects and fds received are judged in the kernel; the sweep acts on what
     * can still reach the agent (sockscan.h, "On the lsm backend") */
    bool lsm = kk->backend != MNC_BACKEND_CGROUP;
    /* One freeze for the queue peek (in mncd_sweep, which nests its own) and the fd scan of the
     * agent's side (mncd_fdscan_agent; its host pass runs after the thaw): an fd
     * the agent moves between its fd table and its own socket queue would otherwise be in the
     * table during the peek and in flight during the scan (attack fd_pingpong_race). */
    mncd_frozen *fz = r == 0 ? calloc((size_t)n, sizeof(*fz)) : NULL;
    int nfz = 0;
    sweep_ctx c = {d, agent, &o->id, op};
    if (r == 0 && !fz)
        r = -ENOMEM;
    bool frozen = r == 0 && mncd_freeze(cgs, n, fz, &nfz, err, sizeof(err)) == 0;
    if (frozen && need_netns && netns_hold(d, agent, o, op, cgs, n) != 0) {
        mncd_thaw(fz, nfz);
        free(fz);
        return -1; /* audited */
    }
    mncd_sweep_later *later = NULL;
    if (frozen && mncd_sweep(kk->k, (uint32_t)agent, &t, cgs, n, lsm, sweep_audit, &c, &kk->last_sweep, err,
                             sizeof(err), &later) == 0) {
        /* the fd scan's agent side while it is frozen; after the thaw the rest of the sweep (the
         * pairs' outside holders) and the fd scan's host pass (sockscan.h, fdscan.h) */
        mncd_fdscan_state *fs = NULL;
        mncd_fdscan_hit hit;
        char ferr[400] = "";
        int fr = d->fatal ? -1 : mncd_fdscan_agent(&fs, cgs, n, &hit, &kk->last_fdscan, ferr, sizeof(ferr));
        mncd_thaw(fz, nfz);
        free(fz);
        fz = NULL;
        int sr = d->fatal ? 0 : mncd_sweep_finish(later);
        mncd_sweep_later_free(later);
        if (sr == 0 && fr == 0 && !d->fatal)
            fr = mncd_fdscan_host(fs, &hit, &kk->last_fdscan, ferr, sizeof(ferr));
        mncd_fdscan_free(fs);
        if (d->fatal)
            return -1;
        if (sr == 0) {
            kk->n_sweeps++;
            mnc_metrics_observe(d->metrics, MNC_H_SWEEP, (double)kk->last_sweep.total_us / 1e6);
            mnc_metrics_observe(d->metrics, MNC_H_FDSCAN, (double)kk->last_fdscan.total_us / 1e6);
            return fdscan_report(d, agent, o, op, fr, &hit, ferr);
        }
    }
    if (fz)
        mncd_thaw(fz, nfz);
    free(fz);
    if (r)
        snprintf(err, sizeof(err), "%s", n < 0 ? "more than 64 cgroups" : strerror(-r));
    char det[600];
    snprintf(det, sizeof(det), "%s refused: pre-taint connection sweep failed (%s); fail closed", op, err);
    /* the operator's log too: what failed, on which socket (by kind and inode; sockscan.h) */
    fprintf(stderr, "mncd: %s: %s\n", mncd_peer_name(d, agent) ? mncd_peer_name(d, agent) : "?", det);
    mncd_audit_named(d, "kernel.sweep", mncd_peer_name(d, agent), NULL, &o->id, "error", "internal", det);
    kk->n_sweep_failures++;
    kk->n_hold_failures++;
    return -1;
}

/* ---- workspace taint (wstaint.h) */

/* The kernel's taint entry in the terms of a workspace record. */
void kl_wt_from_kernel(const mncd *d, int agent, const struct mnc_taint *k, mncd_wtaint *t)
{
    memset(t, 0, sizeof(*t));
    t->tainted = k->tainted != 0;
    memcpy(t->sinks.w, k->sinks, sizeof(t->sinks.w));
    t->may_log = k->may_log;
    t->may_memory = k->may_memory;
    t->may_forward = k->may_forward;
    t->may_external = k->may_external;
    snprintf(t->agent, sizeof(t->agent), "%s", mncd_peer_name(d, agent) ? mncd_peer_name(d, agent) : "?");
    t->time_ms = mnc_now_ms();
}

/* dir's record tightened by `now`, written back. An invalid record counts as the tightest
 * taint there is (nothing reachable) and is replaced (*corrupt set: the caller audits it).
 * 0 or -errno; *first: dir carried no taint before. */
int kl_ws_tighten_one(mncd *d, const char *dir, const mncd_wtaint *now, bool *first, bool *corrupt, bool *scoped)
{
    mncd_wtaint cur;
    int r = mncd_ws_read(dir, d->policy, &cur);
    *corrupt = r == -EBADMSG;
    if (r == -ENODATA || r == -EBADMSG) {
        memset(&cur, 0, sizeof(cur));
        cur.tainted = r == -EBADMSG;
    } else if (r) {
        return r;
    }
    *first = !cur.tainted;
    mncd_wtaint before = cur;
    mncd_ws_merge(&cur, now);
    if (scoped) /* the scope changed (objects aside): its files need the new label */
        *scoped = !before.tainted || !mncd_ws_implies(&before, &cur) || *corrupt;
    r = mncd_ws_write(dir, d->policy, &cur);
    if (r == 0 && *first)
        r = mncd_labels_note(d, dir); /* sealed again at every start (labels.h) */
    return r;
}

/* After the agent's taint entry was tightened for o: the agent's whole taint onto every
 * workspace of every live instance of the agent, before o leaves mncd (the next instance on
 * that workspace starts with it; see wstaint.h). A failed write refuses the delivery. */
static int ws_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    mncd_kern *kk = d->kern;
    bool any = false;
    for (int i = 0; i < kk->n_w && !any; i++)
        any = kk->w[i].agent == agent && kk->w[i].reg.n_ws > 0;
    if (!any)
        return 0; /* no live instance with a workspace (unregistered, or an older launcher) */
    struct mnc_taint kt;
    int r = mnc_kern_taint_get(kk->k, (uint32_t)agent, &kt);
    char det[PATH_MAX + 1200];
    if (r) {
        snprintf(det, sizeof(det), "%s refused: taint map read for the workspace taint failed (%s); fail closed", op,
                 strerror(-r));
        mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
        kk->n_hold_failures++;
        return -1;
    }
    mncd_wtaint now;
    kl_wt_from_kernel(d, agent, &kt, &now);
    mncd_ws_add_object(&now, &o->id);
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent != agent)
            continue;
        for (int j = 0; j < kk->w[i].reg.n_ws; j++) {
            const char *ws = kk->w[i].reg.ws[j];
            bool first = false, corrupt = false, scoped = false;
            r = kl_ws_tighten_one(d, ws, &now, &first, &corrupt, &scoped);
            if (r) {
                snprintf(det, sizeof(det),
                         "%s refused: the taint of workspace %.3000s could not be recorded (%s); fail closed", op, ws,
                         strerror(-r));
                mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
                kk->n_hold_failures++;
                return -1;
            }
            /* its files carry the label wherever they are named: before the object leaves */
            mncd_wtaint rec;
            char serr[600];
            if (scoped && mncd_ws_read(ws, d->policy, &rec) == 0 &&
                mncd_labels_seal(d, ws, &rec, NULL, serr, sizeof(serr)) != 0) {
                snprintf(det, sizeof(det),
                         "%s refused: the files of workspace %.3000s could not be labelled (%s); "
                         "fail closed",
                         op, ws, serr);
                mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
                kk->n_hold_failures++;
                return -1;
            }
            if (corrupt) {
                snprintf(det, sizeof(det),
                         "workspace %.3000s: invalid taint record replaced by the tightest taint "
                         "(no sinks, nothing external)",
                         ws);
                mncd_audit_named(d, "workspace.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "invalid", det);
            }
            if (first) {
                char desc[1000];
                mncd_ws_describe(&now, d->policy, desc, sizeof(desc));
                snprintf(det, sizeof(det), "workspace %.3000s of cgroup %.400s now carries the agent's taint (%s)", ws,
                         kl_rel_path(kk, kk->w[i].path), desc);
                mncd_audit_named(d, "workspace.taint", NULL, mncd_peer_name(d, agent), &o->id, "allow", "ok", det);
            }
        }
    }
    kk->n_ws_holds++;
    return d->fatal ? -1 : 0;
}

/* The kernel's taint is filled from libmnc's sets and names byte for byte: the two definitions
 * (bpf/mnc_abi.h, user/include/mnc/set.h and policy.h) must agree at compile time. */
_Static_assert(MNC_SET_WORDS_ABI == MNC_SET_WORDS, "mnc_abi.h and mnc/set.h: set size");
_Static_assert(sizeof(((struct mnc_taint *)0)->sinks) == sizeof(((mnc_set *)0)->w), "taint sinks == mnc_set");
_Static_assert(MNC_MAX_PRINCIPALS <= MNC_SET_WORDS_ABI * 64, "every principal id fits the taint set");
_Static_assert(MNC_NAME_LEN == MNC_NAME_MAX, "mnc_abi.h and mnc/policy.h: name length");

/* φ, μ of one object as the kernel's taint fields (bpf/mnc_abi.h, mnc_decide). */
int mncd_kern_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    if (d->psp)
        return mon_kern_hold(d, agent, o, op); /* --privsep: HOLD to the enforcer */
    mncd_kern *kk = d->kern;
    if (!kk)
        return 0;
    const mnc_policy *p = d->policy;
    mnc_set sinks = o->scope.sinks;
    bool may_log = false, may_forward = false, may_external = false;
    for (int i = 0; i < p->n_principals; i++) {
        const mnc_principal *s = &p->principals[i];
        if (s->cls == MNC_SINK_MEMORY && o->scope.memory)
            mnc_set_add(&sinks, (unsigned)i); /* μ: the monitor lets any memory store take it */
        if (!mnc_set_has(&o->scope.sinks, (unsigned)i))
            continue;
        may_log |= s->cls == MNC_SINK_LOG;
        may_forward |= s->cls == MNC_SINK_AGENT;
        /* an external sink without an address cannot be told apart from any other unregistered
         * destination: only then may the agent reach unregistered destinations at all */
        may_external |= s->cls == MNC_SINK_EXTERNAL && !s->address[0];
    }
    uint64_t gen = 0;
    int r =
        mnc_kern_taint_hold(kk->k, (uint32_t)agent, sinks.w, may_log, o->scope.memory, may_forward, may_external, &gen);
    if (r != 0) {
        char det[200];
        snprintf(det, sizeof(det), "%s refused: taint map update failed (%s); fail closed", op, strerror(-r));
        mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
        kk->n_hold_failures++;
        return -1;
    }
    kk->n_holds++;
    if (ws_hold(d, agent, o, op) != 0)
        return -1;
    return sweep(d, agent, o, op);
}

int mncd_kern_agent_of(mncd *d, const char *cg)
{
    mncd_kern *kk = d->kern;
    size_t n = kk ? strlen(kk->tree_rel) : 0;
    if (!kk || strncmp(cg, kk->tree_rel, n) != 0 || (cg[n] != '/' && cg[n] != 0))
        return -2;
    for (int i = 0; i < kk->n_w; i++) {
        const char *r = kl_rel_path(kk, kk->w[i].path);
        size_t rl = strlen(r);
        if (strncmp(cg, r, rl) == 0 && (cg[rl] == '/' || cg[rl] == 0))
            return kk->w[i].agent; /* the agent's cgroup or one below it */
    }
    return -1;
}
