/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* risk_bayes_int.h - internal to the exact Bayes risk model (mnc/risk_bayes.h): the model's
 * layout, shared by risk_bayes_load.c (reading a model) and risk_bayes.c (evaluating it). Not
 * installed; not exported by libmnc.so.
 */
#ifndef MNC_RISK_BAYES_INT_H
#define MNC_RISK_BAYES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc/risk_bayes.h"

#define MAX_SECRETS 65536u
#define MAX_VALUES 65536u
#define MAX_TABLE (1u << 24)  /* entries of one likelihood table (nv * nS) */
#define MAX_ENUM (1ull << 26) /* expected-leakage enumeration work bound */
#define MAX_FILE (64u << 20)
#define ROW_TOL 1e-9

enum kind { K_TABLE, K_FUNC, K_INDEP };

typedef struct bfield {
    char name[MNC_NAME_MAX];
    enum kind kind;
    char **values; /* sorted, unique */
    size_t nv;
    long double *lik; /* K_TABLE: lik[v * nS + s] = P(v | s) */
    uint32_t *fn;     /* K_FUNC: fn[s] = value index of g(s) */
} bfield;

struct mnc_bayes {
    uint64_t uid; /* unique per model instance: keys the charge cache (never reused) */
    size_t ns;
    char **secrets; /* declaration order */
    long double *prior;
    long double vprior; /* max prior */
    bfield *f;
    size_t nf;
    int id_to_f[MNC_MAX_FIELDS]; /* observation field id -> index in f, or -1 */
    bool reference;              /* charge with the reference evaluation (mnc_bench.h) */
};

/* Index of v in the sorted, unique vals (nv of them), or -1. */
long mnc_bayes_find_value(char *const *vals, size_t nv, const char *v);

#endif
