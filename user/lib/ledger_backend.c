// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger_backend.c - the ledger backend interface (mnc/ledger_backend.h): dispatch, shared
 * helpers, and the journal backend over ledger.h. The postgres backend is ledger_pg.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_impl.h"

/* ---- shared helpers ---------------------------------------------------------------- */

bool lb_charge_valid(const mnc_policy *p, const mnc_lb_request *c)
{
    if (!p || !c || !mnc_ledger_str_ok(c->subject, MNC_LEDGER_SUBJECT_MAX) ||
        !mnc_ledger_str_ok(c->recipient, MNC_LEDGER_SUBJECT_MAX) ||
        !mnc_ledger_str_ok(c->release, MNC_LEDGER_SUBJECT_MAX) || c->n_obs > MNC_LEDGER_OBS_MAX ||
        (c->n_obs && !c->obs) || !isfinite(c->delta) || c->delta < 0)
        return false;
    for (size_t i = 0; i < c->n_obs; i++)
        if (c->obs[i].field >= p->n_fields || !c->obs[i].value ||
            strnlen(c->obs[i].value, MNC_LEDGER_VALUE_MAX) >= MNC_LEDGER_VALUE_MAX)
            return false;
    return true;
}

/* ---- dispatch ---------------------------------------------------------------------- */

mnc_lb_kind mnc_lb_kind_of(const mnc_lbackend *b) { return b ? b->kind : MNC_LB_JOURNAL; }

const char *mnc_lb_kind_name(mnc_lb_kind k) { return k == MNC_LB_POSTGRES ? "postgres" : "journal"; }

int mnc_lb_close(mnc_lbackend *b) { return b ? b->ops->close(b) : 0; }

int mnc_lb_close_at_exit(mnc_lbackend *b)
{
    if (!b)
        return 0;
    return b->ops->close_at_exit ? b->ops->close_at_exit(b) : b->ops->close(b);
}

mnc_ledger_rc mnc_lb_history(mnc_lbackend *b, const mnc_policy *p, const char *subject, mnc_obs **h, size_t *nh,
                             double *spent, uint64_t *version)
{
    if (!b || !p || !mnc_ledger_str_ok(subject, MNC_LEDGER_SUBJECT_MAX) || !h || !nh || !spent || !version) {
        errno = EINVAL;
        return MNC_LEDGER_ERROR;
    }
    *h = NULL;
    *nh = 0;
    return b->ops->history(b, p, subject, h, nh, spent, version);
}

mnc_ledger_rc mnc_lb_charge(mnc_lbackend *b, const mnc_policy *p, const mnc_lb_request *c, mnc_lb_result *r)
{
    if (!b || !r || !lb_charge_valid(p, c)) {
        errno = EINVAL;
        return MNC_LEDGER_ERROR;
    }
    memset(r, 0, sizeof(*r));
    r->delta = c->delta;
    return b->ops->charge(b, p, c, r);
}

int mnc_lb_foreach(mnc_lbackend *b, const char *subject, int (*cb)(void *arg, const mnc_lb_entry *e), void *arg,
                   char *err, size_t err_len)
{
    if (!b || !cb)
        return -1;
    return b->ops->foreach (b, subject, cb, arg, err, err_len);
}

mnc_ledger_rc mnc_lb_spent(mnc_lbackend *b, const char *subject, double *out)
{
    if (!b || !subject || !out)
        return MNC_LEDGER_ERROR;
    return b->ops->spent(b, subject, out);
}

void mnc_lb_stats(mnc_lbackend *b, size_t *subjects, size_t *charges)
{
    if (subjects)
        *subjects = 0;
    if (charges)
        *charges = 0;
    if (b)
        b->ops->stats(b, subjects, charges);
}

bool mnc_lb_state(mnc_lbackend *b, char *msg, size_t msg_len, uint64_t *reconnects)
{
    if (reconnects)
        *reconnects = 0;
    if (!b) {
        if (msg && msg_len)
            snprintf(msg, msg_len, "no ledger");
        return false;
    }
    return b->ops->state(b, msg, msg_len, reconnects);
}

int mnc_lb_tick(mnc_lbackend *b, uint64_t now_ms) { return b ? b->ops->tick(b, now_ms) : -1; }

int mnc_lb_set_deferred(mnc_lbackend *b, bool on)
{
    if (!b) {
        errno = EINVAL;
        return -1;
    }
    return b->ops->set_deferred ? b->ops->set_deferred(b, on) : 0;
}

int mnc_lb_flush(mnc_lbackend *b)
{
    if (!b) {
        errno = EINVAL;
        return -1;
    }
    return b->ops->flush ? b->ops->flush(b) : 0;
}

int mnc_lb_verify(mnc_lbackend *b, size_t *subjects, size_t *charges, char *err, size_t err_len)
{
    size_t s = 0, c = 0;
    int rc = b ? b->ops->verify(b, &s, &c, err, err_len) : -1;
    if (subjects)
        *subjects = s;
    if (charges)
        *charges = c;
    return rc;
}

/* ---- the journal backend ------------------------------------------------------------ */

typedef struct lb_journal {
    mnc_lbackend base;
    mnc_ledger *l;
} lb_journal;

static mnc_ledger *J(mnc_lbackend *b) { return ((lb_journal *)b)->l; }

static mnc_ledger_rc j_history(mnc_lbackend *b, const mnc_policy *p, const char *subject, mnc_obs **h, size_t *nh,
                               double *spent, uint64_t *version)
{
    /* one thread per handle: the version and the history are read consistently */
    *version = mnc_ledger_subject_charges(J(b), subject);
    if (mnc_ledger_history(J(b), p, subject, h, nh) != 0 || mnc_ledger_spent(J(b), subject, NULL, spent) != 0) {
        free(*h);
        *h = NULL;
        *nh = 0;
        return MNC_LEDGER_ERROR;
    }
    return MNC_LEDGER_OK;
}

typedef struct dup_ctx {
    const mnc_policy *p;
    const mnc_lb_request *c;
    int found; /* 0 not found, 1 same, 2 different */
} dup_ctx;

static int dup_cb(void *arg, const mnc_ledger_entry *e)
{
    dup_ctx *x = arg;
    bool same =
        strcmp(e->subject, x->c->subject) == 0 && strcmp(e->recipient, x->c->recipient) == 0 && e->n_obs == x->c->n_obs;
    for (size_t i = 0; same && i < e->n_obs; i++)
        same = strcmp(e->obs[i].field, x->p->fields[x->c->obs[i].field].name) == 0 &&
               strcmp(e->obs[i].value, x->c->obs[i].value) == 0;
    x->found = same ? 1 : 2;
    return 0;
}

static mnc_ledger_rc j_charge(mnc_lbackend *b, const mnc_policy *p, const mnc_lb_request *c, mnc_lb_result *r)
{
    mnc_ledger *l = J(b);
    double delta = c->delta;
    if (mnc_ledger_has_release(l, c->release)) {
        dup_ctx x = {.p = p, .c = c};
        mnc_ledger_find_release(l, c->release, dup_cb, &x);
        r->same = x.found == 1;
        mnc_ledger_spent(l, c->subject, NULL, &r->spent);
        return MNC_LEDGER_DUPLICATE;
    }
    if (mnc_ledger_subject_charges(l, c->subject) != c->version) {
        /* Another charge moved the history since it was priced: price it again. */
        mnc_obs *h = NULL;
        size_t nh = 0;
        int rc = !c->recompute || mnc_ledger_history(l, p, c->subject, &h, &nh) != 0
                     ? -1
                     : c->recompute(c->arg, h, nh, &delta);
        free(h);
        if (rc != 0 || !isfinite(delta) || delta < 0) {
            errno = EINVAL;
            return MNC_LEDGER_ERROR;
        }
    }
    r->delta = delta;
    mnc_ledger_rc rc =
        mnc_ledger_charge_ids(l, p, c->subject, c->recipient, c->release, c->obs, c->n_obs, delta, c->lim);
    int e = errno;
    mnc_ledger_spent(l, c->subject, NULL, &r->spent);
    errno = e;
    return rc;
}

typedef struct fe_ctx {
    int (*cb)(void *arg, const mnc_lb_entry *e);
    void *arg;
} fe_ctx;

static int fe_cb(void *arg, const mnc_ledger_entry *e)
{
    fe_ctx *x = arg;
    mnc_lb_entry le = {.e = *e, .host = ""};
    return x->cb(x->arg, &le);
}

static int j_foreach(mnc_lbackend *b, const char *subject, int (*cb)(void *arg, const mnc_lb_entry *e), void *arg,
                     char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    fe_ctx x = {cb, arg};
    return mnc_ledger_foreach(J(b), subject, fe_cb, &x);
}

static mnc_ledger_rc j_spent(mnc_lbackend *b, const char *subject, double *out)
{
    return mnc_ledger_spent(J(b), subject, NULL, out) == 0 ? MNC_LEDGER_OK : MNC_LEDGER_ERROR;
}

static void j_stats(mnc_lbackend *b, size_t *subjects, size_t *charges) { mnc_ledger_stats(J(b), subjects, charges); }

static bool j_state(mnc_lbackend *b, char *msg, size_t msg_len, uint64_t *reconnects)
{
    (void)b;
    (void)reconnects;
    if (msg && msg_len)
        snprintf(msg, msg_len, "ok");
    return true;
}

static int j_tick(mnc_lbackend *b, uint64_t now_ms)
{
    (void)b;
    (void)now_ms;
    return -1;
}

static int j_close(mnc_lbackend *b)
{
    int rc = mnc_ledger_close(J(b));
    free(b);
    return rc;
}

/* b itself stays allocated with the ledger: both are left to the exit */
static int j_close_at_exit(mnc_lbackend *b) { return mnc_ledger_close_at_exit(J(b)); }

static int j_verify(mnc_lbackend *b, size_t *subjects, size_t *charges, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    /* open()/open_ro() replayed every record and refused any inconsistency */
    mnc_ledger_stats(J(b), subjects, charges);
    return 0;
}

static int j_set_deferred(mnc_lbackend *b, bool on) { return mnc_ledger_set_deferred(J(b), on); }

static int j_flush(mnc_lbackend *b) { return mnc_ledger_flush(J(b)); }

static const lb_ops journal_ops = {.history = j_history,
                                   .charge = j_charge,
                                   .foreach = j_foreach,
                                   .spent = j_spent,
                                   .stats = j_stats,
                                   .state = j_state,
                                   .tick = j_tick,
                                   .close = j_close,
                                   .close_at_exit = j_close_at_exit,
                                   .verify = j_verify,
                                   .set_deferred = j_set_deferred,
                                   .flush = j_flush};

mnc_lbackend *mnc_lb_open_journal(const char *path, bool ro, char *notice, size_t notice_len, char *err, size_t err_len)
{
    lb_journal *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, err_len, "%s: out of memory", path);
        return NULL;
    }
    b->base.kind = MNC_LB_JOURNAL;
    b->base.ops = &journal_ops;
    b->l = ro ? mnc_ledger_open_ro(path, notice, notice_len, err, err_len)
              : mnc_ledger_open(path, notice, notice_len, err, err_len);
    if (!b->l) {
        free(b);
        return NULL;
    }
    return &b->base;
}
