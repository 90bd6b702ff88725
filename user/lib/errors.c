// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* errors.c - the collected-error list used by the policy and state loaders.
 *
 * Loaders report every problem they find rather than the first, so this list must never lose
 * an error silently: one slot is always kept spare so that an allocation failure can still be
 * recorded (as a static message), and the list is capped so that a hostile input cannot make
 * it grow without bound.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/policy.h"

/* Beyond this many entries only one "too many errors" line is added. */
#define MNC_ERRORS_MAX 1000

static char oom_msg[] = "mnc: out of memory while recording an error";
static char cap_msg[] = "mnc: too many errors, the rest are not shown";
/* used when not even the first array can be allocated */
static char *oom_list[1] = {oom_msg};

void mnc_errors_init(mnc_errors *e)
{
    e->msg = NULL;
    e->n = 0;
    e->cap = 0;
}

void mnc_errors_free(mnc_errors *e)
{
    for (int i = 0; i < e->n; i++)
        if (e->msg[i] != oom_msg && e->msg[i] != cap_msg)
            free(e->msg[i]);
    if (e->msg != oom_list)
        free(e->msg);
    mnc_errors_init(e);
}

/* Puts a static message in the spare slot unless the previous entry is already one. */
static void add_static(mnc_errors *e, char *m)
{
    if (e->n > 0 && (e->msg[e->n - 1] == oom_msg || e->msg[e->n - 1] == cap_msg))
        return;
    if (e->n < e->cap) {
        e->msg[e->n++] = m;
    } else if (!e->msg) {
        e->msg = oom_list;
        e->n = e->cap = 1;
    }
}

void mnc_errors_add(mnc_errors *e, const char *fmt, ...)
{
    if (e->n >= MNC_ERRORS_MAX) {
        add_static(e, cap_msg);
        return;
    }
    /* keep cap >= n + 2: one slot for this message, one spare for a later static message */
    if (e->n + 2 > e->cap) {
        int ncap = e->cap ? e->cap * 2 : 16;
        char **nm = e->msg == oom_list ? NULL : realloc(e->msg, (size_t)ncap * sizeof(*nm));
        if (!nm) {
            add_static(e, oom_msg);
            return;
        }
        e->msg = nm;
        e->cap = ncap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0 || !s) {
        add_static(e, oom_msg);
        return;
    }
    e->msg[e->n++] = s;
}
