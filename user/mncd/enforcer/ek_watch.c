// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_watch.c - the enforcer's cgroup watches and registration facts (ek_kern.h): when an agent's
 * cgroup is gone (the kernel's state decides, events only say when to look), and what `mncctl
 * run` registered for it (kept in a trusted xattr on the cgroup, so a restarted enforcer adopts
 * it). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ek_kern.h"
#include "mnc_util.h"

enum cg_state {
    CG_UNKNOWN = 0, /* could not tell (a read failed for another reason than ENOENT): keep */
    CG_GONE,        /* removed (or the path now names another cgroup) */
    CG_POPULATED,   /* has a process now */
    CG_USED_EMPTY,  /* empty, and a process has run in it: exited */
    CG_FRESH_EMPTY, /* empty, and no process has ever run in it: registered, not yet joined */
};

int ek_read_populated(const char *cg)
{
    char p[PATH_MAX + 32], buf[256];
    snprintf(p, sizeof(p), "%s/cgroup.events", cg);
    if (mnc_read_file(p, buf, sizeof(buf)) != 0)
        return -1;
    const char *s = strstr(buf, "populated ");
    return s ? s[10] == '1' : -1;
}

/* usage_usec of <cg>/cpu.stat (a core cgroup v2 file, present without the cpu controller): the
 * CPU time every process that ever ran in the cgroup used. 0 fresh from mkdir; -1 unreadable. */
long long ek_read_usage_usec(const char *cg)
{
    char p[PATH_MAX + 32], buf[512];
    snprintf(p, sizeof(p), "%s/cpu.stat", cg);
    if (mnc_read_file(p, buf, sizeof(buf)) != 0)
        return -1;
    const char *s = strstr(buf, "usage_usec ");
    if (!s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s + 11, &end, 10);
    return errno || end == s + 11 || v < 0 ? -1 : v;
}

/* What the kernel says about the registered cgroup (path, cgid). usage_usec is read BEFORE
 * cgroup.events: usage > 0 at t1 and populated 0 at t2 > t1 mean "populated, then emptied"; the
 * other order would call an agent that joined between the two reads exited. (A short-lived agent
 * may join and exit before the first inotify event is handled: kernfs notifications are deferred
 * and rate-limited, two unread IN_MODIFY events coalesce.) */
static enum cg_state cg_state(const char *path, uint64_t cgid)
{
    uint64_t id;
    int r = mnc_cgroup_id(path, &id);
    if (r == -ENOENT || (r == 0 && id != cgid))
        return CG_GONE;
    if (r != 0)
        return CG_UNKNOWN;
    long long used = ek_read_usage_usec(path);
    int pop = ek_read_populated(path);
    if (pop == 1)
        return CG_POPULATED;
    if (pop < 0)
        return access(path, F_OK) != 0 && errno == ENOENT ? CG_GONE : CG_UNKNOWN;
    return used > 0 ? CG_USED_EMPTY : used == 0 ? CG_FRESH_EMPTY : CG_UNKNOWN;
}

const char *ek_rel(const ek_kern *kk, const char *abs) { return abs + strlen(kk->cg2); }

void ek_reg_free(ek_reg *r)
{
    for (int i = 0; i < r->n_ws; i++)
        free(r->ws[i]);
    memset(r, 0, sizeof(*r));
}

int ek_reg_save(const char *cg, const ek_reg *r)
{
    regrec rr = {.known = r->known, .uid = r->uid, .root = r->root, .n_ws = r->n_ws};
    for (int i = 0; i < r->n_ws; i++)
        rr.ws[i] = r->ws[i];
    static uint8_t v[REGREC_MAX_WS * (REGREC_PATH_MAX + 2) + 16];
    int len = regrec_encode(&rr, v, sizeof(v));
    if (len < 0)
        return len;
    return setxattr(cg, REGREC_XATTR, v, (size_t)len, 0) == 0 ? 0 : -errno;
}

int ek_reg_load(const char *cg, ek_reg *r)
{
    memset(r, 0, sizeof(*r));
    static uint8_t v[REGREC_MAX_WS * (REGREC_PATH_MAX + 2) + 16];
    ssize_t n = getxattr(cg, REGREC_XATTR, v, sizeof(v));
    if (n < 0)
        return errno == ERANGE ? -EBADMSG : -errno;
    regrec rr;
    if (regrec_decode(v, (size_t)n, &rr) != 0)
        return -EBADMSG;
    r->known = rr.known;
    r->uid = rr.uid;
    r->root = rr.root;
    for (int i = 0; i < rr.n_ws; i++) {
        if (!(r->ws[i] = strndup(rr.ws[i], rr.ws_len[i]))) {
            ek_reg_free(r);
            return -ENOMEM;
        }
        r->n_ws++;
    }
    return 0;
}

void ek_notice_reg(ek *e, const ek_watch *w, bool add)
{
    struct psp_reg_change m;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, add ? PSP_REG_ADD : PSP_REG_DEL, 0);
    m.cgid = w->cgid;
    m.agent = w->agent;
    m.flags = w->flags;
    snprintf(m.cgroup_rel, sizeof(m.cgroup_rel), "%s", ek_rel(e->kern, w->path));
    ek_notice(e, &m, false);
}

int ek_watch_add(ek *e, const char *path, uint64_t cgid, uint32_t agent, uint32_t flags, ek_reg *reg)
{
    ek_kern *kk = e->kern;
    for (int i = 0; i < kk->n_w; i++)
        if (kk->w[i].cgid == cgid)
            return 0;
    if (kk->n_w >= EK_MAX_WATCH)
        return -ENOSPC;
    if (strlen(ek_rel(kk, path)) >= PSP_CGROUP_MAX)
        return -ENAMETOOLONG; /* the monitor could not name it */
    ek_watch *n = realloc(kk->w, (size_t)(kk->n_w + 1) * sizeof(*n));
    if (!n)
        return -ENOMEM;
    kk->w = n;
    ek_watch *w = &kk->w[kk->n_w];
    memset(w, 0, sizeof(*w));
    snprintf(w->path, sizeof(w->path), "%s", path);
    w->cgid = cgid;
    w->agent = agent;
    w->flags = flags;
    if (reg) { /* ownership of the workspace strings moves to the watch */
        w->reg = *reg;
        memset(reg, 0, sizeof(*reg));
    }
    char ev[PATH_MAX + 32];
    snprintf(ev, sizeof(ev), "%s/cgroup.events", path);
    /* no watch is not fatal: the timer re-checks every registration */
    w->wd = kk->ino_fd >= 0 ? inotify_add_watch(kk->ino_fd, ev, IN_MODIFY) : -1;
    enum cg_state cs = cg_state(path, cgid);
    w->populated_seen = cs == CG_POPULATED || cs == CG_USED_EMPTY;
    kk->n_w++;
    ek_notice_reg(e, w, true);
    return 0;
}

/* The agent's cgroup emptied or vanished: drop the registration; when it was the agent's last
 * cgroup, its taint goes too (taint is sticky for the agent's lifetime only). */
static void agent_gone(ek *e, int i, const char *why)
{
    ek_kern *kk = e->kern;
    ek_watch w = kk->w[i];
    kk->w[i] = kk->w[--kk->n_w];
    ek_reg_free(&w.reg);
    if (w.wd >= 0)
        inotify_rm_watch(kk->ino_fd, w.wd); /* EINVAL if already gone: fine */
    int r = mnc_kern_unregister_cgroup(kk->k, w.cgid);
    ek_notice_reg(e, &w, false);
    int left = mnc_kern_agent_cgroups(kk->k, w.agent);
    int c = 0;
    if (left == 0)
        c = mnc_kern_clear_agent(kk->k, w.agent);
    ek_audit(e, PSP_A_AGENT_EXIT, (r == 0 || r == -ENOENT) && c == 0 ? PSP_D_ALLOW : PSP_D_ERROR,
             ek_name(e, w.agent) ? w.agent : PSP_NONE, PSP_NONE, NULL, "ok", "cgroup %.3000s %s; %s",
             ek_rel(kk, w.path), why,
             left == 0 ? (c == 0 ? "last instance: taint cleared" : "last instance: taint clear FAILED")
                       : "other instances remain: taint kept");
    kk->n_exited++;
}

void ek_check_watches(ek *e)
{
    ek_kern *kk = e->kern;
    for (int i = kk->n_w - 1; i >= 0; i--) {
        enum cg_state cs = cg_state(kk->w[i].path, kk->w[i].cgid);
        if (cs == CG_POPULATED)
            kk->w[i].populated_seen = true;
        else if (cs == CG_GONE)
            agent_gone(e, i, "removed");
        else if (cs == CG_USED_EMPTY || (cs == CG_FRESH_EMPTY && kk->w[i].populated_seen))
            agent_gone(e, i, "empty (no process left)");
        /* CG_FRESH_EMPTY never seen populated: registered, its first process not in yet */
    }
}
