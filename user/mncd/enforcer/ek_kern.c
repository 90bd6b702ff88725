// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_kern.c - the enforcer's kernel layer (enforcer.h): start, stop, and the requests of the
 * SERVE phase. With the kernel layer off (--kernel off) every request that would touch the
 * kernel is answered REFUSED "off", as mncd answers its verbs without the layer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "enforcer.h"

int ek_kern_start(ek *e, struct psp_started *s, char *why, size_t n)
{
    if (e->cfg.kernel != PSP_KERN_OFF) {
        snprintf(why, n, "the kernel layer is not in the enforcer yet (start with --kernel off)");
        return -1;
    }
    fprintf(stderr,
            "mncd: kernel layer off (--kernel off): userspace monitor only, agents are NOT confined by the kernel\n");
    ek_audit(e, PSP_A_KERNEL_START, PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL, "ok", "mode off: no kernel enforcement");
    s->backend = 0;
    return 0;
}

void ek_kern_stop(ek *e) { (void)e; }

static void off(ek *e, uint32_t seq, const char *what)
{
    ek_refuse(e, seq, PSP_NO_OFF, 0, "%s: mncd runs without the kernel layer (--kernel off)", what);
}

void ek_kern_hold(ek *e, const struct psp_hold *m) { off(e, m->h.seq, "hold"); }

void ek_kern_reg_begin(ek *e, const struct psp_reg_begin *m) { (void)e, (void)m; }

void ek_kern_reg_path(ek *e, const struct psp_reg_path *m) { (void)e, (void)m; }

void ek_kern_reg_commit(ek *e, const struct psp_reg_commit *m) { off(e, m->h.seq, "agent.register"); }

void ek_kern_taint_get(ek *e, const struct psp_taint_get *m) { off(e, m->h.seq, "taint"); }

void ek_kern_status(ek *e, const struct psp_status *m)
{
    static struct psp_status_r r;
    memset(&r, 0, sizeof(r));
    psp_hdr_init(&r.h, PSP_STATUS_R, m->h.seq);
    r.kevents_lost = e->n_kevents_lost;
    ek_reply(e, &r, NULL, 0);
}

void ek_kern_adm_reset(ek *e, int fd, const struct psp_adm_reset *m)
{
    (void)e;
    ek_refuse_to(fd, m->h.seq, PSP_NO_OFF, 0, "taint.reset: mncd runs without the kernel layer (--kernel off)");
}

void ek_kern_adm_ws_clear(ek *e, int fd, const struct psp_adm_ws_clear *m)
{
    (void)e;
    ek_refuse_to(fd, m->h.seq, PSP_NO_OFF, 0, "workspace.clear: mncd runs without the kernel layer (--kernel off)");
}

int ek_kern_fds(ek *e, int fds[EK_KERN_MAX_FDS])
{
    (void)e, (void)fds;
    return 0;
}

void ek_kern_ready(ek *e, int fd) { (void)e, (void)fd; }

int ek_kern_cgroup_agent(ek *e, const char *cg)
{
    (void)e, (void)cg;
    return -2;
}

int ek_kern_audit_fd(ek *e)
{
    (void)e;
    return -1;
}

void ek_kern_audit_fd_done(ek *e) { (void)e; }
