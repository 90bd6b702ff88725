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

int mncd_sweep(mnc_kern *k, uint32_t agent, const struct mnc_taint *t, const mncd_sweep_cg *cgs, int ncg, bool lsm,
               mncd_sweep_fn fn, void *fctx, mncd_sweep_stats *st, char *err, size_t errlen)
{
    mncd_sweep_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof(*st));
    if (errlen)
        err[0] = 0;
    if (ncg <= 0)
        return 0;
    long t0 = mnc_mono_us();
    ctx c = {.k = k,
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
             .errlen = errlen};
    c.g.nl = -1;
    static char dummy_err[1];
    if (!errlen) {
        c.err = dummy_err;
        c.errlen = 1;
    }
    mncd_frozen *fz = calloc((size_t)ncg, sizeof(*fz));
    int nfz = 0, rc = -1;
    if (!fz) {
        mnc_errf(err, errlen, 0, "out of memory");
        return -1;
    }
    char mp[PATH_MAX];
    snprintf(mp, sizeof(mp), "%s/sock_unix", mnc_kern_root(k));
    c.sock_unix = bpf_obj_get(mp);
    snprintf(mp, sizeof(mp), "%s/sock_inet", mnc_kern_root(k));
    c.sock_inet = bpf_obj_get(mp);
    if (c.sock_unix < 0 || c.sock_inet < 0) {
        mnc_errf(err, errlen, 0, "open the pinned sink maps: %s", strerror(errno));
        goto out;
    }
    if (mncd_freeze(cgs, ncg, fz, &nfz, err, errlen) != 0)
        goto out;
    st->freeze_us = mnc_mono_us() - t0;
    if (mncd_scan_cgroups(&c.sc, cgs, ncg, err, errlen) != 0 || mncd_diag_load(&c.g, err, errlen) != 0)
        goto out;
    st->pids = c.sc.npids;
    u32set inet = {0}, interest = {0};
    for (int i = 0; i < c.g.nt && !c.failed; i++)
        if (c.g.t[i].ino && mncd_u32set_add(&inet, c.g.t[i].ino) != 0)
            c.failed = true;
    /* one decision per socket, however many fds and processes share it */
    if (c.sc.n)
        qsort(c.sc.s, (size_t)c.sc.n, sizeof(*c.sc.s), mncd_sfd_cmp);
    /* the host pass looks for outside holders of the agent's sockets and of their peers */
    for (int i = 0; i < c.sc.n && !c.failed; i++) {
        uent *e = mncd_diag_unix_find(&c.g, c.sc.s[i].ino);
        if (mncd_u32set_add(&interest, c.sc.s[i].ino) != 0 ||
            (e && e->peer && mncd_u32set_add(&interest, e->peer) != 0))
            c.failed = true;
    }
    mncd_u32set_has(&interest, 0); /* sorts */
    if (!c.failed && mncd_hostscan_run(&c.hs, c.sc.pids.v, c.sc.pids.n, interest.v, interest.n, c.err, c.errlen) != 0) {
        free(inet.v);
        free(interest.v);
        goto out;
    }
    st->host_pids = c.hs.pids;
    st->host_fds = c.hs.fds;
    st->hostscan_us = c.hs.us;
    /* the agent's data still queued at a peer outside it (or sent from an unconnected datagram
     * socket) may carry the agent's own fds: its internal pairs then count as external */
    for (int i = 0; i < c.sc.n && !c.failed && !c.out_inflight; i++) {
        uent *e = mncd_diag_unix_find(&c.g, c.sc.s[i].ino);
        if (!e || e->state == UNIX_LISTEN || !e->wqlen ||
            (e->peer && (mncd_u32set_has(&c.sc.mine, e->peer) || mncd_u32set_has(&c.sc.inos, e->peer))))
            continue;
        c.out_inflight = true;
        snprintf(c.out_what, sizeof(c.out_what), "socket %" PRIu32 " of pid %d: %" PRIu32 " bytes unread by its peer",
                 e->ino, (int)c.sc.s[i].pid, e->wqlen);
    }
    for (int i = 0; i < c.sc.n && !c.failed; i++) {
        sfd *s = &c.sc.s[i];
        if (i && s->ino == c.sc.s[i - 1].ino)
            continue;
        st->sockets++;
        int fd = mncd_grab(s->pid, s->fd, s->ino);
        if (fd == -EBADF || fd == -ESTALE || fd == -ESRCH)
            continue; /* closed or exited meanwhile */
        if (fd < 0) {
            mncd_sweep_act a = {
                .pid = s->pid, .fd = s->fd, .ino = s->ino, .kind = "socket", .action = "inspect", .err = -fd};
            snprintf(a.peer, sizeof(a.peer), "?");
            mncd_judge_report(&c, &a);
            break;
        }
        uent *e = mncd_diag_unix_find(&c.g, s->ino);
        if (e)
            mncd_judge_unix(&c, s, e, fd);
        else if (mncd_u32set_has(&inet, s->ino))
            mncd_judge_inet(&c, s, fd, s->ino, "created outside the agent", false);
        else
            mncd_judge_other(&c, s, fd);
        close(fd);
    }
    free(inet.v);
    free(interest.v);
    if (c.failed && !c.err[0])
        mnc_errf(err, errlen, 0, "out of memory");
    if (!c.failed && !lsm)
        mncd_judge_tcp(&c, cgs, ncg); /* lsm: socket_sendmsg judges each send, ingress each reply */
    rc = c.failed ? -1 : 0;
out:
    mncd_thaw(fz, nfz);
    free(fz);
    if (c.sock_unix >= 0)
        close(c.sock_unix);
    if (c.sock_inet >= 0)
        close(c.sock_inet);
    mncd_diag_free(&c.g);
    mncd_hostscan_free(&c.hs);
    free(c.sc.pids.v);
    free(c.sc.s);
    free(c.sc.inos.v);
    free(c.sc.mine.v);
    st->total_us = mnc_mono_us() - t0;
    return rc;
}
