// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_admin.c - the admin socket's verbs (ek_kern.h): taint.reset and workspace.clear, the two
 * operations that loosen what the kernel enforces. They arrive only on the enforcer's own admin
 * socket, from a peer the kernel vouches for (enforcer.c, admin_peer), never from the monitor:
 * a compromised monitor cannot untaint an agent or clear a label (docs/privsep.md). Each is
 * audited (through the monitor's log) and answered on the admin connection. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "ek_kern.h"

static int agent_by_name(const ek *e, const char *name)
{
    for (uint32_t i = 0; i < e->cfg.n_principals; i++)
        if (e->pr[i].cls == MNC_SINK_AGENT && strcmp(e->pr[i].name, name) == 0)
            return (int)i;
    return -1;
}

void ek_kern_adm_reset(ek *e, int fd, const struct psp_adm_reset *m)
{
    ek_kern *kk = e->kern;
    if (!kk) {
        ek_audit(e, PSP_A_TAINT_RESET, PSP_D_ERROR, PSP_NONE, PSP_NONE, NULL, "invalid", "kernel layer off");
        ek_refuse_to(fd, m->h.seq, PSP_NO_OFF, 0, "taint.reset: mncd runs without the kernel layer (--kernel off)");
        return;
    }
    int a = agent_by_name(e, m->agent);
    if (a < 0) {
        ek_audit(e, PSP_A_TAINT_RESET, PSP_D_DENY, PSP_NONE, PSP_NONE, NULL, "unknown_agent", "%s", m->agent);
        ek_refuse_to(fd, m->h.seq, PSP_NO_UNKNOWN, 0, "\"%s\" is not an agent of the policy", m->agent);
        return;
    }
    uint32_t agent = (uint32_t)a;
    struct mnc_taint before;
    bool had = mnc_kern_taint_get(kk->k, agent, &before) == 0;
    /* Delete, then (if instances still run) a fresh untainted entry: a running agent keeps
     * working, it is simply no longer tainted. */
    struct mnc_taint clean;
    memset(&clean, 0, sizeof(clean));
    clean.generation = had ? before.generation + 1 : 1;
    int live = mnc_kern_agent_cgroups(kk->k, agent);
    int r = live > 0 ? mnc_kern_taint_set(kk->k, agent, &clean) : mnc_kern_clear_agent(kk->k, agent);
    ek_audit(e, PSP_A_TAINT_RESET, r ? PSP_D_ERROR : PSP_D_ALLOW, PSP_NONE, agent, NULL, r ? "internal" : "ok",
             "%s; %d live cgroup(s)%s", had ? (before.tainted ? "was tainted" : "was untainted") : "no entry",
             live < 0 ? 0 : live, r ? ": map update FAILED" : "");
    if (r) {
        ek_refuse_to(fd, m->h.seq, PSP_NO_INTERNAL, -r, "taint.reset %s: %s", m->agent, strerror(-r));
        return;
    }
    struct psp_reset note; /* and what the monitor's disclose judges it by */
    memset(&note, 0, sizeof(note));
    psp_hdr_init(&note.h, PSP_RESET, 0);
    note.agent = agent;
    ek_notice(e, &note, false);
    struct psp_adm_reset_r out;
    memset(&out, 0, sizeof(out));
    psp_hdr_init(&out.h, PSP_ADM_RESET_R, m->h.seq);
    out.agent = agent;
    out.had_entry = had;
    out.was_tainted = had && before.tainted;
    out.live_cgroups = live < 0 ? 0 : live;
    psp_send(fd, &out, NULL, 0, false);
}

/* workspace.clear DIR: the admin removes DIR's label. Refused while a live instance's workspace
 * overlaps DIR (its agent may hold the taint right now, and the next hold would write it back
 * anyway). Audited with the old value. */
void ek_kern_adm_ws_clear(ek *e, int fd, const struct psp_adm_ws_clear *m)
{
    ek_kern *kk = e->kern;
    if (!kk) {
        ek_audit(e, PSP_A_WORKSPACE_CLEAR, PSP_D_ERROR, PSP_NONE, PSP_NONE, NULL, "invalid", "kernel layer off");
        ek_refuse_to(fd, m->h.seq, PSP_NO_OFF, 0, "workspace.clear: mncd runs without the kernel layer (--kernel off)");
        return;
    }
    char real[PATH_MAX];
    struct stat st;
    const char *bad = !realpath(m->path, real) || stat(real, &st) != 0 ? strerror(errno)
                      : !S_ISDIR(st.st_mode)                           ? "not a directory"
                                                                       : NULL;
    if (bad) {
        ek_audit(e, PSP_A_WORKSPACE_CLEAR, PSP_D_DENY, PSP_NONE, PSP_NONE, NULL, "invalid", "%.3000s: %s", m->path,
                 bad);
        ek_refuse_to(fd, m->h.seq, PSP_NO_INVALID, 0, "workspace.clear refused: %.3000s: %s", m->path, bad);
        return;
    }
    for (int i = 0; i < kk->n_w; i++)
        for (int j = 0; j < kk->w[i].reg.n_ws; j++)
            if (wsrec_overlap(real, kk->w[i].reg.ws[j])) {
                char det[PATH_MAX + 2600];
                snprintf(det, sizeof(det),
                         "%.1500s: in use by a live instance of agent %s (cgroup %.400s, workspace %.1500s)", real,
                         ek_name(e, kk->w[i].agent), ek_rel(kk, kk->w[i].path), kk->w[i].reg.ws[j]);
                ek_audit(e, PSP_A_WORKSPACE_CLEAR, PSP_D_DENY, PSP_NONE, kk->w[i].agent, NULL, "invalid", "%s", det);
                ek_refuse_to(fd, m->h.seq, PSP_NO_INVALID, 0, "workspace.clear refused: %s", det);
                return;
            }
    static struct psp_adm_ws_clear_r out;
    memset(&out, 0, sizeof(out));
    psp_hdr_init(&out.h, PSP_ADM_WS_CLEAR_R, m->h.seq);
    snprintf(out.path, sizeof(out.path), "%s", real);
    ssize_t n = getxattr(real, WSREC_XATTR, out.previous, sizeof(out.previous));
    int r = n >= 0 || errno == ERANGE ? 0 : errno == EOPNOTSUPP ? -ENOTSUP : -errno;
    char desc[1200] = "a value of more than 4096 bytes, not one of ours";
    if (r == 0 && n >= 0) {
        out.previous_len = (uint32_t)n;
        wsrec t;
        wsrec_names nm = ek_names(e);
        if (wsrec_decode(out.previous, (size_t)n, &nm, &t) == 0)
            wsrec_describe(&t, &nm, desc, sizeof(desc));
        else
            snprintf(desc, sizeof(desc), "an invalid record of %zd bytes", n);
    }
    if (r == 0)
        r = removexattr(real, WSREC_XATTR) == 0 ? 0 : -errno;
    if (r == -ENODATA || r == -ENOTSUP) {
        out.previous_len = 0;
        memset(out.previous, 0, sizeof(out.previous));
        ek_audit(e, PSP_A_WORKSPACE_CLEAR, PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL, "ok", "%.3000s: no taint record%s",
                 real, r == -ENOTSUP ? " (no xattr support)" : "");
    } else if (r) {
        ek_audit(e, PSP_A_WORKSPACE_CLEAR, PSP_D_ERROR, PSP_NONE, PSP_NONE, NULL, "internal",
                 "%.3000s: removing the taint record failed: %s", real, strerror(-r));
        ek_refuse_to(fd, m->h.seq, PSP_NO_INTERNAL, -r,
                     "workspace.clear: %.3000s: removing the taint record failed: %s", real, strerror(-r));
        return;
    } else {
        ek_audit(e, PSP_A_WORKSPACE_CLEAR, PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL, "ok",
                 "%.3000s: taint record removed (was %s)", real, desc);
        kk->n_ws_cleared++;
        out.was_tainted = 1;
    }
    psp_send(fd, &out, NULL, 0, false);
}
