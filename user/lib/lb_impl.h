/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lb_impl.h - internal to libmnc: the vtable behind ledger_backend.h, shared by
 * ledger_backend.c (dispatch, the journal backend) and ledger_pg.c (the postgres backend). */
#ifndef MNC_LB_IMPL_H
#define MNC_LB_IMPL_H

#include "mnc/ledger_backend.h"

typedef struct lb_ops {
    mnc_ledger_rc (*history)(mnc_lbackend *b, const mnc_policy *p, const char *subject, mnc_obs **h, size_t *nh,
                             double *spent, uint64_t *version);
    mnc_ledger_rc (*charge)(mnc_lbackend *b, const mnc_policy *p, const mnc_lb_request *c, mnc_lb_result *r);
    int (*foreach)(mnc_lbackend *b, const char *subject, int (*cb)(void *arg, const mnc_lb_entry *e), void *arg,
                   char *err, size_t err_len);
    mnc_ledger_rc (*spent)(mnc_lbackend *b, const char *subject, double *out);
    void (*stats)(mnc_lbackend *b, size_t *subjects, size_t *charges);
    bool (*state)(mnc_lbackend *b, char *msg, size_t msg_len, uint64_t *reconnects);
    int (*tick)(mnc_lbackend *b, uint64_t now_ms);
    int (*close)(mnc_lbackend *b);
    int (*close_at_exit)(mnc_lbackend *b); /* NULL: close */
    int (*verify)(mnc_lbackend *b, size_t *subjects, size_t *charges, char *err, size_t err_len);
    int (*set_deferred)(mnc_lbackend *b, bool on); /* NULL: charges are durable at return */
    int (*flush)(mnc_lbackend *b);                 /* NULL: nothing is ever pending */
} lb_ops;

struct mnc_lbackend {
    mnc_lb_kind kind;
    const lb_ops *ops;
};

/* Validation shared by both backends: c's strings bounded and printable, obs ids known to p,
 * delta finite and >= 0. */
bool lb_charge_valid(const mnc_policy *p, const mnc_lb_request *c);

#endif
