// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_out.c - what the enforcer sends the monitor (enforcer.h): notices in one ordered queue,
 * replies after them.
 *
 * Why a queue: the monitor may be blocked sending a long request (a registration's paths)
 * while the enforcer has notices of its own to send (an agent's exit, deny events); two
 * blocking senders on full buffers would wait for each other forever. So notices never block:
 * they are queued and sent while the pair has room (EPOLLOUT), and a reply, which the monitor
 * is waiting for and therefore reading, first flushes the queue with blocking sends, so that
 * the monitor sees every notice in the order the enforcer made it. Deny events are the only
 * notices dropped, when the queue is long (counted in STATUS_R as kevents_lost); the kernel layer
 * stops draining the ring buffer before that (ek_kern.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enforcer.h"

#define EK_QUEUE_DROP 4096 /* queued notices beyond which deny events are dropped */

static void mon_gone(ek *e, int rc)
{
    if (e->mon_fd >= 0) {
        if (rc != -EPIPE && rc != -ECONNRESET)
            fprintf(stderr, "mncd enforcer: sending to the monitor: %s\n", strerror(-rc));
        close(e->mon_fd);
        e->mon_fd = -1;
    }
    ek_out_free(e);
}

void ek_out_free(ek *e)
{
    while (e->q_head) {
        ek_outq *x = e->q_head;
        e->q_head = x->next;
        free(x->m);
        free(x);
    }
    e->q_tail = NULL;
    e->q_len = 0;
}

void ek_notice(ek *e, const void *msg, bool droppable)
{
    if (e->mon_fd < 0)
        return;
    if (droppable && e->q_len >= EK_QUEUE_DROP) {
        e->n_kevents_lost++;
        return;
    }
    const struct psp_hdr *h = msg;
    ek_outq *x = malloc(sizeof(*x));
    psp_buf *m = x ? malloc(h->len) : NULL;
    if (!m) { /* an audit record the monitor never gets: say so where it cannot be lost */
        fprintf(stderr, "mncd enforcer: out of memory: a %s notice for the monitor is lost\n", psp_type_name(h->type));
        free(x);
        if (droppable)
            e->n_kevents_lost++;
        return;
    }
    memcpy(m, msg, h->len);
    x->m = m;
    x->len = h->len;
    x->next = NULL;
    if (e->q_tail)
        e->q_tail->next = x;
    else
        e->q_head = x;
    e->q_tail = x;
    e->q_len++;
}

void ek_audit(ek *e, unsigned op, unsigned decision, uint32_t sender, uint32_t receiver, const uint8_t *oid,
              const char *reason, const char *fmt, ...)
{
    static psp_buf b; /* one thread; copied by ek_notice */
    struct psp_audit *a = (void *)&b;
    memset(a, 0, sizeof(*a));
    psp_hdr_init(&a->h, PSP_AUDIT, 0);
    a->op = (uint16_t)op;
    a->decision = (uint8_t)decision;
    a->sender = sender;
    a->receiver = receiver;
    if (oid) {
        a->has_oid = 1;
        memcpy(a->oid, oid, sizeof(a->oid));
    }
    snprintf(a->reason, sizeof(a->reason), "%s", reason);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->detail, sizeof(a->detail), fmt, ap);
    va_end(ap);
    ek_notice(e, a, false);
}

int ek_flush(ek *e, bool block)
{
    while (e->q_head && e->mon_fd >= 0) {
        ek_outq *x = e->q_head;
        int rc = psp_send(e->mon_fd, x->m, NULL, 0, !block);
        if (rc == -EAGAIN)
            return 0; /* the loop waits for EPOLLOUT */
        if (rc) {
            mon_gone(e, rc);
            return rc;
        }
        e->q_head = x->next;
        if (!e->q_head)
            e->q_tail = NULL;
        e->q_len--;
        free(x->m);
        free(x);
    }
    return e->mon_fd >= 0 ? 0 : -EPIPE;
}

int ek_reply(ek *e, void *msg, const int *fds, int nfds)
{
    int rc = ek_flush(e, true);
    if (rc)
        return rc;
    rc = psp_send(e->mon_fd, msg, fds, nfds, false);
    if (rc)
        mon_gone(e, rc);
    return rc;
}

static void refused(struct psp_refused *r, uint32_t seq, unsigned code, int err, const char *fmt, va_list ap)
{
    memset(r, 0, sizeof(*r));
    psp_hdr_init(&r->h, PSP_REFUSED, seq);
    r->code = code;
    r->err = err > 0 ? err : 0;
    vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
}

int ek_refuse(ek *e, uint32_t seq, unsigned code, int err, const char *fmt, ...)
{
    static struct psp_refused r;
    va_list ap;
    va_start(ap, fmt);
    refused(&r, seq, code, err, fmt, ap);
    va_end(ap);
    return ek_reply(e, &r, NULL, 0);
}

int ek_refuse_to(int fd, uint32_t seq, unsigned code, int err, const char *fmt, ...)
{
    static struct psp_refused r;
    va_list ap;
    va_start(ap, fmt);
    refused(&r, seq, code, err, fmt, ap);
    va_end(ap);
    return psp_send(fd, &r, NULL, 0, false);
}
