// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_principals.c - principals keep their names across restarts and policy edits
 * (kern_layer.h; docs/kernel.md, "Principals keep their names").
 *
 * The pinned maps outlive mncd and hold principals by number: positions in the policy that
 * wrote them. At start, before it writes anything in its own numbering, mncd reads which name
 * each pinned number stood for (the principals map, written by mncd alone; the names map when
 * no mncd ever bound these maps) and translates every pinned reference to the running policy's
 * numbers by name (mnc_kern_renumber, which keeps every intermediate state at or below what
 * each agent had). What the new policy no longer has is failed closed: its bits are dropped
 * from every taint and label, its sinks deleted (files: kept as sinks nobody may reach), and
 * the live instances of an agent it no longer has are stopped (cgroup.kill) and unregistered.
 * One audit record (kernel.principals) says what changed. After the policy's sinks are
 * registered, every sink entry the policy no longer names is deleted (kl_principals_prune). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kern_layer.h"

#define IDS (MNC_SET_WORDS_ABI * 64)

/* Appends to det (bounded, always terminated). */
static void add(char *det, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *det, size_t n, const char *fmt, ...)
{
    size_t l = strlen(det);
    if (l + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(det + l, n - l, fmt, ap);
    va_end(ap);
}

/* The tree child whose cgroup id is cgid, into path (absolute). 0, or -ENOENT. */
static int child_of(const mncd_kern *kk, uint64_t cgid, char *path, size_t n)
{
    DIR *dir = opendir(kk->tree);
    if (!dir)
        return -errno;
    int rc = -ENOENT;
    for (struct dirent *e; rc != 0 && (e = readdir(dir));) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
        uint64_t id;
        if (snprintf(path, n, "%s/%s", kk->tree, e->d_name) < (int)n && mnc_cgroup_id(path, &id) == 0 && id == cgid)
            rc = 0;
    }
    closedir(dir);
    return rc;
}

/* Stops every process of the cgroup and unregisters it: its principal is gone, or its binding
 * cannot be trusted. Audited by the caller. */
static void stop_cgroup(mncd_kern *kk, uint64_t cgid, char *where, size_t n)
{
    char p[PATH_MAX + 32];
    if (child_of(kk, cgid, where, n) == 0) {
        snprintf(p, sizeof(p), "%.*s/cgroup.kill", PATH_MAX - 1, where);
        if (mnc_write_file(p, "1") != 0)
            snprintf(where + strlen(where), n - strlen(where), " (cgroup.kill failed: %s)", strerror(errno));
    } else {
        snprintf(where, n, "id %" PRIu64 " (not found in the tree)", cgid);
    }
    mnc_kern_unregister_cgroup(kk->k, cgid);
}

/* Each registered (non-self-test) cgroup with its agent id, for the caller to judge. */
typedef int (*cg_fn)(mncd *d, uint64_t cgid, const struct mnc_agent *a, void *arg);
static int each_cgroup(mncd *d, cg_fn fn, void *arg)
{
    char mp[PATH_MAX + 16];
    snprintf(mp, sizeof(mp), "%s/agents", mnc_kern_root(d->kern->k));
    int fd = bpf_obj_get(mp);
    if (fd < 0)
        return -errno;
    struct mnc_agent_key cur, next, *prev = NULL;
    uint64_t *ids = NULL;
    struct mnc_agent *as = NULL;
    int n = 0, cap = 0, rc = 0;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        cur = next;
        prev = &cur;
        struct mnc_agent a;
        if (bpf_map_lookup_elem(fd, &cur, &a) != 0 || (a.flags & MNC_AGENT_F_SELFTEST) ||
            a.agent_id >= MNC_SELFTEST_AGENT_BASE)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *ni = realloc(ids, (size_t)cap * sizeof(*ids));
            struct mnc_agent *na = ni ? realloc(as, (size_t)cap * sizeof(*as)) : NULL;
            if (ni)
                ids = ni;
            if (!na) {
                rc = -ENOMEM;
                break;
            }
            as = na;
        }
        ids[n] = cur.cgroup_id;
        as[n++] = a;
    }
    close(fd);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = fn(d, ids[i], &as[i], arg);
    free(ids);
    free(as);
    return rc;
}

typedef struct bind_ctx {
    const struct mnc_bind *old;
    int n_old;
    const int *map;
    char *det;
    size_t n;
    int stopped;
} bind_ctx;

/* A live cgroup whose agent the new policy does not have (by the binding), or whose own record
 * (the registration xattr) names another agent than the binding says: stopped. */
static int judge_cgroup(mncd *d, uint64_t cgid, const struct mnc_agent *a, void *arg)
{
    bind_ctx *x = arg;
    mncd_kern *kk = d->kern;
    const char *was =
        a->agent_id < (uint32_t)x->n_old && x->old[a->agent_id].cls == MNC_SINK_AGENT ? x->old[a->agent_id].name : NULL;
    int now = a->agent_id < (uint32_t)x->n_old ? x->map[a->agent_id] : -1;
    char path[PATH_MAX], why[300] = "";
    mncd_reg reg;
    memset(&reg, 0, sizeof(reg));
    if (child_of(kk, cgid, path, sizeof(path)) == 0)
        (void)kl_reg_load(path, &reg);
    if (!was)
        snprintf(why, sizeof(why), "registered as principal %" PRIu32 ", which no binding names", a->agent_id);
    else if (now < 0)
        snprintf(why, sizeof(why), "agent %s is not an agent of the new policy (removed or renamed)", was);
    else if (reg.agent[0] && strcmp(reg.agent, was) != 0)
        snprintf(why, sizeof(why), "its registration names agent %s, the pinned binding %s", reg.agent, was);
    mncd_reg_free(&reg);
    if (!why[0])
        return 0;
    char where[PATH_MAX + 96];
    stop_cgroup(kk, cgid, where, sizeof(where));
    char det[PATH_MAX + 600];
    snprintf(det, sizeof(det),
             "cgroup %.3000s: %s: its processes were stopped and its registration removed "
             "(fail closed)",
             where[0] == '/' ? kl_rel_path(kk, where) : where, why);
    mncd_audit_named(d, "kernel.principals", NULL, was, NULL, "deny", "unknown_agent", det);
    x->stopped++;
    return d->fatal ? -EIO : 0;
}

/* An interrupted renumbering (MNC_BIND_TRANSIT keys): which step it reached is unknown, so no
 * pinned number can be trusted. Every live instance is stopped, every taint and registration
 * removed, the binding dropped: the start then proceeds as on empty maps. */
static int interrupted(mncd *d, const struct mnc_bind *old, int n_old)
{
    bind_ctx x = {old, 0, NULL, NULL, 0, 0};
    int *none = calloc(IDS, sizeof(int));
    if (!none)
        return -ENOMEM;
    for (int i = 0; i < IDS; i++)
        none[i] = -1;
    x.map = none;
    x.n_old = 0; /* every cgroup "registered as principal N, which no binding names" */
    (void)n_old;
    int rc = each_cgroup(d, judge_cgroup, &x);
    for (uint32_t a = 0; rc == 0 && a < IDS; a++)
        (void)mnc_kern_clear_agent(d->kern->k, a);
    if (rc == 0)
        rc = mnc_kern_bind_abandon(d->kern->k);
    char det[256];
    snprintf(det, sizeof(det),
             "a renumbering of the pinned principals did not finish (mncd stopped during it): no pinned "
             "number can be trusted; %d live instance(s) stopped, every taint and registration removed",
             x.stopped);
    mncd_audit_named(d, "kernel.principals", NULL, NULL, NULL, "error", "internal", det);
    free(none);
    return rc;
}

/* Deny events still queued from before the restart carry the old numbers: drained before the
 * translation and summarised under the old names (one record; counts per agent and reason). */
typedef struct drain_ctx {
    const struct mnc_bind *old;
    int n_old;
    char *det;
    size_t n;
    int total;
} drain_ctx;

static int drain_one(const struct mnc_event *ev, void *arg)
{
    drain_ctx *x = arg;
    const char *who = ev->agent_id < (uint32_t)x->n_old && x->old[ev->agent_id].cls != MNC_SINK_NONE
                          ? x->old[ev->agent_id].name
                          : "an unknown cgroup";
    if (x->total++ < 32)
        add(x->det, x->n, "%s%s %s", x->total > 1 ? ", " : "", who, mnc_kreason_name(ev->reason));
    return 0;
}

static void drain_events(mncd *d, const struct mnc_bind *old, int n_old)
{
    char det[2048];
    snprintf(det, sizeof(det), "deny events raised before the restart, under the old numbering: ");
    drain_ctx x = {old, n_old, det, sizeof(det), 0};
    while (mnc_kern_poll_events(d->kern->k, 0, drain_one, &x) > 0)
        ;
    if (x.total == 0)
        return;
    if (x.total > 32)
        add(det, sizeof(det), " (and %d more)", x.total - 32);
    mncd_audit_named(d, "kernel.deny", NULL, NULL, NULL, "deny", "drained", det);
}

int kl_principals_bind(mncd *d, char *err, size_t errlen)
{
    mncd_kern *kk = d->kern;
    const mnc_policy *p = d->policy;
    struct mnc_bind *old = calloc(IDS, sizeof(*old)), *nu = calloc(IDS, sizeof(*nu));
    int *map = calloc(IDS, sizeof(int));
    char *det = calloc(1, 8192);
    size_t dn = 8192;
    int n_old = 0, rc = -ENOMEM;
    bool intr = false, from_names = false;
    if (!old || !nu || !map || !det)
        goto out;
    if ((rc = mnc_kern_bind_read(kk->k, old, IDS, &n_old, &intr)) != 0) {
        snprintf(err, errlen, "principals map: %s", strerror(-rc));
        goto out;
    }
    if (intr) {
        if ((rc = interrupted(d, old, n_old)) != 0) {
            snprintf(err, errlen, "cleaning up an interrupted renumbering: %s", strerror(-rc));
            goto out;
        }
        n_old = 0;
        memset(old, 0, IDS * sizeof(*old));
    } else if (n_old == 0) {
        /* nothing bound: maps written by `mncctl run --kernel-only` alone, or fresh; their
         * numbers are the names map's */
        if ((rc = mnc_kern_names_read(kk->k, old, IDS, &n_old)) != 0) {
            snprintf(err, errlen, "names map: %s", strerror(-rc));
            goto out;
        }
        from_names = n_old > 0;
    }
    uint64_t epoch = 0;
    for (int o = 0; o < n_old; o++)
        if (old[o].cls != MNC_SINK_NONE && old[o].epoch > epoch)
            epoch = old[o].epoch;
    /* the translation, by (name, class) */
    bool same = true;
    for (int o = 0; o < IDS; o++) {
        map[o] = -1;
        if (o >= n_old || old[o].cls == MNC_SINK_NONE)
            continue;
        int nid = mnc_policy_principal(p, old[o].name);
        if (nid >= 0 && (unsigned)p->principals[nid].cls == old[o].cls)
            map[o] = nid;
        same = same && map[o] == o;
    }
    for (int i = 0; i < p->n_principals; i++) {
        snprintf(nu[i].name, sizeof(nu[i].name), "%s", p->principals[i].name);
        nu[i].cls = (uint32_t)p->principals[i].cls;
        /* an id whose name differs from what was bound there (a new principal took it) */
        same = same && (i >= n_old || old[i].cls == MNC_SINK_NONE || map[i] == i);
    }
    same = same && n_old <= p->n_principals;
    bool changed = !same || n_old != p->n_principals;
    for (int i = 0; i < p->n_principals; i++)
        nu[i].epoch = changed ? epoch + 1 : epoch;
    bind_ctx x = {old, n_old, map, det, dn, 0};
    if (!same) {
        drain_events(d, old, n_old);
        /* live instances of agents the new policy lacks, or whose record disagrees: stopped
         * first, so that the renumbering never moves them */
        if ((rc = each_cgroup(d, judge_cgroup, &x)) != 0) {
            snprintf(err, errlen, "judging the live cgroups: %s", strerror(-rc));
            goto out;
        }
        mnc_renum_stats st;
        char rerr[400];
        if ((rc = mnc_kern_renumber(kk->k, map, IDS, &st, rerr, sizeof(rerr))) != 0) {
            snprintf(err, errlen, "%s", rerr);
            mncd_audit_named(d, "kernel.principals", NULL, NULL, NULL, "error", "internal", rerr);
            goto out;
        }
        snprintf(det, dn, "binding epoch %" PRIu64 " -> %" PRIu64 "%s:", epoch, epoch + 1,
                 from_names ? " (no binding was pinned: the names map's numbers)" : "");
        for (int o = 0; o < n_old; o++) {
            if (old[o].cls == MNC_SINK_NONE || map[o] == o)
                continue;
            if (map[o] >= 0)
                add(det, dn, " %s %s %d->%d;", mnc_sink_class_name(old[o].cls), old[o].name, o, map[o]);
            else
                add(det, dn, " %s %s %d gone (not in the policy: its bits dropped, its sinks removed);",
                    mnc_sink_class_name(old[o].cls), old[o].name, o);
        }
        for (int i = 0; i < p->n_principals; i++) {
            int o = 0;
            while (o < n_old && map[o] != i)
                o++;
            if (o == n_old)
                add(det, dn, " %s %s new at %d;", mnc_sink_class_name(p->principals[i].cls), p->principals[i].name, i);
        }
        add(det, dn,
            " taint entries moved %d, dropped %d; cgroups kept %d, moved %d, dropped %d, stopped %d; sink entries "
            "renumbered %d, dropped %d",
            st.taints_moved, st.taints_dropped, st.cgroups_kept, st.cgroups_moved, st.cgroups_dropped, x.stopped,
            st.sinks_moved, st.sinks_dropped);
    } else {
        snprintf(det, dn, "binding epoch %" PRIu64 "%s: every pinned number keeps its name%s", (uint64_t)nu[0].epoch,
                 changed ? " (new principals appended)" : "", n_old == 0 ? " (nothing was bound)" : "");
    }
    if ((rc = mnc_kern_names_prune(kk->k, p->n_principals)) != 0 ||
        (rc = mnc_kern_bind_write(kk->k, nu, p->n_principals)) != 0) {
        snprintf(err, errlen, "writing the principal binding: %s", strerror(-rc));
        goto out;
    }
    mncd_audit_named(d, "kernel.principals", NULL, NULL, NULL, "allow", "ok", det);
    fprintf(stderr, "mncd: kernel layer: principals: %s\n", det);
    rc = d->fatal ? -EIO : 0;
out:
    if (rc && !err[0])
        snprintf(err, errlen, "principal binding: %s", strerror(-rc));
    free(old);
    free(nu);
    free(map);
    free(det);
    return rc ? -1 : 0;
}

/* The sink keys the policy registers (as register_policy computes them). */
int kl_principals_prune(mncd *d, char *err, size_t errlen)
{
    mncd_kern *kk = d->kern;
    const mnc_policy *p = d->policy;
    int np = p->n_principals + 1;
    struct mnc_unix_hkey *u = calloc((size_t)np, sizeof(*u));
    struct mnc_inet_key *in = calloc((size_t)np, sizeof(*in));
    struct mnc_file_key *f = calloc((size_t)np, sizeof(*f));
    int nu = 0, ni = 0, nf = 0, rc = -ENOMEM, dropped = 0;
    if (!u || !in || !f)
        goto out;
    for (int i = 0; i < p->n_principals; i++) {
        const mnc_principal *s = &p->principals[i];
        char path[PATH_MAX + 64] = "";
        if (s->cls == MNC_SINK_LOG && !s->stream[0])
            snprintf(path, sizeof(path), s->path[0] ? "%s" : "%s/logs/%s.log", s->path[0] ? s->path : d->cfg.state_dir,
                     s->name);
        else if (s->cls == MNC_SINK_MEMORY && s->path[0])
            snprintf(path, sizeof(path), "%s", s->path);
        if (path[0] && mnc_kern_file_key(path, &f[nf]) == 0)
            nf++;
        if (!s->address[0])
            continue;
        if (strncmp(s->address, "unix:", 5) == 0) {
            union mnc_unix_buf b;
            memset(&b, 0, sizeof(b));
            if (mnc_kern_unix_key(s->address + 5, &b.key) == 0)
                u[nu++].hash = mnc_unix_key_hash(&b);
        } else if (mnc_kern_inet_key(s->address, &in[ni]) == 0) {
            ni++;
        }
    }
    rc = mnc_kern_sinks_prune(kk->k, u, nu, in, ni, f, nf, &dropped);
    if (rc == 0 && dropped > 0) {
        char det[160];
        snprintf(det, sizeof(det), "%d sink entr%s the policy no longer names deleted (renamed, removed or moved)",
                 dropped, dropped == 1 ? "y" : "ies");
        mncd_audit_named(d, "kernel.principals", NULL, NULL, NULL, "allow", "ok", det);
    }
out:
    if (rc)
        snprintf(err, errlen, "pruning stale sink entries: %s", strerror(-rc));
    free(u);
    free(in);
    free(f);
    return rc ? -1 : 0;
}
