// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger.c - MNC-L leakage ledger on top of the journal (see mnc/ledger.h). */
#include "mnc/ledger.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger_hist.h"
#include "mnc/journal.h"
#include "mnc_bench.h"
#include "mnc_htab.h"
#include "mnc_util.h"
#include "json_write.h"

/* Every lookup on the charge path is a hash lookup or O(1): subjects, their recipients'
 * accounts, release ids and each subject's distinct observations are hash tables, so the cost
 * of a charge or a history does not grow with the number of subjects, recipients or releases
 * (only with the size of what is charged, and the history with the subject's distinct
 * facts). */

typedef struct account {
    mnc_hnode h;           /* key: recipient */
    const char *recipient; /* the node's key (in the entry's block) */
    double spent, reserved;
} account;

typedef struct charge {
    uint64_t seq, t;
    const char *recipient, *release; /* the account's and the release record's strings */
    double delta;
    mnc_ledger_obs *obs; /* strings: the subject's history set (ledger_hist.h) */
    size_t n_obs;
} charge;

/* A new subject's tables start at one slot and double: on a host with many subjects most are
 * charged once or a few times, and 8-slot starts cost ~600 B of heap per subject (RSS at 10^5
 * subjects, bench_mncd: docs/mncd.md), which a fresh daemon pays in page faults as well. */
#define SUBJECT_START 1

typedef struct subject {
    mnc_hnode h;      /* key: name */
    const char *name; /* the node's key (in the entry's block) */
    double spent, reserved;
    mnc_htab accs; /* account by recipient */
    charge *ch;    /* ordered by seq */
    size_t nch, capch;
    mnc_hist hist; /* distinct observations, in the order of ch */
    bool hist_bad; /* hist could not be rebuilt: history() fails */
} subject;

enum { REL_PENDING = 1, REL_DONE = 2 };

typedef struct rel {
    mnc_hnode h;    /* key: id */
    const char *id; /* the node's key (in the entry's block) */
    int state;
    subject *s;   /* REL_DONE: whose charge it is ... */
    uint64_t seq; /* ... and its journal sequence number (s->ch is ordered by it) */
} rel;

struct mnc_ledger {
    mnc_journal *j; /* NULL for a read-only view */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mnc_htab subjects; /* subject by name */
    mnc_htab rels;     /* rel by release id */
    size_t ncharges;
    bool failed;
    bool deferred; /* charge() queues its record; mnc_ledger_flush() makes it durable */
    char replay_err[256];
};

/* ---- subjects and releases by name --------------------------------------------------- */

static subject *find_subject(mnc_ledger *l, const char *name)
{
    return MNC_HTAB_ENTRY(mnc_htab_find(&l->subjects, name), subject, h);
}

static subject *get_subject(mnc_ledger *l, const char *name)
{
    subject *s = find_subject(l, name);
    if (s)
        return s;
    s = mnc_htab_add_new(&l->subjects, name, sizeof(*s), offsetof(subject, h));
    if (!s)
        return NULL;
    s->name = s->h.key;
    mnc_htab_init(&s->accs, 1, 1, 4); /* most subjects have one recipient (SUBJECT_START) */
    mnc_hist_init(&s->hist);
    return s;
}

static account *find_account(subject *s, const char *r)
{
    return MNC_HTAB_ENTRY(mnc_htab_find(&s->accs, r), account, h);
}

static account *get_account(subject *s, const char *r)
{
    account *a = find_account(s, r);
    if (a)
        return a;
    a = mnc_htab_add_new(&s->accs, r, sizeof(*a), offsetof(account, h));
    if (!a)
        return NULL;
    a->recipient = a->h.key;
    return a;
}

static rel *find_rel(mnc_ledger *l, const char *id) { return MNC_HTAB_ENTRY(mnc_htab_find(&l->rels, id), rel, h); }

static rel *add_rel(mnc_ledger *l, const char *id, int state)
{
    rel *r = mnc_htab_add_new(&l->rels, id, sizeof(*r), offsetof(rel, h));
    if (r) {
        r->id = r->h.key;
        r->state = state;
    }
    return r;
}

static void del_rel(mnc_ledger *l, const char *id)
{
    rel *r = MNC_HTAB_ENTRY(mnc_htab_remove(&l->rels, id), rel, h);
    if (r) {
        free(r); /* and its id (mnc_htab_add_new) */
    }
}

/* ---- validation --------------------------------------------------------------------- */

bool mnc_ledger_str_ok(const char *s, size_t max)
{
    if (!s || !*s)
        return false;
    size_t n = strnlen(s, max);
    if (n >= max)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static bool good_obs(const mnc_ledger_obs *o, size_t n)
{
    if (n > MNC_LEDGER_OBS_MAX || (n && !o))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!mnc_ledger_str_ok(o[i].field, MNC_NAME_MAX) || !o[i].value ||
            strnlen(o[i].value, MNC_LEDGER_VALUE_MAX) >= MNC_LEDGER_VALUE_MAX)
            return false;
    return true;
}

/* ---- applying a charge to memory (lock held) ---------------------------------------- */

/* Lists every charge's observations in s->hist again, in charge order. 0 or -1 (OOM). */
static int relist(subject *s)
{
    mnc_hist_unlist(&s->hist);
    for (size_t c = 0; c < s->nch; c++)
        for (size_t i = 0; i < s->ch[c].n_obs; i++)
            if (mnc_hist_add(&s->hist, s->ch[c].obs[i].field, s->ch[c].obs[i].value, NULL, NULL) != 0)
                return -1;
    return 0;
}

/* Records the charge of release r in subject s, account a (r->id and a->recipient are the
 * strings the charge keeps). Keeps charges ordered by seq (concurrent appenders may finish out
 * of order; the history order is then rebuilt). 0, or -1 (OOM, nothing counted; the history
 * may hold observations of the uncounted charge - more than was released, the safe side - and
 * the caller stops charging on this handle). */
static int apply(mnc_ledger *l, subject *s, account *a, rel *r, uint64_t seq, uint64_t t, double delta,
                 const mnc_ledger_obs *obs, size_t n)
{
    if (s->nch == s->capch) {
        size_t nc = s->capch ? s->capch * 2 : SUBJECT_START;
        charge *nchs = realloc(s->ch, nc * sizeof(*nchs));
        if (!nchs)
            return -1;
        s->ch = nchs;
        s->capch = nc;
    }
    charge c = {.seq = seq, .t = t, .delta = delta, .recipient = a->recipient, .release = r->id, .n_obs = n};
    if (n && !(c.obs = malloc(n * sizeof(*c.obs))))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (mnc_hist_add(&s->hist, obs[i].field, obs[i].value, &c.obs[i].field, &c.obs[i].value) != 0) {
            free(c.obs);
            return -1;
        }
    size_t at = s->nch;
    while (at > 0 && s->ch[at - 1].seq > seq)
        at--;
    memmove(&s->ch[at + 1], &s->ch[at], (s->nch - at) * sizeof(charge));
    s->ch[at] = c;
    s->nch++;
    /* relist cannot fail (the order array already holds every entry it lists again); if it
     * did, the subject's history would be incomplete: refuse to evaluate it (fail closed) */
    if (at + 1 < s->nch && relist(s) != 0)
        s->hist_bad = true;
    s->spent += delta;
    a->spent += delta;
    r->s = s;
    r->seq = seq;
    l->ncharges++;
    return 0;
}

/* ---- replay ------------------------------------------------------------------------- */

static int replay(void *arg, uint64_t seq, const void *payload, size_t len)
{
    mnc_ledger *l = arg;
    cJSON *j = cJSON_ParseWithLength(payload, len);
    const char *why = NULL;
    mnc_ledger_obs obs[MNC_LEDGER_OBS_MAX];
    size_t n = 0;
    if (!j) {
        why = "payload is not JSON";
        goto bad;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "v");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "t");
    const cJSON *sj = cJSON_GetObjectItemCaseSensitive(j, "subject");
    const cJSON *rj = cJSON_GetObjectItemCaseSensitive(j, "recipient");
    const cJSON *idj = cJSON_GetObjectItemCaseSensitive(j, "release");
    const cJSON *dj = cJSON_GetObjectItemCaseSensitive(j, "delta");
    const cJSON *oj = cJSON_GetObjectItemCaseSensitive(j, "obs");
    if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
        why = "unsupported record version";
        goto bad;
    }
    if (!cJSON_IsNumber(t) || t->valuedouble < 0 || !cJSON_IsString(sj) ||
        !mnc_ledger_str_ok(sj->valuestring, MNC_LEDGER_SUBJECT_MAX) || !cJSON_IsString(rj) ||
        !mnc_ledger_str_ok(rj->valuestring, MNC_LEDGER_SUBJECT_MAX) || !cJSON_IsString(idj) ||
        !mnc_ledger_str_ok(idj->valuestring, MNC_LEDGER_SUBJECT_MAX) || !cJSON_IsNumber(dj) ||
        !isfinite(dj->valuedouble) || dj->valuedouble < 0 || !cJSON_IsArray(oj)) {
        why = "missing or malformed member (t, subject, recipient, release, delta, obs)";
        goto bad;
    }
    for (const cJSON *o = oj->child; o; o = o->next) {
        if (n == MNC_LEDGER_OBS_MAX || cJSON_GetArraySize(o) != 2 || !cJSON_IsString(o->child) ||
            !cJSON_IsString(o->child->next)) {
            why = "malformed observation";
            goto bad;
        }
        obs[n].field = o->child->valuestring;
        obs[n].value = o->child->next->valuestring;
        n++;
    }
    if (!good_obs(obs, n)) {
        why = "malformed observation";
        goto bad;
    }
    /* Idempotent: a release id seen before is counted once. */
    if (find_rel(l, idj->valuestring)) {
        cJSON_Delete(j);
        return 0;
    }
    subject *s = get_subject(l, sj->valuestring);
    account *a = s ? get_account(s, rj->valuestring) : NULL;
    rel *r = a ? add_rel(l, idj->valuestring, REL_DONE) : NULL;
    if (!r || apply(l, s, a, r, seq, (uint64_t)t->valuedouble, dj->valuedouble, obs, n) != 0) {
        why = "out of memory";
        goto bad;
    }
    cJSON_Delete(j);
    return 0;
bad:
    snprintf(l->replay_err, sizeof(l->replay_err), "%s", why);
    cJSON_Delete(j);
    return -1;
}

static mnc_ledger *alloc_ledger(void)
{
    mnc_ledger *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    mnc_htab_init(&l->subjects, 64, 1, 2);
    mnc_htab_init(&l->rels, 256, 1, 2);
    if (pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l);
        return NULL;
    }
    if (pthread_cond_init(&l->cv, NULL) != 0) {
        pthread_mutex_destroy(&l->mu);
        free(l);
        return NULL;
    }
    return l;
}

static int free_account(mnc_hnode *n, void *arg)
{
    (void)arg;
    account *a = MNC_HTAB_ENTRY(n, account, h);
    free(a); /* and its recipient (mnc_htab_add_new) */
    return 0;
}

static int free_subject(mnc_hnode *n, void *arg)
{
    (void)arg;
    subject *s = MNC_HTAB_ENTRY(n, subject, h);
    for (size_t k = 0; k < s->nch; k++)
        free(s->ch[k].obs);
    mnc_htab_each(&s->accs, free_account, NULL);
    mnc_htab_fini(&s->accs);
    mnc_hist_fini(&s->hist);
    free(s->ch);
    free(s); /* and its name (mnc_htab_add_new) */
    return 0;
}

static int free_rel(mnc_hnode *n, void *arg)
{
    (void)arg;
    rel *r = MNC_HTAB_ENTRY(n, rel, h);
    free(r); /* and its id (mnc_htab_add_new) */
    return 0;
}

static void free_ledger(mnc_ledger *l)
{
    mnc_htab_each(&l->subjects, free_subject, NULL);
    mnc_htab_each(&l->rels, free_rel, NULL);
    mnc_htab_fini(&l->subjects);
    mnc_htab_fini(&l->rels);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}

static void add_replay_err(mnc_ledger *l, char *err, size_t err_len)
{
    if (l->replay_err[0] && err && err_len) {
        size_t n = strlen(err);
        snprintf(err + n, err_len - n, ": %s", l->replay_err);
    }
}

mnc_ledger *mnc_ledger_open(const char *path, char *notice, size_t notice_len, char *err, size_t err_len)
{
    mnc_ledger *l = alloc_ledger();
    if (!l) {
        snprintf(err, err_len, "%s: out of memory", path);
        return NULL;
    }
    l->j = mnc_journal_open(path, replay, l, notice, notice_len, err, err_len);
    if (!l->j) {
        add_replay_err(l, err, err_len);
        free_ledger(l);
        return NULL;
    }
    return l;
}

mnc_ledger *mnc_ledger_open_ro(const char *path, char *notice, size_t notice_len, char *err, size_t err_len)
{
    mnc_ledger *l = alloc_ledger();
    if (!l) {
        snprintf(err, err_len, "%s: out of memory", path);
        return NULL;
    }
    if (mnc_journal_scan(path, replay, l, NULL, notice, notice_len, err, err_len) != 0) {
        add_replay_err(l, err, err_len);
        free_ledger(l);
        return NULL;
    }
    return l;
}

int mnc_ledger_close(mnc_ledger *l)
{
    if (!l)
        return 0;
    int rc = l->j ? mnc_journal_close(l->j) : 0;
    if (l->failed)
        rc = -1;
    free_ledger(l);
    return rc;
}

int mnc_ledger_close_at_exit(mnc_ledger *l)
{
    if (!l)
        return 0;
    int rc = l->j ? mnc_journal_close(l->j) : 0;
    l->j = NULL;
    return l->failed ? -1 : rc;
}

/* ---- queries ------------------------------------------------------------------------ */

int mnc_ledger_spent(mnc_ledger *l, const char *subject_name, const char *recipient, double *out)
{
    if (!l || !subject_name || !out)
        return -1;
    pthread_mutex_lock(&l->mu);
    subject *s = find_subject(l, subject_name);
    double v = 0;
    if (s && !recipient) {
        v = s->spent;
    } else if (s) {
        account *a = find_account(s, recipient);
        v = a ? a->spent : 0;
    }
    pthread_mutex_unlock(&l->mu);
    *out = v;
    return 0;
}

/* Admission with reservations counted; lock held. */
static mnc_ledger_rc admit(mnc_ledger *l, const char *sname, const char *recipient, double delta,
                           const mnc_ledger_limits *lim)
{
    if (!lim)
        return MNC_LEDGER_OK;
    if (lim->epsilon >= 0 && delta > lim->epsilon)
        return MNC_LEDGER_OVER_EPSILON;
    if (lim->budget >= 0) {
        subject *s = find_subject(l, sname);
        double sigma = 0;
        if (s && lim->per_recipient && recipient) {
            account *a = find_account(s, recipient);
            sigma = a ? a->spent + a->reserved : 0;
        } else if (s) {
            sigma = s->spent + s->reserved;
        }
        if (sigma + delta > lim->budget)
            return MNC_LEDGER_OVER_BUDGET;
    }
    return MNC_LEDGER_OK;
}

mnc_ledger_rc mnc_ledger_check(mnc_ledger *l, const char *subject_name, const char *recipient, double delta,
                               const mnc_ledger_limits *lim)
{
    if (!l || !mnc_ledger_str_ok(subject_name, MNC_LEDGER_SUBJECT_MAX) || !isfinite(delta) || delta < 0 ||
        (recipient && !mnc_ledger_str_ok(recipient, MNC_LEDGER_SUBJECT_MAX))) {
        errno = EINVAL;
        return MNC_LEDGER_ERROR;
    }
    pthread_mutex_lock(&l->mu);
    mnc_ledger_rc rc = admit(l, subject_name, recipient, delta, lim);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* The charge record {"v":1,"t":T,"subject":S,"recipient":R,"release":ID,"delta":D,
 * "obs":[[field,value],...]}, written with json_write.h's writers: the bytes
 * cJSON_PrintUnformatted printed for the same tree (test_ledger compares them), without the
 * tree. A heap string (free()), or NULL (out of memory, or a NULL string: as the tree's). */
static char *payload(uint64_t t, const char *sname, const char *recipient, const char *release, double delta,
                     const mnc_ledger_obs *obs, size_t n)
{
    mnc_jbuf b = {0};
    int rc = MNC_JBUF_LIT(&b, "{\"v\":1,\"t\":");
#define W(x) rc = rc ? rc : (x)
    W(mnc_jbuf_u64(&b, t));
    W(MNC_JBUF_LIT(&b, ",\"subject\":"));
    W(mnc_jbuf_str(&b, sname));
    W(MNC_JBUF_LIT(&b, ",\"recipient\":"));
    W(mnc_jbuf_str(&b, recipient));
    W(MNC_JBUF_LIT(&b, ",\"release\":"));
    W(mnc_jbuf_str(&b, release));
    W(MNC_JBUF_LIT(&b, ",\"delta\":"));
    W(mnc_jbuf_num(&b, delta));
    W(MNC_JBUF_LIT(&b, ",\"obs\":["));
    for (size_t i = 0; rc == 0 && i < n; i++) {
        W(i ? MNC_JBUF_LIT(&b, ",[") : MNC_JBUF_LIT(&b, "["));
        W(mnc_jbuf_str(&b, obs[i].field));
        W(MNC_JBUF_LIT(&b, ","));
        W(mnc_jbuf_str(&b, obs[i].value));
        W(MNC_JBUF_LIT(&b, "]"));
    }
    W(MNC_JBUF_LIT(&b, "]}"));
    W(mnc_jbuf_put(&b, "", 1)); /* the NUL */
#undef W
    if (rc != 0) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

mnc_ledger_rc mnc_ledger_charge(mnc_ledger *l, const char *sname, const char *recipient, const char *release,
                                const mnc_ledger_obs *obs, size_t n, double delta, const mnc_ledger_limits *lim)
{
    if (!l || !mnc_ledger_str_ok(sname, MNC_LEDGER_SUBJECT_MAX) ||
        !mnc_ledger_str_ok(recipient, MNC_LEDGER_SUBJECT_MAX) || !mnc_ledger_str_ok(release, MNC_LEDGER_SUBJECT_MAX) ||
        !good_obs(obs, n) || !isfinite(delta) || delta < 0) {
        errno = EINVAL;
        return MNC_LEDGER_ERROR;
    }
    if (!l->j) {
        errno = EROFS;
        return MNC_LEDGER_ERROR;
    }
    uint64_t t = mnc_now_ms();
    /* Build the record outside the lock. cJSON prints doubles so that they parse back to the
     * same value, so replay recomputes exactly the same Σ. */
    char *pl = payload(t, sname, recipient, release, delta, obs, n);
    if (!pl) {
        errno = ENOMEM;
        return MNC_LEDGER_ERROR;
    }
    pthread_mutex_lock(&l->mu);
    rel *r;
    /* Same release id in flight on another thread: wait for its outcome. */
    while ((r = find_rel(l, release)) && r->state == REL_PENDING)
        pthread_cond_wait(&l->cv, &l->mu);
    mnc_ledger_rc rc;
    if (r) {
        rc = MNC_LEDGER_DUPLICATE;
        goto unlock;
    }
    if (l->failed) {
        errno = EIO;
        rc = MNC_LEDGER_ERROR;
        goto unlock;
    }
    rc = admit(l, sname, recipient, delta, lim);
    if (rc != MNC_LEDGER_OK)
        goto unlock;
    subject *s = get_subject(l, sname);
    account *a = s ? get_account(s, recipient) : NULL;
    if (!a || !(r = add_rel(l, release, REL_PENDING))) {
        errno = ENOMEM;
        rc = MNC_LEDGER_ERROR;
        goto unlock;
    }
    /* Reserve so that concurrent charges to this subject see it in admit(). */
    s->reserved += delta;
    a->reserved += delta;
    pthread_mutex_unlock(&l->mu);

    uint64_t seq = 0;
    bool deferred = l->deferred; /* read under the lock; set only between charges */
    int jrc = deferred ? mnc_journal_queue(l->j, pl, strlen(pl), &seq) : mnc_journal_append(l->j, pl, strlen(pl), &seq);
    int e = errno;

    pthread_mutex_lock(&l->mu);
    /* s, a and r stay where they are (entries of hash tables never move), and none is
     * removed while the release is pending */
    s->reserved -= delta;
    a->reserved -= delta;
    if (jrc == 0 && apply(l, s, a, r, seq, t, delta, obs, n) == 0) {
        r->state = REL_DONE;
        rc = MNC_LEDGER_OK;
    } else {
        /* Not counted here. If the append failed the journal is poisoned; if only memory
         * failed the record is durable but this process can no longer account correctly:
         * refuse further charges either way (a restart replays the file). */
        del_rel(l, release);
        l->failed = true;
        errno = jrc != 0 ? e : ENOMEM;
        rc = MNC_LEDGER_ERROR;
    }
    pthread_cond_broadcast(&l->cv);
unlock:
    e = errno;
    pthread_mutex_unlock(&l->mu);
    free(pl);
    errno = e;
    return rc;
}

mnc_ledger_rc mnc_ledger_charge_ids(mnc_ledger *l, const mnc_policy *p, const char *sname, const char *recipient,
                                    const char *release, const mnc_obs *obs, size_t n, double delta,
                                    const mnc_ledger_limits *lim)
{
    if (!p || n > MNC_LEDGER_OBS_MAX || (n && !obs)) {
        errno = EINVAL;
        return MNC_LEDGER_ERROR;
    }
    mnc_ledger_obs lo[MNC_LEDGER_OBS_MAX];
    for (size_t i = 0; i < n; i++) {
        if (obs[i].field >= p->n_fields) {
            errno = EINVAL;
            return MNC_LEDGER_ERROR;
        }
        lo[i].field = p->fields[obs[i].field].name;
        lo[i].value = obs[i].value;
    }
    return mnc_ledger_charge(l, sname, recipient, release, lo, n, delta, lim);
}

bool mnc_ledger_has_release(mnc_ledger *l, const char *release)
{
    if (!l || !release)
        return false;
    pthread_mutex_lock(&l->mu);
    rel *r = find_rel(l, release);
    bool done = r && r->state == REL_DONE;
    pthread_mutex_unlock(&l->mu);
    return done;
}

int mnc_ledger_history(mnc_ledger *l, const mnc_policy *p, const char *sname, mnc_obs **out, size_t *n)
{
    if (!l || !p || !sname || !out || !n)
        return -1;
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&l->mu);
    subject *s = find_subject(l, sname);
    int rc = !s ? 0 : s->hist_bad ? -1 : mnc_hist_block(&s->hist, p, out, n);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

static int visit_charge(subject *s, const charge *ch, int (*cb)(void *, const mnc_ledger_entry *), void *arg)
{
    mnc_ledger_entry e = {ch->seq, ch->t, s->name, ch->recipient, ch->release, ch->delta, ch->obs, ch->n_obs};
    return cb(arg, &e);
}

int mnc_ledger_find_release(mnc_ledger *l, const char *release, int (*cb)(void *arg, const mnc_ledger_entry *e),
                            void *arg)
{
    if (!l || !release || !cb)
        return -1;
    pthread_mutex_lock(&l->mu);
    rel *r = find_rel(l, release);
    int rc = -1;
    if (r && r->state == REL_DONE && r->s) {
        subject *s = r->s;
        size_t lo = 0, hi = s->nch; /* s->ch is ordered by seq */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->ch[mid].seq < r->seq)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < s->nch && s->ch[lo].seq == r->seq)
            rc = visit_charge(s, &s->ch[lo], cb, arg);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

static int visit(subject *s, int (*cb)(void *, const mnc_ledger_entry *), void *arg)
{
    for (size_t c = 0; c < s->nch; c++) {
        int r = visit_charge(s, &s->ch[c], cb, arg);
        if (r)
            return r;
    }
    return 0;
}

struct visit_all {
    int (*cb)(void *, const mnc_ledger_entry *);
    void *arg;
};

static int visit_one(mnc_hnode *n, void *arg)
{
    const struct visit_all *va = arg;
    return visit(MNC_HTAB_ENTRY(n, subject, h), va->cb, va->arg);
}

int mnc_ledger_foreach(mnc_ledger *l, const char *sname, int (*cb)(void *arg, const mnc_ledger_entry *e), void *arg)
{
    if (!l || !cb)
        return -1;
    pthread_mutex_lock(&l->mu);
    int r = 0;
    if (sname) {
        subject *s = find_subject(l, sname);
        if (s)
            r = visit(s, cb, arg);
    } else {
        struct visit_all va = {cb, arg};
        r = mnc_htab_each(&l->subjects, visit_one, &va);
    }
    pthread_mutex_unlock(&l->mu);
    return r;
}

int mnc_ledger_flush(mnc_ledger *l)
{
    if (!l || !l->j) {
        errno = l ? EROFS : EINVAL;
        return -1;
    }
    int rc = mnc_journal_flush(l->j);
    if (rc != 0) {
        int e = errno;
        pthread_mutex_lock(&l->mu);
        l->failed = true;
        pthread_mutex_unlock(&l->mu);
        errno = e;
    }
    return rc;
}

int mnc_ledger_set_deferred(mnc_ledger *l, bool on)
{
    if (!l || !l->j) {
        errno = l ? EROFS : EINVAL;
        return -1;
    }
    pthread_mutex_lock(&l->mu);
    l->deferred = on;
    pthread_mutex_unlock(&l->mu);
    return on ? 0 : mnc_ledger_flush(l);
}

void mnc_ledger_set_no_group_commit(mnc_ledger *l, int on)
{
    if (l && l->j)
        mnc_journal_set_no_group_commit(l->j, on);
}

void mnc_ledger_stats(mnc_ledger *l, size_t *subjects, size_t *charges)
{
    pthread_mutex_lock(&l->mu);
    if (subjects)
        *subjects = l->subjects.n;
    if (charges)
        *charges = l->ncharges;
    pthread_mutex_unlock(&l->mu);
}

uint64_t mnc_ledger_subject_charges(mnc_ledger *l, const char *sname)
{
    if (!l || !sname)
        return 0;
    pthread_mutex_lock(&l->mu);
    subject *s = find_subject(l, sname);
    uint64_t n = s ? s->nch : 0;
    pthread_mutex_unlock(&l->mu);
    return n;
}
