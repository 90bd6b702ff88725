// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mon_psp.c - the monitor's side of the conversation with the enforcer (mon_psp.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnc_kern.h"
#include "mon_psp.h"

static psp_buf *buf_new(void)
{
    psp_buf *b = malloc(sizeof(*b));
    if (b)
        memset(b, 0, sizeof(*b));
    return b;
}

/* One notice, now or kept. */
static void dispatch(mon_psp *m, const void *msg)
{
    const struct psp_hdr *h = msg;
    switch (h->type) {
    case PSP_AUDIT:
        if (m->ops.audit)
            m->ops.audit(m->arg, msg);
        break;
    case PSP_KEVENT:
        if (m->ops.kevent)
            m->ops.kevent(m->arg, &((const struct psp_kevent *)msg)->ev);
        break;
    case PSP_REG_ADD:
    case PSP_REG_DEL: {
        const struct psp_reg_change *r = msg;
        if (m->ops.reg)
            m->ops.reg(m->arg, h->type == PSP_REG_ADD, r->cgid, r->agent, r->flags, r->cgroup_rel);
        break;
    }
    case PSP_RESET:
        if (m->ops.reset)
            m->ops.reset(m->arg, ((const struct psp_reset *)msg)->agent);
        break;
    case PSP_STOP:
        m->stop = true;
        if (m->ops.stop)
            m->ops.stop(m->arg);
        break;
    }
}

static void on_notice(void *arg, const void *msg, int fd)
{
    mon_psp *m = arg;
    const struct psp_hdr *h = msg;
    if (h->type == PSP_SINKFD) { /* part of SEAL's answer, taken at once */
        uint32_t id = ((const struct psp_sinkfd *)msg)->id;
        if (id < m->n_sink_fd && m->sink_fd[id] < 0)
            m->sink_fd[id] = fd;
        else if (fd >= 0)
            close(fd);
        return;
    }
    if (fd >= 0)
        close(fd);
    if (h->type == PSP_REG_SOURCE) { /* part of REG_COMMIT's answer */
        if (m->n_sources == m->cap_sources) {
            int nc = m->cap_sources ? m->cap_sources * 2 : 8;
            char **ns = realloc(m->sources, (size_t)nc * sizeof(*ns));
            if (!ns)
                return;
            m->sources = ns;
            m->cap_sources = nc;
        }
        char *d = strdup(((const struct psp_reg_source *)msg)->dir);
        if (d)
            m->sources[m->n_sources++] = d;
        return;
    }
    if (!m->keep) {
        dispatch(m, msg);
        return;
    }
    psp_buf *b = m->n_kept < 100000 ? buf_new() : NULL; /* bounded: a start adopts <= 4096 cgroups */
    if (m->n_kept == m->cap_kept && b) {
        int nc = m->cap_kept ? m->cap_kept * 2 : 64;
        psp_buf **nk = realloc(m->kept, (size_t)nc * sizeof(*nk));
        if (!nk) {
            free(b);
            b = NULL;
        } else {
            m->kept = nk;
            m->cap_kept = nc;
        }
    }
    if (!b) {
        fprintf(stderr, "mncd: out of memory: a %s notice of the enforcer is lost\n", psp_type_name(h->type));
        return;
    }
    memcpy(b, msg, h->len);
    m->kept[m->n_kept++] = b;
}

void mon_psp_init(mon_psp *m, int fd, const mon_psp_ops *ops, void *arg)
{
    memset(m, 0, sizeof(*m));
    psp_client_init(&m->c, fd, on_notice, m);
    if (ops)
        m->ops = *ops;
    m->arg = arg;
    m->keep = true;
    m->state_fd = m->listen_fd = m->audit_fd = -1;
}

static void sources_clear(mon_psp *m)
{
    for (int i = 0; i < m->n_sources; i++)
        free(m->sources[i]);
    m->n_sources = 0;
}

void mon_psp_free(mon_psp *m)
{
    for (int i = 0; i < m->n_kept; i++)
        free(m->kept[i]);
    free(m->kept);
    for (uint32_t i = 0; i < m->n_sink_fd; i++)
        if (m->sink_fd[i] >= 0)
            close(m->sink_fd[i]);
    free(m->sink_fd);
    sources_clear(m);
    free(m->sources);
    if (m->c.fd >= 0)
        close(m->c.fd);
    memset(m, 0, sizeof(*m));
    m->c.fd = m->state_fd = m->listen_fd = m->audit_fd = -1;
}

void mon_psp_release(mon_psp *m)
{
    m->keep = false;
    for (int i = 0; i < m->n_kept; i++) {
        dispatch(m, m->kept[i]);
        free(m->kept[i]);
    }
    free(m->kept);
    m->kept = NULL;
    m->n_kept = m->cap_kept = 0;
}

/* One request and its reply. The reply's type, or -1 (broken: why). */
static int call(mon_psp *m, void *req, psp_buf *r, int *fds, int *nfds, char *why, size_t n)
{
    int t = psp_call(&m->c, req, r, fds, nfds);
    if (t < 0)
        snprintf(why, n, "the enforcer: %.300s", m->c.err);
    return t < 0 ? -1 : t;
}

int mon_psp_open(void *arg, const char *path)
{
    mon_psp *m = arg;
    static psp_buf req, r;
    memset(&req, 0, sizeof(req));
    struct psp_open *o = (void *)&req;
    psp_hdr_init(&o->h, PSP_OPEN, 0);
    o->what = PSP_OPEN_POLICY;
    if (strlen(path) >= sizeof(o->path))
        return -ENAMETOOLONG;
    for (const char *s = path; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return -EINVAL; /* psp_check would refuse it as malformed */
    if (!*path)
        return -ENOENT;
    memcpy(o->path, path, strlen(path));
    int fds[PSP_MAX_FDS], nfds = 0;
    char why[400];
    int t = call(m, o, &r, fds, &nfds, why, sizeof(why));
    if (t == PSP_OPENED && nfds == 1)
        return fds[0];
    psp_close_fds(fds, nfds);
    if (t == PSP_REFUSED) {
        const struct psp_refused *f = (void *)&r;
        return -(f->err > 0 ? f->err : EACCES);
    }
    return -EIO;
}

/* ---- configure and seal */

static void setstr(char *field, size_t n, const char *s)
{
    memset(field, 0, n);
    if (s)
        snprintf(field, n, "%s", s);
}

static int send_principal(mon_psp *m, const mnc_principal *s, uint32_t id, const char *state_dir, char *why, size_t n)
{
    static psp_buf b;
    memset(&b, 0, sizeof(b));
    struct psp_principal *p = (void *)&b;
    psp_hdr_init(&p->h, PSP_PRINCIPAL, 0);
    p->id = id;
    p->cls = (uint32_t)s->cls;
    p->flags = s->cls == MNC_SINK_AGENT && s->confinement_netns ? PSP_PF_NETNS : 0;
    setstr(p->name, sizeof(p->name), s->name);
    if (s->address[0]) {
        int r;
        if (strncmp(s->address, "unix:", 5) == 0) {
            p->addr = PSP_ADDR_UNIX;
            r = mnc_kern_unix_key(s->address + 5, &p->ukey);
        } else {
            p->addr = PSP_ADDR_INET;
            r = mnc_kern_inet_key(s->address, &p->ikey);
        }
        if (r) {
            snprintf(why, n, "socket sink %s (%s): %s", s->name, s->address, strerror(-r));
            return -1;
        }
    }
    int l = 0;
    if (s->cls == MNC_SINK_LOG && !s->stream[0]) /* stream sinks: the launcher's relay, no file */
        l = s->path[0] ? snprintf(p->path, sizeof(p->path), "%s", s->path)
                       : snprintf(p->path, sizeof(p->path), "%s/logs/%s.log", state_dir, s->name);
    else if (s->cls == MNC_SINK_MEMORY && s->path[0])
        l = snprintf(p->path, sizeof(p->path), "%s", s->path);
    if (l < 0 || (size_t)l >= sizeof(p->path)) {
        snprintf(why, n, "sink %s: its path is too long", s->name);
        return -1;
    }
    return psp_tell(&m->c, p) == 0 ? 0 : (snprintf(why, n, "the enforcer: %.300s", m->c.err), -1);
}

static int send_idmap(mon_psp *m, uint32_t kind, uint32_t agent, uint32_t uid, const char *cg, char *why, size_t n)
{
    static psp_buf b;
    memset(&b, 0, sizeof(b));
    struct psp_idmap *x = (void *)&b;
    psp_hdr_init(&x->h, PSP_IDMAP, 0);
    x->kind = kind;
    x->agent = agent;
    x->uid = uid;
    if (cg)
        setstr(x->cgroup, sizeof(x->cgroup), cg);
    return psp_tell(&m->c, x) == 0 ? 0 : (snprintf(why, n, "the enforcer: %.300s", m->c.err), -1);
}

int mon_psp_configure(mon_psp *m, const mon_psp_conf *c, const mnc_policy *p, char *why, size_t n)
{
    static psp_buf b, r;
    uint32_t n_idmap = (uint32_t)c->n_uids + (uint32_t)c->n_cgroups;
    for (int i = 0; i < p->n_principals; i++)
        if (p->principals[i].cls == MNC_SINK_AGENT)
            n_idmap += (uint32_t)p->principals[i].n_uids;
    if (n_idmap > PSP_MAX_IDMAP || p->n_principals < 1 || p->n_principals > PSP_MAX_PRINCIPALS) {
        snprintf(why, n, "the configuration has %u identity entries and %d principals (at most %d and %d)", n_idmap,
                 p->n_principals, PSP_MAX_IDMAP, PSP_MAX_PRINCIPALS);
        return -1;
    }
    m->sink_fd = malloc((size_t)p->n_principals * sizeof(int));
    if (!m->sink_fd) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    m->n_sink_fd = (uint32_t)p->n_principals;
    for (int i = 0; i < p->n_principals; i++)
        m->sink_fd[i] = -1;
    memset(&b, 0, sizeof(b));
    struct psp_config *cf = (void *)&b;
    psp_hdr_init(&cf->h, PSP_CONFIG, 0);
    cf->admin_uid = c->admin_uid;
    cf->monitor_uid = c->monitor_uid;
    cf->monitor_gid = c->monitor_gid;
    cf->kernel = c->kernel;
    cf->n_principals = (uint32_t)p->n_principals;
    cf->n_idmap = n_idmap;
    setstr(cf->pin_root, sizeof(cf->pin_root), c->pin_root);
    setstr(cf->cgroup_tree, sizeof(cf->cgroup_tree), c->cgroup_tree);
    setstr(cf->state_dir, sizeof(cf->state_dir), c->state_dir);
    setstr(cf->socket, sizeof(cf->socket), c->socket);
    if (psp_tell(&m->c, cf) != 0) {
        snprintf(why, n, "the enforcer: %.300s", m->c.err);
        return -1;
    }
    for (int i = 0; i < p->n_principals; i++)
        if (send_principal(m, &p->principals[i], (uint32_t)i, c->state_dir, why, n) != 0)
            return -1;
    for (int i = 0; i < c->n_uids; i++)
        if (send_idmap(m, PSP_IDMAP_UID, (uint32_t)c->uid_agent[i], c->uid_of[i], NULL, why, n) != 0)
            return -1;
    for (int i = 0; i < c->n_cgroups; i++)
        if (send_idmap(m, PSP_IDMAP_CGROUP, (uint32_t)c->cg_agent[i], 0, c->cg_path[i], why, n) != 0)
            return -1;
    for (int i = 0; i < p->n_principals; i++)
        for (int k = 0; p->principals[i].cls == MNC_SINK_AGENT && k < p->principals[i].n_uids; k++)
            if (send_idmap(m, PSP_IDMAP_UID, (uint32_t)i, p->principals[i].uids[k], NULL, why, n) != 0)
                return -1;
    memset(&b, 0, sizeof(b));
    struct psp_seal *s = (void *)&b;
    psp_hdr_init(&s->h, PSP_SEAL, 0);
    s->n_principals = (uint32_t)p->n_principals;
    s->n_idmap = n_idmap;
    int fds[PSP_MAX_FDS], nfds = 0;
    int t = call(m, s, &r, fds, &nfds, why, n);
    if (t == PSP_REFUSED) {
        snprintf(why, n, "%s", ((struct psp_refused *)&r)->detail);
        return -1;
    }
    if (t != PSP_STARTED) {
        psp_close_fds(fds, nfds);
        if (t >= 0)
            snprintf(why, n, "the enforcer answered the seal with %s", psp_type_name((uint32_t)t));
        return -1;
    }
    memcpy(&m->started, &r, sizeof(m->started));
    m->c.n_principals = (uint32_t)p->n_principals; /* ids are checked from now on */
    m->state_fd = fds[0];
    m->listen_fd = fds[1];
    m->audit_fd = nfds > 2 ? fds[2] : -1;
    return 0;
}

/* ---- requests */

int mon_psp_hold(mon_psp *m, uint32_t agent, unsigned op, const uint64_t sinks[MNC_SET_WORDS_ABI], bool may_log,
                 bool may_memory, bool may_forward, bool may_external, const uint8_t oid[16], uint64_t *gen, char *why,
                 size_t n)
{
    static psp_buf b, r;
    memset(&b, 0, sizeof(b));
    struct psp_hold *h = (void *)&b;
    psp_hdr_init(&h->h, PSP_HOLD, 0);
    memcpy(h->sinks, sinks, sizeof(h->sinks));
    memcpy(h->oid, oid, sizeof(h->oid));
    h->agent = agent;
    h->op = (uint8_t)op;
    h->may_log = may_log;
    h->may_memory = may_memory;
    h->may_forward = may_forward;
    h->may_external = may_external;
    int t = call(m, h, &r, NULL, NULL, why, n);
    if (t == PSP_HELD) {
        if (gen)
            *gen = ((struct psp_held *)&r)->generation;
        return 0;
    }
    if (t == PSP_REFUSED) {
        snprintf(why, n, "%s", ((struct psp_refused *)&r)->detail);
        return 1;
    }
    if (t >= 0)
        snprintf(why, n, "the enforcer answered a hold with %s", psp_type_name((uint32_t)t));
    return -1;
}

static int reg_path(mon_psp *m, uint32_t kind, const char *path, char *why, size_t n)
{
    static psp_buf b;
    memset(&b, 0, sizeof(b));
    struct psp_reg_path *p = (void *)&b;
    psp_hdr_init(&p->h, PSP_REG_PATH, 0);
    p->kind = kind;
    memcpy(p->path, path, strlen(path)); /* lengths checked by mon_psp_register */
    return psp_tell(&m->c, p) == 0 ? 0 : (snprintf(why, n, "the enforcer: %.300s", m->c.err), -1);
}

int mon_psp_register(mon_psp *m, uint32_t agent, uint32_t uid, uint32_t flags, const char *cgroup,
                     const char *const *ws, int n_ws, const char *const *tainted, int n_tainted,
                     struct psp_registered *out, struct psp_refused *ref, char *why, size_t n)
{
    static psp_buf b, r;
    memset(&b, 0, sizeof(b));
    struct psp_reg_begin *g = (void *)&b;
    psp_hdr_init(&g->h, PSP_REG_BEGIN, 0);
    g->agent = agent;
    g->uid = uid;
    g->flags = flags;
    /* every length first: once REG_BEGIN is out, the enforcer waits for its commit */
    bool too_long = strlen(cgroup) >= sizeof(g->cgroup);
    for (int i = 0; i < n_ws; i++)
        too_long |= strlen(ws[i]) >= PSP_PATH_MAX;
    for (int i = 0; i < n_tainted; i++)
        too_long |= strlen(tainted[i]) >= PSP_PATH_MAX;
    if (too_long) {
        memset(ref, 0, sizeof(*ref));
        ref->code = PSP_NO_INVALID;
        snprintf(ref->detail, sizeof(ref->detail), "a path of the registration is longer than %d bytes",
                 PSP_PATH_MAX - 1);
        return 1;
    }
    memcpy(g->cgroup, cgroup, strlen(cgroup));
    sources_clear(m);
    if (psp_tell(&m->c, g) != 0) {
        snprintf(why, n, "the enforcer: %.300s", m->c.err);
        return -1;
    }
    int bad = 0;
    for (int i = 0; i < n_ws && !bad; i++)
        bad = reg_path(m, PSP_REG_WORKSPACE, ws[i], why, n);
    for (int i = 0; i < n_tainted && !bad; i++)
        bad = reg_path(m, PSP_REG_TAINTED, tainted[i], why, n);
    if (bad)
        return -1; /* only a broken conversation fails a send */
    memset(&b, 0, sizeof(b));
    struct psp_reg_commit *cm = (void *)&b;
    psp_hdr_init(&cm->h, PSP_REG_COMMIT, 0);
    cm->n_ws = (uint32_t)n_ws;
    cm->n_tainted = (uint32_t)n_tainted;
    int t = call(m, cm, &r, NULL, NULL, why, n);
    if (t == PSP_REGISTERED) {
        memcpy(out, &r, sizeof(*out));
        return 0;
    }
    if (t == PSP_REFUSED) {
        memcpy(ref, &r, sizeof(*ref));
        return 1;
    }
    if (t >= 0)
        snprintf(why, n, "the enforcer answered a registration with %s", psp_type_name((uint32_t)t));
    return -1;
}

int mon_psp_taint(mon_psp *m, uint32_t agent, struct psp_taint *out, struct psp_refused *ref, char *why, size_t n)
{
    static psp_buf b, r;
    memset(&b, 0, sizeof(b));
    struct psp_taint_get *g = (void *)&b;
    psp_hdr_init(&g->h, PSP_TAINT_GET, 0);
    g->agent = agent;
    int t = call(m, g, &r, NULL, NULL, why, n);
    if (t == PSP_TAINT) {
        memcpy(out, &r, sizeof(*out));
        return 0;
    }
    if (t == PSP_REFUSED) {
        if (ref)
            memcpy(ref, &r, sizeof(*ref));
        snprintf(why, n, "%s", ((struct psp_refused *)&r)->detail);
        return 1;
    }
    if (t >= 0)
        snprintf(why, n, "the enforcer answered taint_get with %s", psp_type_name((uint32_t)t));
    return -1;
}

int mon_psp_status(mon_psp *m, struct psp_status_r *out, char *why, size_t n)
{
    static psp_buf b, r;
    memset(&b, 0, sizeof(b));
    psp_hdr_init(&b.h, PSP_STATUS, 0);
    int t = call(m, &b, &r, NULL, NULL, why, n);
    if (t == PSP_STATUS_R) {
        memcpy(out, &r, sizeof(*out));
        return 0;
    }
    if (t >= 0)
        snprintf(why, n, "the enforcer answered status with %s", psp_type_name((uint32_t)t));
    return -1;
}

int mon_psp_fd(const mon_psp *m) { return m->c.fd; }

int mon_psp_ready(mon_psp *m)
{
    static psp_buf b;
    return psp_drain(&m->c, &b) == 0 ? 0 : -1;
}
