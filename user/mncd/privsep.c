// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* privsep.c - the monitor/enforcer protocol's sizes, names and checks (privsep.h).
 *
 * psp_check is the enforcer's gate: every message from the monitor or an admin passes it before
 * the enforcer looks at a field. It reads nothing outside [msg, msg + len), keeps no state of its
 * own (the session is the caller's psp_ctx) and accepts exactly one encoding of each message:
 * reserved bytes zero, strings terminated inside their field and zero after the NUL, enums and
 * flags in range, ids naming what the sealed configuration announced. A message it accepts is
 * then safe to read with plain field accesses. tests/unit/test_privsep.c and
 * tests/fuzz/fuzz_privsep.c exercise it. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "privsep.h"

static const struct {
    uint32_t type;
    size_t size;
    const char *name;
} types[] = {
    {PSP_OPEN, sizeof(struct psp_open), "open"},
    {PSP_CONFIG, sizeof(struct psp_config), "config"},
    {PSP_PRINCIPAL, sizeof(struct psp_principal), "principal"},
    {PSP_IDMAP, sizeof(struct psp_idmap), "idmap"},
    {PSP_SEAL, sizeof(struct psp_seal), "seal"},
    {PSP_HOLD, sizeof(struct psp_hold), "hold"},
    {PSP_REG_BEGIN, sizeof(struct psp_reg_begin), "reg_begin"},
    {PSP_REG_PATH, sizeof(struct psp_reg_path), "reg_path"},
    {PSP_REG_COMMIT, sizeof(struct psp_reg_commit), "reg_commit"},
    {PSP_TAINT_GET, sizeof(struct psp_taint_get), "taint_get"},
    {PSP_STATUS, sizeof(struct psp_status), "status"},
    {PSP_ADM_RESET, sizeof(struct psp_adm_reset), "adm_reset"},
    {PSP_ADM_WS_CLEAR, sizeof(struct psp_adm_ws_clear), "adm_ws_clear"},
    {PSP_OPENED, sizeof(struct psp_opened), "opened"},
    {PSP_STARTED, sizeof(struct psp_started), "started"},
    {PSP_HELD, sizeof(struct psp_held), "held"},
    {PSP_REGISTERED, sizeof(struct psp_registered), "registered"},
    {PSP_TAINT, sizeof(struct psp_taint), "taint"},
    {PSP_STATUS_R, sizeof(struct psp_status_r), "status_r"},
    {PSP_REFUSED, sizeof(struct psp_refused), "refused"},
    {PSP_REG_SOURCE, sizeof(struct psp_reg_source), "reg_source"},
    {PSP_ADM_RESET_R, sizeof(struct psp_adm_reset_r), "adm_reset_r"},
    {PSP_ADM_WS_CLEAR_R, sizeof(struct psp_adm_ws_clear_r), "adm_ws_clear_r"},
    {PSP_SINKFD, sizeof(struct psp_sinkfd), "sinkfd"},
    {PSP_AUDIT, sizeof(struct psp_audit), "audit"},
    {PSP_KEVENT, sizeof(struct psp_kevent), "kevent"},
    {PSP_REG_ADD, sizeof(struct psp_reg_change), "reg_add"},
    {PSP_REG_DEL, sizeof(struct psp_reg_change), "reg_del"},
    {PSP_RESET, sizeof(struct psp_reset), "reset"},
    {PSP_STOP, sizeof(struct psp_stop), "stop"},
};

#define N_TYPES (sizeof(types) / sizeof(types[0]))

size_t psp_size(uint32_t type)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (types[i].type == type)
            return types[i].size;
    return 0;
}

const char *psp_type_name(uint32_t type)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (types[i].type == type)
            return types[i].name;
    return "?";
}

static const char *const audit_ops[PSP_A__MAX + 1] = {
    [PSP_A_KERNEL_START] = "kernel.start",
    [PSP_A_KERNEL_TAINT] = "kernel.taint",
    [PSP_A_KERNEL_SWEEP] = "kernel.sweep",
    [PSP_A_KERNEL_FDSCAN] = "kernel.fdscan",
    [PSP_A_KERNEL_NETNS] = "kernel.netns",
    [PSP_A_WORKSPACE_TAINT] = "workspace.taint",
    [PSP_A_WORKSPACE_CLEAR] = "workspace.clear",
    [PSP_A_AGENT_ADOPT] = "agent.adopt",
    [PSP_A_AGENT_EXIT] = "agent.exit",
    [PSP_A_AGENT_REGISTER] = "agent.register",
    [PSP_A_TAINT_RESET] = "taint.reset",
    [PSP_A_LANDLOCK_AUDIT] = "kernel.landlock_audit",
    [PSP_A_PRIVSEP] = "privsep",
};

const char *psp_audit_op_name(uint32_t op) { return op >= 1 && op <= PSP_A__MAX ? audit_ops[op] : NULL; }

const char *psp_decision_name(uint32_t d)
{
    return d == PSP_D_ALLOW ? "allow" : d == PSP_D_DENY ? "deny" : d == PSP_D_ERROR ? "error" : NULL;
}

static const char *const refusals[PSP_NO__MAX + 1] = {
    [PSP_NO_MALFORMED] = "malformed", [PSP_NO_STATE] = "state",           [PSP_NO_OFF] = "off",
    [PSP_NO_INVALID] = "invalid",     [PSP_NO_DENIED] = "denied",         [PSP_NO_INTERNAL] = "internal",
    [PSP_NO_NOT_ADMIN] = "not_admin", [PSP_NO_UNKNOWN] = "unknown_agent",
};

const char *psp_refusal_name(uint32_t code) { return code >= 1 && code <= PSP_NO__MAX ? refusals[code] : "?"; }

void psp_hdr_init(struct psp_hdr *h, uint32_t type, uint32_t seq)
{
    h->version = PSP_VERSION;
    h->type = (uint16_t)type;
    h->len = (uint32_t)psp_size(type);
    h->seq = seq;
    h->flags = 0;
}

void psp_ctx_init(psp_ctx *cx, enum psp_phase phase)
{
    memset(cx, 0, sizeof(*cx));
    cx->phase = (uint32_t)phase;
}

/* ---- field checks. Each returns true when the field is well formed; on false it has written
 * why (the field's name and what is wrong). */

typedef struct chk {
    char *why;
    size_t n;
} chk;

__attribute__((format(printf, 2, 3))) static bool bad(chk *c, const char *fmt, ...)
{
    if (c->why && c->n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why, c->n, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static bool zero(chk *c, const void *p, size_t n, const char *field)
{
    return all_zero(p, n) || bad(c, "%s: reserved bytes must be zero", field);
}

enum str_rule {
    S_ANY = 0,          /* any bytes but NUL */
    S_NONEMPTY = 1,     /* at least one byte */
    S_ABS = 2,          /* starts with '/' (implies non-empty) */
    S_NOCTL = 4,        /* no byte < 0x20 or 0x7f */
    S_NAME = 8,         /* [A-Za-z0-9_.:-]{1,63} (a policy name) */
    S_REASON = 16,      /* [a-z0-9_]{1,31} */
    S_ABS_OR_EMPTY = 32 /* "" or starts with '/' */
};

/* A string field of n bytes: NUL inside it, zero after the NUL, and the rule's contents. *len
 * (may be NULL) gets its length. */
static bool str(chk *c, const char *s, size_t n, unsigned rule, const char *field, size_t *len)
{
    const char *nul = memchr(s, 0, n);
    if (!nul)
        return bad(c, "%s: not terminated inside its %zu bytes", field, n);
    size_t l = (size_t)(nul - s);
    if (!all_zero(nul, n - l))
        return bad(c, "%s: bytes after the terminating NUL must be zero", field);
    if (len)
        *len = l;
    if ((rule & (S_NONEMPTY | S_ABS | S_NAME | S_REASON)) && l == 0)
        return bad(c, "%s: empty", field);
    if ((rule & S_ABS) && s[0] != '/')
        return bad(c, "%s: not an absolute path", field);
    if ((rule & S_ABS_OR_EMPTY) && l && s[0] != '/')
        return bad(c, "%s: neither empty nor an absolute path", field);
    for (size_t i = 0; i < l; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((rule & S_NOCTL) && (ch < 0x20 || ch == 0x7f))
            return bad(c, "%s: control byte 0x%02x at %zu", field, ch, i);
        if ((rule & S_NAME) && !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                                 ch == '_' || ch == '.' || ch == ':' || ch == '-'))
            return bad(c, "%s: byte 0x%02x at %zu is not in a name's alphabet [A-Za-z0-9_.:-]", field, ch, i);
        if ((rule & S_REASON) && !((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return bad(c, "%s: byte 0x%02x at %zu is not in [a-z0-9_]", field, ch, i);
    }
    return true;
}

static bool boolean(chk *c, unsigned v, const char *field)
{
    return v <= 1 || bad(c, "%s: %u is not 0 or 1", field, v);
}

static bool range(chk *c, uint32_t v, uint32_t lo, uint32_t hi, const char *field)
{
    return (v >= lo && v <= hi) || bad(c, "%s: %u is not in %u..%u", field, v, lo, hi);
}

static bool flags_ok(chk *c, uint32_t v, uint32_t known, const char *field)
{
    return !(v & ~known) || bad(c, "%s: unknown flag bits 0x%x", field, v & ~known);
}

/* id names a principal of class cls announced in this session (cls 0: any class). */
static bool principal(chk *c, const psp_ctx *cx, uint32_t id, unsigned cls, const char *field)
{
    if (id >= cx->n_principals || id >= PSP_MAX_PRINCIPALS || !cx->cls[id])
        return bad(c, "%s: %u is not a principal of the configuration", field, id);
    if (cls && cx->cls[id] != cls)
        return bad(c, "%s: principal %u is not an agent", field, id);
    return true;
}

/* A sink key as mnc_kern_unix_key builds it. */
static bool unix_key(chk *c, const struct mnc_unix_key *k)
{
    size_t l;
    if (!str(c, k->path, sizeof(k->path), S_NONEMPTY, "ukey.path", &l))
        return false;
    if (k->path[0] == '@') { /* abstract "\0name": its length counts the leading NUL ('@') */
        if (l < 2 || k->alen != l)
            return bad(c, "ukey: abstract name of %zu bytes with alen %u", l, k->alen);
        if (k->type != 1 && k->type != 2 && k->type != 5)
            return bad(c, "ukey.type: %u is not SOCK_STREAM, SOCK_DGRAM or SOCK_SEQPACKET", k->type);
        return true;
    }
    if (k->alen || k->type)
        return bad(c, "ukey: a pathname key has alen and type 0");
    return mnc_unix_path_canonical(k->path, (uint32_t)l) || bad(c, "ukey.path: not an absolute canonical path");
}

static bool inet_key(chk *c, const struct mnc_inet_key *k)
{
    if (k->family == MNC_AF_INET)
        return all_zero(k->addr + 4, sizeof(k->addr) - 4) || bad(c, "ikey.addr: IPv4 in the first 4 bytes only");
    return k->family == MNC_AF_INET6 || bad(c, "ikey.family: %u is neither AF_INET nor AF_INET6", k->family);
}

/* ---- per type: the enforcer's side */

static bool c_open(chk *c, const psp_ctx *cx, const struct psp_open *m)
{
    return range(c, m->what, PSP_OPEN_CONFIG, PSP_OPEN_DEFAULT, "what") && zero(c, &m->pad, sizeof(m->pad), "pad") &&
           str(c, m->path, sizeof(m->path), S_NONEMPTY | S_NOCTL, "path", NULL) &&
           (cx->n_opens < PSP_MAX_OPENS || bad(c, "more than %d files opened", PSP_MAX_OPENS));
}

static bool c_config(chk *c, const struct psp_config *m)
{
    size_t sl = 0;
    return (m->admin_uid != 0xffffffffu || bad(c, "admin_uid: -1")) &&
           ((m->monitor_uid != 0 && m->monitor_uid != 0xffffffffu) ||
            bad(c, "monitor_uid: %u (the monitor never runs as root)", m->monitor_uid)) &&
           (m->monitor_gid != 0xffffffffu || bad(c, "monitor_gid: -1")) &&
           range(c, m->kernel, PSP_KERN_AUTO, PSP_KERN_LSM, "kernel") &&
           range(c, m->n_principals, 1, PSP_MAX_PRINCIPALS, "n_principals") &&
           range(c, m->n_idmap, 0, PSP_MAX_IDMAP, "n_idmap") && zero(c, m->pad, sizeof(m->pad), "pad") &&
           zero(c, &m->pad2, sizeof(m->pad2), "pad2") &&
           str(c, m->pin_root, sizeof(m->pin_root), S_ABS_OR_EMPTY | S_NOCTL, "pin_root", NULL) &&
           str(c, m->cgroup_tree, sizeof(m->cgroup_tree), S_NOCTL, "cgroup_tree", NULL) &&
           str(c, m->state_dir, sizeof(m->state_dir), S_NONEMPTY | S_NOCTL, "state_dir", NULL) &&
           str(c, m->socket, sizeof(m->socket), S_NONEMPTY | S_NOCTL, "socket", &sl) &&
           (sl + sizeof(".admin") <= sizeof(m->socket) || bad(c, "socket: no room for its \".admin\" sibling"));
}

static bool c_principal(chk *c, const psp_ctx *cx, const struct psp_principal *m)
{
    if (m->id != cx->next_principal || m->id >= cx->n_principals)
        return bad(c, "id: %u, expected %u of %u", m->id, cx->next_principal, cx->n_principals);
    if (!range(c, m->cls, MNC_SINK_AGENT, MNC_SINK_EXTERNAL, "cls") || !flags_ok(c, m->flags, PSP_PF_NETNS, "flags") ||
        !range(c, m->addr, PSP_ADDR_NONE, PSP_ADDR_INET, "addr") || !zero(c, &m->pad, sizeof(m->pad), "pad") ||
        !str(c, m->name, sizeof(m->name), S_NAME, "name", NULL) ||
        !str(c, m->path, sizeof(m->path), S_ABS_OR_EMPTY | S_NOCTL, "path", NULL))
        return false;
    if (m->flags && m->cls != MNC_SINK_AGENT)
        return bad(c, "flags: only an agent has confinement flags");
    if (m->path[0] && m->cls != MNC_SINK_LOG && m->cls != MNC_SINK_MEMORY)
        return bad(c, "path: only a log or memory sink has one");
    if (m->addr == PSP_ADDR_UNIX ? !unix_key(c, &m->ukey) : !zero(c, &m->ukey, sizeof(m->ukey), "ukey"))
        return false;
    if (m->addr == PSP_ADDR_INET ? !inet_key(c, &m->ikey) : !zero(c, &m->ikey, sizeof(m->ikey), "ikey"))
        return false;
    for (uint32_t i = 0; i < m->id && i < PSP_MAX_PRINCIPALS; i++)
        if (strcmp(cx->names[i], m->name) == 0)
            return bad(c, "name: \"%s\" is principal %u already", m->name, i);
    return true;
}

static bool c_idmap(chk *c, const psp_ctx *cx, const struct psp_idmap *m)
{
    if (cx->next_principal != cx->n_principals)
        return bad(c, "idmap before every principal was announced");
    if (cx->idmap_seen >= cx->n_idmap)
        return bad(c, "more idmap entries than the %u announced", cx->n_idmap);
    if (!range(c, m->kind, PSP_IDMAP_UID, PSP_IDMAP_CGROUP, "kind") ||
        !principal(c, cx, m->agent, MNC_SINK_AGENT, "agent") || !zero(c, &m->pad, sizeof(m->pad), "pad"))
        return false;
    if (m->kind == PSP_IDMAP_UID)
        return (m->uid != 0xffffffffu || bad(c, "uid: -1")) && zero(c, m->cgroup, sizeof(m->cgroup), "cgroup");
    return (m->uid == 0 || bad(c, "uid: must be 0 for a cgroup entry")) &&
           str(c, m->cgroup, sizeof(m->cgroup), S_ABS | S_NOCTL, "cgroup", NULL);
}

static bool c_seal(chk *c, const psp_ctx *cx, const struct psp_seal *m)
{
    if (cx->next_principal != cx->n_principals || cx->idmap_seen != cx->n_idmap)
        return bad(c, "seal after %u of %u principals and %u of %u idmap entries", cx->next_principal, cx->n_principals,
                   cx->idmap_seen, cx->n_idmap);
    return (m->n_principals == cx->n_principals && m->n_idmap == cx->n_idmap) ||
           bad(c, "seal counts %u/%u differ from config's %u/%u", m->n_principals, m->n_idmap, cx->n_principals,
               cx->n_idmap);
}

static bool c_hold(chk *c, const psp_ctx *cx, const struct psp_hold *m)
{
    if (!principal(c, cx, m->agent, MNC_SINK_AGENT, "agent") || !range(c, m->op, PSP_OP_RECV, PSP_OP_MEM_GET, "op") ||
        !boolean(c, m->may_log, "may_log") || !boolean(c, m->may_memory, "may_memory") ||
        !boolean(c, m->may_forward, "may_forward") || !boolean(c, m->may_external, "may_external") ||
        !zero(c, m->pad, sizeof(m->pad), "pad") || !zero(c, &m->pad2, sizeof(m->pad2), "pad2"))
        return false;
    for (uint32_t w = 0; w < MNC_SET_WORDS_ABI; w++)
        for (uint32_t b = 0; b < 64; b++)
            if ((m->sinks[w] >> b) & 1u && w * 64 + b >= cx->n_principals)
                return bad(c, "sinks: bit %u names no principal", w * 64 + b);
    return true;
}

static bool c_reg_begin(chk *c, const psp_ctx *cx, const struct psp_reg_begin *m)
{
    if (!principal(c, cx, m->agent, MNC_SINK_AGENT, "agent") ||
        !flags_ok(c, m->flags, PSP_RF_UID_KNOWN | PSP_RF_ROOT | PSP_RF_STDIO_PASS, "flags") ||
        !zero(c, &m->pad, sizeof(m->pad), "pad") ||
        !str(c, m->cgroup, sizeof(m->cgroup), S_ABS | S_NOCTL, "cgroup", NULL))
        return false;
    if (!(m->flags & PSP_RF_UID_KNOWN) && m->uid)
        return bad(c, "uid: %u without PSP_RF_UID_KNOWN", m->uid);
    if (m->uid == 0xffffffffu)
        return bad(c, "uid: -1");
    return !((m->flags & PSP_RF_ROOT) && m->uid) || bad(c, "flags: --as-root with uid %u", m->uid);
}

static bool c_reg_path(chk *c, const psp_ctx *cx, const struct psp_reg_path *m)
{
    if (!range(c, m->kind, PSP_REG_WORKSPACE, PSP_REG_TAINTED, "kind") || !zero(c, &m->pad, sizeof(m->pad), "pad") ||
        !str(c, m->path, sizeof(m->path), S_ABS, "path", NULL))
        return false;
    if (m->kind == PSP_REG_WORKSPACE && cx->reg_ws >= PSP_MAX_WS)
        return bad(c, "more than %d workspaces", PSP_MAX_WS);
    return !(m->kind == PSP_REG_TAINTED && cx->reg_tainted >= PSP_MAX_TAINTED) ||
           bad(c, "more than %d tainted dirs", PSP_MAX_TAINTED);
}

static bool c_reg_commit(chk *c, const psp_ctx *cx, const struct psp_reg_commit *m)
{
    return (m->n_ws == cx->reg_ws && m->n_tainted == cx->reg_tainted) ||
           bad(c, "commit counts %u/%u differ from the %u/%u paths sent", m->n_ws, m->n_tainted, cx->reg_ws,
               cx->reg_tainted);
}

/* Is type accepted in the session's phase (and, after the seal, inside or outside an open
 * registration as it must be)? */
static bool allowed(const psp_ctx *cx, uint32_t type, chk *c)
{
    switch (cx->phase) {
    case PSP_PH_BOOT:
        if (type == PSP_OPEN || type == PSP_CONFIG)
            return true;
        break;
    case PSP_PH_CONFIG:
        if (type == PSP_PRINCIPAL || type == PSP_IDMAP || type == PSP_SEAL)
            return true;
        break;
    case PSP_PH_SERVE:
        if (type == PSP_REG_PATH || type == PSP_REG_COMMIT)
            return cx->in_reg || bad(c, "%s outside a registration", psp_type_name(type));
        if (type == PSP_HOLD || type == PSP_REG_BEGIN || type == PSP_TAINT_GET || type == PSP_STATUS)
            return !cx->in_reg || bad(c, "%s inside an open registration", psp_type_name(type));
        break;
    case PSP_PH_ADMIN:
        if (type == PSP_ADM_RESET || type == PSP_ADM_WS_CLEAR)
            return true;
        break;
    }
    return bad(c, "%s is not accepted here (phase %u)", psp_type_name(type), cx->phase);
}

/* The header: version, length, flags. 0, or -errno with why. */
static int hdr_ok(chk *c, const void *msg, size_t len, struct psp_hdr *h)
{
    if (len < sizeof(*h)) {
        bad(c, "%zu bytes: shorter than a header", len);
        return -EBADMSG;
    }
    memcpy(h, msg, sizeof(*h));
    if (h->version != PSP_VERSION) {
        bad(c, "version %u, expected %u", h->version, PSP_VERSION);
        return -EPROTO;
    }
    size_t want = psp_size(h->type);
    if (!want) {
        bad(c, "unknown type %u", h->type);
        return -EBADMSG;
    }
    if (h->len != len || len != want) {
        bad(c, "%s: %zu bytes (header says %u), expected %zu", psp_type_name(h->type), len, h->len, want);
        return -EBADMSG;
    }
    if (h->flags) {
        bad(c, "header flags 0x%x, expected 0", h->flags);
        return -EBADMSG;
    }
    return 0;
}

int psp_check(const psp_ctx *cx, const void *msg, size_t len, int nfds, char *why, size_t whylen)
{
    chk c = {why, whylen};
    if (why && whylen)
        why[0] = 0;
    if ((uintptr_t)msg % PSP_ALIGN) {
        bad(&c, "message buffer not aligned to %d bytes", PSP_ALIGN);
        return -EINVAL;
    }
    struct psp_hdr h;
    int rc = hdr_ok(&c, msg, len, &h);
    if (rc)
        return rc;
    if (nfds != 0) {
        bad(&c, "%s came with %d fds: nothing sent to the enforcer carries one", psp_type_name(h.type), nfds);
        return -EBADMSG;
    }
    if (!allowed(cx, h.type, &c))
        return -EPERM;
    bool ok;
    switch (h.type) {
    case PSP_OPEN:
        ok = c_open(&c, cx, msg);
        break;
    case PSP_CONFIG:
        ok = c_config(&c, msg);
        break;
    case PSP_PRINCIPAL:
        ok = c_principal(&c, cx, msg);
        break;
    case PSP_IDMAP:
        ok = c_idmap(&c, cx, msg);
        break;
    case PSP_SEAL:
        ok = c_seal(&c, cx, msg);
        break;
    case PSP_HOLD:
        ok = c_hold(&c, cx, msg);
        break;
    case PSP_REG_BEGIN:
        ok = c_reg_begin(&c, cx, msg);
        break;
    case PSP_REG_PATH:
        ok = c_reg_path(&c, cx, msg);
        break;
    case PSP_REG_COMMIT:
        ok = c_reg_commit(&c, cx, msg);
        break;
    case PSP_TAINT_GET: {
        const struct psp_taint_get *m = msg;
        ok = principal(&c, cx, m->agent, MNC_SINK_AGENT, "agent") && zero(&c, &m->pad, sizeof(m->pad), "pad");
        break;
    }
    case PSP_STATUS:
        ok = true;
        break;
    case PSP_ADM_RESET: {
        const struct psp_adm_reset *m = msg;
        ok = str(&c, m->agent, sizeof(m->agent), S_NAME, "agent", NULL);
        break;
    }
    case PSP_ADM_WS_CLEAR: {
        const struct psp_adm_ws_clear *m = msg;
        ok = str(&c, m->path, sizeof(m->path), S_ABS, "path", NULL);
        break;
    }
    default: /* allowed() accepts no other type */
        ok = bad(&c, "%s: no check", psp_type_name(h.type));
    }
    return ok ? (int)h.type : -EBADMSG;
}

void psp_advance(psp_ctx *cx, const void *msg)
{
    const struct psp_hdr *h = msg;
    switch (h->type) {
    case PSP_OPEN:
        cx->n_opens++;
        break;
    case PSP_CONFIG: {
        const struct psp_config *m = msg;
        cx->phase = PSP_PH_CONFIG;
        cx->n_principals = m->n_principals;
        cx->n_idmap = m->n_idmap;
        break;
    }
    case PSP_PRINCIPAL: {
        const struct psp_principal *m = msg;
        if (m->id < PSP_MAX_PRINCIPALS) {
            cx->cls[m->id] = (uint8_t)m->cls;
            memcpy(cx->names[m->id], m->name, sizeof(cx->names[m->id]));
        }
        cx->next_principal++;
        break;
    }
    case PSP_IDMAP:
        cx->idmap_seen++;
        break;
    case PSP_SEAL:
        cx->phase = PSP_PH_SERVE;
        break;
    case PSP_REG_BEGIN:
        cx->in_reg = 1;
        cx->reg_ws = cx->reg_tainted = 0;
        break;
    case PSP_REG_PATH: {
        const struct psp_reg_path *m = msg;
        if (m->kind == PSP_REG_WORKSPACE)
            cx->reg_ws++;
        else
            cx->reg_tainted++;
        break;
    }
    case PSP_REG_COMMIT:
        cx->in_reg = 0;
        break;
    default:
        break;
    }
}

/* ---- the monitor's side: what the enforcer sends */

/* id is a principal (or PSP_NONE where none is allowed); unchecked before the seal (n == 0). */
static bool id_ok(chk *c, uint32_t id, uint32_t n, bool none_ok, const char *field)
{
    if (none_ok && id == PSP_NONE)
        return true;
    return !n || id < n || bad(c, "%s: %u is not a principal", field, id);
}

static bool r_started(chk *c, const struct psp_started *m, int nfds)
{
    if (!range(c, m->backend, 0, MNC_BACKEND_LSM, "backend") ||
        !flags_ok(c, m->flags, PSP_SF_LLAUDIT | PSP_SF_AUDIT_ENABLED | PSP_SF_PIDFD | PSP_SF_NOTICE, "flags") ||
        !range(c, m->n_fds, 2, PSP_MAX_FDS, "n_fds") || !range(c, m->n_sinkfds, 0, PSP_MAX_PRINCIPALS, "n_sinkfds") ||
        !range(c, m->selftest_n, 0, 24, "selftest_n") ||
        !range(c, m->selftest_pass, 0, m->selftest_n, "selftest_pass") ||
        !range(c, m->n_not_run, 0, PSP_NOT_RUN_MAX, "n_not_run"))
        return false;
    if ((int)m->n_fds != nfds)
        return bad(c, "n_fds %u, but %d fds came", m->n_fds, nfds);
    if (!(m->flags & PSP_SF_LLAUDIT) != (m->n_fds == 2))
        return bad(c, "flags: the audit socket and the third fd go together");
    if (!str(c, m->pin_root, sizeof(m->pin_root), S_ANY, "pin_root", NULL) ||
        !str(c, m->tree, sizeof(m->tree), S_ANY, "tree", NULL) ||
        !str(c, m->tree_rel, sizeof(m->tree_rel), S_ANY, "tree_rel", NULL) ||
        !str(c, m->cg2, sizeof(m->cg2), S_ANY, "cg2", NULL) ||
        !str(c, m->notice, sizeof(m->notice), S_ANY, "notice", NULL) ||
        !str(c, m->ll_why, sizeof(m->ll_why), S_ANY, "ll_why", NULL))
        return false;
    for (int i = 0; i < PSP_NOT_RUN_MAX; i++)
        if (!str(c, m->not_run[i], sizeof(m->not_run[i]), S_ANY, "not_run", NULL))
            return false;
    return true;
}

static bool r_audit(chk *c, const struct psp_audit *m, uint32_t n)
{
    return (psp_audit_op_name(m->op) || bad(c, "op: unknown %u", m->op)) &&
           (psp_decision_name(m->decision) || bad(c, "decision: unknown %u", m->decision)) &&
           boolean(c, m->has_oid, "has_oid") && id_ok(c, m->sender, n, true, "sender") &&
           id_ok(c, m->receiver, n, true, "receiver") && zero(c, &m->pad, sizeof(m->pad), "pad") &&
           (m->has_oid || zero(c, m->oid, sizeof(m->oid), "oid")) &&
           str(c, m->reason, sizeof(m->reason), S_REASON, "reason", NULL) &&
           str(c, m->detail, sizeof(m->detail), S_ANY, "detail", NULL);
}

int psp_check_reply(const void *msg, size_t len, int nfds, uint32_t n, char *why, size_t whylen)
{
    chk c = {why, whylen};
    if (why && whylen)
        why[0] = 0;
    if ((uintptr_t)msg % PSP_ALIGN) {
        bad(&c, "message buffer not aligned to %d bytes", PSP_ALIGN);
        return -EINVAL;
    }
    struct psp_hdr h;
    int rc = hdr_ok(&c, msg, len, &h);
    if (rc)
        return rc;
    if (h.type < PSP_OPENED) {
        bad(&c, "%s is not sent by the enforcer", psp_type_name(h.type));
        return -EPERM;
    }
    if (h.type != PSP_OPENED && h.type != PSP_STARTED && h.type != PSP_SINKFD && nfds != 0) {
        bad(&c, "%s came with %d fds", psp_type_name(h.type), nfds);
        return -EBADMSG;
    }
    bool ok;
    switch (h.type) {
    case PSP_OPENED:
        ok = nfds == 1 || bad(&c, "opened came with %d fds, expected 1", nfds);
        break;
    case PSP_SINKFD: {
        const struct psp_sinkfd *m = msg;
        ok = (nfds == 1 || bad(&c, "sinkfd came with %d fds, expected 1", nfds)) && id_ok(&c, m->id, n, false, "id") &&
             zero(&c, &m->pad, sizeof(m->pad), "pad");
        break;
    }
    case PSP_STARTED:
        ok = r_started(&c, msg, nfds);
        break;
    case PSP_HELD:
        ok = true;
        break;
    case PSP_REGISTERED: {
        const struct psp_registered *m = msg;
        ok = id_ok(&c, m->agent, n, false, "agent") && flags_ok(&c, m->flags, PSP_GF_NETNS, "flags") &&
             zero(&c, &m->pad, sizeof(m->pad), "pad") &&
             str(&c, m->cgroup_rel, sizeof(m->cgroup_rel), S_ABS, "cgroup_rel", NULL);
        break;
    }
    case PSP_TAINT: {
        const struct psp_taint *m = msg;
        ok = boolean(&c, m->entry, "entry") && zero(&c, &m->pad, sizeof(m->pad), "pad") &&
             (m->entry || zero(&c, &m->t, sizeof(m->t), "t"));
        break;
    }
    case PSP_STATUS_R: {
        const struct psp_status_r *m = msg;
        ok = range(&c, m->n_kcount, 0, PSP_KCOUNT_MAX, "n_kcount") && boolean(&c, m->audit_ok, "audit_ok") &&
             str(&c, m->missing, sizeof(m->missing), S_ANY, "missing", NULL);
        break;
    }
    case PSP_REFUSED: {
        const struct psp_refused *m = msg;
        ok = range(&c, m->code, 1, PSP_NO__MAX, "code") && (m->err >= 0 || bad(&c, "err: %d", m->err)) &&
             str(&c, m->detail, sizeof(m->detail), S_ANY, "detail", NULL);
        break;
    }
    case PSP_REG_SOURCE: {
        const struct psp_reg_source *m = msg;
        ok = str(&c, m->dir, sizeof(m->dir), S_ABS, "dir", NULL);
        break;
    }
    case PSP_ADM_RESET_R: {
        const struct psp_adm_reset_r *m = msg;
        ok = id_ok(&c, m->agent, n, false, "agent") && boolean(&c, m->had_entry, "had_entry") &&
             boolean(&c, m->was_tainted, "was_tainted");
        break;
    }
    case PSP_ADM_WS_CLEAR_R: {
        const struct psp_adm_ws_clear_r *m = msg;
        ok = boolean(&c, m->was_tainted, "was_tainted") && zero(&c, &m->pad, sizeof(m->pad), "pad") &&
             zero(&c, &m->pad2, sizeof(m->pad2), "pad2") && str(&c, m->path, sizeof(m->path), S_ABS, "path", NULL) &&
             range(&c, m->previous_len, 0, PSP_WSREC_MAX, "previous_len") &&
             zero(&c, m->previous + m->previous_len, PSP_WSREC_MAX - m->previous_len, "previous");
        break;
    }
    case PSP_AUDIT:
        ok = r_audit(&c, msg, n);
        break;
    case PSP_KEVENT:
        ok = true; /* the kernel's record, formatted with bounds by mnc_kern_event_json */
        break;
    case PSP_REG_ADD:
    case PSP_REG_DEL: {
        const struct psp_reg_change *m = msg;
        ok = id_ok(&c, m->agent, n, false, "agent") &&
             str(&c, m->cgroup_rel, sizeof(m->cgroup_rel), S_ABS, "cgroup_rel", NULL);
        break;
    }
    case PSP_RESET: {
        const struct psp_reset *m = msg;
        ok = id_ok(&c, m->agent, n, false, "agent") && zero(&c, &m->pad, sizeof(m->pad), "pad");
        break;
    }
    case PSP_STOP:
        ok = true;
        break;
    default:
        bad(&c, "%s is not sent by the enforcer", psp_type_name(h.type));
        return -EPERM;
    }
    return ok ? (int)h.type : -EBADMSG;
}
