// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_watch.c - the kernel layer's cgroup watches and registration facts (kern_layer.h):
 * when an agent's cgroup is gone (the kernel's state decides, events only say when to look),
 * and what `mncctl run` registered for it (uid, --as-root, workspaces; kept in an xattr on the
 * cgroup so a restarted mncd adopts it). See kern.c's header for the invariants. */
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

#include "kern_layer.h"
#include "labels.h"
#include "mnc_util.h"

enum cg_state {
    CG_UNKNOWN = 0, /* could not tell (a read failed for another reason than ENOENT): keep */
    CG_GONE,        /* removed (or the path now names another cgroup) */
    CG_POPULATED,   /* has a process now */
    CG_USED_EMPTY,  /* empty, and a process has run in it: exited */
    CG_FRESH_EMPTY, /* empty, and no process has ever run in it: registered, not yet joined */
};

/* ---- watches */

int kl_read_populated(const char *cg)
{
    char p[PATH_MAX + 32], buf[256];
    snprintf(p, sizeof(p), "%s/cgroup.events", cg);
    if (mnc_read_file(p, buf, sizeof(buf)) != 0)
        return -1; /* gone */
    const char *s = strstr(buf, "populated ");
    return s ? s[10] == '1' : -1;
}

/* usage_usec of <cg>/cpu.stat (a core cgroup v2 file, present without the cpu controller):
 * the CPU time every process that ever ran in the cgroup has used. A cgroup fresh from mkdir
 * reads 0. -1 if unreadable. */
long long kl_read_usage_usec(const char *cg)
{
    char p[PATH_MAX + 32], buf[512];
    snprintf(p, sizeof(p), "%s/cpu.stat", cg);
    if (mnc_read_file(p, buf, sizeof(buf)) != 0)
        return -1;
    const char *s = strstr(buf, "usage_usec ");
    if (!s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s + 11, &end, 10);
    return errno || end == s + 11 || v < 0 ? -1 : v;
}

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
    long long used = kl_read_usage_usec(path);
    int pop = kl_read_populated(path);
    if (pop == 1)
        return CG_POPULATED;
    if (pop < 0)
        return access(path, F_OK) != 0 && errno == ENOENT ? CG_GONE : CG_UNKNOWN;
    return used > 0 ? CG_USED_EMPTY : used == 0 ? CG_FRESH_EMPTY : CG_UNKNOWN;
}

const char *kl_rel_path(const mncd_kern *kk, const char *abs)
{
    return abs + strlen(kk->cg2); /* callers only pass paths inside the tree */
}

/* ---- registration facts (uid, --as-root, workspaces) */

void mncd_reg_free(mncd_reg *r)
{
    for (int i = 0; i < r->n_ws; i++)
        free(r->ws[i]);
    for (int i = 0; i < r->n_rd; i++)
        free(r->rd[i]);
    memset(r, 0, sizeof(*r));
}

#define REG_XATTR "trusted.mnc.reg"

/* The facts are kept on the cgroup directory itself (a trusted.* xattr: only CAP_SYS_ADMIN
 * reads or writes it, which no agent holds), so a restarted mncd adopts the registration with
 * them; kernfs drops the xattr with the cgroup. */
int kl_reg_save(const char *cg, const mncd_reg *r)
{
    cJSON *o = cJSON_CreateObject(), *ws = o ? cJSON_AddArrayToObject(o, "workspaces") : NULL;
    cJSON *rd = ws ? cJSON_AddArrayToObject(o, "reads") : NULL;
    bool ok = rd && cJSON_AddNumberToObject(o, "uid", r->uid) && cJSON_AddBoolToObject(o, "root", r->root) &&
              (!r->agent[0] || cJSON_AddStringToObject(o, "agent", r->agent));
    for (int i = 0; ok && i < r->n_ws; i++) {
        cJSON *s = cJSON_CreateString(r->ws[i]);
        ok = s && cJSON_AddItemToArray(ws, s);
    }
    for (int i = 0; ok && i < r->n_rd; i++) {
        cJSON *s = cJSON_CreateString(r->rd[i]);
        ok = s && cJSON_AddItemToArray(rd, s);
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
int kl_reg_load(const char *cg, mncd_reg *r)
{
    memset(r, 0, sizeof(*r));
    static char buf[(MNC_MAX_WORKSPACE + MNCD_MAX_READS) * (PATH_MAX + 8) + 256];
    ssize_t n = getxattr(cg, REG_XATTR, buf, sizeof(buf) - 1);
    if (n < 0)
        return -errno;
    buf[n] = 0;
    cJSON *o = cJSON_Parse(buf);
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(o, "uid");
    const cJSON *root = cJSON_GetObjectItemCaseSensitive(o, "root");
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(o, "workspaces");
    const cJSON *ag = cJSON_GetObjectItemCaseSensitive(o, "agent");
    int rc = -EBADMSG;
    if (cJSON_IsString(ag) && mnc_name_valid(ag->valuestring))
        snprintf(r->agent, sizeof(r->agent), "%s", ag->valuestring);
    else if (ag)
        uid = NULL; /* not one of ours: invalid */
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
        const cJSON *rd = cJSON_GetObjectItemCaseSensitive(o, "reads");
        if (rd && (!cJSON_IsArray(rd) || cJSON_GetArraySize(rd) > MNCD_MAX_READS))
            rc = -EBADMSG;
        cJSON_ArrayForEach(it, rd)
        {
            if (rc || !cJSON_IsString(it) || it->valuestring[0] != '/' || !(r->rd[r->n_rd] = strdup(it->valuestring))) {
                rc = -EBADMSG;
                break;
            }
            r->n_rd++;
        }
    }
    cJSON_Delete(o);
    if (rc)
        mncd_reg_free(r);
    return rc;
}

/* agent.register's uid/root/workspaces, checked: each workspace an absolute path that exists
 * (stored as its realpath). NULL, or why not. */
const char *kl_reg_from_request(const mnc_request *q, mncd_reg *r, char *why, size_t n)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->agent, sizeof(r->agent), "%s", q->agent ? q->agent : "");
    r->known = q->uid >= 0;
    r->uid = q->uid >= 0 ? (uint32_t)q->uid : 0;
    r->root = q->run_as_root == 1;
    if (r->root && q->uid > 0) {
        snprintf(why, n, "\"root\": true with a non-zero \"uid\"");
        return why;
    }
    if (q->reads) {
        if (cJSON_GetArraySize(q->reads) > MNCD_MAX_READS) {
            snprintf(why, n, "more than %d read grants", MNCD_MAX_READS);
            return why;
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, q->reads)
        {
            char real[PATH_MAX];
            if (!cJSON_IsString(it) || it->valuestring[0] != '/') {
                snprintf(why, n, "each read grant must be an absolute path");
            } else if (!realpath(it->valuestring, real)) {
                snprintf(why, n, "read grant %.400s: %s", it->valuestring, strerror(errno));
            } else if (!(r->rd[r->n_rd] = strdup(real))) {
                snprintf(why, n, "out of memory");
            } else {
                r->n_rd++;
                continue;
            }
            mncd_reg_free(r);
            return why;
        }
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

int kl_watch_add(mncd_kern *kk, const char *path, uint64_t cgid, int agent, mncd_reg *reg)
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
    /* what the instance wrote keeps its workspace's label wherever it is named (labels.h) */
    for (int j = 0; j < w.reg.n_ws; j++) {
        mncd_wtaint rec;
        char err[600], det[PATH_MAX + 700];
        if (mncd_ws_read(w.reg.ws[j], d->policy, &rec) != 0 || !rec.tainted ||
            mncd_labels_seal(d, w.reg.ws[j], &rec, NULL, err, sizeof(err)) == 0)
            continue;
        snprintf(det, sizeof(det), "workspace %.3000s: labelling its files at exit failed: %s", w.reg.ws[j], err);
        mncd_audit_named(d, "workspace.taint", NULL, mncd_peer_name(d, w.agent), NULL, "error", "internal", det);
    }
    kk->w[i] = kk->w[--kk->n_w];
    mncd_reg_free(&w.reg);
    if (w.wd >= 0)
        inotify_rm_watch(kk->ino_fd, w.wd); /* EINVAL if already gone: fine */
    int r = mnc_kern_unregister_cgroup(kk->k, w.cgid);
    mncd_ident_unregister_cgroup(kl_rel_path(kk, w.path));
    int left = mnc_kern_agent_cgroups(kk->k, (uint32_t)w.agent);
    int c = 0;
    if (left == 0)
        c = mnc_kern_clear_agent(kk->k, (uint32_t)w.agent);
    char det[PATH_MAX + 200];
    snprintf(det, sizeof(det), "cgroup %.3000s %s; %s", kl_rel_path(kk, w.path), why,
             left == 0 ? (c == 0 ? "last instance: taint cleared" : "last instance: taint clear FAILED")
                       : "other instances remain: taint kept");
    mncd_audit_named(d, "agent.exit", mncd_peer_name(d, w.agent), NULL, NULL,
                     (r == 0 || r == -ENOENT) && c == 0 ? "allow" : "error", "ok", det);
    kk->n_exited++;
}

void kl_check_watches(mncd *d)
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
