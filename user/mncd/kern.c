// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern.c - mncd's side of the kernel enforcement layer (see mncd.h and loader/mnc_kern.h).
 *
 * mncd is the single writer of the taint map. The invariants it keeps:
 *   - before any response that carries an object leaves mncd, the recipient's taint already
 *     includes that object's scope (mncd_kern_hold runs inside the handler, responses are sent
 *     after the iteration's commit); a failed map update refuses the delivery;
 *   - taint only tightens, until every cgroup of the agent is gone or an admin resets it. The
 *     kernel state decides when a cgroup is gone (cg_state): removed, or empty after a process
 *     ran in it. inotify only says when to look: IN_MODIFY on each cgroup.events (populated
 *     changes) and IN_DELETE on the tree directory (kernfs raises no event on a removed
 *     cgroup's own files), with a 1 s re-check as the safety net;
 *   - nothing pinned is wiped at start: mnc_kern_attach adopts maps and replaces links
 *     atomically; registrations whose cgroup vanished while mncd was down are removed then;
 *   - a process inside the mnc tree that is not a registered agent is nobody to mncd.
 */
#include <bpf/bpf.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "llaudit.h"
#include "mnc_kern.h"
#include "mncd.h"
#include "fdscan.h"
#include "sockscan.h"
#include "wstaint.h"

#define MAX_WATCH 4096

typedef struct kwatch {
    char path[PATH_MAX]; /* absolute cgroup directory */
    uint64_t cgid;
    int agent;
    int wd;              /* inotify watch on cgroup.events, -1 if none */
    bool populated_seen; /* a process has been in it: from now on, empty means exited */
    mncd_reg reg;        /* uid, --as-root, workspaces (agent.register or the cgroup's xattr) */
} kwatch;

typedef struct mncd_kern {
    mnc_kern *k;
    unsigned backend;
    char cg2[256];
    char tree[MNC_TREE_PATH_MAX]; /* absolute */
    char tree_rel[512];           /* as /proc/PID/cgroup shows it, e.g. "/mnc" */
    int ino_fd, timer_fd, ev_fd;
    int tree_wd; /* inotify watch on the tree directory (IN_DELETE of a child), -1 if none */
    kwatch *w;
    int n_w;
    mnc_selftest st;
    uint64_t n_deny_events, n_holds, n_hold_failures, n_registered, n_exited, n_adopted;
    uint64_t n_ws_holds, n_ws_inherited, n_ws_cleared; /* workspace taint (wstaint.h) */
    /* pre-taint connection sweeps (cgroup backend, sockscan.c) */
    uint64_t n_sweeps, n_sweep_failures, n_swept;
    mncd_sweep_stats last_sweep;
    /* non-socket objects leading outside (fdscan.c) */
    uint64_t n_fdscan_refusals;
    mncd_fdscan_stats last_fdscan;
    struct mncd_llaudit *ll; /* Landlock denials -> audit records (llaudit.c) */
} mncd_kern;

static const char *const mode_names[] = {[MNCD_KERN_AUTO] = "auto", [MNCD_KERN_OFF] = "off",
                                         [MNCD_KERN_CGROUP] = "cgroup", [MNCD_KERN_LSM] = "lsm"};

int mncd_kern_option(mncd_config *c, const char *key, const char *val, const char *where)
{
    if (strcmp(key, "kernel") == 0) {
        for (int m = 0; m < (int)(sizeof(mode_names) / sizeof(mode_names[0])); m++)
            if (strcmp(val, mode_names[m]) == 0) {
                c->kernel = m;
                return 0;
            }
        fprintf(stderr, "mncd: %s: kernel mode must be off, auto, cgroup or lsm (got \"%s\")\n", where, val);
        return -1;
    }
    char *dst = NULL;
    size_t n = 0;
    if (strcmp(key, "pin_root") == 0)
        dst = c->pin_root, n = sizeof(c->pin_root);
    else if (strcmp(key, "cgroup_tree") == 0)
        dst = c->cgroup_tree, n = sizeof(c->cgroup_tree);
    else
        return 1;
    if (!*val || strlen(val) >= n) {
        fprintf(stderr, "mncd: %s: %s must be 1..%zu bytes\n", where, key, n - 1);
        return -1;
    }
    if (dst == c->pin_root && val[0] != '/') {
        fprintf(stderr, "mncd: %s: pin_root must be an absolute path under a bpf filesystem\n", where);
        return -1;
    }
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

/* ---- watches */

static int read_populated(const char *cg)
{
    char p[PATH_MAX + 32], buf[256];
    snprintf(p, sizeof(p), "%s/cgroup.events", cg);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1; /* gone */
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *s = strstr(buf, "populated ");
    return s ? s[10] == '1' : -1;
}

/* usage_usec of <cg>/cpu.stat (a core cgroup v2 file, present without the cpu controller):
 * the CPU time every process that ever ran in the cgroup has used. A cgroup fresh from mkdir
 * reads 0. -1 if unreadable. */
static long long read_usage_usec(const char *cg)
{
    char p[PATH_MAX + 32], buf[512];
    snprintf(p, sizeof(p), "%s/cpu.stat", cg);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *s = strstr(buf, "usage_usec ");
    if (!s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s + 11, &end, 10);
    return errno || end == s + 11 || v < 0 ? -1 : v;
}

enum cg_state {
    CG_UNKNOWN = 0, /* could not tell (a read failed for another reason than ENOENT): keep */
    CG_GONE,        /* removed (or the path now names another cgroup) */
    CG_POPULATED,   /* has a process now */
    CG_USED_EMPTY,  /* empty, and a process has run in it: exited */
    CG_FRESH_EMPTY, /* empty, and no process has ever run in it: registered, not yet joined */
};

/* What the kernel says about the registered cgroup (path, cgid). Events only say when to
 * look; this decides. Why cpu.stat: a short-lived agent joins and exits before mncd handles
 * the first inotify event (kernfs notifications are deferred to a workqueue and rate-limited
 * to one per 20 ms per file; two unread IN_MODIFY events coalesce), so mncd may never read
 * "populated 1". usage_usec > 0 records that a process ran here. It is read BEFORE
 * cgroup.events: usage > 0 at t1 and populated 0 at t2 > t1 mean "populated, then emptied";
 * the other order would call an agent that joined between the two reads exited. */
static enum cg_state cg_state(const char *path, uint64_t cgid)
{
    uint64_t id;
    int r = mnc_cgroup_id(path, &id);
    if (r == -ENOENT || (r == 0 && id != cgid))
        return CG_GONE;
    if (r != 0)
        return CG_UNKNOWN;
    long long used = read_usage_usec(path);
    int pop = read_populated(path);
    if (pop == 1)
        return CG_POPULATED;
    if (pop < 0)
        return access(path, F_OK) != 0 && errno == ENOENT ? CG_GONE : CG_UNKNOWN;
    return used > 0 ? CG_USED_EMPTY : used == 0 ? CG_FRESH_EMPTY : CG_UNKNOWN;
}

static const char *rel_path(const mncd_kern *kk, const char *abs)
{
    return abs + strlen(kk->cg2); /* callers only pass paths inside the tree */
}

/* ---- registration facts (uid, --as-root, workspaces) */

void mncd_reg_free(mncd_reg *r)
{
    for (int i = 0; i < r->n_ws; i++)
        free(r->ws[i]);
    memset(r, 0, sizeof(*r));
}

#define REG_XATTR "trusted.mnc.reg"

/* The facts are kept on the cgroup directory itself (a trusted.* xattr: only CAP_SYS_ADMIN
 * reads or writes it, which no agent holds), so a restarted mncd adopts the registration with
 * them; kernfs drops the xattr with the cgroup. */
static int reg_save(const char *cg, const mncd_reg *r)
{
    cJSON *o = cJSON_CreateObject(), *ws = o ? cJSON_AddArrayToObject(o, "workspaces") : NULL;
    bool ok = ws && cJSON_AddNumberToObject(o, "uid", r->uid) && cJSON_AddBoolToObject(o, "root", r->root);
    for (int i = 0; ok && i < r->n_ws; i++) {
        cJSON *s = cJSON_CreateString(r->ws[i]);
        ok = s && cJSON_AddItemToArray(ws, s);
    }
    char *txt = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!txt)
        return -ENOMEM;
    int rc = setxattr(cg, REG_XATTR, txt, strlen(txt), 0) == 0 ? 0 : -errno;
    free(txt);
    return rc;
}

/* Reads back what reg_save stored. 0, or -errno (-ENODATA: registered without it). */
static int reg_load(const char *cg, mncd_reg *r)
{
    memset(r, 0, sizeof(*r));
    char buf[MNC_MAX_WORKSPACE * (PATH_MAX + 8) + 128];
    ssize_t n = getxattr(cg, REG_XATTR, buf, sizeof(buf) - 1);
    if (n < 0)
        return -errno;
    buf[n] = 0;
    cJSON *o = cJSON_Parse(buf);
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(o, "uid");
    const cJSON *root = cJSON_GetObjectItemCaseSensitive(o, "root");
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(o, "workspaces");
    int rc = -EBADMSG;
    if (cJSON_IsNumber(uid) && uid->valuedouble >= 0 && uid->valuedouble <= 4294967294.0 && cJSON_IsBool(root) &&
        cJSON_IsArray(ws) && cJSON_GetArraySize(ws) <= MNC_MAX_WORKSPACE) {
        rc = 0;
        r->known = true;
        r->uid = (uint32_t)uid->valuedouble;
        r->root = cJSON_IsTrue(root);
        const cJSON *it;
        cJSON_ArrayForEach(it, ws)
        {
            if (!cJSON_IsString(it) || it->valuestring[0] != '/' || !(r->ws[r->n_ws] = strdup(it->valuestring))) {
                rc = -EBADMSG;
                break;
            }
            r->n_ws++;
        }
    }
    cJSON_Delete(o);
    if (rc)
        mncd_reg_free(r);
    return rc;
}

/* agent.register's uid/root/workspaces, checked: each workspace an absolute path that exists
 * (stored as its realpath). NULL, or why not. */
static const char *reg_from_request(const mnc_request *q, mncd_reg *r, char *why, size_t n)
{
    memset(r, 0, sizeof(*r));
    r->known = q->uid >= 0;
    r->uid = q->uid >= 0 ? (uint32_t)q->uid : 0;
    r->root = q->run_as_root == 1;
    if (r->root && q->uid > 0) {
        snprintf(why, n, "\"root\": true with a non-zero \"uid\"");
        return why;
    }
    if (!q->workspaces)
        return NULL;
    if (cJSON_GetArraySize(q->workspaces) > MNC_MAX_WORKSPACE) {
        snprintf(why, n, "more than %d workspaces", MNC_MAX_WORKSPACE);
        return why;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, q->workspaces)
    {
        char real[PATH_MAX];
        if (!cJSON_IsString(it) || it->valuestring[0] != '/') {
            snprintf(why, n, "each workspace must be an absolute path");
        } else if (!realpath(it->valuestring, real)) {
            snprintf(why, n, "workspace %.400s: %s", it->valuestring, strerror(errno));
        } else if (!(r->ws[r->n_ws] = strdup(real))) {
            snprintf(why, n, "out of memory");
        } else {
            r->n_ws++;
            continue;
        }
        mncd_reg_free(r);
        return why;
    }
    return NULL;
}

static int watch_add(mncd_kern *kk, const char *path, uint64_t cgid, int agent, mncd_reg *reg)
{
    for (int i = 0; i < kk->n_w; i++)
        if (kk->w[i].cgid == cgid)
            return 0;
    if (kk->n_w >= MAX_WATCH)
        return -ENOSPC;
    kwatch *n = realloc(kk->w, (size_t)(kk->n_w + 1) * sizeof(*n));
    if (!n)
        return -ENOMEM;
    kk->w = n;
    kwatch *w = &kk->w[kk->n_w];
    memset(w, 0, sizeof(*w));
    snprintf(w->path, sizeof(w->path), "%s", path);
    w->cgid = cgid;
    w->agent = agent;
    if (reg) { /* ownership of the workspace strings moves to the watch */
        w->reg = *reg;
        memset(reg, 0, sizeof(*reg));
    }
    char ev[PATH_MAX + 32];
    snprintf(ev, sizeof(ev), "%s/cgroup.events", path);
    /* no watch is not fatal: the 1 s timer re-checks every registration */
    w->wd = kk->ino_fd >= 0 ? inotify_add_watch(kk->ino_fd, ev, IN_MODIFY) : -1;
    enum cg_state cs = cg_state(path, cgid);
    w->populated_seen = cs == CG_POPULATED || cs == CG_USED_EMPTY;
    kk->n_w++;
    return 0;
}

/* The agent's cgroup emptied or vanished: drop the registration; when it was the agent's
 * last cgroup, its taint goes too (taint is sticky for the agent's lifetime only). */
static void agent_gone(mncd *d, int i, const char *why)
{
    mncd_kern *kk = d->kern;
    kwatch w = kk->w[i];
    kk->w[i] = kk->w[--kk->n_w];
    mncd_reg_free(&w.reg);
    if (w.wd >= 0)
        inotify_rm_watch(kk->ino_fd, w.wd); /* EINVAL if already gone: fine */
    int r = mnc_kern_unregister_cgroup(kk->k, w.cgid);
    mncd_ident_unregister_cgroup(rel_path(kk, w.path));
    int left = mnc_kern_agent_cgroups(kk->k, (uint32_t)w.agent);
    int c = 0;
    if (left == 0)
        c = mnc_kern_clear_agent(kk->k, (uint32_t)w.agent);
    char det[PATH_MAX + 200];
    snprintf(det, sizeof(det), "cgroup %.3000s %s; %s", rel_path(kk, w.path), why,
             left == 0 ? (c == 0 ? "last instance: taint cleared" : "last instance: taint clear FAILED")
                       : "other instances remain: taint kept");
    mncd_audit_named(d, "agent.exit", mncd_peer_name(d, w.agent), NULL, NULL, (r == 0 || r == -ENOENT) && c == 0 ? "allow" : "error",
           "ok", det);
    kk->n_exited++;
}

static void check_watches(mncd *d)
{
    mncd_kern *kk = d->kern;
    for (int i = kk->n_w - 1; i >= 0; i--) {
        enum cg_state cs = cg_state(kk->w[i].path, kk->w[i].cgid);
        if (cs == CG_POPULATED)
            kk->w[i].populated_seen = true;
        else if (cs == CG_GONE)
            agent_gone(d, i, "removed");
        else if (cs == CG_USED_EMPTY || (cs == CG_FRESH_EMPTY && kk->w[i].populated_seen))
            agent_gone(d, i, "empty (no process left)");
        /* CG_FRESH_EMPTY never seen populated: registered, its first process not in yet */
    }
}

/* ---- start */

static int mkdir_p(const char *path, mode_t mode)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
        return -ENAMETOOLONG;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    if (mkdir(p, mode) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Log and memory sinks are keyed by inode: they must exist before they can be protected. */
static int ensure_file_sink(const char *path, bool dir)
{
    if (dir)
        return mkdir_p(path, 0700);
    char parent[PATH_MAX];
    if (snprintf(parent, sizeof(parent), "%s", path) >= (int)sizeof(parent))
        return -ENAMETOOLONG;
    char *sl = strrchr(parent, '/');
    if (sl && sl != parent) {
        *sl = 0;
        int r = mkdir_p(parent, 0755);
        if (r)
            return r;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

static int register_policy(mncd *d, char *err, size_t errlen)
{
    mncd_kern *kk = d->kern;
    const mnc_policy *p = d->policy;
    for (int i = 0; i < p->n_principals; i++) {
        const mnc_principal *s = &p->principals[i];
        int r = mnc_kern_name_set(kk->k, (uint32_t)i, s->name, s->cls);
        if (r) {
            snprintf(err, errlen, "names map: %s: %s", s->name, strerror(-r));
            return -1;
        }
        char path[PATH_MAX + 64] = "";
        if (s->cls == MNC_SINK_LOG && !s->stream[0]) /* stream sinks: the launcher's relay */
            snprintf(path, sizeof(path), s->path[0] ? "%s" : "%s/logs/%s.log", s->path[0] ? s->path : d->cfg.state_dir,
                     s->name);
        else if (s->cls == MNC_SINK_MEMORY && s->path[0])
            snprintf(path, sizeof(path), "%s", s->path);
        if (path[0]) {
            if ((r = ensure_file_sink(path, s->cls == MNC_SINK_MEMORY)) != 0 ||
                (r = mnc_kern_sink_file_add(kk->k, path, (uint32_t)i, s->cls)) != 0) {
                snprintf(err, errlen, "%s sink %s (%.600s) cannot be protected: %s", mnc_sink_class_name(s->cls),
                         s->name, path, strerror(-r));
                return -1;
            }
        }
        if (s->address[0]) {
            bool unix_ = strncmp(s->address, "unix:", 5) == 0;
            r = unix_ ? mnc_kern_sink_unix_add(kk->k, s->address + 5, (uint32_t)i, s->cls)
                      : mnc_kern_sink_inet_add(kk->k, s->address, (uint32_t)i, s->cls);
            if (r) {
                snprintf(err, errlen, "socket sink %s (%s): %s", s->name, s->address, strerror(-r));
                return -1;
            }
        }
    }
    /* The monitor's own socket: always reachable, also for tainted agents. */
    char sock[PATH_MAX + 112];
    if (d->cfg.socket[0] == '/') {
        snprintf(sock, sizeof(sock), "%s", d->cfg.socket);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd))) {
            snprintf(err, errlen, "getcwd: %s", strerror(errno));
            return -1;
        }
        snprintf(sock, sizeof(sock), "%s/%s", cwd, d->cfg.socket);
    }
    int r = mnc_kern_sink_unix_add(kk->k, sock, MNC_ID_NONE, MNC_SINK_MNCD);
    if (r) {
        snprintf(err, errlen, "mncd socket %.200s as class mncd: %s", sock, strerror(-r));
        return -1;
    }
    return 0;
}

/* After a restart: registrations in the pinned agents map whose cgroup still exists in the tree
 * are adopted (identity + watch); the others belonged to agents that ended while mncd was
 * down: they are removed, and so is the taint of an agent with no cgroup left. */
static int adopt_agents(mncd *d, char *err, size_t errlen)
{
    mncd_kern *kk = d->kern;
    char mp[PATH_MAX + 16];
    snprintf(mp, sizeof(mp), "%s/agents", mnc_kern_root(kk->k));
    int fd = bpf_obj_get(mp);
    if (fd < 0) {
        snprintf(err, errlen, "open pinned %.600s: %s", mp, strerror(errno));
        return -1;
    }
    struct mnc_agent_key cur, next, *prev = NULL;
    struct { uint64_t cgid; struct mnc_agent a; } *ents = NULL;
    int n = 0, cap = 0, rc = 0;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        cur = next;
        prev = &cur;
        struct mnc_agent a;
        if (bpf_map_lookup_elem(fd, &cur, &a) != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            void *t = realloc(ents, (size_t)cap * sizeof(*ents));
            if (!t) {
                rc = -1;
                snprintf(err, errlen, "out of memory");
                break;
            }
            ents = t;
        }
        ents[n].cgid = cur.cgroup_id;
        ents[n].a = a;
        n++;
    }
    close(fd);
    DIR *dir = rc == 0 ? opendir(kk->tree) : NULL;
    if (rc == 0 && !dir) {
        snprintf(err, errlen, "open the mnc tree %s: %s", kk->tree, strerror(errno));
        rc = -1;
    }
    /* cgroup ids of the tree's children (mncctl run creates <tree>/<agent>.<pid>) */
    struct { uint64_t id; char name[256]; } *kids = NULL;
    int nk = 0, ck = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        uint64_t id;
        if (snprintf(p, sizeof(p), "%s/%s", kk->tree, e->d_name) >= (int)sizeof(p) || mnc_cgroup_id(p, &id) != 0)
            continue;
        if (nk == ck) {
            ck = ck ? ck * 2 : 16;
            void *t = realloc(kids, (size_t)ck * sizeof(*kids));
            if (!t)
                break;
            kids = t;
        }
        kids[nk].id = id;
        snprintf(kids[nk].name, sizeof(kids[nk].name), "%s", e->d_name);
        nk++;
    }
    if (dir)
        closedir(dir);
    for (int i = 0; rc == 0 && i < n; i++) {
        uint32_t ag = ents[i].a.agent_id;
        if (ents[i].a.flags & MNC_AGENT_F_SELFTEST || ag >= MNC_SELFTEST_AGENT_BASE)
            continue; /* the loader's own scratch entries */
        int j = 0;
        while (j < nk && kids[j].id != ents[i].cgid)
            j++;
        char det[PATH_MAX + 128];
        if (j < nk && (int)ag < d->policy->n_principals && d->policy->principals[ag].cls == MNC_SINK_AGENT) {
            char p[PATH_MAX];
            snprintf(p, sizeof(p), "%.3000s/%.255s", kk->tree, kids[j].name);
            mncd_reg reg;
            int lr = reg_load(p, &reg); /* -ENODATA: registered by an older mncd: facts unknown */
            if (lr != 0 && lr != -ENODATA) {
                snprintf(det, sizeof(det), "cgroup %.3000s: registration facts unreadable (%s)", rel_path(kk, p),
                         strerror(-lr));
                mncd_audit_named(d, "agent.adopt", mncd_peer_name(d, ag), NULL, NULL, "error", "internal", det);
            }
            if (watch_add(kk, p, ents[i].cgid, (int)ag, &reg) != 0 || mncd_ident_register_cgroup(rel_path(kk, p), (int)ag) != 0) {
                mncd_reg_free(&reg);
                snprintf(err, errlen, "cannot track adopted cgroup %.600s", p);
                rc = -1;
                break;
            }
            snprintf(det, sizeof(det), "adopted pinned registration of cgroup %.3000s", rel_path(kk, p));
            mncd_audit_named(d, "agent.adopt", mncd_peer_name(d, ag), NULL, NULL, "allow", "ok", det);
            kk->n_adopted++;
        } else if (j == nk) {
            mnc_kern_unregister_cgroup(kk->k, ents[i].cgid);
            int c = mnc_kern_agent_cgroups(kk->k, ag) == 0 ? mnc_kern_clear_agent(kk->k, ag) : 0;
            snprintf(det, sizeof(det), "cgroup id %" PRIu64 " gone while mncd was down; registration removed%s",
                     ents[i].cgid, c == 0 ? "" : "; taint clear FAILED");
            mncd_audit_named(d, "agent.exit", mncd_peer_name(d, ag), NULL, NULL, c == 0 ? "allow" : "error", "ok", det);
        }
        /* a live cgroup registered to a non-agent id (kernel-only tooling): left as it is */
    }
    free(ents);
    free(kids);
    return rc;
}

int mncd_kern_start(mncd *d)
{
    const mncd_config *c = &d->cfg;
    if (c->kernel == MNCD_KERN_OFF) {
        fprintf(stderr, "mncd: kernel layer off (--kernel off): userspace monitor only, agents are NOT confined by the kernel\n");
        mncd_audit_named(d, "kernel.start", NULL, NULL, NULL, "allow", "ok", "mode off: no kernel enforcement");
        return 0;
    }
    mncd_kern *kk = calloc(1, sizeof(*kk));
    if (!kk) {
        fprintf(stderr, "mncd: out of memory\n");
        return -1;
    }
    kk->ino_fd = kk->timer_fd = kk->ev_fd = kk->tree_wd = -1;
    d->kern = kk;
    mnc_kern_opts o = {.pin_root = c->pin_root[0] ? c->pin_root : NULL,
                       .tree = c->cgroup_tree[0] ? c->cgroup_tree : NULL,
                       .backend = c->kernel == MNCD_KERN_CGROUP ? MNC_BACKEND_CGROUP
                                  : c->kernel == MNCD_KERN_LSM  ? MNC_BACKEND_LSM
                                                                : 0};
    char err[1024] = "";
    int rc = mnc_kern_attach(&o, &kk->k, &kk->st, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr,
                "mncd: refusing to start: kernel enforcement (--kernel %s) is unavailable: %s%s\n"
                "mncd: (never falling back to monitor-only silently; to run the userspace monitor without "
                "kernel enforcement, start with --kernel off)\n",
                mode_names[c->kernel], err,
                geteuid() != 0 ? " [not running as root: attaching BPF programs needs CAP_BPF and CAP_SYS_ADMIN]" : "");
        for (int i = 0; i < kk->st.n; i++)
            if (!kk->st.c[i].pass)
                fprintf(stderr, "mncd:   self-test %s: want errno %d, got %d\n", kk->st.c[i].name, kk->st.c[i].want,
                        kk->st.c[i].got);
        return -1;
    }
    mnc_kern_status s;
    if ((rc = mnc_kern_status_get(kk->k, &s)) != 0 || s.n_links != s.n_links_expected) {
        fprintf(stderr, "mncd: refusing to start: kernel programs not all attached after attach (%s)\n",
                rc ? strerror(-rc) : s.missing);
        return -1;
    }
    kk->backend = s.cfg.backend;
    snprintf(kk->tree, sizeof(kk->tree), "%s", mnc_kern_tree(kk->k));
    if (mnc_cgroup2_mount(kk->cg2, sizeof(kk->cg2)) != 0 || strncmp(kk->tree, kk->cg2, strlen(kk->cg2)) != 0) {
        fprintf(stderr, "mncd: refusing to start: the mnc tree %s is not under the cgroup2 mount\n", kk->tree);
        return -1;
    }
    snprintf(kk->tree_rel, sizeof(kk->tree_rel), "%s", rel_path(kk, kk->tree));
    if (mncd_ident_set_tree(kk->tree_rel) != 0) {
        fprintf(stderr, "mncd: refusing to start: the mnc tree path %s is too long\n", kk->tree_rel);
        return -1;
    }
    kk->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    kk->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    /* The re-check is the safety net behind inotify. MNCD_KERN_RECHECK_MS changes its period
     * (tests set it to a minute to prove that exits are seen without it). */
    long recheck_ms = 1000;
    const char *rs = getenv("MNCD_KERN_RECHECK_MS");
    if (rs && *rs) {
        char *end;
        errno = 0;
        recheck_ms = strtol(rs, &end, 10);
        if (errno || *end || recheck_ms < 10 || recheck_ms > 3600000) {
            fprintf(stderr, "mncd: refusing to start: MNCD_KERN_RECHECK_MS must be 10..3600000 (got \"%s\")\n", rs);
            return -1;
        }
    }
    struct itimerspec its = {.it_interval = {recheck_ms / 1000, (recheck_ms % 1000) * 1000000L}};
    its.it_value = its.it_interval;
    kk->ev_fd = mnc_kern_events_fd(kk->k);
    if (kk->ino_fd < 0 || kk->timer_fd < 0 || timerfd_settime(kk->timer_fd, 0, &its, NULL) != 0 || kk->ev_fd < 0) {
        fprintf(stderr, "mncd: refusing to start: kernel layer fds (inotify/timerfd/ring buffer): %s\n",
                strerror(kk->ev_fd < 0 ? -kk->ev_fd : errno));
        return -1;
    }
    /* kernfs raises no inotify event on a removed cgroup's own files, only IN_DELETE in its
     * parent: mncctl run removes the agent's cgroup right after the agent exits. */
    kk->tree_wd = inotify_add_watch(kk->ino_fd, kk->tree, IN_DELETE | IN_ONLYDIR);
    if (kk->tree_wd < 0) {
        fprintf(stderr, "mncd: refusing to start: inotify watch on the mnc tree %s: %s\n", kk->tree, strerror(errno));
        return -1;
    }
    if (register_policy(d, err, sizeof(err)) != 0 || adopt_agents(d, err, sizeof(err)) != 0) {
        fprintf(stderr, "mncd: refusing to start: kernel layer: %s\n", err);
        return -1;
    }
    int pass = 0;
    for (int i = 0; i < kk->st.n; i++)
        pass += kk->st.c[i].pass;
    char det[1536];
    int dl = snprintf(det, sizeof(det), "backend %s, pin root %.300s, tree %.300s, self-test %d/%d passed, %" PRIu64
                      " agent cgroup(s) adopted", kk->backend == MNC_BACKEND_LSM ? "lsm" : "cgroup",
                      mnc_kern_root(kk->k), kk->tree, pass, kk->st.n, kk->n_adopted);
    for (int i = 0; i < kk->st.n_not_run && dl > 0 && dl < (int)sizeof(det); i++)
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "%s%s", i ? "; " : "; self-test NOT RUN: ",
                       kk->st.not_run[i]);
    fprintf(stderr, "mncd: kernel layer: %s\n", det);
    mncd_audit_named(d, "kernel.start", NULL, NULL, NULL, "allow", "ok", det);
    kk->ll = mncd_llaudit_start(d, mncd_kern_agent_of); /* on, or off with the reason in status; never fatal */
    return d->fatal ? -1 : 0;
}

void mncd_kern_stop(mncd *d)
{
    mncd_kern *kk = d->kern;
    if (!kk)
        return;
    if (kk->ino_fd >= 0)
        close(kk->ino_fd);
    if (kk->timer_fd >= 0)
        close(kk->timer_fd);
    mncd_llaudit_stop(kk->ll);
    mnc_kern_close(kk->k); /* also the ring buffer fd */
    for (int i = 0; i < kk->n_w; i++)
        mncd_reg_free(&kk->w[i].reg);
    free(kk->w);
    free(kk);
    d->kern = NULL;
    (void)mncd_ident_set_tree(""); /* no tree, no tree rule ("" always fits) */
}

int mncd_kern_fds(mncd *d, int fds[MNCD_KERN_MAX_FDS])
{
    if (!d->kern)
        return 0;
    fds[0] = d->kern->ev_fd;
    fds[1] = d->kern->ino_fd;
    fds[2] = d->kern->timer_fd;
    return 3 + mncd_llaudit_fds(d->kern->ll, fds + 3);
}

static int on_event(const struct mnc_event *ev, void *ctx)
{
    mncd *d = ctx;
    char json[1024], det[1100];
    if (mnc_kern_event_json(ev, json, sizeof(json)) < 0)
        snprintf(json, sizeof(json), "{}");
    /* the JSON names hook, reason, destination, pid, cgroup id, generation; comm is the agent's
     * own process name (agent-chosen text): dropped from the audit detail */
    char *cm = strstr(json, "\"comm\":\"");
    if (cm) {
        char *end = strstr(cm, "\",\"agent_id\"");
        if (end)
            memmove(cm, end + 3, strlen(end + 3) + 1);
    }
    snprintf(det, sizeof(det), "%s", json);
    mncd_audit_named(d, "kernel.deny", ev->agent_id == 0xffffffffu ? NULL : mncd_peer_name(d, ev->agent_id),
           ev->dst_id == MNC_ID_NONE ? NULL : mncd_peer_name(d, ev->dst_id), NULL, "deny", mnc_kreason_name(ev->reason), det);
    d->kern->n_deny_events++;
    return d->fatal;
}

void mncd_kern_ready(mncd *d, int fd)
{
    mncd_kern *kk = d->kern;
    if (!kk || mncd_llaudit_ready(d, kk->ll, fd))
        return;
    if (fd == kk->ev_fd) {
        int r = mnc_kern_poll_events(kk->k, 0, on_event, d);
        if (r < 0 && r != -EINTR)
            fprintf(stderr, "mncd: kernel deny events: %s\n", strerror(-r));
    } else if (fd == kk->ino_fd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        while (read(kk->ino_fd, buf, sizeof(buf)) > 0)
            ; /* which cgroup changed does not matter (and IN_Q_OVERFLOW names none): re-check
               * them all; the kernel state decides, not the event */
        check_watches(d);
    } else if (fd == kk->timer_fd) {
        uint64_t ticks;
        if (read(kk->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
            fprintf(stderr, "mncd: timerfd: %s\n", strerror(errno));
        check_watches(d);
    }
}

/* ---- pre-taint connections (cgroup backend): see sockscan.h and docs/kernel.md */

typedef struct sweep_ctx {
    mncd *d;
    int agent;
    const mnc_oid *obj;
    const char *op;
} sweep_ctx;

/* One audit record per socket shut down, disconnected or destroyed (or failing to be). */
static int sweep_audit(void *arg, const mncd_sweep_act *a)
{
    sweep_ctx *c = arg;
    char who[64], det[768];
    if (a->pid && a->fd >= 0)
        snprintf(who, sizeof(who), "pid %d fd %d", (int)a->pid, a->fd);
    else if (a->pid)
        snprintf(who, sizeof(who), "pid %d", (int)a->pid);
    else
        snprintf(who, sizeof(who), "the agent's cgroup");
    if (a->refuse) /* a socket the sweep cannot shut for good: the delivery is refused */
        snprintf(det, sizeof(det), "%s refused: %s %s (%s, inode %" PRIu32 "): %s", c->op, a->kind, a->peer, who, a->ino,
                 a->why ? a->why : "");
    else
        snprintf(det, sizeof(det), "%s: pre-taint %s (socket %" PRIu32 ", %s) to %s: %s%s%s%s%s%s", c->op, a->kind, a->ino,
                 who, a->peer, a->action, a->why ? " (" : "", a->why ? a->why : "", a->why ? ")" : "",
                 a->err ? " FAILED: " : "", a->err ? strerror(a->err) : "");
    bool failed = a->err && !a->refuse;
    mncd_audit_named(c->d, "kernel.sweep", mncd_peer_name(c->d, c->agent), a->dst_id == MNC_ID_NONE ? NULL : mncd_peer_name(c->d, (long)a->dst_id),
           c->obj, failed ? "error" : "deny", failed ? "internal" : mnc_kreason_name(a->reason), det);
    if (!a->err)
        c->d->kern->n_swept++;
    return c->d->fatal;
}

/* After the taint map update and before the object leaves mncd: connections the agent made
 * while its taint was looser are judged with the new taint; disallowed ones are shut. The
 * lsm backend re-checks every send in the kernel and needs none of this. Fails closed. */
/* Non-socket objects that lead outside (fdscan.h), on either backend: a writable fd on a file
 * passed in from outside, or an in-memory object (pipe, memfd...) or workspace file an outsider
 * also holds. Nothing can take the fd back: the delivery is refused. */
static int fdscan(mncd *d, int agent, const mnc_disclosure *o, const char *op, const mncd_sweep_cg *cgs, int n)
{
    mncd_kern *kk = d->kern;
    mncd_fdscan_hit hit;
    char err[400] = "", det[900];
    int r = mncd_fdscan(cgs, n, &hit, &kk->last_fdscan, err, sizeof(err));
    if (r == 0)
        return 0;
    if (r > 0 && strcmp(hit.kind, "held_outside") == 0)
        snprintf(det, sizeof(det), "%s refused: %.300s held by pid %d (fd %d) of the agent is also held by pid %d "
                 "(uid %u) outside it: what the agent writes there would reach that process; fail closed",
                 op, hit.what, (int)hit.pid, hit.fd, (int)hit.holder, (unsigned)hit.holder_uid);
    else if (r > 0)
        snprintf(det, sizeof(det), "%s refused: pid %d holds fd %d writable on %.300s, outside its workspaces "
                 "(passed in from outside?): writes there would leave the scope; fail closed",
                 op, (int)hit.pid, hit.fd, hit.what);
    else
        snprintf(det, sizeof(det), "%s refused: fd scan failed (%s); fail closed", op, err);
    mncd_audit_named(d, "kernel.fdscan", mncd_peer_name(d, agent), NULL, &o->id, r > 0 ? "deny" : "error",
           r > 0 ? hit.kind : "internal", det);
    kk->n_fdscan_refusals++;
    kk->n_hold_failures++;
    return -1;
}

static int sweep(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    mncd_kern *kk = d->kern;
    mncd_sweep_cg cgs[64];
    int n = 0;
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent != agent)
            continue;
        if (n == (int)(sizeof(cgs) / sizeof(cgs[0]))) {
            n = -1;
            break;
        }
        const mncd_reg *rg = &kk->w[i].reg;
        cgs[n++] = (mncd_sweep_cg){.path = kk->w[i].path, .cgid = kk->w[i].cgid, .uid_known = rg->known,
                                   .uid = rg->uid, .root = rg->root, .ws = (const char *const *)rg->ws,
                                   .n_ws = rg->n_ws};
    }
    char err[400] = "";
    struct mnc_taint t;
    int r = n < 0 ? -E2BIG : mnc_kern_taint_get(kk->k, (uint32_t)agent, &t);
    if (r == 0 && n == 0)
        return 0; /* no registered cgroup (not launched by mncctl run): nothing to sweep */
    if (r == 0 && kk->backend != MNC_BACKEND_CGROUP) /* lsm: the kernel re-checks every send */
        return fdscan(d, agent, o, op, cgs, n);
    sweep_ctx c = {d, agent, &o->id, op};
    if (r == 0 && mncd_sweep(kk->k, (uint32_t)agent, &t, cgs, n, sweep_audit, &c, &kk->last_sweep, err, sizeof(err)) == 0) {
        kk->n_sweeps++;
        return d->fatal ? -1 : fdscan(d, agent, o, op, cgs, n);
    }
    if (r)
        snprintf(err, sizeof(err), "%s", n < 0 ? "more than 64 cgroups" : strerror(-r));
    char det[600];
    snprintf(det, sizeof(det), "%s refused: pre-taint connection sweep failed (%s); fail closed", op, err);
    mncd_audit_named(d, "kernel.sweep", mncd_peer_name(d, agent), NULL, &o->id, "error", "internal", det);
    kk->n_sweep_failures++;
    kk->n_hold_failures++;
    return -1;
}

/* ---- workspace taint (wstaint.h) */

/* The kernel's taint entry in the terms of a workspace record. */
static void wt_from_kernel(const mncd *d, int agent, const struct mnc_taint *k, mncd_wtaint *t)
{
    memset(t, 0, sizeof(*t));
    t->tainted = k->tainted != 0;
    memcpy(t->sinks.w, k->sinks, sizeof(t->sinks.w));
    t->may_log = k->may_log;
    t->may_memory = k->may_memory;
    t->may_forward = k->may_forward;
    t->may_external = k->may_external;
    snprintf(t->agent, sizeof(t->agent), "%s", mncd_peer_name(d, agent) ? mncd_peer_name(d, agent) : "?");
    t->time_ms = mnc_now_ms();
}

/* dir's record tightened by `now`, written back. An invalid record counts as the tightest
 * taint there is (nothing reachable) and is replaced (*corrupt set: the caller audits it).
 * 0 or -errno; *first: dir carried no taint before. */
static int ws_tighten_one(mncd *d, const char *dir, const mncd_wtaint *now, bool *first, bool *corrupt)
{
    mncd_wtaint cur;
    int r = mncd_ws_read(dir, d->policy, &cur);
    *corrupt = r == -EBADMSG;
    if (r == -ENODATA || r == -EBADMSG) {
        memset(&cur, 0, sizeof(cur));
        cur.tainted = r == -EBADMSG;
    } else if (r) {
        return r;
    }
    *first = !cur.tainted;
    mncd_ws_merge(&cur, now);
    return mncd_ws_write(dir, d->policy, &cur);
}

/* After the agent's taint entry was tightened for o: the agent's whole taint onto every
 * workspace of every live instance of the agent, before o leaves mncd (the next instance on
 * that workspace starts with it; see wstaint.h). A failed write refuses the delivery. */
static int ws_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    mncd_kern *kk = d->kern;
    bool any = false;
    for (int i = 0; i < kk->n_w && !any; i++)
        any = kk->w[i].agent == agent && kk->w[i].reg.n_ws > 0;
    if (!any)
        return 0; /* no live instance with a workspace (unregistered, or an older launcher) */
    struct mnc_taint kt;
    int r = mnc_kern_taint_get(kk->k, (uint32_t)agent, &kt);
    char det[PATH_MAX + 1200];
    if (r) {
        snprintf(det, sizeof(det), "%s refused: taint map read for the workspace taint failed (%s); fail closed", op,
                 strerror(-r));
        mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
        kk->n_hold_failures++;
        return -1;
    }
    mncd_wtaint now;
    wt_from_kernel(d, agent, &kt, &now);
    mncd_ws_add_object(&now, &o->id);
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent != agent)
            continue;
        for (int j = 0; j < kk->w[i].reg.n_ws; j++) {
            const char *ws = kk->w[i].reg.ws[j];
            bool first = false, corrupt = false;
            r = ws_tighten_one(d, ws, &now, &first, &corrupt);
            if (r) {
                snprintf(det, sizeof(det), "%s refused: the taint of workspace %.3000s could not be recorded (%s); fail closed",
                         op, ws, strerror(-r));
                mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
                kk->n_hold_failures++;
                return -1;
            }
            if (corrupt) {
                snprintf(det, sizeof(det), "workspace %.3000s: invalid taint record replaced by the tightest taint "
                         "(no sinks, nothing external)", ws);
                mncd_audit_named(d, "workspace.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "invalid", det);
            }
            if (first) {
                char desc[1000];
                mncd_ws_describe(&now, d->policy, desc, sizeof(desc));
                snprintf(det, sizeof(det), "workspace %.3000s of cgroup %.400s now carries the agent's taint (%s)", ws,
                         rel_path(kk, kk->w[i].path), desc);
                mncd_audit_named(d, "workspace.taint", NULL, mncd_peer_name(d, agent), &o->id, "allow", "ok", det);
            }
        }
    }
    kk->n_ws_holds++;
    return d->fatal ? -1 : 0;
}

/* The kernel's taint is filled from libmnc's sets and names byte for byte: the two definitions
 * (bpf/mnc_abi.h, user/include/mnc/set.h and policy.h) must agree at compile time. */
_Static_assert(MNC_SET_WORDS_ABI == MNC_SET_WORDS, "mnc_abi.h and mnc/set.h: set size");
_Static_assert(sizeof(((struct mnc_taint *)0)->sinks) == sizeof(((mnc_set *)0)->w), "taint sinks == mnc_set");
_Static_assert(MNC_MAX_PRINCIPALS <= MNC_SET_WORDS_ABI * 64, "every principal id fits the taint set");
_Static_assert(MNC_NAME_LEN == MNC_NAME_MAX, "mnc_abi.h and mnc/policy.h: name length");

/* φ, μ of one object as the kernel's taint fields (bpf/mnc_abi.h, mnc_decide). */
int mncd_kern_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    mncd_kern *kk = d->kern;
    if (!kk)
        return 0;
    const mnc_policy *p = d->policy;
    mnc_set sinks = o->scope.sinks;
    bool may_log = false, may_forward = false, may_external = false;
    for (int i = 0; i < p->n_principals; i++) {
        const mnc_principal *s = &p->principals[i];
        if (s->cls == MNC_SINK_MEMORY && o->scope.memory)
            mnc_set_add(&sinks, (unsigned)i); /* μ: the monitor lets any memory store take it */
        if (!mnc_set_has(&o->scope.sinks, (unsigned)i))
            continue;
        may_log |= s->cls == MNC_SINK_LOG;
        may_forward |= s->cls == MNC_SINK_AGENT;
        /* an external sink without an address cannot be told apart from any other unregistered
         * destination: only then may the agent reach unregistered destinations at all */
        may_external |= s->cls == MNC_SINK_EXTERNAL && !s->address[0];
    }
    uint64_t gen = 0;
    int r = mnc_kern_taint_hold(kk->k, (uint32_t)agent, sinks.w, may_log, o->scope.memory, may_forward, may_external,
                                &gen);
    if (r != 0) {
        char det[200];
        snprintf(det, sizeof(det), "%s refused: taint map update failed (%s); fail closed", op, strerror(-r));
        mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
        kk->n_hold_failures++;
        return -1;
    }
    kk->n_holds++;
    if (ws_hold(d, agent, o, op) != 0)
        return -1;
    return sweep(d, agent, o, op);
}

int mncd_kern_agent_of(mncd *d, const char *cg)
{
    mncd_kern *kk = d->kern;
    size_t n = kk ? strlen(kk->tree_rel) : 0;
    if (!kk || strncmp(cg, kk->tree_rel, n) != 0 || (cg[n] != '/' && cg[n] != 0))
        return -2;
    for (int i = 0; i < kk->n_w; i++) {
        const char *r = rel_path(kk, kk->w[i].path);
        size_t rl = strlen(r);
        if (strncmp(cg, r, rl) == 0 && (cg[rl] == '/' || cg[rl] == 0))
            return kk->w[i].agent; /* the agent's cgroup or one below it */
    }
    return -1;
}

/* ---- admin verbs */

/* A directory whose taint record a new registration inherits. */
typedef struct ws_src {
    char *dir;
    mncd_wtaint t;
} ws_src;

typedef struct ws_inh {
    mncd_wtaint t; /* the merge of every source */
    ws_src *src;
    int n_src;
} ws_inh;

static void ws_inh_free(ws_inh *h)
{
    for (int i = 0; i < h->n_src; i++)
        free(h->src[i].dir);
    free(h->src);
    memset(h, 0, sizeof(*h));
}

/* Reads dir's record; a tainted one is merged into h. own: dir is a workspace itself (a
 * filesystem without trusted xattrs is then refused: the taint could not be carried).
 * NULL, or why the registration is refused. */
static const char *ws_take(mncd *d, ws_inh *h, const char *dir, bool own, char *why, size_t n)
{
    for (int i = 0; i < h->n_src; i++)
        if (strcmp(h->src[i].dir, dir) == 0)
            return NULL; /* an ancestor of two workspaces */
    mncd_wtaint t;
    int r = mncd_ws_read(dir, d->policy, &t);
    if (r == -ENOTSUP && own) {
        snprintf(why, n,
                 "workspace %.400s: its filesystem keeps no trusted.* extended attributes, so mncd cannot record "
                 "a taint on it (docs/kernel.md, \"Workspace taint\"); use a workspace on ext4, xfs, btrfs or tmpfs",
                 dir);
        return why;
    }
    if (r == -ENODATA || r == -ENOTSUP || (r == 0 && !t.tainted))
        return NULL; /* nothing recorded (a filesystem without xattrs can hold no record) */
    if (r == -EBADMSG) {
        snprintf(why, n, "the taint record (" MNCD_WS_XATTR ") of %.400s is not valid: inspect it with `mncctl workspace "
                 "show` and clear it with `mncctl workspace clear` (admin)", dir);
        return why;
    }
    if (r) {
        snprintf(why, n, "cannot read the taint record of %.400s: %s", dir, strerror(-r));
        return why;
    }
    ws_src *ns = realloc(h->src, (size_t)(h->n_src + 1) * sizeof(*ns));
    char *dup = ns ? strdup(dir) : NULL;
    if (ns)
        h->src = ns;
    if (!dup) {
        snprintf(why, n, "out of memory");
        return why;
    }
    h->src[h->n_src].dir = dup;
    h->src[h->n_src].t = t;
    h->n_src++;
    mncd_ws_merge(&h->t, &t);
    return NULL;
}

/* agent.register's workspace checks (wstaint.h): no workspace overlaps one of a live instance
 * of another agent; the taint records of each workspace, each of its ancestors (a tainted
 * parent covers its children) and each "tainted_dirs" entry (descendants the launcher found;
 * mncd re-resolves each, requires it inside a workspace and reads the record itself) merged
 * into h. NULL, or why the registration is refused. */
static const char *ws_inherit(mncd *d, int agent, const mncd_reg *reg, const cJSON *tdirs, ws_inh *h, char *why,
                              size_t n)
{
    mncd_kern *kk = d->kern;
    memset(h, 0, sizeof(*h));
    for (int i = 0; i < kk->n_w; i++) {
        if (kk->w[i].agent == agent)
            continue;
        for (int a = 0; a < kk->w[i].reg.n_ws; a++)
            for (int b = 0; b < reg->n_ws; b++)
                if (mncd_ws_overlap(reg->ws[b], kk->w[i].reg.ws[a])) {
                    snprintf(why, n,
                             "workspace %.400s overlaps workspace %.400s of a live instance of agent %s (cgroup %.200s): "
                             "two agents sharing a workspace would share data without sharing taint",
                             reg->ws[b], kk->w[i].reg.ws[a], mncd_peer_name(d, kk->w[i].agent), rel_path(kk, kk->w[i].path));
                    return why;
                }
    }
    for (int b = 0; b < reg->n_ws; b++) {
        if (ws_take(d, h, reg->ws[b], true, why, n))
            return why;
        char anc[PATH_MAX];
        snprintf(anc, sizeof(anc), "%s", reg->ws[b]);
        for (char *sl = strrchr(anc, '/'); sl; sl = strrchr(anc, '/')) {
            if (sl == anc) {
                if (anc[1] == 0)
                    break;
                anc[1] = 0; /* "/" itself */
            } else {
                *sl = 0;
            }
            if (ws_take(d, h, anc, false, why, n))
                return why;
        }
    }
    if (!tdirs)
        return NULL;
    if (cJSON_GetArraySize(tdirs) > MNCD_WS_MAX_TAINTED_DIRS) {
        snprintf(why, n, "more than %d tainted_dirs", MNCD_WS_MAX_TAINTED_DIRS);
        return why;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, tdirs)
    {
        char real[PATH_MAX];
        if (!cJSON_IsString(it) || it->valuestring[0] != '/') {
            snprintf(why, n, "each tainted_dirs entry must be an absolute path");
            return why;
        }
        if (!realpath(it->valuestring, real)) {
            snprintf(why, n, "tainted_dirs entry %.400s: %s (it changed during the registration: retry)", it->valuestring,
                     strerror(errno));
            return why;
        }
        int b = 0;
        while (b < reg->n_ws && !mncd_ws_within(real, reg->ws[b]))
            b++;
        if (b == reg->n_ws) {
            snprintf(why, n, "tainted_dirs entry %.400s (%.400s) is not inside a workspace", it->valuestring, real);
            return why;
        }
        if (ws_take(d, h, real, false, why, n))
            return why;
    }
    return NULL;
}

/* Before the registration takes effect: the inherited taint into the agent's taint entry, then
 * the agent's (possibly already tainted) taint onto each of the new instance's workspaces, so
 * that they carry it even if no object reaches this instance. 0, or -errno with why. */
static int ws_apply(mncd *d, int agent, const mncd_reg *reg, const ws_inh *h, char *why, size_t n)
{
    mncd_kern *kk = d->kern;
    int r = 0;
    if (h->t.tainted &&
        (r = mnc_kern_taint_hold(kk->k, (uint32_t)agent, h->t.sinks.w, h->t.may_log, h->t.may_memory,
                                 h->t.may_forward, h->t.may_external, NULL)) != 0) {
        snprintf(why, n, "taint map update with the inherited workspace taint failed: %s", strerror(-r));
        return r;
    }
    if (reg->n_ws == 0)
        return 0;
    struct mnc_taint kt;
    if ((r = mnc_kern_taint_get(kk->k, (uint32_t)agent, &kt)) == -ENOENT)
        return 0; /* no entry yet: untainted (the registration creates it) */
    if (r) {
        snprintf(why, n, "taint map read failed: %s", strerror(-r));
        return r;
    }
    if (!kt.tainted)
        return 0;
    mncd_wtaint now;
    wt_from_kernel(d, agent, &kt, &now);
    for (int i = 0; i < h->t.n_obj; i++)
        mncd_ws_add_object(&now, &h->t.obj[i]);
    for (int b = 0; b < reg->n_ws; b++) {
        bool first, corrupt; /* an invalid record was refused by ws_inherit moments ago */
        if ((r = ws_tighten_one(d, reg->ws[b], &now, &first, &corrupt)) != 0) {
            snprintf(why, n, "the agent's taint could not be recorded on workspace %.400s: %s", reg->ws[b], strerror(-r));
            return r;
        }
    }
    return 0;
}


static cJSON *v_register(mncd *d, const mnc_request *q)
{
    mncd_kern *kk = d->kern;
    int agent = mnc_policy_agent(d->policy, q->agent);
    if (agent < 0) {
        mncd_audit_named(d, "agent.register", NULL, NULL, NULL, "deny", "unknown_agent", q->agent);
        return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT, "\"%s\" is not an agent of the policy", q->agent);
    }
    char real[PATH_MAX];
    size_t tl = strlen(kk->tree);
    const char *why = NULL;
    if (q->cgroup[0] != '/')
        why = "the cgroup must be an absolute path";
    else if (!realpath(q->cgroup, real))
        why = strerror(errno);
    else if (strncmp(real, kk->tree, tl) != 0 || real[tl] != '/' || strchr(real + tl + 1, '/'))
        why = "not a child cgroup of the mnc tree";
    int pop = why ? -1 : read_populated(real);
    /* a process that ran here (usage > 0) would make the empty cgroup look exited at once */
    long long used = why ? -1 : read_usage_usec(real);
    if (!why && (pop < 0 || used < 0))
        why = "not a cgroup v2 directory";
    else if (!why && (pop == 1 || used > 0))
        why = pop == 1 ? "the cgroup already has processes: register it before anything runs in it"
                       : "processes have already run in the cgroup: register a fresh one before anything runs in it";
    uint64_t cgid = 0;
    int r = why ? 0 : mnc_cgroup_id(real, &cgid);
    if (!why && r)
        why = strerror(-r);
    struct mnc_agent prev;
    if (!why && mnc_kern_lookup_cgroup(kk->k, cgid, &prev) == 0 && prev.agent_id != (uint32_t)agent)
        why = "the cgroup is registered to another agent";
    char det[PATH_MAX + 3000];
    char whybuf[1500];
    mncd_reg reg;
    memset(&reg, 0, sizeof(reg));
    if (!why && q->stdio && strcmp(q->stdio, "relay") != 0 && strcmp(q->stdio, "passthrough") != 0)
        why = "\"stdio\" must be \"relay\" or \"passthrough\"";
    bool stdio_pass = q->stdio && strcmp(q->stdio, "passthrough") == 0; /* audited below, doctor warns */
    if (!why)
        why = reg_from_request(q, &reg, whybuf, sizeof(whybuf));
    ws_inh inh;
    memset(&inh, 0, sizeof(inh));
    if (!why && (why = ws_inherit(d, agent, &reg, q->tainted_dirs, &inh, whybuf, sizeof(whybuf))) != NULL)
        mncd_reg_free(&reg);
    if (why) {
        ws_inh_free(&inh);
        snprintf(det, sizeof(det), "cgroup %.3000s: %s", q->cgroup, why);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "deny", "invalid", det);
        return mnc_resp_deny(q->id, MNC_R_INVALID, "agent.register refused: %s", det);
    }
    /* the workspaces' taint first: the registration never takes effect without it */
    if ((r = ws_apply(d, agent, &reg, &inh, whybuf, sizeof(whybuf))) != 0) {
        mncd_reg_free(&reg);
        ws_inh_free(&inh);
        snprintf(det, sizeof(det), "cgroup %.3000s: registration refused: %s; fail closed", rel_path(kk, real), whybuf);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "error", "internal", det);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "%s", det);
    }
    /* the facts go onto the cgroup first (a restarted mncd adopts them), then the taint entry
     * (untainted if new, kept if the agent is already tainted: a registered cgroup without one
     * would be denied everything, deny_no_taint), then the registration */
    if ((r = reg_save(real, &reg)) != 0 || (r = mnc_kern_taint_ensure(kk->k, (uint32_t)agent)) != 0 ||
        (r = mnc_kern_register_cgroup(kk->k, cgid, (uint32_t)agent,
                                      MNC_AGENT_F_LAUNCHED | (reg.root ? MNC_AGENT_F_ROOT : 0u) |
                                          (stdio_pass ? MNC_AGENT_F_STDIO_PASS : 0u))) != 0 ||
        (r = watch_add(kk, real, cgid, agent, &reg)) != 0 || (r = mncd_ident_register_cgroup(rel_path(kk, real), agent)) != 0) {
        if (r == -1)
            r = -ENOSPC;
        mncd_reg_free(&reg);
        ws_inh_free(&inh);
        mnc_kern_unregister_cgroup(kk->k, cgid);
        snprintf(det, sizeof(det), "cgroup %.3000s: registration failed: %s", rel_path(kk, real), strerror(-r));
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "error", "internal", det);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "%s", det);
    }
    const mncd_reg *rg = NULL;
    for (int i = 0; i < kk->n_w; i++)
        if (kk->w[i].cgid == cgid)
            rg = &kk->w[i].reg;
    int dl = snprintf(det, sizeof(det), "cgroup %.3000s (id %" PRIu64 ")", rel_path(kk, real), cgid);
    if (rg && rg->known && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "; uid %" PRIu32 "%s", rg->uid,
                       rg->root ? " (--as-root: reduced capabilities, warned)" : "");
    for (int i = 0; rg && i < rg->n_ws && dl > 0 && dl < (int)sizeof(det); i++)
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "%s%.600s", i ? ", " : "; workspace ", rg->ws[i]);
    if (stdio_pass && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "; stdio passthrough (--stdio passthrough: the "
                       "agent's stdout/stderr are not governed by its taint)");
    mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "allow", "ok", det);
    for (int i = 0; i < inh.n_src; i++) {
        char desc[1000];
        mncd_ws_describe(&inh.src[i].t, d->policy, desc, sizeof(desc));
        snprintf(det, sizeof(det), "cgroup %.400s inherits workspace taint from %.3000s (%s)", rel_path(kk, real),
                 inh.src[i].dir, desc);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "allow", "ok", det);
    }
    kk->n_registered++;
    kk->n_ws_inherited += inh.n_src > 0;
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp) {
        cJSON_AddStringToObject(resp, "agent", mncd_peer_name(d, agent));
        cJSON_AddNumberToObject(resp, "agent_id", agent);
        cJSON_AddNumberToObject(resp, "cgroup_id", (double)cgid);
        cJSON_AddStringToObject(resp, "cgroup", rel_path(kk, real));
        cJSON *from = cJSON_AddArrayToObject(resp, "inherits_taint_from");
        for (int i = 0; from && i < inh.n_src; i++)
            cJSON_AddItemToArray(from, cJSON_CreateString(inh.src[i].dir));
    }
    ws_inh_free(&inh);
    return resp;
}

static cJSON *v_reset(mncd *d, const mnc_request *q)
{
    mncd_kern *kk = d->kern;
    int agent = mnc_policy_agent(d->policy, q->agent);
    if (agent < 0) {
        mncd_audit_named(d, "taint.reset", NULL, NULL, NULL, "deny", "unknown_agent", q->agent);
        return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT, "\"%s\" is not an agent of the policy", q->agent);
    }
    struct mnc_taint before;
    bool had = mnc_kern_taint_get(kk->k, (uint32_t)agent, &before) == 0;
    /* Delete, then (if instances still run) give them a fresh untainted entry: a running
     * agent keeps working, it is simply no longer tainted. Replacing in one update would be
     * the same to the programs; two steps keep mnc_kern_taint_ensure the only creator. */
    struct mnc_taint clean;
    memset(&clean, 0, sizeof(clean));
    clean.generation = had ? before.generation + 1 : 1;
    int live = mnc_kern_agent_cgroups(kk->k, (uint32_t)agent);
    int r = live > 0 ? mnc_kern_taint_set(kk->k, (uint32_t)agent, &clean) : mnc_kern_clear_agent(kk->k, (uint32_t)agent);
    char det[160];
    snprintf(det, sizeof(det), "%s; %d live cgroup(s)%s", had ? (before.tainted ? "was tainted" : "was untainted") : "no entry",
             live < 0 ? 0 : live, r ? ": map update FAILED" : "");
    mncd_audit_named(d, "taint.reset", NULL, mncd_peer_name(d, agent), NULL, r ? "error" : "allow", r ? "internal" : "ok", det);
    if (r)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "taint.reset %s: %s", q->agent, strerror(-r));
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp) {
        cJSON_AddStringToObject(resp, "agent", mncd_peer_name(d, agent));
        cJSON_AddBoolToObject(resp, "was_tainted", had && before.tainted);
        cJSON_AddNumberToObject(resp, "live_cgroups", live < 0 ? 0 : live);
    }
    return resp;
}

/* workspace.clear {"path": DIR}: the admin removes DIR's taint record (wstaint.h). Refused
 * while a live instance's workspace overlaps DIR (its agent may hold the taint right now, and
 * the next hold would write it back anyway). Audited with the old value. */
static cJSON *v_ws_clear(mncd *d, const mnc_request *q)
{
    mncd_kern *kk = d->kern;
    char real[PATH_MAX], det[PATH_MAX + 8400];
    struct stat st;
    const char *bad = !realpath(q->path, real) || stat(real, &st) != 0 ? strerror(errno)
                      : !S_ISDIR(st.st_mode)                             ? "not a directory"
                                                                         : NULL;
    if (bad) {
        snprintf(det, sizeof(det), "%.3000s: %s", q->path, bad);
        mncd_audit_named(d, "workspace.clear", NULL, NULL, NULL, "deny", "invalid", det);
        return mnc_resp_deny(q->id, MNC_R_INVALID, "workspace.clear refused: %s", det);
    }
    for (int i = 0; i < kk->n_w; i++)
        for (int j = 0; j < kk->w[i].reg.n_ws; j++)
            if (mncd_ws_overlap(real, kk->w[i].reg.ws[j])) {
                snprintf(det, sizeof(det), "%.1500s: in use by a live instance of agent %s (cgroup %.400s, workspace %.1500s)",
                         real, mncd_peer_name(d, kk->w[i].agent), rel_path(kk, kk->w[i].path), kk->w[i].reg.ws[j]);
                mncd_audit_named(d, "workspace.clear", NULL, mncd_peer_name(d, kk->w[i].agent), NULL, "deny", "invalid", det);
                return mnc_resp_deny(q->id, MNC_R_INVALID, "workspace.clear refused: %s", det);
            }
    char old[8192] = "";
    ssize_t n = getxattr(real, MNCD_WS_XATTR, old, sizeof(old) - 1);
    int r = n >= 0 || errno == ERANGE ? 0 : errno == EOPNOTSUPP ? -ENOTSUP : -errno;
    if (r == 0) {
        if (n < 0 || n >= (ssize_t)sizeof(old)) /* not one of ours (too long): removed unshown */
            snprintf(old, sizeof(old), "a value longer than %zu bytes", sizeof(old) - 1);
        else
            old[n] = 0;
        for (ssize_t i = 0; i < n; i++)
            if ((unsigned char)old[i] < 0x20)
                old[i] = '?'; /* an odd value still makes one printable detail */
        r = removexattr(real, MNCD_WS_XATTR) == 0 ? 0 : -errno;
    }
    if (r == -ENODATA || r == -ENOTSUP) {
        snprintf(det, sizeof(det), "%.3000s: no taint record%s", real, r == -ENOTSUP ? " (no xattr support)" : "");
        mncd_audit_named(d, "workspace.clear", NULL, NULL, NULL, "allow", "ok", det);
    } else if (r) {
        snprintf(det, sizeof(det), "%.3000s: removing the taint record failed: %s", real, strerror(-r));
        mncd_audit_named(d, "workspace.clear", NULL, NULL, NULL, "error", "internal", det);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "workspace.clear: %s", det);
    } else {
        snprintf(det, sizeof(det), "%.3000s: taint record removed (was %.8191s)", real, old);
        mncd_audit_named(d, "workspace.clear", NULL, NULL, NULL, "allow", "ok", det);
        kk->n_ws_cleared++;
    }
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp) {
        cJSON_AddStringToObject(resp, "path", real);
        cJSON_AddBoolToObject(resp, "was_tainted", r == 0);
        cJSON *prev = r == 0 ? cJSON_Parse(old) : NULL;
        if (prev)
            cJSON_AddItemToObject(resp, "previous", prev);
    }
    return resp;
}

cJSON *mncd_kern_verb(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    (void)w;
    if (!d->kern) {
        mncd_audit_named(d, mnc_verb_name(q->verb), NULL, NULL, NULL, "error", "invalid", "kernel layer off");
        return mnc_resp_error(q->id, MNC_R_INVALID, "%s: mncd runs without the kernel layer (--kernel off)",
                              mnc_verb_name(q->verb));
    }
    return q->verb == MNC_V_AGENT_REGISTER ? v_register(d, q) : q->verb == MNC_V_WORKSPACE_CLEAR ? v_ws_clear(d, q)
                                                                                                 : v_reset(d, q);
}

void mncd_kern_status(mncd *d, cJSON *resp)
{
    cJSON *k = cJSON_AddObjectToObject(resp, "kernel");
    if (!k)
        return;
    cJSON_AddStringToObject(k, "mode", mode_names[d->cfg.kernel]);
    mncd_kern *kk = d->kern;
    if (!kk) {
        cJSON_AddStringToObject(k, "backend", "none");
        cJSON_AddStringToObject(k, "note", "userspace monitor only: agents are not confined by the kernel");
        mncd_llaudit_status(NULL, "kernel layer off", k);
        return;
    }
    cJSON_AddStringToObject(k, "backend", kk->backend == MNC_BACKEND_LSM ? "lsm" : "cgroup");
    cJSON_AddStringToObject(k, "pin_root", mnc_kern_root(kk->k));
    cJSON_AddStringToObject(k, "tree", kk->tree);
    int pass = 0;
    for (int i = 0; i < kk->st.n; i++)
        pass += kk->st.c[i].pass;
    char st[64];
    snprintf(st, sizeof(st), "%d/%d passed at start", pass, kk->st.n);
    cJSON_AddStringToObject(k, "selftest", st);
    cJSON *nr = cJSON_AddArrayToObject(k, "selftest_not_run"); /* never reported as verified */
    for (int i = 0; nr && i < kk->st.n_not_run; i++)
        cJSON_AddItemToArray(nr, cJSON_CreateString(kk->st.not_run[i]));
    mnc_kern_status s;
    if (mnc_kern_status_get(kk->k, &s) == 0) {
        cJSON_AddNumberToObject(k, "links", s.n_links);
        cJSON_AddNumberToObject(k, "links_expected", s.n_links_expected);
        cJSON_AddNumberToObject(k, "agent_cgroups", s.n_agents);
        cJSON_AddNumberToObject(k, "taints", s.n_taints);
        cJSON_AddNumberToObject(k, "unix_sinks", s.n_unix);
        cJSON_AddNumberToObject(k, "inet_sinks", s.n_inet);
        cJSON_AddNumberToObject(k, "file_sinks", s.n_files);
    }
    cJSON_AddNumberToObject(k, "watched_cgroups", kk->n_w);
    cJSON_AddNumberToObject(k, "registered", (double)kk->n_registered);
    cJSON_AddNumberToObject(k, "exited", (double)kk->n_exited);
    cJSON_AddNumberToObject(k, "adopted", (double)kk->n_adopted);
    cJSON_AddNumberToObject(k, "taint_holds", (double)kk->n_holds);
    cJSON_AddNumberToObject(k, "taint_hold_failures", (double)kk->n_hold_failures);
    cJSON_AddNumberToObject(k, "deny_events_audited", (double)kk->n_deny_events);
    mncd_llaudit_status(kk->ll, kk->ll ? "" : "out of memory at start", k);
    cJSON_AddNumberToObject(k, "workspace_holds", (double)kk->n_ws_holds);
    cJSON_AddNumberToObject(k, "workspace_inherited", (double)kk->n_ws_inherited);
    cJSON_AddNumberToObject(k, "workspace_cleared", (double)kk->n_ws_cleared);
    cJSON_AddNumberToObject(k, "sweeps", (double)kk->n_sweeps);
    cJSON_AddNumberToObject(k, "sweep_failures", (double)kk->n_sweep_failures);
    cJSON_AddNumberToObject(k, "swept_sockets", (double)kk->n_swept);
    cJSON_AddNumberToObject(k, "fdscan_refusals", (double)kk->n_fdscan_refusals);
    cJSON *lf = cJSON_AddObjectToObject(k, "last_fdscan");
    if (lf) {
        cJSON_AddNumberToObject(lf, "fds", kk->last_fdscan.fds);
        cJSON_AddNumberToObject(lf, "shared", kk->last_fdscan.shared);
        cJSON_AddNumberToObject(lf, "host_pids", kk->last_fdscan.host_pids);
        cJSON_AddNumberToObject(lf, "total_us", (double)kk->last_fdscan.total_us);
    }
    cJSON *ls = cJSON_AddObjectToObject(k, "last_sweep");
    if (ls) {
        cJSON_AddNumberToObject(ls, "pids", kk->last_sweep.pids);
        cJSON_AddNumberToObject(ls, "sockets", kk->last_sweep.sockets);
        cJSON_AddNumberToObject(ls, "kept", kk->last_sweep.kept);
        cJSON_AddNumberToObject(ls, "acted", kk->last_sweep.acted);
        cJSON_AddNumberToObject(ls, "tcp_destroy_unsupported", kk->last_sweep.tcp_destroy_unsupported);
        cJSON_AddNumberToObject(ls, "foreign", kk->last_sweep.foreign);
        cJSON_AddNumberToObject(ls, "inflight_fds", kk->last_sweep.inflight_fds);
        cJSON_AddNumberToObject(ls, "host_pids", kk->last_sweep.host_pids);
        cJSON_AddNumberToObject(ls, "host_fds", kk->last_sweep.host_fds);
        cJSON_AddNumberToObject(ls, "hostscan_us", (double)kk->last_sweep.hostscan_us);
        cJSON_AddNumberToObject(ls, "freeze_us", (double)kk->last_sweep.freeze_us);
        cJSON_AddNumberToObject(ls, "total_us", (double)kk->last_sweep.total_us);
    }
    uint64_t cnt[MNC_K__COUNT];
    cJSON *c = cJSON_AddObjectToObject(k, "counters");
    if (c && mnc_kern_counters(kk->k, cnt) == 0)
        for (int r = 0; r < MNC_K__COUNT; r++)
            if (strcmp(mnc_kreason_name((unsigned)r), "?") != 0) /* unused codes 4..7 */
                cJSON_AddNumberToObject(c, mnc_kreason_name((unsigned)r), (double)cnt[r]);
}
