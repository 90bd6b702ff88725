// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_hold.c - the enforcer's taint holds (HOLD, ek_kern.h): before a delivery, the recipient's
 * taint map entry tightened by the object's scope, its workspaces' labels tightened, and (both
 * backends) the pre-taint sweep of its existing connections and the fd scan, all under one
 * freeze. The monitor delivers only after HELD; any failure here is REFUSED (fail closed), with
 * its audit records sent before it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "freeze.h"
#include "ek_kern.h"
#include "mnc_util.h"

static const char *op_name(unsigned op) { return op == PSP_OP_MEM_GET ? "mem.get" : "recv"; }

/* A principal id for an audit record, or PSP_NONE when it names none. */
static uint32_t pid_or_none(const ek *e, uint32_t id) { return ek_name(e, id) ? id : PSP_NONE; }

wsrec_names ek_names(const ek *e) { return (wsrec_names){e->names, (int)e->cfg.n_principals}; }

/* ---- pre-taint connections and the fd scan (sockscan.h, fdscan.h, docs/kernel.md) */

typedef struct sweep_ctx {
    ek *e;
    uint32_t agent;
    const uint8_t *oid;
    const char *op;
} sweep_ctx;

/* One audit record per socket shut down, disconnected or destroyed (or failing to be). */
static int sweep_audit(void *arg, const mncd_sweep_act *a)
{
    sweep_ctx *c = arg;
    char who[64], det[768];
    if (a->pid && a->fd >= 0)
        snprintf(who, sizeof(who), "pid %d fd %d", (int)a->pid, a->fd);
    else if (a->pid)
        snprintf(who, sizeof(who), "pid %d", (int)a->pid);
    else
        snprintf(who, sizeof(who), "the agent's cgroup");
    if (a->refuse) /* a socket the sweep cannot shut for good: the delivery is refused */
        snprintf(det, sizeof(det), "%s refused: %s %s (%s, inode %" PRIu32 "): %s", c->op, a->kind, a->peer, who,
                 a->ino, a->why ? a->why : "");
    else
        snprintf(det, sizeof(det), "%s: pre-taint %s (socket %" PRIu32 ", %s) to %s: %s%s%s%s%s%s", c->op, a->kind,
                 a->ino, who, a->peer, a->action, a->why ? " (" : "", a->why ? a->why : "", a->why ? ")" : "",
                 a->err ? " FAILED: " : "", a->err ? strerror(a->err) : "");
    bool failed = a->err && !a->refuse;
    ek_audit(c->e, PSP_A_KERNEL_SWEEP, failed ? PSP_D_ERROR : PSP_D_DENY, pid_or_none(c->e, c->agent),
             a->dst_id == MNC_ID_NONE ? PSP_NONE : pid_or_none(c->e, a->dst_id), c->oid,
             failed ? "internal" : mnc_kreason_name(a->reason), "%s", det);
    if (!a->err)
        c->e->kern->n_swept++;
    return c->e->mon_fd < 0; /* the monitor is gone: stop (the hold fails) */
}

/* Non-socket objects that lead outside (fdscan.h): nothing can take the fd back, so the
 * delivery is refused. r, hit, err: the fd scan's result (mncd_fdscan_agent, then
 * mncd_fdscan_host). 0 or -1 (audited). */
static int fdscan_report(ek *e, uint32_t agent, const uint8_t *oid, const char *op, int r, const mncd_fdscan_hit *hit,
                         const char *err)
{
    ek_kern *kk = e->kern;
    char det[900];
    if (r == 0)
        return 0;
    if (r > 0 && strcmp(hit->kind, "held_outside") == 0)
        snprintf(det, sizeof(det),
                 "%s refused: %.300s held by pid %d (fd %d) of the agent is also held by pid %d "
                 "(uid %u) outside it, through %s: what the agent writes there would reach that process; fail closed",
                 op, hit->what, (int)hit->pid, hit->fd, (int)hit->holder, (unsigned)hit->holder_uid,
                 hit->via ? hit->via : "an fd");
    else if (r > 0)
        snprintf(det, sizeof(det),
                 "%s refused: pid %d holds fd %d writable on %.300s, outside its workspaces "
                 "(passed in from outside?): writes there would leave the scope; fail closed",
                 op, (int)hit->pid, hit->fd, hit->what);
    else
        snprintf(det, sizeof(det), "%s refused: fd scan failed (%s); fail closed", op, err);
    ek_audit(e, PSP_A_KERNEL_FDSCAN, r > 0 ? PSP_D_DENY : PSP_D_ERROR, pid_or_none(e, agent), PSP_NONE, oid,
             r > 0 ? hit->kind : "internal", "%s", det);
    kk->n_fdscan_refusals++;
    kk->n_hold_failures++;
    return -1;
}

/* "confinement": "netns": every thread of the instance in a network namespace other than the
 * enforcer's (the host's, where the sweep's sock_diag dumps are made). Called with the agent
 * frozen. 0 all isolated; 1 *tid shares it; -1 the check failed. */
typedef struct netns_ctx {
    struct stat own;
    pid_t tid;
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

static int netns_hold(ek *e, uint32_t agent, const uint8_t *oid, const char *op, const mncd_sweep_cg *cgs, int n)
{
    ek_kern *kk = e->kern;
    pid_t tid = 0;
    char err[400] = "";
    int r = n == 0 ? 2 : netns_shared(cgs, n, &tid, err, sizeof(err));
    if (r == 0)
        return 0;
    if (r == 2)
        ek_audit(e, PSP_A_KERNEL_NETNS, PSP_D_DENY, agent, PSP_NONE, oid, "netns_required",
                 "%s refused: confinement netns, and the agent has no instance launched by mncctl run; fail closed",
                 op);
    else if (r == 1)
        ek_audit(e, PSP_A_KERNEL_NETNS, PSP_D_DENY, agent, PSP_NONE, oid, "netns_required",
                 "%s refused: confinement netns, but thread %d of the agent is in mncd's network namespace (the "
                 "host's; mncctl run unshares one for it); fail closed",
                 op, (int)tid);
    else
        ek_audit(e, PSP_A_KERNEL_NETNS, PSP_D_ERROR, agent, PSP_NONE, oid, "internal",
                 "%s refused: confinement netns: the check failed (%s); fail closed", op, err);
    kk->n_netns_refusals++;
    kk->n_hold_failures++;
    return -1;
}

/* The sweep, the netns check and the fd scan under one freeze (an fd the agent moves between
 * its table and its own socket queue would otherwise escape both: attack fd_pingpong_race).
 * 0, or -1 (audited). */
static int sweep(ek *e, uint32_t agent, const uint8_t *oid, const char *op)
{
    ek_kern *kk = e->kern;
    mncd_sweep_cg cgs[64];
    int n = 0;
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent != agent)
            continue;
        if (n == (int)(sizeof(cgs) / sizeof(cgs[0]))) {
            n = -1;
            break;
        }
        const ek_reg *rg = &kk->w[i].reg;
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
    bool need_netns = e->pr[agent].flags & PSP_PF_NETNS;
    int r = n < 0 ? -E2BIG : mnc_kern_taint_get(kk->k, agent, &t);
    if (r == 0 && n == 0) /* no registered cgroup (not launched by mncctl run): nothing to sweep */
        return need_netns ? netns_hold(e, agent, oid, op, cgs, 0) : 0;
    /* lsm: sends, connects and fds received are judged in the kernel; the sweep acts on what can
     * still reach the agent (sockscan.h, "On the lsm backend") */
    bool lsm = kk->backend != MNC_BACKEND_CGROUP;
    mncd_frozen *fz = r == 0 ? calloc((size_t)n, sizeof(*fz)) : NULL;
    int nfz = 0;
    sweep_ctx c = {e, agent, oid, op};
    if (r == 0 && !fz)
        r = -ENOMEM;
    bool frozen = r == 0 && mncd_freeze(cgs, n, fz, &nfz, err, sizeof(err)) == 0;
    if (frozen && need_netns && netns_hold(e, agent, oid, op, cgs, n) != 0) {
        mncd_thaw(fz, nfz);
        free(fz);
        return -1; /* audited */
    }
    mncd_sweep_later *later = NULL;
    if (frozen &&
        mncd_sweep(kk->k, agent, &t, cgs, n, lsm, sweep_audit, &c, &kk->last_sweep, err, sizeof(err), &later) == 0) {
        /* the fd scan's agent side while it is frozen; after the thaw the rest of the sweep (the
         * pairs' outside holders) and the fd scan's host pass (sockscan.h, fdscan.h) */
        mncd_fdscan_state *fs = NULL;
        mncd_fdscan_hit hit;
        char ferr[400] = "";
        bool gone = e->mon_fd < 0;
        int fr = gone ? -1 : mncd_fdscan_agent(&fs, cgs, n, &hit, &kk->last_fdscan, ferr, sizeof(ferr));
        mncd_thaw(fz, nfz);
        free(fz);
        fz = NULL;
        int sr = gone ? 0 : mncd_sweep_finish(later);
        mncd_sweep_later_free(later);
        gone = gone || e->mon_fd < 0;
        if (sr == 0 && fr == 0 && !gone)
            fr = mncd_fdscan_host(fs, &hit, &kk->last_fdscan, ferr, sizeof(ferr));
        mncd_fdscan_free(fs);
        if (gone)
            return -1; /* the monitor is gone: no delivery */
        if (sr == 0) {
            kk->n_sweeps++;
            return fdscan_report(e, agent, oid, op, fr, &hit, ferr);
        }
    }
    if (fz)
        mncd_thaw(fz, nfz);
    free(fz);
    if (r)
        snprintf(err, sizeof(err), "%s", n < 0 ? "more than 64 cgroups" : strerror(-r));
    ek_audit(e, PSP_A_KERNEL_SWEEP, PSP_D_ERROR, agent, PSP_NONE, oid, "internal",
             "%s refused: pre-taint connection sweep failed (%s); fail closed", op, err);
    kk->n_sweep_failures++;
    kk->n_hold_failures++;
    return -1;
}

/* ---- workspace labels (wsrec.h) */

void ek_wt_from_kernel(const ek *e, uint32_t agent, const struct mnc_taint *k, wsrec *t)
{
    memset(t, 0, sizeof(*t));
    t->tainted = k->tainted != 0;
    memcpy(t->sinks, k->sinks, sizeof(t->sinks));
    t->may_log = k->may_log;
    t->may_memory = k->may_memory;
    t->may_forward = k->may_forward;
    t->may_external = k->may_external;
    snprintf(t->agent, sizeof(t->agent), "%s", ek_name(e, agent) ? ek_name(e, agent) : "");
    t->time_ms = mnc_now_ms();
}

int ek_ws_read(ek *e, const char *dir, wsrec *t)
{
    static uint8_t v[65536];
    memset(t, 0, sizeof(*t));
    ssize_t n = getxattr(dir, WSREC_XATTR, v, sizeof(v));
    if (n < 0)
        return errno == ERANGE ? -EBADMSG : errno == EOPNOTSUPP ? -ENOTSUP : -errno;
    wsrec_names nm = ek_names(e);
    return wsrec_decode(v, (size_t)n, &nm, t);
}

static int ws_write(ek *e, const char *dir, const wsrec *t)
{
    if (!t->tainted)
        return 0;
    uint8_t v[WSREC_MAX];
    wsrec_names nm = ek_names(e);
    int len = wsrec_encode(t, &nm, v, sizeof(v));
    if (len < 0)
        return len;
    return setxattr(dir, WSREC_XATTR, v, (size_t)len, 0) == 0 ? 0 : errno == EOPNOTSUPP ? -ENOTSUP : -errno;
}

/* dir's record tightened by now, written back. An invalid record counts as the tightest taint
 * there is (nothing reachable) and is replaced (*corrupt: the caller audits it). */
int ek_ws_tighten_one(ek *e, const char *dir, const wsrec *now, bool *first, bool *corrupt)
{
    wsrec cur;
    int r = ek_ws_read(e, dir, &cur);
    *corrupt = r == -EBADMSG;
    if (r == -ENODATA || r == -EBADMSG) {
        memset(&cur, 0, sizeof(cur));
        cur.tainted = r == -EBADMSG;
    } else if (r) {
        return r;
    }
    *first = !cur.tainted;
    wsrec_merge(&cur, now);
    return ws_write(e, dir, &cur);
}

/* After the agent's taint entry was tightened: the agent's whole taint onto every workspace of
 * every live instance of it, before the object leaves (the next instance on that workspace
 * starts with it). A failed write refuses the delivery. */
static int ws_hold(ek *e, uint32_t agent, const uint8_t *oid, const char *op)
{
    ek_kern *kk = e->kern;
    bool any = false;
    for (int i = 0; i < kk->n_w && !any; i++)
        any = kk->w[i].agent == agent && kk->w[i].reg.n_ws > 0;
    if (!any)
        return 0; /* no live instance with a workspace */
    struct mnc_taint kt;
    int r = mnc_kern_taint_get(kk->k, agent, &kt);
    if (r) {
        ek_audit(e, PSP_A_KERNEL_TAINT, PSP_D_ERROR, PSP_NONE, agent, oid, "internal",
                 "%s refused: taint map read for the workspace taint failed (%s); fail closed", op, strerror(-r));
        kk->n_hold_failures++;
        return -1;
    }
    wsrec now;
    ek_wt_from_kernel(e, agent, &kt, &now);
    wsrec_add_object(&now, oid);
    wsrec_names nm = ek_names(e);
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent != agent)
            continue;
        for (int j = 0; j < kk->w[i].reg.n_ws; j++) {
            const char *ws = kk->w[i].reg.ws[j];
            bool first = false, corrupt = false;
            r = ek_ws_tighten_one(e, ws, &now, &first, &corrupt);
            if (r) {
                ek_audit(e, PSP_A_KERNEL_TAINT, PSP_D_ERROR, PSP_NONE, agent, oid, "internal",
                         "%s refused: the taint of workspace %.3000s could not be recorded (%s); fail closed", op, ws,
                         strerror(-r));
                kk->n_hold_failures++;
                return -1;
            }
            if (corrupt)
                ek_audit(e, PSP_A_WORKSPACE_TAINT, PSP_D_ERROR, PSP_NONE, agent, oid, "invalid",
                         "workspace %.3000s: invalid taint record replaced by the tightest taint (no sinks, nothing "
                         "external)",
                         ws);
            if (first) {
                char desc[1000];
                wsrec_describe(&now, &nm, desc, sizeof(desc));
                ek_audit(e, PSP_A_WORKSPACE_TAINT, PSP_D_ALLOW, PSP_NONE, agent, oid, "ok",
                         "workspace %.3000s of cgroup %.400s now carries the agent's taint (%s)", ws,
                         ek_rel(kk, kk->w[i].path), desc);
            }
        }
    }
    kk->n_ws_holds++;
    return e->mon_fd < 0 ? -1 : 0;
}

void ek_kern_hold(ek *e, const struct psp_hold *m)
{
    ek_kern *kk = e->kern;
    const char *op = op_name(m->op);
    if (!kk) {
        ek_refuse(e, m->h.seq, PSP_NO_OFF, 0, "%s: mncd runs without the kernel layer (--kernel off)", op);
        return;
    }
    /* tightens only: an untainted entry takes the scope, a tainted one the intersection */
    uint64_t gen = 0;
    int r = mnc_kern_taint_hold(kk->k, m->agent, m->sinks, m->may_log, m->may_memory, m->may_forward, m->may_external,
                                &gen);
    if (r != 0) {
        ek_audit(e, PSP_A_KERNEL_TAINT, PSP_D_ERROR, PSP_NONE, m->agent, m->oid, "internal",
                 "%s refused: taint map update failed (%s); fail closed", op, strerror(-r));
        kk->n_hold_failures++;
        ek_refuse(e, m->h.seq, PSP_NO_INTERNAL, -r, "%s refused: taint map update failed (%s)", op, strerror(-r));
        return;
    }
    kk->n_holds++;
    if (ws_hold(e, m->agent, m->oid, op) != 0 || sweep(e, m->agent, m->oid, op) != 0) {
        ek_refuse(e, m->h.seq, PSP_NO_DENIED, 0,
                  "%s refused before delivery by the kernel layer (taint update, sweep or fd scan: see the audit "
                  "log; fail closed)",
                  op);
        return;
    }
    struct psp_held h;
    memset(&h, 0, sizeof(h));
    psp_hdr_init(&h.h, PSP_HELD, m->h.seq);
    h.generation = gen;
    ek_reply(e, &h, NULL, 0);
}
