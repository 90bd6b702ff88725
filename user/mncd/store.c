// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* store.c - mncd's durable state: objects, inboxes, memory store.
 *
 * Everything lives in memory and every change is also appended to a batch of change records;
 * at the end of each event-loop iteration the batch becomes ONE journal record (libmnc
 * journal: CRC'd, fdatasync'd before append returns). Responses of that iteration are sent only
 * after the commit, so an acknowledged change is on disk (group commit per iteration).
 *
 * Change records (JSON, inside the array that is one journal payload):
 *   {"k":"obj","o":{...mnc_disclosure_to_json...}}      upsert of a whole object
 *   {"k":"mem","store":S,"kh":H,"id":HEX,"writer":A,"t":MS[,"lbl":L]}
 *                                                      a memory entry: H is the keyed hash of
 *                                                      the agent's key (mncd_hv_id: the key
 *                                                      itself is never stored), L the label of
 *                                                      its writer (label.c); journals before
 *                                                      2027-01 have "key":K, hashed at replay
 *   {"k":"mlbl","store":S,"lbl":L}                     the store's key label (compaction)
 *   {"k":"push","agent":A,"id":HEX,"from":A,"t":MS}     enqueue a delivery
 *   {"k":"pop","agent":A,"id":HEX}                     dequeue the head of A's inbox
 *   {"k":"audit","seq":N,"bytes":L}                    the iteration's audit records N, N+1..:
 *                                                      their exact L bytes follow the array,
 *                                                      raw (see below)
 * A record is the array's text and, when it has an audit change (always its last), the audit
 * lines right after the closing "]": JSON lines carried as a JSON string would be escaped
 * quote by quote, ~30% more bytes and the largest single cost of writing a record (profiles:
 * put_strn). Replay still reads the older form {"k":"audit","seq":N,"lines":"..."}, the
 * lines as a string (journals of mncd before 2026-12-03); an older mncd refuses the new form
 * ("malformed audit change") rather than dropping the lines.
 * Names (not ids) are stored, so a state directory stays meaningful if the policy set is
 * re-ordered; a name the current policy does not know makes startup fail (corrupt state or
 * incompatible policy: refuse rather than guess).
 *
 * One sync per iteration (docs/mncd.md, "Durable state"): while the event loop runs, the audit
 * log is in deferred mode (mnc/audit.h): the iteration's audit lines are hash-chained in memory
 * and embedded in the iteration's journal record, so the journal's one fdatasync makes both the
 * state changes and their audit records durable; the lines are written to audit.jsonl only
 * after that, without an fdatasync of their own. So every line the loop writes to audit.jsonl
 * has a durable journal copy first, and after a crash audit.jsonl can lack (or tear) only lines
 * the journal has. On startup the journal's audit lines are collected during replay and handed
 * to mnc_audit_reconcile *before* compaction drops them: missing/torn lines are re-appended
 * byte-identically and the file is fdatasync'd; a line that differs refuses the start. An old
 * mncd reading such a journal refuses it ("unknown record kind"), it never drops the lines.
 *
 * On startup the journal is replayed and then compacted (rewritten atomically with one record
 * per live item), so its size is bounded by the live state, not by history.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "mncd.h"

#define MEM_BUCKETS_MIN 1024
#define COMPACT_CHUNK 1000

/* Change records are written straight into the batch text, in the bytes mnc_json_print prints
 * for the cJSON tree each used to be built as (json_write.h's writers; test_disclosure compares
 * the object's text with its tree's): no tree is built, printed and freed per record, and the
 * buffer is reused, so a busy iteration costs no allocations (profiles showed the per-record
 * trees, then the iteration-sized print and delete, among mncd's largest costs).
 * batch_open appends the "[" or "," before a record; batch_close keeps the record, leaving
 * room for the "]" the commit adds, or (rc != 0: OOM) drops it - the batch is then as before.
 * A record that grows the buffer keeps it grown. */
static void batch_open(mncd_store *s, mnc_jbuf *b, int *rc)
{
    *b = (mnc_jbuf){s->batch, s->batch_len, s->batch_cap};
    *rc = mnc_jbuf_reserve(b, 1);
    if (*rc == 0)
        b->p[b->len++] = s->batch_len == 0 ? '[' : ',';
}

static int batch_close(mncd_store *s, mnc_jbuf *b, int rc)
{
    if (rc == 0)
        rc = mnc_jbuf_reserve(b, 1);
    s->batch = b->p; /* possibly moved, in either case */
    s->batch_cap = b->cap;
    if (rc != 0)
        return -1; /* batch_len unchanged */
    s->batch_len = b->len;
    return 0;
}

static const char *pname(const mnc_policy *p, int id)
{
    return id >= 0 && id < p->n_principals ? p->principals[id].name : "?";
}

#define W(x) rc = rc ? rc : (x)

/* {"k":"obj","o":{...mnc_disclosure_to_json...}} */
static int w_obj(mnc_jbuf *b, const mnc_policy *p, const mnc_disclosure *d)
{
    int rc = MNC_JBUF_LIT(b, "{\"k\":\"obj\",\"o\":");
    W(mnc_disclosure_write_json(b, p, d));
    W(MNC_JBUF_LIT(b, "}"));
    return rc;
}

/* {"k":"mem","store":S,"kh":H,"id":HEX,"writer":A,"t":MS[,"lbl":L]} */
static int w_mem(mnc_jbuf *b, const mnc_policy *p, const mncd_mem *m, const mncd_label *wl)
{
    if (!m)
        return -1;
    char hex[MNC_OID_HEX];
    mnc_oid_hex(&m->id, hex);
    const char *slash = strchr(m->key, '/');
    if (!slash)
        return -1;
    int store = atoi(m->key);
    int rc = 0;
    W(MNC_JBUF_LIT(b, "{\"k\":\"mem\",\"store\":"));
    W(mnc_jbuf_str(b, pname(p, store)));
    W(MNC_JBUF_LIT(b, ",\"kh\":"));
    W(mnc_jbuf_str(b, slash + 1));
    W(MNC_JBUF_LIT(b, ",\"id\":"));
    W(mnc_jbuf_str(b, hex));
    W(MNC_JBUF_LIT(b, ",\"writer\":"));
    W(mnc_jbuf_str(b, pname(p, m->writer)));
    W(MNC_JBUF_LIT(b, ",\"t\":"));
    W(mnc_jbuf_u64(b, m->time_ms));
    if (wl && !mncd_label_empty(wl)) {
        W(MNC_JBUF_LIT(b, ",\"lbl\":"));
        W(mncd_label_write_json(b, p, wl));
    }
    W(MNC_JBUF_LIT(b, "}"));
    return rc;
}

/* {"k":"mlbl","store":S,"lbl":L} */
static int w_mlbl(mnc_jbuf *b, const mnc_policy *p, int store, const mncd_label *l)
{
    int rc = MNC_JBUF_LIT(b, "{\"k\":\"mlbl\",\"store\":");
    W(mnc_jbuf_str(b, pname(p, store)));
    W(MNC_JBUF_LIT(b, ",\"lbl\":"));
    W(mncd_label_write_json(b, p, l));
    W(MNC_JBUF_LIT(b, "}"));
    return rc;
}

/* {"k":"push","agent":A,"id":HEX,"from":A,"t":MS[,"fwd":true]} */
static int w_push(mnc_jbuf *b, const mnc_policy *p, int agent, const mncd_msg *m)
{
    char hex[MNC_OID_HEX];
    mnc_oid_hex(&m->id, hex);
    int rc = 0;
    W(MNC_JBUF_LIT(b, "{\"k\":\"push\",\"agent\":"));
    W(mnc_jbuf_str(b, pname(p, agent)));
    W(MNC_JBUF_LIT(b, ",\"id\":"));
    W(mnc_jbuf_str(b, hex));
    W(MNC_JBUF_LIT(b, ",\"from\":"));
    W(mnc_jbuf_str(b, pname(p, m->from)));
    W(MNC_JBUF_LIT(b, ",\"t\":"));
    W(mnc_jbuf_u64(b, m->time_ms));
    W(m->forwarded ? MNC_JBUF_LIT(b, ",\"fwd\":true}") : MNC_JBUF_LIT(b, "}"));
    return rc;
}

static int rec_obj(mncd_store *s, const mnc_disclosure *d)
{
    mnc_jbuf b;
    int rc;
    batch_open(s, &b, &rc);
    W(w_obj(&b, s->p, d));
    return batch_close(s, &b, rc);
}

static int rec_mem(mncd_store *s, const mncd_mem *m, const mncd_label *wl)
{
    mnc_jbuf b;
    int rc;
    batch_open(s, &b, &rc);
    W(w_mem(&b, s->p, m, wl));
    return batch_close(s, &b, rc);
}

static int rec_push(mncd_store *s, int agent, const mncd_msg *m)
{
    mnc_jbuf b;
    int rc;
    batch_open(s, &b, &rc);
    W(w_push(&b, s->p, agent, m));
    return batch_close(s, &b, rc);
}

/* {"k":"pop","agent":A,"id":HEX} */
static int rec_pop(mncd_store *s, int agent, const mnc_oid *id)
{
    char hex[MNC_OID_HEX];
    mnc_oid_hex(id, hex);
    mnc_jbuf b;
    int rc;
    batch_open(s, &b, &rc);
    W(MNC_JBUF_LIT(&b, "{\"k\":\"pop\",\"agent\":"));
    W(mnc_jbuf_str(&b, pname(s->p, agent)));
    W(MNC_JBUF_LIT(&b, ",\"id\":"));
    W(mnc_jbuf_str(&b, hex));
    W(MNC_JBUF_LIT(&b, "}"));
    return batch_close(s, &b, rc);
}

/* {"k":"audit","seq":N,"bytes":L}; the caller appends the L bytes after the array */
static int rec_audit(mncd_store *s, uint64_t first, size_t len)
{
    mnc_jbuf b;
    int rc;
    batch_open(s, &b, &rc);
    W(MNC_JBUF_LIT(&b, "{\"k\":\"audit\",\"seq\":"));
    W(mnc_jbuf_num(&b, (double)first));
    W(MNC_JBUF_LIT(&b, ",\"bytes\":"));
    W(mnc_jbuf_num(&b, (double)len));
    W(MNC_JBUF_LIT(&b, "}"));
    return batch_close(s, &b, rc);
}

#undef W

/* ---- in-memory operations (no journaling) */

static int mem_set(mncd_store *s, int store, const char *key, const mnc_oid *id, int writer, uint64_t t)
{
    char full[MNC_PROTO_MAX_KEY + 16];
    snprintf(full, sizeof(full), "%d/%s", store, key);
    mncd_mem *m = MNC_HTAB_ENTRY(mnc_htab_find(&s->mem, full), mncd_mem, h);
    if (m) {
        m->id = *id;
        m->writer = (uint16_t)writer;
        m->time_ms = t;
        return 0;
    }
    m = mnc_htab_add_new(&s->mem, full, sizeof(*m), offsetof(mncd_mem, h));
    if (!m)
        return -1;
    m->key = m->h.key;
    m->id = *id;
    m->writer = (uint16_t)writer;
    m->time_ms = t;
    return 0;
}

const mncd_mem *mncd_store_mem_get(const mncd_store *s, int store, const char *key)
{
    char full[MNC_PROTO_MAX_KEY + 16];
    snprintf(full, sizeof(full), "%d/%s", store, key);
    return MNC_HTAB_ENTRY(mnc_htab_find(&s->mem, full), mncd_mem, h);
}

static int inbox_push(mncd_store *s, int agent, const mnc_oid *id, int from, bool fwd, uint64_t t)
{
    mncd_msg *m = calloc(1, sizeof(*m));
    if (!m)
        return -1;
    m->id = *id;
    m->forwarded = fwd;
    m->from = (uint16_t)from;
    m->time_ms = t;
    mncd_inbox *q = &s->inbox[agent];
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->n++;
    return 0;
}

static int inbox_pop(mncd_store *s, int agent, mncd_msg *out)
{
    mncd_inbox *q = &s->inbox[agent];
    mncd_msg *m = q->head;
    if (!m)
        return 0;
    q->head = m->next;
    if (!q->head)
        q->tail = NULL;
    q->n--;
    if (out) {
        *out = *m;
        out->next = NULL;
    }
    free(m);
    return 1;
}

/* ---- journaled operations */

int mncd_store_put_object(mncd_store *s, mnc_disclosure *d)
{
    if (rec_obj(s, d) != 0)
        return -1;
    return mnc_registry_put(&s->reg, d) == 0 ? 0 : -1;
}

int mncd_store_touch(mncd_store *s, const mnc_disclosure *d) { return rec_obj(s, d); }

int mncd_store_push(mncd_store *s, int agent, const mnc_oid *id, int from, bool forwarded, uint64_t now_ms)
{
    if (agent < 0 || agent >= s->p->n_principals || s->inbox[agent].n >= MNCD_MAX_INBOX) {
        errno = ENOSPC;
        return -1;
    }
    mncd_msg m = {.id = *id, .from = (uint16_t)from, .forwarded = forwarded, .time_ms = now_ms};
    if (rec_push(s, agent, &m) != 0)
        return -1;
    return inbox_push(s, agent, id, from, forwarded, now_ms);
}

int mncd_store_pop(mncd_store *s, int agent, mncd_msg *out)
{
    if (agent < 0 || agent >= s->p->n_principals || !s->inbox[agent].head)
        return 0;
    if (rec_pop(s, agent, &s->inbox[agent].head->id) != 0)
        return -1;
    return inbox_pop(s, agent, out);
}

/* The store's key label := itself ⊓ l (allocated on first use). 0 or -1 (OOM). */
static int mlbl_meet(mncd_store *s, int store, const mncd_label *l)
{
    if (!l || mncd_label_empty(l))
        return 0;
    if (store < 0 || store >= s->p->n_principals)
        return -1;
    if (!s->mlbl && !(s->mlbl = calloc((size_t)s->p->n_principals, sizeof(*s->mlbl))))
        return -1;
    if (!s->mlbl[store] && !(s->mlbl[store] = calloc(1, sizeof(mncd_label))))
        return -1;
    mncd_label_meet(s->mlbl[store], l);
    return 0;
}

const mncd_label *mncd_store_mem_label(const mncd_store *s, int store)
{
    return s->mlbl && store >= 0 && store < s->p->n_principals ? s->mlbl[store] : NULL;
}

int mncd_store_mem_put(mncd_store *s, int store, const char *hkey, const mnc_oid *id, int writer, uint64_t now_ms,
                       const mncd_label *wl)
{
    if (mem_set(s, store, hkey, id, writer, now_ms) != 0 || mlbl_meet(s, store, wl) != 0)
        return -1;
    return rec_mem(s, mncd_store_mem_get(s, store, hkey), wl);
}

/* Test hook (fault injection for tests/integration/test_mncd_durability): with
 * MNCD_TEST_KILL_AFTER_JOURNAL=N in the environment, mncd SIGKILLs itself right after the N-th
 * journal record carrying audit lines is durable and before those lines are written to
 * audit.jsonl - the crash window the startup reconciliation exists for. Read once at open. */
static long kill_after_journal;

int mncd_store_commit(mncd_store *s)
{
    size_t alen = 0;
    uint64_t afirst = 0;
    const char *al = s->audit ? mnc_audit_pending(s->audit, &alen, &afirst) : NULL;
    if (!s->batch_len && !al)
        return 0;
    if (al) {
        mnc_jbuf b = {0};
        if (rec_audit(s, afirst, alen) == 0) {
            /* "]" then the lines, raw: room for both after the audit change */
            b = (mnc_jbuf){s->batch, s->batch_len + 1, s->batch_cap};
            if (mnc_jbuf_reserve(&b, alen) == 0) {
                s->batch = b.p;
                s->batch_cap = b.cap;
            } else {
                b.p = NULL;
            }
        }
        if (!b.p) {
            mnc_audit_discard_pending(s->audit);
            s->batch_len = 0;
            errno = ENOMEM;
            return -1;
        }
    }
    s->batch[s->batch_len] = ']'; /* batch_add left room for it */
    size_t blen = s->batch_len + 1;
    if (al) {
        memcpy(s->batch + blen, al, alen);
        blen += alen;
    }
    s->batch_len = 0;
    int rc = mnc_journal_append(s->j, s->batch, blen, NULL);
    if (rc != 0) {
        if (al) /* not durable anywhere: never write them (fail closed) */
            mnc_audit_discard_pending(s->audit);
        return -1;
    }
    if (al && kill_after_journal > 0 && --kill_after_journal == 0)
        raise(SIGKILL);
    /* Durable in the journal: now the file gets them (no fdatasync needed). */
    if (al && mnc_audit_write_pending(s->audit) != 0)
        return -1;
    return 0;
}

size_t mncd_store_inbox_total(const mncd_store *s)
{
    size_t n = 0;
    for (int i = 0; i < s->p->n_principals; i++)
        n += s->inbox[i].n;
    return n;
}

/* ---- replay */

typedef struct replay {
    mncd_store *s;
    char *err;
    size_t errlen;
    /* audit lines found in the journal, concatenated (consecutive seqs from afirst) */
    char *alines;
    size_t alen, acap;
    uint64_t afirst, anext;
} replay;

/* Collects one record's audit lines; they must continue the previous record's (one run of
 * the event loop journals every line it writes, and compaction at start drops the lines of
 * earlier runs only after the reconciliation made them durable in audit.jsonl). */
static int collect_audit(replay *rp, const cJSON *r, uint64_t jseq, const char *tail, size_t tail_len)
{
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(r, "seq");
    const cJSON *jb = cJSON_GetObjectItemCaseSensitive(r, "bytes");
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(r, "lines");
    const char *text = NULL;
    size_t n = 0;
    if (cJSON_IsNumber(jb) && !jl && !r->next) {
        /* the lines follow the array, and are all that follows it */
        if (jb->valuedouble < 1 || jb->valuedouble != (double)tail_len) {
            snprintf(rp->err, rp->errlen,
                     "journal record #%llu: its audit change announces %.0f bytes of lines, %zu "
                     "follow the record's array",
                     (unsigned long long)jseq, jb->valuedouble, tail_len);
            return -1;
        }
        text = tail;
        n = tail_len;
        if (memchr(text, '\0', n)) {
            snprintf(rp->err, rp->errlen, "journal record #%llu: audit lines hold a NUL byte",
                     (unsigned long long)jseq);
            return -1;
        }
    } else if (cJSON_IsString(jl) && !jb && tail_len == 0) { /* the older form */
        text = jl->valuestring;
        n = strlen(text);
    }
    if (!cJSON_IsNumber(js) || js->valuedouble < 1 || !text || n == 0) {
        snprintf(rp->err, rp->errlen, "journal record #%llu: malformed audit change", (unsigned long long)jseq);
        return -1;
    }
    uint64_t first = (uint64_t)js->valuedouble;
    if (text[n - 1] != '\n') {
        snprintf(rp->err, rp->errlen,
                 "journal record #%llu: audit lines do not end with a "
                 "newline",
                 (unsigned long long)jseq);
        return -1;
    }
    if (rp->alen > 0 && first != rp->anext) {
        snprintf(rp->err, rp->errlen,
                 "journal record #%llu: its audit records start at seq "
                 "%llu, the previous record's ended at %llu",
                 (unsigned long long)jseq, (unsigned long long)first, (unsigned long long)(rp->anext - 1));
        return -1;
    }
    if (rp->alen + n + 1 > rp->acap) {
        size_t nc = rp->acap ? rp->acap : 65536;
        while (nc < rp->alen + n + 1)
            nc *= 2;
        char *na = realloc(rp->alines, nc);
        if (!na) {
            snprintf(rp->err, rp->errlen, "out of memory");
            return -1;
        }
        rp->alines = na;
        rp->acap = nc;
    }
    if (rp->alen == 0)
        rp->afirst = first;
    memcpy(rp->alines + rp->alen, text, n);
    rp->alen += n;
    uint64_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    rp->anext = first + lines;
    return 0;
}

static int agent_of(const mnc_policy *p, const cJSON *v)
{
    return cJSON_IsString(v) ? mnc_policy_principal(p, v->valuestring) : -1;
}

static int apply(mncd_store *s, const cJSON *r, char *err, size_t errlen)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "k");
    const char *kind = cJSON_IsString(k) ? k->valuestring : "";
    mnc_oid id;
    if (strcmp(kind, "obj") == 0) {
        mnc_errors e;
        mnc_errors_init(&e);
        mnc_disclosure tmp;
        if (mnc_disclosure_from_json(s->p, cJSON_GetObjectItemCaseSensitive(r, "o"), &tmp, &e) != 0) {
            snprintf(err, errlen, "object record does not load under the current policy: %s", e.n ? e.msg[0] : "?");
            mnc_errors_free(&e);
            return -1;
        }
        mnc_errors_free(&e);
        mnc_disclosure *old = mnc_registry_get(&s->reg, &tmp.id);
        if (old) { /* upsert: replace contents in place */
            mnc_disclosure_free(old);
            *old = tmp;
            return 0;
        }
        mnc_disclosure *h = malloc(sizeof(*h));
        if (!h || (*h = tmp, mnc_registry_put(&s->reg, h) != 0)) {
            mnc_disclosure_free(&tmp);
            free(h);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        return 0;
    }
    if (strcmp(kind, "mlbl") == 0) {
        mncd_label l;
        int store = agent_of(s->p, cJSON_GetObjectItemCaseSensitive(r, "store"));
        if (store < 0 || mncd_label_from_json(s->p, cJSON_GetObjectItemCaseSensitive(r, "lbl"), &l) != 0) {
            snprintf(err, errlen, "bad memory label record (unknown store or names?)");
            return -1;
        }
        return mlbl_meet(s, store, &l);
    }
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(r, "id");
    if (!cJSON_IsString(jid) || mnc_oid_parse(jid->valuestring, &id) != 0) {
        snprintf(err, errlen, "record without a valid object id");
        return -1;
    }
    if (strcmp(kind, "mem") == 0) {
        int store = agent_of(s->p, cJSON_GetObjectItemCaseSensitive(r, "store"));
        int w = agent_of(s->p, cJSON_GetObjectItemCaseSensitive(r, "writer"));
        const cJSON *kh = cJSON_GetObjectItemCaseSensitive(r, "kh");
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(r, "key"); /* before 2027-01: plain */
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "t");
        const cJSON *lj = cJSON_GetObjectItemCaseSensitive(r, "lbl");
        mncd_label l;
        if (store < 0 || w < 0 || (!cJSON_IsString(kh) && !cJSON_IsString(key)) || !cJSON_IsNumber(t) ||
            (lj && mncd_label_from_json(s->p, lj, &l) != 0)) {
            snprintf(err, errlen, "bad memory record (unknown store/writer?)");
            return -1;
        }
        char h[MNC_AUDIT_HV_MAX];
        if (!cJSON_IsString(kh) &&
            !mnc_audit_hv(s->hkey, key->valuestring, strlen(key->valuestring), MNCD_KEY_HEX, h)) {
            snprintf(err, errlen, "cannot hash a memory key");
            return -1;
        }
        if (mem_set(s, store, cJSON_IsString(kh) ? kh->valuestring : h, &id, w, (uint64_t)t->valuedouble) != 0)
            return -1;
        return lj ? mlbl_meet(s, store, &l) : 0;
    }
    int agent = agent_of(s->p, cJSON_GetObjectItemCaseSensitive(r, "agent"));
    if (agent < 0) {
        snprintf(err, errlen, "inbox record for an agent the policy does not know");
        return -1;
    }
    if (strcmp(kind, "push") == 0) {
        int from = agent_of(s->p, cJSON_GetObjectItemCaseSensitive(r, "from"));
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "t");
        if (from < 0 || !cJSON_IsNumber(t)) {
            snprintf(err, errlen, "bad push record");
            return -1;
        }
        return inbox_push(s, agent, &id, from, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fwd")),
                          (uint64_t)t->valuedouble);
    }
    if (strcmp(kind, "pop") == 0) {
        mncd_inbox *q = &s->inbox[agent];
        if (!q->head || memcmp(&q->head->id, &id, sizeof(id)) != 0) {
            snprintf(err, errlen, "pop record does not match the inbox head");
            return -1;
        }
        return inbox_pop(s, agent, NULL) == 1 ? 0 : -1;
    }
    snprintf(err, errlen, "unknown record kind \"%.32s\"", kind);
    return -1;
}

static int replay_cb(void *arg, uint64_t seq, const void *payload, size_t len)
{
    replay *rp = arg;
    /* the array, and after it the raw audit lines of its audit change, if any (top of file) */
    const char *end = NULL;
    cJSON *a = cJSON_ParseWithLengthOpts(payload, len, &end, false);
    if (!cJSON_IsArray(a) || !end || end < (const char *)payload || end > (const char *)payload + len) {
        snprintf(rp->err, rp->errlen, "journal record #%llu is not a JSON array", (unsigned long long)seq);
        cJSON_Delete(a);
        return -1;
    }
    size_t tail_len = len - (size_t)(end - (const char *)payload);
    bool tail_used = false;
    int i = 0;
    for (const cJSON *r = a->child; r; r = r->next, i++) {
        char e[400];
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "k");
        if (cJSON_IsString(k) && strcmp(k->valuestring, "audit") == 0) {
            if (tail_used || collect_audit(rp, r, seq, end, tail_len) != 0) {
                if (tail_used)
                    snprintf(rp->err, rp->errlen, "journal record #%llu: two audit changes", (unsigned long long)seq);
                cJSON_Delete(a);
                return -1;
            }
            tail_used = true;
            continue;
        }
        if (apply(rp->s, r, e, sizeof(e)) != 0) {
            snprintf(rp->err, rp->errlen, "journal record #%llu, change %d: %s", (unsigned long long)seq, i, e);
            cJSON_Delete(a);
            return -1;
        }
    }
    cJSON_Delete(a);
    if (tail_len > 0 && !tail_used) {
        snprintf(rp->err, rp->errlen, "journal record #%llu: %zu bytes follow its array and it has no audit change",
                 (unsigned long long)seq, tail_len);
        return -1;
    }
    return 0;
}

/* Snapshot of everything live, as journal payloads (for compaction). */
typedef struct snap {
    mncd_store *s;
    mnc_jbuf cur; /* the current chunk's text: "[" record "," record ... */
    int in_cur;
    char **payloads;
    size_t *lens;
    size_t n, cap;
    int failed;
} snap;

static int snap_flush(snap *sn)
{
    if (!sn->in_cur)
        return 0;
    if (mnc_jbuf_reserve(&sn->cur, 1) != 0)
        return -1;
    sn->cur.p[sn->cur.len++] = ']';
    if (sn->n == sn->cap) {
        size_t nc = sn->cap ? sn->cap * 2 : 16;
        char **np = realloc(sn->payloads, nc * sizeof(*np));
        if (np)
            sn->payloads = np;
        size_t *nl = np ? realloc(sn->lens, nc * sizeof(*nl)) : NULL;
        if (nl)
            sn->lens = nl;
        if (!np || !nl)
            return -1;
        sn->cap = nc;
    }
    sn->payloads[sn->n] = sn->cur.p;
    sn->lens[sn->n++] = sn->cur.len;
    sn->cur = (mnc_jbuf){0};
    sn->in_cur = 0;
    return 0;
}

/* Opens one record of the current chunk ("[" or ","); 0 or -1 (OOM). */
static int snap_open(snap *sn)
{
    if (mnc_jbuf_reserve(&sn->cur, 1) != 0)
        return -1;
    sn->cur.p[sn->cur.len++] = sn->in_cur ? ',' : '[';
    return 0;
}

/* Closes it: rc is the record writer's result. */
static int snap_close(snap *sn, int rc)
{
    if (rc != 0)
        return -1;
    if (++sn->in_cur >= COMPACT_CHUNK)
        return snap_flush(sn);
    return 0;
}

static int snap_obj(mnc_disclosure *d, void *arg)
{
    snap *sn = arg;
    if (snap_open(sn) != 0 || snap_close(sn, w_obj(&sn->cur, sn->s->p, d)) != 0) {
        sn->failed = 1;
        return 1;
    }
    return 0;
}

static int snap_mem(mnc_hnode *n, void *arg)
{
    snap *sn = arg;
    if (snap_open(sn) != 0 || snap_close(sn, w_mem(&sn->cur, sn->s->p, MNC_HTAB_ENTRY(n, mncd_mem, h), NULL)) != 0) {
        sn->failed = 1;
        return 1;
    }
    return 0;
}

static int compact(mncd_store *s)
{
    snap sn = {.s = s};
    mnc_registry_each(&s->reg, snap_obj, &sn);
    if (!sn.failed)
        mnc_htab_each(&s->mem, snap_mem, &sn);
    /* the stores' key labels: the entries above no longer say who wrote each key before */
    for (int st = 0; !sn.failed && s->mlbl && st < s->p->n_principals; st++)
        if (s->mlbl[st])
            sn.failed = snap_open(&sn) != 0 || snap_close(&sn, w_mlbl(&sn.cur, s->p, st, s->mlbl[st])) != 0;
    for (int a = 0; !sn.failed && a < s->p->n_principals; a++)
        for (mncd_msg *m = s->inbox[a].head; m && !sn.failed; m = m->next)
            sn.failed = snap_open(&sn) != 0 || snap_close(&sn, w_push(&sn.cur, s->p, a, m)) != 0;
    if (!sn.failed)
        sn.failed = snap_flush(&sn) != 0;
    int rc = -1;
    if (!sn.failed)
        rc = mnc_journal_compact(s->j, (const void *const *)sn.payloads, sn.lens, sn.n);
    /* The journal treats a bad *last* record as a torn write and truncates it. The snapshot
     * must never be that record: a bit flip in it would silently drop the whole state. A
     * trailing empty batch ("[]", a no-op on replay) makes any damage to the snapshot
     * corruption-in-the-middle, which refuses to start instead. */
    if (rc == 0 && sn.n > 0)
        rc = mnc_journal_append(s->j, "[]", 2, NULL);
    if (rc != 0)
        snprintf(s->err, sizeof(s->err), "%s: compaction failed: %s", s->path, strerror(errno));
    free(sn.cur.p);
    for (size_t i = 0; i < sn.n; i++)
        free(sn.payloads[i]);
    free(sn.payloads);
    free(sn.lens);
    return rc;
}

/* The journal's audit lines -> audit.jsonl (mnc_audit_reconcile), before compaction. */
static int reconcile_audit(mncd_store *s, replay *rp, const char *state_dir)
{
    if (rp->alen == 0)
        return 0;
    if (!s->audit) {
        snprintf(s->err, sizeof(s->err), "%s holds audit records but no audit log is open", s->path);
        return -1;
    }
    char e[512];
    uint64_t added = 0;
    uint64_t had = mnc_audit_seq(s->audit);
    int rc = mnc_audit_reconcile(s->audit, rp->afirst, rp->alines, rp->alen, &added, e, sizeof(e));
    if (rc != 0) {
        snprintf(s->err, sizeof(s->err),
                 "%s/audit.jsonl %s the state journal (which holds "
                 "audit records %llu..%llu): %s",
                 state_dir, rc > 0 ? "conflicts with" : "could not be reconciled with", (unsigned long long)rp->afirst,
                 (unsigned long long)(rp->anext - 1), e);
        return -1;
    }
    if (added > 0) {
        char det[200];
        snprintf(det, sizeof(det),
                 "re-appended %llu audit records (seq %llu..%llu) from the "
                 "state journal: they were durable there but missing from the log (crash "
                 "before they were written)",
                 (unsigned long long)added, (unsigned long long)(had + 1), (unsigned long long)(had + added));
        fprintf(stderr, "mncd: audit log: %s\n", det);
        mnc_audit_rec r = {
            .time_ms = mnc_now_ms(), .op = "audit.recover", .decision = "allow", .reason = "ok", .detail = det};
        if (mnc_audit_append(s->audit, &r) != 0 || mnc_audit_sync(s->audit) != 0) {
            snprintf(s->err, sizeof(s->err), "cannot write the audit log: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

int mncd_store_open(mncd_store *s, const mnc_policy *p, const char *state_dir, mnc_audit *audit)
{
    memset(s, 0, sizeof(*s));
    s->p = p;
    s->audit = audit;
    const char *k = getenv("MNCD_TEST_KILL_AFTER_JOURNAL");
    kill_after_journal = k ? atol(k) : 0;
    mnc_registry_init(&s->reg);
    mnc_htab_init(&s->mem, MEM_BUCKETS_MIN, 2, 4);
    s->inbox = calloc((size_t)p->n_principals + 1, sizeof(*s->inbox));
    if (!s->inbox) {
        snprintf(s->err, sizeof(s->err), "out of memory");
        return -1;
    }
    /* the key of the keyed hashes (mnc/audit.h): memory keys are stored as hashes under it,
     * and an older journal's plain keys are hashed as they are replayed */
    char kpath[PATH_MAX + 16], kerr[PATH_MAX + 200];
    snprintf(kpath, sizeof(kpath), "%s/audit.key", state_dir);
    if (mnc_audit_key_load(kpath, true, s->hkey, kerr, sizeof(kerr)) != 0) {
        snprintf(s->err, sizeof(s->err), "%s", kerr);
        return -1;
    }
    s->hkey_ok = true;
    snprintf(s->path, sizeof(s->path), "%s/state.journal", state_dir);
    char notice[512] = "", jerr[512] = "", rerr[512] = "";
    replay rp = {.s = s, .err = rerr, .errlen = sizeof(rerr)};
    s->j = mnc_journal_open(s->path, replay_cb, &rp, notice, sizeof(notice), jerr, sizeof(jerr));
    if (!s->j) {
        snprintf(s->err, sizeof(s->err), "%s: %.600s%s%.600s", s->path, jerr, rerr[0] ? ": " : "", rerr);
        free(rp.alines);
        return -1;
    }
    if (notice[0])
        fprintf(stderr, "mncd: state journal: %s\n", notice);
    /* Before compaction: it drops the journal's copies of the audit lines. */
    int rc = reconcile_audit(s, &rp, state_dir);
    free(rp.alines);
    return rc == 0 ? compact(s) : -1;
}

static int free_mem(mnc_hnode *n, void *arg)
{
    (void)arg;
    free(MNC_HTAB_ENTRY(n, mncd_mem, h)); /* and its key (mnc_htab_add_new) */
    return 0;
}

void mncd_store_close(mncd_store *s, bool at_exit)
{
    if (s->j && mnc_journal_close(s->j) != 0)
        fprintf(stderr, "mncd: closing the state journal reported an I/O error\n");
    s->j = NULL;
    if (at_exit)
        return;
    free(s->batch);
    s->batch = NULL;
    s->batch_len = s->batch_cap = 0;
    mnc_registry_free(&s->reg);
    if (s->inbox) {
        for (int a = 0; a < s->p->n_principals; a++)
            while (inbox_pop(s, a, NULL) == 1)
                ;
        free(s->inbox);
        s->inbox = NULL;
    }
    mnc_htab_each(&s->mem, free_mem, NULL);
    mnc_htab_fini(&s->mem);
    for (int st = 0; s->mlbl && st < s->p->n_principals; st++)
        free(s->mlbl[st]);
    free(s->mlbl);
    s->mlbl = NULL;
}
