// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core.c - what every part of mncd shares: the audit record writer and principal names
 * (see mncd.h, "core"). Everything above it (verbs, kernel layer, MNC-L, store, quarantine,
 * Landlock audit) calls down into it, never the other way round.
 *
 * Records about agents (docs/threat-model.md, "Records about agents"). The audit log is a log
 * sink: it ships to SIEMs, and whoever reads it is outside every agent's scope. So a record mncd
 * writes about an agent holds only what mncd chose (names and ids of its own, classes, coarse
 * counts) and keyed hashes of what the agent chose (mncd_hv: the callers hash paths, addresses,
 * ports, keys and names before they build a detail; each token salted afresh, so that equal
 * values are not even recognisable as equal). Two mechanisms here keep that true for
 * every record, whoever writes it:
 *   - the scrub: while a request is handled, the strings it carried (mncd_rec_scrub_set) are
 *     replaced by their hash wherever they would appear in a record, so a record added later
 *     that prints a request field verbatim still writes nothing the agent chose;
 *   - the budget: what is left - which records there are, their classes, their timing, the
 *     equality of hashes - is a choice of the agent's. Each tainted agent has a token bucket
 *     (MNCD_REC_RATE per second, burst MNCD_REC_BURST); a record about it finding the bucket
 *     empty is not written but counted, and one "audit.folded" record per agent, at most once a
 *     second, says how many in a power-of-two class. That bounds what an agent can spell into
 *     the log by its choices (the bound is stated in docs/threat-model.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mncd.h"

#define SCRUB_MAX 64 /* request strings remembered for the scrub */
#define SCRUB_MIN 4  /* shorter strings are too common to be recognised */
#define FOLD_MS 1000 /* a folded count is reported at most this often per agent */

struct mncd_recs {
    int n;
    struct rec_agent {
        bool tainted;
        double tokens;
        uint64_t ms;         /* last refill */
        uint64_t folded;     /* records not written since the last report */
        uint64_t fold_since; /* when the first of them was folded (0: none) */
    } * a;
    uint64_t n_folded; /* in total (status) */
    uint64_t next_due; /* earliest fold_since + FOLD_MS over all agents (0: none) */
    const char *scrub[SCRUB_MAX];
    size_t scrub_len[SCRUB_MAX];
    int n_scrub;
    uint64_t n_scrubbed; /* values the scrub replaced (status: 0 unless a record forgot to hash) */
};

const char *mncd_peer_name(const mncd *d, long id)
{
    return id >= 0 && id < d->policy->n_principals ? d->policy->principals[id].name : NULL;
}

/* ---- keyed hashes */

static bool key_ready(mncd *d)
{
    if (d->store.hkey_ok)
        return true;
    char err[600];
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/audit.key", d->cfg.state_dir);
    if (mnc_audit_key_load(path, true, d->store.hkey, err, sizeof(err)) == 0) {
        d->store.hkey_ok = true;
        return true;
    }
    static bool said;
    if (!said)
        fprintf(stderr, "mncd: %s: values agents chose are recorded as \"h:?\"\n", err);
    said = true;
    return false;
}

/* The same value, the same hash: identifiers mncd stores and looks up (never in a record) */
static const char *hv_n(mncd *d, const void *v, size_t n, int hexlen, char out[MNC_AUDIT_HV_MAX])
{
    if (!key_ready(d)) {
        memcpy(out, "h:?", 4);
        return out;
    }
    (void)mnc_audit_hv(d->store.hkey, v, n, hexlen, out);
    return out;
}

/* A record's token: salted afresh, so that two tokens of one value look unrelated (mnc/audit.h) */
const char *mncd_hv(mncd *d, const void *v, size_t n, char out[MNC_AUDIT_HV_MAX])
{
    if (!key_ready(d)) {
        memcpy(out, "h:?", 4);
        return out;
    }
    (void)mnc_audit_hv_token(d->store.hkey, v, n, out);
    return out;
}

const char *mncd_hv_str(mncd *d, const char *s, char out[MNC_AUDIT_HV_MAX])
{
    return mncd_hv(d, s ? s : "", s ? strlen(s) : 0, out);
}

const char *mncd_hv_u64(mncd *d, uint64_t v, char out[MNC_AUDIT_HV_MAX])
{
    char t[24];
    int n = snprintf(t, sizeof(t), "%" PRIu64, v);
    return mncd_hv(d, t, (size_t)n, out);
}

const char *mncd_hv_id(mncd *d, const void *v, size_t n, char out[MNC_AUDIT_HV_MAX])
{
    return hv_n(d, v, n, MNCD_KEY_HEX, out);
}

/* ---- the budget */

static struct mncd_recs *recs(mncd *d)
{
    if (d->recs)
        return d->recs;
    struct mncd_recs *r = calloc(1, sizeof(*r));
    if (r)
        r->a = calloc((size_t)d->policy->n_principals + 1, sizeof(*r->a));
    if (!r || !r->a) {
        free(r);
        return NULL;
    }
    r->n = d->policy->n_principals;
    uint64_t now = mnc_now_ms();
    for (int i = 0; i < r->n; i++)
        r->a[i] = (struct rec_agent){.tokens = MNCD_REC_BURST, .ms = now};
    d->recs = r;
    return r;
}

void mncd_recs_free(mncd *d)
{
    if (d->recs)
        free(d->recs->a);
    free(d->recs);
    d->recs = NULL;
}

void mncd_rec_tainted(mncd *d, int agent, bool tainted)
{
    struct mncd_recs *r = recs(d);
    if (r && agent >= 0 && agent < r->n)
        r->a[agent].tainted = tainted;
}

bool mncd_rec_is_tainted(mncd *d, int agent)
{
    struct mncd_recs *r = recs(d);
    return r && agent >= 0 && agent < r->n && r->a[agent].tainted;
}

static bool is_agent(const mncd *d, int id)
{
    return id >= 0 && id < d->policy->n_principals && d->policy->principals[id].cls == MNC_SINK_AGENT;
}

/* The agent a record is about, for the budget: the sender if it is a tainted agent, else the
 * receiver if it is one; -1 when neither (then the record is not budgeted). always: the agent
 * counts as tainted (kernel-reported events). */
static int about(mncd *d, int sender, int receiver, bool always)
{
    struct mncd_recs *r = recs(d);
    if (!r)
        return -1;
    if (is_agent(d, sender) && (always || r->a[sender].tainted))
        return sender;
    if (is_agent(d, receiver) && (always || r->a[receiver].tainted))
        return receiver;
    return -1;
}

static bool take_token(struct rec_agent *a, uint64_t now)
{
    if (now > a->ms) {
        a->tokens += (double)(now - a->ms) * MNCD_REC_RATE / 1000.0;
        if (a->tokens > MNCD_REC_BURST)
            a->tokens = MNCD_REC_BURST;
    }
    a->ms = now;
    if (a->tokens < 1.0)
        return false;
    a->tokens -= 1.0;
    return true;
}

static void append(mncd *d, const char *op, const char *sender, const char *receiver, const mnc_oid *obj,
                   const char *decision, const char *reason, const char *detail)
{
    char hex[MNC_OID_HEX];
    if (obj)
        mnc_oid_hex(obj, hex);
    mnc_audit_rec r = {.time_ms = mnc_now_ms(),
                       .op = op,
                       .sender = sender,
                       .receiver = receiver,
                       .object = obj ? hex : NULL,
                       .decision = decision,
                       .reason = reason,
                       .detail = detail};
    if (mnc_audit_append(d->audit, &r) != 0) {
        fprintf(stderr, "mncd: audit append failed: %s; refusing to continue\n", strerror(errno));
        d->fatal = true;
    }
}

/* One audit.folded record per agent whose fold began FOLD_MS ago or more (force: all). */
static void report_folds(mncd *d, uint64_t now, bool force)
{
    struct mncd_recs *r = d->recs;
    if (!r || !r->next_due || (!force && now < r->next_due))
        return;
    r->next_due = 0;
    for (int i = 0; i < r->n; i++) {
        struct rec_agent *a = &r->a[i];
        if (!a->folded)
            continue;
        if (!force && now < a->fold_since + FOLD_MS) {
            if (!r->next_due || a->fold_since + FOLD_MS < r->next_due)
                r->next_due = a->fold_since + FOLD_MS;
            continue;
        }
        int k = 0;
        while (k < 63 && (a->folded >> (k + 1)))
            k++;
        char det[300];
        /* the count as a power-of-two class: its exact value would be the agent's to choose */
        snprintf(det, sizeof(det),
                 "records about this tainted agent beyond its record budget (%d per second, burst %d) "
                 "were not written one by one: %" PRIu64 " to %" PRIu64,
                 MNCD_REC_RATE, MNCD_REC_BURST, (uint64_t)1 << k, ((uint64_t)2 << k) - 1);
        append(d, "audit.folded", mncd_peer_name(d, i), NULL, NULL, "withheld", "rate_limit", det);
        a->folded = 0;
        a->fold_since = 0;
    }
}

void mncd_audit_tick(mncd *d) { report_folds(d, mnc_now_ms(), false); }

void mncd_audit_flush(mncd *d) { report_folds(d, mnc_now_ms(), true); }

uint64_t mncd_audit_folded(const mncd *d) { return d->recs ? d->recs->n_folded : 0; }

uint64_t mncd_audit_scrubbed(const mncd *d) { return d->recs ? d->recs->n_scrubbed : 0; }

/* ---- the scrub */

void mncd_rec_scrub_set(mncd *d, const char *const *vals, int n)
{
    struct mncd_recs *r = recs(d);
    if (!r)
        return;
    r->n_scrub = 0;
    for (int i = 0; vals && i < n && r->n_scrub < SCRUB_MAX; i++) {
        size_t l = vals[i] ? strlen(vals[i]) : 0;
        if (l < SCRUB_MIN)
            continue;
        r->scrub[r->n_scrub] = vals[i];
        r->scrub_len[r->n_scrub++] = l;
    }
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* s with every remembered request string replaced by its hash where it stands as a whole word
 * (not inside a longer name: a request string "work" leaves "worker" alone), in buf. */
static const char *scrub(mncd *d, const char *s, char *buf, size_t bufn)
{
    struct mncd_recs *r = d->recs;
    if (!s || !r || !r->n_scrub)
        return s;
    bool hit = false;
    for (int i = 0; i < r->n_scrub && !hit; i++)
        hit = strstr(s, r->scrub[i]) != NULL;
    if (!hit)
        return s;
    size_t o = 0;
    for (const char *p = s; *p && o + 1 < bufn;) {
        int best = -1;
        bool start = p == s || !word_char(p[-1]);
        for (int i = 0; start && i < r->n_scrub; i++) /* the longest whole value starting here */
            if (strncmp(p, r->scrub[i], r->scrub_len[i]) == 0 && !word_char(p[r->scrub_len[i]]) &&
                (best < 0 || r->scrub_len[i] > r->scrub_len[best]))
                best = i;
        if (best < 0) {
            buf[o++] = *p++;
            continue;
        }
        char h[MNC_AUDIT_HV_MAX];
        mncd_hv(d, r->scrub[best], r->scrub_len[best], h);
        size_t hl = strlen(h);
        if (o + hl + 1 >= bufn)
            break;
        memcpy(buf + o, h, hl);
        o += hl;
        p += r->scrub_len[best];
        r->n_scrubbed++;
    }
    buf[o] = '\0';
    return buf;
}

/* ---- the writers */

static void audit_about(mncd *d, int who, const char *op, const char *sender, const char *receiver, const mnc_oid *obj,
                        const char *decision, const char *reason, const char *detail)
{
    uint64_t now = mnc_now_ms();
    report_folds(d, now, false);
    struct mncd_recs *r = d->recs;
    if (who >= 0 && r && !take_token(&r->a[who], now)) {
        struct rec_agent *a = &r->a[who];
        if (!a->folded++) {
            a->fold_since = now;
            if (!r->next_due || now + FOLD_MS < r->next_due)
                r->next_due = now + FOLD_MS;
        }
        r->n_folded++;
        return;
    }
    static char sbuf[8192], rbuf[256], nbuf[256];
    append(d, op, scrub(d, sender, nbuf, sizeof(nbuf)), scrub(d, receiver, rbuf, sizeof(rbuf)), obj, decision, reason,
           scrub(d, detail, sbuf, sizeof(sbuf)));
}

void mncd_audit_named(mncd *d, const char *op, const char *sender, const char *receiver, const mnc_oid *obj,
                      const char *decision, const char *reason, const char *detail)
{
    int s = sender ? mnc_policy_principal(d->policy, sender) : -1;
    int r = receiver ? mnc_policy_principal(d->policy, receiver) : -1;
    audit_about(d, about(d, s, r, false), op, sender, receiver, obj, decision, reason, detail);
}

void mncd_audit_event(mncd *d, const char *op, int agent, const char *receiver, const mnc_oid *obj,
                      const char *decision, const char *reason, const char *detail)
{
    audit_about(d, about(d, agent, -1, true), op, mncd_peer_name(d, agent), receiver, obj, decision, reason, detail);
}

void mncd_audit_summary(mncd *d, const char *op, const char *sender, const char *decision, const char *reason,
                        const char *detail)
{
    report_folds(d, mnc_now_ms(), false);
    append(d, op, sender, NULL, NULL, decision, reason, detail);
}

void mncd_audit(mncd *d, const char *op, int sender, int receiver, const mnc_oid *obj, const char *decision,
                mnc_reason reason, const char *detail)
{
    /* An object id a refused request named but no object has is the caller's choice of 128 bits
     * (attack audit_chosen_name): recorded only for an object that exists. An allowed operation
     * names a real object (a revoke's is already gone, and is kept). */
    if (obj && strcmp(decision, "allow") != 0 && !mnc_registry_get(&d->store.reg, obj))
        obj = NULL;
    audit_about(d, about(d, sender, receiver, false), op, mncd_peer_name(d, sender), mncd_peer_name(d, receiver), obj,
                decision, mnc_reason_name(reason), detail);
}
