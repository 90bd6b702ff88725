// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_verbs.c - the kernel layer's admin verbs (agent.register, taint.reset,
 * workspace.clear) and its part of `status` (kern_layer.h; protocol: docs/protocol.md). */
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
#include "llaudit.h"

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
 * filesystem without trusted xattrs is then refused: the taint could not be carried). shown:
 * dir as messages name it (mnc_ws_shown: by inode below a workspace root, where the agent
 * chose the names). NULL, or why the registration is refused. */
static const char *ws_take(mncd *d, ws_inh *h, const char *dir, const char *shown, bool own, char *why, size_t n)
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
                 shown);
        return why;
    }
    if (r == -ENODATA || r == -ENOTSUP || (r == 0 && !t.tainted))
        return NULL; /* nothing recorded (a filesystem without xattrs can hold no record) */
    if (r == -EBADMSG) {
        snprintf(why, n,
                 "the taint record (" MNCD_WS_XATTR ") of %.400s is not valid: inspect it with `mncctl workspace "
                 "show` and clear it with `mncctl workspace clear` (admin)",
                 shown);
        return why;
    }
    if (r) {
        snprintf(why, n, "cannot read the taint record of %.400s: %s", shown, strerror(-r));
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
                    snprintf(
                        why, n,
                        "workspace %.400s overlaps workspace %.400s of a live instance of agent %s (cgroup %.200s): "
                        "two agents sharing a workspace would share data without sharing taint",
                        reg->ws[b], kk->w[i].reg.ws[a], mncd_peer_name(d, kk->w[i].agent),
                        kl_rel_path(kk, kk->w[i].path));
                    return why;
                }
    }
    for (int b = 0; b < reg->n_ws; b++) {
        if (ws_take(d, h, reg->ws[b], reg->ws[b], true, why, n))
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
            if (ws_take(d, h, anc, anc, false, why, n))
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
        char real[PATH_MAX], sh[PATH_MAX + 64];
        if (!cJSON_IsString(it) || it->valuestring[0] != '/') {
            snprintf(why, n, "each tainted_dirs entry must be an absolute path");
            return why;
        }
        /* the entries lie inside workspaces, named by the agent: shown by inode only, since
         * this refusal reaches the launcher's stderr (attack ws_register_race_name) */
        if (!realpath(it->valuestring, real)) {
            int e = errno;
            snprintf(why, n, "tainted_dirs entry %.400s: %s (it changed during the registration: retry)",
                     mnc_ws_shown(it->valuestring, reg->ws, reg->n_ws, sh, sizeof(sh)), strerror(e));
            return why;
        }
        int b = 0;
        while (b < reg->n_ws && !mncd_ws_within(real, reg->ws[b]))
            b++;
        if (b == reg->n_ws) {
            snprintf(why, n, "tainted_dirs entry %.400s is not inside a workspace",
                     mnc_ws_shown(it->valuestring, reg->ws, reg->n_ws, sh, sizeof(sh)));
            return why;
        }
        if (ws_take(d, h, real, mnc_ws_shown(real, reg->ws, reg->n_ws, sh, sizeof(sh)), false, why, n))
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
    if (h->t.tainted && (r = mnc_kern_taint_hold(kk->k, (uint32_t)agent, h->t.sinks.w, h->t.may_log, h->t.may_memory,
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
    kl_wt_from_kernel(d, agent, &kt, &now);
    for (int i = 0; i < h->t.n_obj; i++)
        mncd_ws_add_object(&now, &h->t.obj[i]);
    for (int b = 0; b < reg->n_ws; b++) {
        bool first, corrupt; /* an invalid record was refused by ws_inherit moments ago */
        if ((r = kl_ws_tighten_one(d, reg->ws[b], &now, &first, &corrupt, NULL)) != 0) {
            snprintf(why, n, "the agent's taint could not be recorded on workspace %.400s: %s", reg->ws[b],
                     strerror(-r));
            return r;
        }
    }
    return 0;
}

static cJSON *v_register(mncd *d, const mncd_ident *w, const mnc_request *q)
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
    int pop = why ? -1 : kl_read_populated(real);
    /* a process that ran here (usage > 0) would make the empty cgroup look exited at once */
    long long used = why ? -1 : kl_read_usage_usec(real);
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
        why = kl_reg_from_request(q, &reg, whybuf, sizeof(whybuf));
    ws_inh inh;
    memset(&inh, 0, sizeof(inh));
    mncd_labels lab; /* data at rest the instance can read (labels.h) */
    memset(&lab, 0, sizeof(lab));
    if (!why && (why = ws_inherit(d, agent, &reg, q->tainted_dirs, &inh, whybuf, sizeof(whybuf))) != NULL)
        mncd_reg_free(&reg);
    else if (!why && (why = mncd_labels_register(d, agent, w->pid, &reg, q->reads, q->fds, &lab, whybuf,
                                                 sizeof(whybuf))) != NULL)
        mncd_reg_free(&reg);
    if (!why)
        mncd_ws_merge(&inh.t, &lab.t); /* conferred at registration, with the workspaces' */
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
        mncd_labels_free(&lab);
        snprintf(det, sizeof(det), "cgroup %.3000s: registration refused: %s; fail closed", kl_rel_path(kk, real),
                 whybuf);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "error", "internal", det);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "%s", det);
    }
    /* the facts go onto the cgroup first (a restarted mncd adopts them), then the taint entry
     * (untainted if new, kept if the agent is already tainted: a registered cgroup without one
     * would be denied everything, deny_no_taint), then the registration */
    if ((r = kl_reg_save(real, &reg)) != 0 || (r = mnc_kern_taint_ensure(kk->k, (uint32_t)agent)) != 0 ||
        (r = mnc_kern_register_cgroup(kk->k, cgid, (uint32_t)agent,
                                      MNC_AGENT_F_LAUNCHED | (reg.root ? MNC_AGENT_F_ROOT : 0u) |
                                          (stdio_pass ? MNC_AGENT_F_STDIO_PASS : 0u))) != 0 ||
        (r = kl_watch_add(kk, real, cgid, agent, &reg)) != 0 ||
        (r = mncd_ident_register_cgroup(kl_rel_path(kk, real), agent)) != 0) {
        if (r == -1)
            r = -ENOSPC;
        mncd_reg_free(&reg);
        ws_inh_free(&inh);
        mncd_labels_free(&lab);
        mnc_kern_unregister_cgroup(kk->k, cgid);
        snprintf(det, sizeof(det), "cgroup %.3000s: registration failed: %s", kl_rel_path(kk, real), strerror(-r));
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "error", "internal", det);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "%s", det);
    }
    const mncd_reg *rg = NULL;
    for (int i = 0; i < kk->n_w; i++)
        if (kk->w[i].cgid == cgid)
            rg = &kk->w[i].reg;
    int dl = snprintf(det, sizeof(det), "cgroup %.3000s (id %" PRIu64 ")", kl_rel_path(kk, real), cgid);
    if (rg && rg->known && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "; uid %" PRIu32 "%s", rg->uid,
                       rg->root ? " (--as-root: reduced capabilities, warned)" : "");
    for (int i = 0; rg && i < rg->n_ws && dl > 0 && dl < (int)sizeof(det); i++)
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl, "%s%.600s", i ? ", " : "; workspace ", rg->ws[i]);
    bool need_netns = d->policy->principals[agent].confinement_netns;
    if (need_netns && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl,
                       "; confinement netns (a network namespace of its own, checked at each delivery)");
    if (stdio_pass && dl > 0 && dl < (int)sizeof(det))
        dl += snprintf(det + dl, sizeof(det) - (size_t)dl,
                       "; stdio passthrough (--stdio passthrough: the "
                       "agent's stdout/stderr are not governed by its taint)");
    mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "allow", "ok", det);
    for (int i = 0; i < inh.n_src; i++) {
        char desc[1000];
        mncd_ws_describe(&inh.src[i].t, d->policy, desc, sizeof(desc));
        snprintf(det, sizeof(det), "cgroup %.400s inherits workspace taint from %.3000s (%s)", kl_rel_path(kk, real),
                 inh.src[i].dir, desc);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "allow", "ok", det);
    }
    for (int i = 0; i < lab.n_src; i++) {
        char desc[1000];
        mncd_ws_describe(&lab.src[i].t, d->policy, desc, sizeof(desc));
        snprintf(det, sizeof(det), "cgroup %.400s takes on the label of data at rest it can read: %.3000s (%s)",
                 kl_rel_path(kk, real), lab.src[i].what, desc);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "allow", "ok", det);
    }
    kk->n_registered++;
    kk->n_ws_inherited += inh.n_src > 0;
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp) {
        cJSON_AddStringToObject(resp, "agent", mncd_peer_name(d, agent));
        cJSON_AddNumberToObject(resp, "agent_id", agent);
        cJSON_AddNumberToObject(resp, "cgroup_id", (double)cgid);
        cJSON_AddStringToObject(resp, "cgroup", kl_rel_path(kk, real));
        /* the launcher unshares a network namespace for "netns" (mncctl run, cmd_run.c) */
        cJSON_AddStringToObject(resp, "confinement", need_netns ? "netns" : "kernel");
        /* the policy's "server": the launcher lets the agent bind and listen (run_gate.h) */
        cJSON_AddBoolToObject(resp, "server", d->policy->principals[agent].server);
        cJSON *from = cJSON_AddArrayToObject(resp, "inherits_taint_from");
        for (int i = 0; from && i < inh.n_src; i++)
            cJSON_AddItemToArray(from, cJSON_CreateString(inh.src[i].dir));
        cJSON *lf = cJSON_AddArrayToObject(resp, "labels_from"); /* labels.h */
        for (int i = 0; lf && i < lab.n_src; i++)
            cJSON_AddItemToArray(lf, cJSON_CreateString(lab.src[i].what));
    }
    ws_inh_free(&inh);
    mncd_labels_free(&lab);
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
    int r =
        live > 0 ? mnc_kern_taint_set(kk->k, (uint32_t)agent, &clean) : mnc_kern_clear_agent(kk->k, (uint32_t)agent);
    char det[160];
    snprintf(det, sizeof(det), "%s; %d live cgroup(s)%s",
             had ? (before.tainted ? "was tainted" : "was untainted") : "no entry", live < 0 ? 0 : live,
             r ? ": map update FAILED" : "");
    mncd_audit_named(d, "taint.reset", NULL, mncd_peer_name(d, agent), NULL, r ? "error" : "allow",
                     r ? "internal" : "ok", det);
    if (r)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "taint.reset %s: %s", q->agent, strerror(-r));
    mncd_flow_reset(d, agent); /* and what mncd's disclose judges it by */
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
                      : !S_ISDIR(st.st_mode)                           ? "not a directory"
                                                                       : NULL;
    if (bad) {
        snprintf(det, sizeof(det), "%.3000s: %s", q->path, bad);
        mncd_audit_named(d, "workspace.clear", NULL, NULL, NULL, "deny", "invalid", det);
        return mnc_resp_deny(q->id, MNC_R_INVALID, "workspace.clear refused: %s", det);
    }
    for (int i = 0; i < kk->n_w; i++)
        for (int j = 0; j < kk->w[i].reg.n_ws; j++)
            if (mncd_ws_overlap(real, kk->w[i].reg.ws[j])) {
                snprintf(det, sizeof(det),
                         "%.1500s: in use by a live instance of agent %s (cgroup %.400s, workspace %.1500s)", real,
                         mncd_peer_name(d, kk->w[i].agent), kl_rel_path(kk, kk->w[i].path), kk->w[i].reg.ws[j]);
                mncd_audit_named(d, "workspace.clear", NULL, mncd_peer_name(d, kk->w[i].agent), NULL, "deny", "invalid",
                                 det);
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
    /* and the labels of every inode below it (labels.h) */
    char uerr[700];
    if (mncd_labels_unseal(d, real, uerr, sizeof(uerr)) != 0) {
        snprintf(det, sizeof(det), "%.3000s: removing the labels of its files failed: %s", real, uerr);
        mncd_audit_named(d, "workspace.clear", NULL, NULL, NULL, "error", "internal", det);
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "workspace.clear: %s", det);
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
    if (d->psp && d->psp_kernel)
        return mon_kern_verb(d, w, q); /* --privsep: the enforcer's */
    if (!d->kern) {
        mncd_audit_named(d, mnc_verb_name(q->verb), NULL, NULL, NULL, "error", "invalid", "kernel layer off");
        return mnc_resp_error(q->id, MNC_R_INVALID, "%s: mncd runs without the kernel layer (--kernel off)",
                              mnc_verb_name(q->verb));
    }
    return q->verb == MNC_V_AGENT_REGISTER    ? v_register(d, w, q)
           : q->verb == MNC_V_WORKSPACE_CLEAR ? v_ws_clear(d, q)
                                              : v_reset(d, q);
}

int mncd_kern_whoami(mncd *d, int agent, cJSON *t, char *why, size_t n)
{
    if (d->psp)
        return mon_kern_whoami(d, agent, t, why, n);
    mncd_kern *kk = d->kern;
    if (!kk) {
        if (cJSON_AddNullToObject(t, "kernel"))
            return 0;
        snprintf(why, n, "out of memory");
        return -1;
    }
    struct mnc_taint kt;
    int r = mnc_kern_taint_get(kk->k, (uint32_t)agent, &kt);
    if (r == -ENOENT)
        memset(&kt, 0, sizeof(kt)); /* no entry yet: untainted (agent.register creates it) */
    else if (r != 0) {
        snprintf(why, n, "taint map read failed: %s", strerror(-r));
        return -1;
    }
    return mncd_kern_taint_json(d, r == 0, &kt, t, why, n);
}

void mncd_kern_status(mncd *d, cJSON *resp)
{
    if (d->psp) {
        mon_kern_status(d, resp);
        return;
    }
    cJSON *k = cJSON_AddObjectToObject(resp, "kernel");
    if (!k)
        return;
    cJSON_AddStringToObject(k, "mode", mncd_kern_mode_name(d->cfg.kernel));
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
    cJSON_AddNumberToObject(k, "netns_refusals", (double)kk->n_netns_refusals);
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
            if (strcmp(mnc_kreason_name((unsigned)r), "?") != 0) /* unused codes 5..7 */
                cJSON_AddNumberToObject(c, mnc_kreason_name((unsigned)r), (double)cnt[r]);
}
