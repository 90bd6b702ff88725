// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_privsep.c - libFuzzer target for the enforcer's gate on the monitor/enforcer protocol
 * (user/mncd/privsep.c: psp_check, psp_advance, psp_check_reply; docs/privsep.md).
 *
 * An input is a sequence of records [u8 ctl][u16 len, little endian][len bytes] driving ONE
 * session from boot through config and seal to serving, as a compromised monitor would:
 *   ctl & 3 == 0  the bytes are a message to the enforcer (ctl >> 2 & 3: fds said to come with it)
 *   ctl & 3 == 1  the first byte picks a valid message for the session's phase (a template: the
 *                 next principal, a hold, a registration step...), the rest are (u16 offset,
 *                 u8 xor) mutations of it; so the fuzzer reaches every phase and field at once
 *   ctl & 3 == 2  the bytes are a message to the monitor (psp_check_reply)
 *   ctl & 3 == 3  as 1, for the enforcer's messages
 * Every message is checked from a heap buffer of exactly its length (ASan catches a read past
 * it). Properties checked besides memory safety, by code independent of the checker:
 *   - determinism: the same message and session give the same answer and the same reason;
 *   - an accepted message has its type's exact size, came with no fd, is a type the phase
 *     admits, and what the enforcer will act on is in range: a hold's agent is an agent of the
 *     sealed configuration and its sinks name principals, a principal arrives in order under a
 *     new name, a registration path is absolute, nothing is accepted after a refusal of the same
 *     bytes;
 *   - an unmutated template for the phase is accepted (the checker refuses no valid message);
 *   - the session never moves backwards (boot -> config -> serve), and its counts stay within
 *     what the configuration announced. */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../user/mncd/privsep.c"

#define NP 5 /* principals of the fuzzed configuration: 0 a0, 1 a1 (agents), 2 log, 3 ext, 4 a2 */

static void *dup_exact(const void *p, size_t n)
{
    void *b = malloc(n ? n : 1); /* malloc's alignment (16) is PSP_ALIGN's multiple */
    assert(b);
    if (n)
        memcpy(b, p, n);
    return b;
}

typedef union {
    struct psp_hdr h;
    char b[PSP_MAX_MSG];
    uint64_t a;
} msgbuf;

static void setstr(char *field, size_t n, const char *s)
{
    memset(field, 0, n);
    strncpy(field, s, n - 1);
}

/* The pick-th agent the session announced (PSP_NONE if none). */
static uint32_t an_agent(const psp_ctx *cx, unsigned pick)
{
    uint32_t found[PSP_MAX_PRINCIPALS], n = 0;
    for (uint32_t i = 0; i < cx->n_principals && i < PSP_MAX_PRINCIPALS; i++)
        if (cx->cls[i] == MNC_SINK_AGENT)
            found[n++] = i;
    return n ? found[pick % n] : PSP_NONE;
}

/* A message for the session's phase, chosen by pick; its size. *valid: the session admits it
 * as built (false only where the session, driven by raw messages, leaves no valid one: no agent
 * announced, every open used). */
static size_t template_req(const psp_ctx *cx, unsigned pick, msgbuf *m, bool *valid)
{
    memset(m, 0, sizeof(*m));
    *valid = true;
    uint32_t type;
    switch (cx->phase) {
    case PSP_PH_BOOT:
        type = pick % 2 ? PSP_CONFIG : PSP_OPEN;
        break;
    case PSP_PH_CONFIG:
        type = cx->next_principal < cx->n_principals ? PSP_PRINCIPAL
               : cx->idmap_seen < cx->n_idmap        ? PSP_IDMAP
                                                     : PSP_SEAL;
        break;
    case PSP_PH_SERVE:
        if (cx->in_reg) {
            type = pick % 3 == 0 ? PSP_REG_COMMIT : PSP_REG_PATH;
        } else {
            static const uint32_t serve[] = {PSP_HOLD, PSP_REG_BEGIN, PSP_TAINT_GET, PSP_STATUS};
            type = serve[pick % 4];
        }
        break;
    default:
        type = pick % 2 ? PSP_ADM_RESET : PSP_ADM_WS_CLEAR;
    }
    psp_hdr_init(&m->h, type, pick);
    switch (type) {
    case PSP_OPEN: {
        struct psp_open *o = (void *)m;
        *valid = cx->n_opens < PSP_MAX_OPENS;
        o->what = 1 + pick % 4;
        setstr(o->path, sizeof(o->path), "/etc/mnc/mncd.json");
        break;
    }
    case PSP_CONFIG: {
        struct psp_config *c = (void *)m;
        c->monitor_uid = c->monitor_gid = 998;
        c->kernel = pick % 4;
        c->n_principals = NP;
        c->n_idmap = 1 + pick % 2;
        setstr(c->state_dir, sizeof(c->state_dir), "/var/lib/mnc");
        setstr(c->socket, sizeof(c->socket), "/run/mnc/mncd.sock");
        break;
    }
    case PSP_PRINCIPAL: {
        struct psp_principal *p = (void *)m;
        static const char *const names[NP] = {"a0", "a1", "ops_log", "partner", "a2"};
        static const uint32_t cls[NP] = {MNC_SINK_AGENT, MNC_SINK_AGENT, MNC_SINK_LOG, MNC_SINK_EXTERNAL,
                                         MNC_SINK_AGENT};
        uint32_t id = cx->next_principal;
        p->id = id;
        p->cls = id < NP ? cls[id] : MNC_SINK_AGENT;
        if (id < NP)
            setstr(p->name, sizeof(p->name), names[id]);
        else
            snprintf(p->name, sizeof(p->name), "p%u", id);
        for (uint32_t i = 0; i < id && i < PSP_MAX_PRINCIPALS; i++)
            *valid = *valid && strcmp(cx->names[i], p->name) != 0; /* a raw principal took it */
        if (id == 1) {
            p->flags = PSP_PF_NETNS;
            p->addr = PSP_ADDR_UNIX;
            setstr(p->ukey.path, sizeof(p->ukey.path), pick % 2 ? "@a1" : "/run/a1.sock");
            if (pick % 2)
                p->ukey.alen = 3, p->ukey.type = 2;
        } else if (id == 2) {
            setstr(p->path, sizeof(p->path), "/var/log/mnc/ops.log");
        } else if (id == 3) {
            p->addr = PSP_ADDR_INET;
            p->ikey.family = MNC_AF_INET;
            p->ikey.port = 443;
            p->ikey.addr[0] = 10;
        }
        break;
    }
    case PSP_IDMAP: {
        struct psp_idmap *i = (void *)m;
        i->kind = 1 + pick % 2;
        i->agent = an_agent(cx, pick);
        *valid = i->agent != PSP_NONE;
        if (i->kind == PSP_IDMAP_UID)
            i->uid = 1000 + pick;
        else
            setstr(i->cgroup, sizeof(i->cgroup), "/mnc/a1");
        break;
    }
    case PSP_SEAL: {
        struct psp_seal *s = (void *)m;
        s->n_principals = cx->n_principals;
        s->n_idmap = cx->n_idmap;
        break;
    }
    case PSP_HOLD: {
        struct psp_hold *h = (void *)m;
        h->agent = an_agent(cx, pick);
        *valid = h->agent != PSP_NONE;
        h->op = 1 + pick % 2;
        h->sinks[0] = pick & 0x1f & ((1ull << (cx->n_principals < 5 ? cx->n_principals : 5)) - 1);
        h->may_log = pick & 1;
        h->may_external = (pick >> 1) & 1;
        memset(h->oid, (int)pick, sizeof(h->oid));
        break;
    }
    case PSP_REG_BEGIN: {
        struct psp_reg_begin *r = (void *)m;
        r->agent = an_agent(cx, pick);
        *valid = r->agent != PSP_NONE;
        r->flags = pick % 2 ? PSP_RF_UID_KNOWN : PSP_RF_ROOT;
        r->uid = pick % 2 ? 1001 : 0;
        setstr(r->cgroup, sizeof(r->cgroup), "/sys/fs/cgroup/mnc/a1.7");
        break;
    }
    case PSP_REG_PATH: {
        struct psp_reg_path *r = (void *)m;
        r->kind = cx->reg_ws < PSP_MAX_WS && pick % 2 ? PSP_REG_WORKSPACE : PSP_REG_TAINTED;
        *valid = r->kind == PSP_REG_WORKSPACE || cx->reg_tainted < PSP_MAX_TAINTED;
        setstr(r->path, sizeof(r->path), "/srv/ws/a1/sub");
        break;
    }
    case PSP_REG_COMMIT: {
        struct psp_reg_commit *r = (void *)m;
        r->n_ws = cx->reg_ws;
        r->n_tainted = cx->reg_tainted;
        break;
    }
    case PSP_TAINT_GET: {
        struct psp_taint_get *t = (void *)m;
        t->agent = an_agent(cx, pick);
        *valid = t->agent != PSP_NONE;
        break;
    }
    case PSP_ADM_RESET: {
        struct psp_adm_reset *a = (void *)m;
        setstr(a->agent, sizeof(a->agent), "a1");
        break;
    }
    case PSP_ADM_WS_CLEAR: {
        struct psp_adm_ws_clear *a = (void *)m;
        setstr(a->path, sizeof(a->path), "/srv/ws/a1");
        break;
    }
    default:
        break;
    }
    return psp_size(type);
}

/* A valid message from the enforcer, chosen by pick; its size and fd count. */
static size_t template_rep(unsigned pick, int *nfds, msgbuf *m)
{
    static const uint32_t kinds[] = {PSP_HELD, PSP_REFUSED, PSP_AUDIT, PSP_REG_ADD, PSP_STARTED, PSP_TAINT};
    uint32_t type = kinds[pick % (sizeof(kinds) / sizeof(kinds[0]))];
    memset(m, 0, sizeof(*m));
    psp_hdr_init(&m->h, type, pick);
    *nfds = 0;
    switch (type) {
    case PSP_REFUSED: {
        struct psp_refused *r = (void *)m;
        r->code = 1 + pick % PSP_NO__MAX;
        setstr(r->detail, sizeof(r->detail), "recv refused");
        break;
    }
    case PSP_AUDIT: {
        struct psp_audit *a = (void *)m;
        a->op = 1 + pick % PSP_A__MAX;
        a->decision = 1 + pick % 3;
        a->sender = pick % 2 ? PSP_NONE : 1;
        a->receiver = PSP_NONE;
        setstr(a->reason, sizeof(a->reason), "internal");
        break;
    }
    case PSP_REG_ADD: {
        struct psp_reg_change *r = (void *)m;
        r->agent = 1;
        setstr(r->cgroup_rel, sizeof(r->cgroup_rel), "/mnc/a1.7");
        break;
    }
    case PSP_STARTED: {
        struct psp_started *s = (void *)m;
        s->n_fds = 2 + pick % 2;
        s->flags = s->n_fds == 3 ? PSP_SF_LLAUDIT : 0;
        *nfds = (int)s->n_fds;
        break;
    }
    default:
        break;
    }
    return psp_size(type);
}

static void mutate(msgbuf *m, size_t size, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i += 3) {
        size_t off = (size_t)(p[i] | (p[i + 1] << 8)) % size;
        m->b[off] ^= (char)p[i + 2];
    }
}

static bool phase_admits(uint32_t phase, uint32_t type)
{
    switch (phase) {
    case PSP_PH_BOOT:
        return type == PSP_OPEN || type == PSP_CONFIG;
    case PSP_PH_CONFIG:
        return type == PSP_PRINCIPAL || type == PSP_IDMAP || type == PSP_SEAL;
    case PSP_PH_SERVE:
        return type >= PSP_HOLD && type <= PSP_STATUS;
    case PSP_PH_ADMIN:
        return type == PSP_ADM_RESET || type == PSP_ADM_WS_CLEAR;
    }
    return false;
}

/* The enforcer's side: one message against the session. */
static void to_enforcer(psp_ctx *cx, const void *msg, size_t len, int nfds, bool must_accept)
{
    void *b = dup_exact(msg, len);
    char why1[256], why2[256];
    int r1 = psp_check(cx, b, len, nfds, why1, sizeof(why1));
    int r2 = psp_check(cx, b, len, nfds, why2, sizeof(why2));
    assert(r1 == r2 && strcmp(why1, why2) == 0);
    assert(memchr(why1, 0, sizeof(why1)));
    assert(!must_accept || r1 > 0);
    if (r1 > 0) {
        const struct psp_hdr *h = b;
        assert((uint32_t)r1 == h->type && len == psp_size(h->type) && nfds == 0);
        assert(phase_admits(cx->phase, h->type));
        if (h->type == PSP_HOLD) {
            const struct psp_hold *m = b;
            assert(cx->phase == PSP_PH_SERVE && m->agent < cx->n_principals && cx->cls[m->agent] == MNC_SINK_AGENT);
            for (unsigned i = cx->n_principals; i < 256; i++)
                assert(!((m->sinks[i / 64] >> (i % 64)) & 1));
        } else if (h->type == PSP_PRINCIPAL) {
            const struct psp_principal *m = b;
            assert(m->id == cx->next_principal && m->name[0] && memchr(m->name, 0, sizeof(m->name)));
            for (unsigned i = 0; i < m->id; i++)
                assert(strcmp(cx->names[i], m->name) != 0);
        } else if (h->type == PSP_REG_PATH) {
            const struct psp_reg_path *m = b;
            assert(cx->in_reg && m->path[0] == '/');
        }
        psp_ctx before = *cx;
        psp_advance(cx, b);
        assert(cx->phase >= before.phase);
        assert(cx->next_principal <= cx->n_principals && cx->idmap_seen <= cx->n_idmap);
        assert(cx->reg_ws <= PSP_MAX_WS && cx->reg_tainted <= PSP_MAX_TAINTED && cx->n_opens <= PSP_MAX_OPENS);
    }
    free(b);
}

static void to_monitor(const void *msg, size_t len, int nfds, uint32_t n, bool must_accept)
{
    void *b = dup_exact(msg, len);
    char why1[256], why2[256];
    int r1 = psp_check_reply(b, len, nfds, n, why1, sizeof(why1));
    int r2 = psp_check_reply(b, len, nfds, n, why2, sizeof(why2));
    assert(r1 == r2 && strcmp(why1, why2) == 0);
    assert(!must_accept || r1 > 0);
    if (r1 > 0) {
        const struct psp_hdr *h = b;
        assert(len == psp_size(h->type) && h->type >= PSP_OPENED);
        if (h->type == PSP_AUDIT) {
            const struct psp_audit *a = b;
            assert(psp_audit_op_name(a->op) && psp_decision_name(a->decision));
            assert(memchr(a->detail, 0, sizeof(a->detail)) && a->reason[0]);
        }
    }
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static msgbuf m;
    psp_ctx cx;
    psp_ctx_init(&cx, size && data[0] == 0xad ? PSP_PH_ADMIN : PSP_PH_BOOT);
    size_t i = size && data[0] == 0xad ? 1 : 0;
    while (i + 3 <= size) {
        uint8_t ctl = data[i];
        size_t n = (size_t)(data[i + 1] | (data[i + 2] << 8));
        i += 3;
        if (n > size - i)
            n = size - i;
        const uint8_t *p = data + i;
        i += n;
        int nfds = (ctl >> 2) & 3;
        switch (ctl & 3) {
        case 0:
            to_enforcer(&cx, p, n, nfds, false);
            break;
        case 1: {
            bool valid;
            size_t sz = template_req(&cx, n ? p[0] : 0, &m, &valid);
            mutate(&m, sz, n ? p + 1 : p, n ? n - 1 : 0);
            /* no mutation at all: a valid message the checker must take */
            to_enforcer(&cx, &m, sz, 0, valid && n <= 1);
            break;
        }
        case 2:
            to_monitor(p, n, nfds, cx.phase == PSP_PH_SERVE ? cx.n_principals : 0, false);
            break;
        case 3: {
            int tfds;
            size_t sz = template_rep(n ? p[0] : 0, &tfds, &m);
            mutate(&m, sz, n ? p + 1 : p, n ? n - 1 : 0);
            to_monitor(&m, sz, tfds, NP, n <= 1);
            break;
        }
        }
    }
    return 0;
}
