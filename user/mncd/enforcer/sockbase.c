// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockbase.c - what the pre-taint sweep's judges share (sockscan_int.h): the report of each
 * action, the creator test by uid, and the host pass over the agent's sockets and their peers. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mnc_util.h"
#include "sockscan_int.h"

int mncd_judge_report(ctx *c, mncd_sweep_act *a)
{
    if (a->refuse && !a->err)
        a->err = EPERM;
    if (a->err) {
        c->failed = true;
        if (!c->err[0] && a->refuse)
            mnc_errf(c->err, c->errlen, 0, "%s %s (pid %d): %s", a->kind, a->peer, (int)a->pid,
                     a->why ? a->why : "refused");
        else if (!c->err[0]) /* the socket by kind and inode, never a name the agent chose */
            mnc_errf(c->err, c->errlen, 0, "%s socket %" PRIu32 " of pid %d fd %d: %s failed%s%s%s: %s", a->kind,
                     a->ino, (int)a->pid, a->fd, a->action, a->why ? " (" : "", a->why ? a->why : "", a->why ? ")" : "",
                     strerror(a->err));
    } else {
        c->st->acted++;
    }
    if (c->fn && c->fn(c->fctx, a) != 0) {
        c->failed = true;
        if (!c->err[0])
            mnc_errf(c->err, c->errlen, 0, "audit of a sweep action failed");
        return -1;
    }
    return 0;
}

/* 1: the socket inode's owner (its creator's fsuid) is the uid an instance of the agent runs
 * as; 0: it is not; -1: the uid cannot tell (an instance runs as root or with an unknown uid). */
int mncd_judge_own_by_uid(const ctx *c, uid_t uid)
{
    bool cannot = false;
    for (int i = 0; i < c->ncg; i++) {
        if (c->cgs[i].uid_known && !c->cgs[i].root && c->cgs[i].uid != 0) {
            if (uid == c->cgs[i].uid)
                return 1;
        } else {
            cannot = true;
        }
    }
    return cannot ? -1 : 0;
}

int mncd_sweep_hostscan(ctx *c)
{
    if (c->hs_done)
        return 0;
    c->hs_done = true;
    mncd_u32set_has(&c->interest, 0); /* sorts */
    if (mncd_hostscan_run(&c->hs, c->sc.pids.v, c->sc.pids.n, c->interest.v, c->interest.n, c->err, c->errlen) != 0) {
        c->failed = true;
        return -1;
    }
    c->st->host_pids = c->hs.pids;
    c->st->host_fds = c->hs.fds;
    c->st->hostscan_us = c->hs.us;
    return 0;
}
