// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_register.c - agent.register in the enforcer (REG_BEGIN, REG_PATH..., REG_COMMIT; ek_kern.h).
 *
 * The monitor has checked the request's form (a known agent, stdio, --as-root with uid 0,
 * absolute paths, counts); everything that needs the kernel or privilege is checked here: the
 * cgroup is a child of the mnc tree, a cgroup v2 directory in which no process is or ever was,
 * and not registered to another agent (a registered cgroup is never re-labelled); workspaces and
 * tainted dirs are resolved here; no workspace overlaps one of a live instance of another agent;
 * the labels of each workspace, its ancestors and the tainted dirs are read here and merged into
 * the agent's taint before the registration takes effect (labels only tighten). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ek_kern.h"
#include "mnc_util.h"

/* A directory whose label the new registration inherits. */
typedef struct ws_src {
    char *dir;
    wsrec t;
} ws_src;

typedef struct ws_inh {
    wsrec t; /* the merge of every source */
    ws_src *src;
    int n_src;
} ws_inh;

static void ws_inh_free(ws_inh *h)
{
    for (int i = 0; i < h->n_src; i++)
        free(h->src[i].dir);
    free(h->src);
    memset(h, 0, sizeof(*h));
}

static void pending_free(ek_pending_reg *p)
{
    for (int i = 0; i < p->n_ws; i++)
        free(p->ws[i]);
    for (int i = 0; i < p->n_tainted; i++)
        free(p->tainted[i]);
    free(p->tainted);
    memset(p, 0, sizeof(*p));
}

/* Reads dir's record; a tainted one is merged into h. own: dir is a workspace itself (a
 * filesystem without trusted xattrs is then refused: the taint could not be carried). shown:
 * dir as messages name it (mnc_ws_shown). NULL, or why the registration is refused. */
static const char *ws_take(ek *e, ws_inh *h, const char *dir, const char *shown, bool own, char *why, size_t n)
{
    for (int i = 0; i < h->n_src; i++)
        if (strcmp(h->src[i].dir, dir) == 0)
            return NULL; /* an ancestor of two workspaces */
    wsrec t;
    int r = ek_ws_read(e, dir, &t);
    if (r == -ENOTSUP && own) {
        snprintf(why, n,
                 "workspace %.400s: its filesystem keeps no trusted.* extended attributes, so mncd cannot record a "
                 "taint on it (docs/kernel.md, \"Workspace taint\"); use a workspace on ext4, xfs, btrfs or tmpfs",
                 shown);
        return why;
    }
    if (r == -ENODATA || r == -ENOTSUP || (r == 0 && !t.tainted))
        return NULL;
    if (r == -EBADMSG) {
        snprintf(why, n,
                 "the taint record (" WSREC_XATTR ") of %.400s is not valid: inspect it with `mncctl workspace show` "
                 "and clear it with `mncctl workspace clear` (admin)",
                 shown);
        return why;
    }
    if (r) {
        snprintf(why, n, "cannot read the taint record of %.400s: %s", shown, strerror(-r));
        return why;
    }
    ws_src *ns = realloc(h->src, (size_t)(h->n_src + 1) * sizeof(*ns));
    char *dup = ns ? strdup(dir) : NULL;
    if (ns)
        h->src = ns;
    if (!dup) {
        snprintf(why, n, "out of memory");
        return why;
    }
    h->src[h->n_src].dir = dup;
    h->src[h->n_src].t = t;
    h->n_src++;
    wsrec_merge(&h->t, &t);
    return NULL;
}

/* The workspace checks (see the top) into h. NULL, or why the registration is refused. */
static const char *ws_inherit(ek *e, uint32_t agent, const ek_reg *reg, ek_pending_reg *p, ws_inh *h, char *why,
                              size_t n)
{
    ek_kern *kk = e->kern;
    memset(h, 0, sizeof(*h));
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent == agent)
            continue;
        for (int a = 0; a < kk->w[i].reg.n_ws; a++)
            for (int b = 0; b < reg->n_ws; b++)
                if (wsrec_overlap(reg->ws[b], kk->w[i].reg.ws[a])) {
                    snprintf(why, n,
                             "workspace %.400s overlaps workspace %.400s of a live instance of agent %s (cgroup "
                             "%.200s): two agents sharing a workspace would share data without sharing taint",
                             reg->ws[b], kk->w[i].reg.ws[a], ek_name(e, kk->w[i].agent), ek_rel(kk, kk->w[i].path));
                    return why;
                }
    }
    for (int b = 0; b < reg->n_ws; b++) {
        if (ws_take(e, h, reg->ws[b], reg->ws[b], true, why, n))
            return why;
        char anc[PATH_MAX];
        snprintf(anc, sizeof(anc), "%s", reg->ws[b]);
        for (char *sl = strrchr(anc, '/'); sl; sl = strrchr(anc, '/')) {
            if (sl == anc) {
                if (anc[1] == 0)
                    break;
                anc[1] = 0; /* "/" itself */
            } else {
                *sl = 0;
            }
            if (ws_take(e, h, anc, anc, false, why, n))
                return why;
        }
    }
    for (int i = 0; i < p->n_tainted; i++) {
        char real[PATH_MAX], sh[PATH_MAX + 64];
        const char *d = p->tainted[i];
        /* the entries lie inside workspaces, named by the agent: shown by inode only, since this
         * refusal reaches the launcher's stderr (attack ws_register_race_name) */
        if (!realpath(d, real)) {
            int er = errno;
            snprintf(why, n, "tainted_dirs entry %.400s: %s (it changed during the registration: retry)",
                     mnc_ws_shown(d, reg->ws, reg->n_ws, sh, sizeof(sh)), strerror(er));
            return why;
        }
        int b = 0;
        while (b < reg->n_ws && !wsrec_within(real, reg->ws[b]))
            b++;
        if (b == reg->n_ws) {
            snprintf(why, n, "tainted_dirs entry %.400s is not inside a workspace",
                     mnc_ws_shown(d, reg->ws, reg->n_ws, sh, sizeof(sh)));
            return why;
        }
        if (ws_take(e, h, real, mnc_ws_shown(real, reg->ws, reg->n_ws, sh, sizeof(sh)), false, why, n))
            return why;
    }
    return NULL;
}

/* Before the registration takes effect: the inherited taint into the agent's taint entry, then
 * the agent's (possibly already tainted) taint onto each of the new instance's workspaces. 0, or
 * -errno with why. */
static int ws_apply(ek *e, uint32_t agent, const ek_reg *reg, const ws_inh *h, char *why, size_t n)
{
    ek_kern *kk = e->kern;
    int r = 0;
    if (h->t.tainted && (r = mnc_kern_taint_hold(kk->k, agent, h->t.sinks, h->t.may_log, h->t.may_memory,
                                                 h->t.may_forward, h->t.may_external, NULL)) != 0) {
        snprintf(why, n, "taint map update with the inherited workspace taint failed: %s", strerror(-r));
        return r;
    }
    if (reg->n_ws == 0)
        return 0;
    struct mnc_taint kt;
    if ((r = mnc_kern_taint_get(kk->k, agent, &kt)) == -ENOENT)
        return 0; /* no entry yet: untainted (the registration creates it) */
    if (r) {
        snprintf(why, n, "taint map read failed: %s", strerror(-r));
        return r;
    }
    if (!kt.tainted)
        return 0;
    wsrec now;
    ek_wt_from_kernel(e, agent, &kt, &now);
    for (int i = 0; i < h->t.n_obj; i++)
        wsrec_add_object(&now, h->t.obj[i]);
    for (int b = 0; b < reg->n_ws; b++) {
        bool first, corrupt; /* an invalid record was refused by ws_inherit moments ago */
        if ((r = ek_ws_tighten_one(e, reg->ws[b], &now, &first, &corrupt)) != 0) {
            snprintf(why, n, "the agent's taint could not be recorded on workspace %.400s: %s", reg->ws[b],
                     strerror(-r));
            return r;
        }
    }
    return 0;
}

void ek_kern_reg_begin(ek *e, const struct psp_reg_begin *m)
{
    if (!e->kern)
        return; /* the commit says "off" */
    pending_free(&e->kern->reg);
    e->kern->reg.begin = *m;
}

void ek_kern_reg_path(ek *e, const struct psp_reg_path *m)
{
    if (!e->kern)
        return;
    ek_pending_reg *p = &e->kern->reg;
    char *d = strdup(m->path);
    if (m->kind == PSP_REG_WORKSPACE) { /* psp_check bounds the counts */
        p->ws[p->n_ws++] = d;
        return;
    }
    char **nt = realloc(p->tainted, (size_t)(p->n_tainted + 1) * sizeof(*nt));
    if (nt) {
        p->tainted = nt;
        p->tainted[p->n_tainted++] = d;
    } else {
        free(d);
    }
}

/* Refuses the registration: audited, REFUSED. */
__attribute__((format(printf, 5, 6))) static void refuse(ek *e, uint32_t seq, uint32_t agent, unsigned code,
                                                         const char *fmt, ...)
{
    char det[PATH_MAX + 3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(det, sizeof(det), fmt, ap);
    va_end(ap);
    bool internal = code == PSP_NO_INTERNAL;
    ek_audit(e, PSP_A_AGENT_REGISTER, internal ? PSP_D_ERROR : PSP_D_DENY, PSP_NONE, agent, NULL,
             internal ? "internal" : "invalid", "%s", det);
    ek_refuse(e, seq, code, 0, "%s", det);
}

/* The registration's facts from the pending request: workspaces resolved. NULL, or why. */
static const char *facts(ek_pending_reg *p, ek_reg *r, char *why, size_t n)
{
    memset(r, 0, sizeof(*r));
    r->known = p->begin.flags & PSP_RF_UID_KNOWN;
    r->uid = p->begin.uid;
    r->root = p->begin.flags & PSP_RF_ROOT;
    for (int i = 0; i < p->n_ws; i++) {
        char real[PATH_MAX];
        if (!p->ws[i] || !realpath(p->ws[i], real)) {
            snprintf(why, n, "workspace %.400s: %s", p->ws[i] ? p->ws[i] : "?",
                     p->ws[i] ? strerror(errno) : "no memory");
        } else if (!(r->ws[r->n_ws] = strdup(real))) {
            snprintf(why, n, "out of memory");
        } else {
            r->n_ws++;
            continue;
        }
        ek_reg_free(r);
        return why;
    }
    return NULL;
}

void ek_kern_reg_commit(ek *e, const struct psp_reg_commit *m)
{
    ek_kern *kk = e->kern;
    uint32_t seq = m->h.seq;
    if (!kk) {
        ek_refuse(e, seq, PSP_NO_OFF, 0, "agent.register: mncd runs without the kernel layer (--kernel off)");
        return;
    }
    ek_pending_reg *p = &kk->reg;
    uint32_t agent = p->begin.agent;
    const char *cg = p->begin.cgroup;
    char real[PATH_MAX], whybuf[1500];
    size_t tl = strlen(kk->tree);
    const char *why = NULL;
    if (!realpath(cg, real))
        why = strerror(errno);
    else if (strncmp(real, kk->tree, tl) != 0 || real[tl] != '/' || strchr(real + tl + 1, '/'))
        why = "not a child cgroup of the mnc tree";
    int pop = why ? -1 : ek_read_populated(real);
    /* a process that ran here (usage > 0) would make the empty cgroup look exited at once */
    long long used = why ? -1 : ek_read_usage_usec(real);
    if (!why && (pop < 0 || used < 0))
        why = "not a cgroup v2 directory";
    else if (!why && (pop == 1 || used > 0))
        why = pop == 1 ? "the cgroup already has processes: register it before anything runs in it"
                       : "processes have already run in the cgroup: register a fresh one before anything runs in it";
    uint64_t cgid = 0;
    int r = why ? 0 : mnc_cgroup_id(real, &cgid);
    if (!why && r)
        why = strerror(-r);
    struct mnc_agent prev;
    if (!why && mnc_kern_lookup_cgroup(kk->k, cgid, &prev) == 0 && prev.agent_id != agent)
        why = "the cgroup is registered to another agent";
    ek_reg reg;
    memset(&reg, 0, sizeof(reg));
    if (!why)
        why = facts(p, &reg, whybuf, sizeof(whybuf));
    ws_inh inh;
    memset(&inh, 0, sizeof(inh));
    if (!why && (why = ws_inherit(e, agent, &reg, p, &inh, whybuf, sizeof(whybuf))) != NULL)
        ek_reg_free(&reg);
    if (why) {
        ws_inh_free(&inh);
        refuse(e, seq, agent, PSP_NO_INVALID, "cgroup %.3000s: %s", cg, why);
        pending_free(p);
        return;
    }
    /* the workspaces' taint first: the registration never takes effect without it */
    if ((r = ws_apply(e, agent, &reg, &inh, whybuf, sizeof(whybuf))) != 0) {
        ek_reg_free(&reg);
        ws_inh_free(&inh);
        refuse(e, seq, agent, PSP_NO_INTERNAL, "cgroup %.3000s: registration refused: %s; fail closed",
               ek_rel(kk, real), whybuf);
        pending_free(p);
        return;
    }
    bool stdio_pass = p->begin.flags & PSP_RF_STDIO_PASS;
    uint32_t flags =
        MNC_AGENT_F_LAUNCHED | (reg.root ? MNC_AGENT_F_ROOT : 0u) | (stdio_pass ? MNC_AGENT_F_STDIO_PASS : 0u);
    /* the facts onto the cgroup first (a restarted enforcer adopts them), then the taint entry
     * (untainted if new, kept if the agent is tainted already), then the registration */
    if ((r = ek_reg_save(real, &reg)) != 0 || (r = mnc_kern_taint_ensure(kk->k, agent)) != 0 ||
        (r = mnc_kern_register_cgroup(kk->k, cgid, agent, flags)) != 0 ||
        (r = ek_watch_add(e, real, cgid, agent, flags, &reg)) != 0) {
        ek_reg_free(&reg);
        ws_inh_free(&inh);
        mnc_kern_unregister_cgroup(kk->k, cgid);
        refuse(e, seq, agent, PSP_NO_INTERNAL, "cgroup %.3000s: registration failed: %s", ek_rel(kk, real),
               strerror(-r));
        pending_free(p);
        return;
    }
    const ek_reg *rg = NULL;
    for (int i = 0; i < kk->n_w; i++)
        if (kk->w[i].cgid == cgid)
            rg = &kk->w[i].reg;
    char det[PATH_MAX + 3000];
    int dl = snprintf(det, sizeof(det), "cgroup %.3000s (id %" PRIu64 ")", ek_rel(kk, real), cgid);
    if (rg && rg->known && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "; uid %" PRIu32 "%s", rg->uid,
                       rg->root ? " (--as-root: reduced capabilities, warned)" : "");
    for (int i = 0; rg && i < rg->n_ws && dl > 0 && dl < (int)sizeof(det); i++)
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "%s%.600s", i ? ", " : "; workspace ", rg->ws[i]);
    bool need_netns = e->pr[agent].flags & PSP_PF_NETNS;
    if (need_netns && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl,
                       "; confinement netns (a network namespace of its own, checked at each delivery)");
    if (stdio_pass && dl > 0 && dl < (int)sizeof(det))
        snprintf(det + dl, sizeof(det) - (size_t)dl,
                 "; stdio passthrough (--stdio passthrough: the agent's stdout/stderr are not governed by its taint)");
    ek_audit(e, PSP_A_AGENT_REGISTER, PSP_D_ALLOW, PSP_NONE, agent, NULL, "ok", "%s", det);
    wsrec_names nm = ek_names(e);
    for (int i = 0; i < inh.n_src; i++) {
        char desc[1000];
        wsrec_describe(&inh.src[i].t, &nm, desc, sizeof(desc));
        ek_audit(e, PSP_A_AGENT_REGISTER, PSP_D_ALLOW, PSP_NONE, agent, NULL, "ok",
                 "cgroup %.400s inherits workspace taint from %.3000s (%s)", ek_rel(kk, real), inh.src[i].dir, desc);
    }
    kk->n_registered++;
    kk->n_ws_inherited += inh.n_src > 0;
    for (int i = 0; i < inh.n_src; i++) { /* part of the answer, before it */
        static struct psp_reg_source s;
        memset(&s, 0, sizeof(s));
        psp_hdr_init(&s.h, PSP_REG_SOURCE, 0);
        snprintf(s.dir, sizeof(s.dir), "%s", inh.src[i].dir);
        ek_notice(e, &s, false);
    }
    struct psp_registered out;
    memset(&out, 0, sizeof(out));
    psp_hdr_init(&out.h, PSP_REGISTERED, seq);
    out.cgid = cgid;
    out.agent = agent;
    out.flags = need_netns ? PSP_GF_NETNS : 0;
    out.n_sources = (uint32_t)inh.n_src;
    snprintf(out.cgroup_rel, sizeof(out.cgroup_rel), "%s", ek_rel(kk, real));
    ws_inh_free(&inh);
    pending_free(p);
    ek_reply(e, &out, NULL, 0);
}
