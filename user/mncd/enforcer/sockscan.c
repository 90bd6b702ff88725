// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockscan.c - the pre-taint connection sweep (contract in sockscan.h): freeze, scan, judge
 * each socket once, abort TCP, thaw. The parts: freeze.c, sockproc.c, sockjudge.c
 * (sockscan_int.h). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "freeze.h"
#include "mnc_util.h"
#include "sockscan_int.h"

/* ---- the sweep */

struct mncd_sweep_later {
    ctx c;
    long t0;
    mncd_frozen *fz;
    int nfz;
};

static void sweep_free(struct mncd_sweep_later *l)
{
    ctx *c = &l->c;
    for (int i = 0; i < c->npend; i++)
        close(c->pend[i].fd);
    free(c->pend);
    free(l->fz);
    if (c->sock_unix >= 0)
        close(c->sock_unix);
    if (c->sock_inet >= 0)
        close(c->sock_inet);
    mncd_diag_free(&c->g);
    mncd_hostscan_free(&c->hs);
    free(c->interest.v);
    free(c->sc.pids.v);
    free(c->sc.s);
    free(c->sc.inos.v);
    free(c->sc.mine.v);
    free(l);
}

/* The judgments that need the agent frozen: every socket it holds, and what is queued on them. */
static void sweep_frozen(ctx *c, const mncd_sweep_cg *cgs, int ncg)
{
    mncd_sweep_stats *st = c->st;
    if (mncd_scan_cgroups(&c->sc, cgs, ncg, c->err, c->errlen) != 0 || mncd_diag_load(&c->g, c->err, c->errlen) != 0) {
        c->failed = true;
        return;
    }
    st->pids = c->sc.npids;
    /* one decision per socket, however many fds and processes share it */
    if (c->sc.n)
        qsort(c->sc.s, (size_t)c->sc.n, sizeof(*c->sc.s), mncd_sfd_cmp);
    /* what a host pass would look for: outside holders of the agent's sockets and their peers */
    for (int i = 0; i < c->sc.n && !c->failed; i++) {
        uent *e = mncd_diag_unix_find(&c->g, c->sc.s[i].ino);
        if (mncd_u32set_add(&c->interest, c->sc.s[i].ino) != 0 ||
            (e && e->peer && mncd_u32set_add(&c->interest, e->peer) != 0))
            c->failed = true;
    }
    /* the agent's data still queued at a peer outside it (or sent from an unconnected datagram
     * socket) may carry the agent's own fds: its internal pairs then count as external */
    for (int i = 0; i < c->sc.n && !c->failed && !c->out_inflight; i++) {
        uent *e = mncd_diag_unix_find(&c->g, c->sc.s[i].ino);
        if (!e || e->state == UNIX_LISTEN || !e->wqlen ||
            (e->peer && (mncd_u32set_has(&c->sc.mine, e->peer) || mncd_u32set_has(&c->sc.inos, e->peer))))
            continue;
        c->out_inflight = true;
        snprintf(c->out_what, sizeof(c->out_what), "socket %" PRIu32 " of pid %d: %" PRIu32 " bytes unread by its peer",
                 e->ino, (int)c->sc.s[i].pid, e->wqlen);
    }
    for (int i = 0; i < c->sc.n && !c->failed; i++) {
        sfd *s = &c->sc.s[i];
        if (i && s->ino == c->sc.s[i - 1].ino)
            continue;
        st->sockets++;
        int fd = mncd_grab(s->pid, s->fd, s->ino);
        if (fd == -EBADF || fd == -ESTALE || fd == -ESRCH)
            continue; /* closed or exited meanwhile */
        if (fd < 0) {
            mncd_sweep_act a = {
                .pid = s->pid, .fd = s->fd, .ino = s->ino, .kind = "socket", .action = "inspect", .err = -fd};
            snprintf(a.peer, sizeof(a.peer), "?");
            mncd_judge_report(c, &a);
            break;
        }
        uent *e = mncd_diag_unix_find(&c->g, s->ino);
        if (e)
            mncd_judge_unix(c, s, e, fd);
        else
            mncd_judge_other(c, s, fd); /* IP (judge_inet), netlink, other families */
        close(fd);
    }
    if (c->failed && !c->err[0])
        mnc_errf(c->err, c->errlen, 0, "out of memory");
    if (!c->failed && !c->lsm)
        mncd_judge_tcp(c, cgs, ncg); /* lsm: socket_sendmsg judges each send, ingress each reply */
}

static int sweep_done(struct mncd_sweep_later *l)
{
    ctx *c = &l->c;
    if (!c->failed)
        mncd_judge_pairs(c);
    if (c->failed && !c->err[0])
        mnc_errf(c->err, c->errlen, 0, "out of memory");
    c->st->total_us = mnc_mono_us() - l->t0;
    return c->failed ? -1 : 0;
}

int mncd_sweep(mnc_kern *k, uint32_t agent, const struct mnc_taint *t, const mncd_sweep_cg *cgs, int ncg, bool lsm,
               mncd_sweep_fn fn, void *fctx, mncd_sweep_stats *st, char *err, size_t errlen, mncd_sweep_later **later)
{
    static mncd_sweep_stats dummy;
    static char dummy_err[1];
    if (later)
        *later = NULL;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof(*st));
    if (!errlen) {
        err = dummy_err;
        errlen = 1;
    }
    err[0] = 0;
    if (ncg <= 0)
        return 0;
    struct mncd_sweep_later *l = calloc(1, sizeof(*l));
    if (!l || !(l->fz = calloc((size_t)ncg, sizeof(*l->fz)))) {
        free(l);
        mnc_errf(err, errlen, 0, "out of memory");
        return -1;
    }
    l->t0 = mnc_mono_us();
    ctx *c = &l->c;
    *c = (ctx){.k = k,
               .agent = agent,
               .t = t,
               .cgs = cgs,
               .ncg = ncg,
               .lsm = lsm,
               .sock_unix = -1,
               .sock_inet = -1,
               .fn = fn,
               .fctx = fctx,
               .st = st,
               .err = err,
               .errlen = errlen,
               .defer = later != NULL};
    c->g.nl = -1;
    char mp[PATH_MAX];
    snprintf(mp, sizeof(mp), "%s/sock_unix", mnc_kern_root(k));
    c->sock_unix = bpf_obj_get(mp);
    snprintf(mp, sizeof(mp), "%s/sock_inet", mnc_kern_root(k));
    c->sock_inet = bpf_obj_get(mp);
    if (c->sock_unix < 0 || c->sock_inet < 0) {
        mnc_errf(err, errlen, 0, "open the pinned sink maps: %s", strerror(errno));
        c->failed = true;
    } else if (mncd_freeze(cgs, ncg, l->fz, &l->nfz, err, errlen) != 0) {
        c->failed = true;
    } else {
        st->freeze_us = mnc_mono_us() - l->t0;
        sweep_frozen(c, cgs, ncg);
    }
    mncd_thaw(l->fz, l->nfz); /* only what this call froze: a caller's freeze stays */
    l->nfz = 0;
    if (c->failed || !later) {
        int rc = sweep_done(l);
        sweep_free(l);
        return rc;
    }
    *later = l;
    return 0;
}

int mncd_sweep_finish(mncd_sweep_later *l) { return l ? sweep_done(l) : 0; }

void mncd_sweep_later_free(mncd_sweep_later *l)
{
    if (l)
        sweep_free(l);
}
