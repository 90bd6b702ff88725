// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mon_kern.c - under --privsep, the monitor's kernel layer is the enforcer (docs/privsep.md):
 * the split at start (socket pair, fork, the monitor's drop), the configuration sealed, and the
 * kernel layer's entry points of mncd.h (start, fds, hold, agent.register, whoami, status) as
 * typed requests over mon_psp. The enforcer's notices become the monitor's records: its audit
 * records, its deny events (formatted here, with keyed hashes, as kern.c does), registrations
 * into the identity table, resets into the flow record, STOP into a SIGTERM of the monitor.
 *
 * Fail closed: a hold the enforcer refuses, or cannot answer, refuses the delivery; once the
 * conversation breaks the monitor delivers nothing more, stops as on SIGTERM and exits non-zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../enforcer/enforcer.h"
#include "../kern_layer.h"
#include "../mncd.h"
#include "../privdrop.h"
#include "mnc_util.h"
#include "mon_psp.h"

static mon_psp g_psp; /* one monitor per process */
static uid_t g_uid;
static gid_t g_gid;
static int g_listen = -1;

/* ---- notices */

static void n_audit(void *arg, const struct psp_audit *a)
{
    mncd *d = arg;
    mnc_oid oid;
    memcpy(&oid, a->oid, sizeof(oid));
    mncd_audit_named(d, psp_audit_op_name(a->op), a->sender == PSP_NONE ? NULL : mncd_peer_name(d, a->sender),
                     a->receiver == PSP_NONE ? NULL : mncd_peer_name(d, a->receiver), a->has_oid ? &oid : NULL,
                     psp_decision_name(a->decision), a->reason, a->detail);
}

static void n_kevent(void *arg, const struct mnc_event *ev) { (void)mncd_kern_event(arg, ev); }

static void n_reg(void *arg, bool add, uint64_t cgid, uint32_t agent, uint32_t flags, const char *cg)
{
    (void)arg;
    (void)cgid;
    (void)flags;
    if (add && mncd_ident_register_cgroup(cg, (int)agent) != 0)
        fprintf(stderr, "mncd: identity table full: cgroup %s of the enforcer's registrations is nobody here\n", cg);
    else if (!add)
        (void)mncd_ident_unregister_cgroup(cg);
}

static void n_reset(void *arg, uint32_t agent) { mncd_flow_reset(arg, (int)agent); }

static void n_stop(void *arg)
{
    (void)arg;
    kill(getpid(), SIGTERM); /* the loop's signalfd: a stop as on SIGTERM */
}

static const mon_psp_ops ops = {n_audit, n_kevent, n_reg, n_reset, n_stop};

/* The conversation broke: nothing more is delivered (every later hold fails too); stop. */
static void broken(mncd *d)
{
    if (d->psp_broken)
        return;
    d->psp_broken = true;
    fprintf(stderr, "mncd: the enforcer is gone or out of protocol (%s): no delivery without a hold; stopping\n",
            g_psp.c.err[0] ? g_psp.c.err : "end of file");
    kill(getpid(), SIGTERM);
}

/* ---- the split */

int mon_kern_split(int argc, char **argv, struct mon_psp **psp)
{
    bool want = false;
    const char *user = "mncd";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--privsep") == 0)
            want = true;
        else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc)
            user = argv[++i];
        else if (strncmp(argv[i], "--user=", 7) == 0)
            user = argv[i] + 7;
    }
    if (!want)
        return 0;
    if (geteuid() != 0) {
        fprintf(stderr, "mncd: --privsep needs root: the enforcer holds the kernel layer (start without --privsep "
                        "and with --kernel off to run the monitor alone)\n");
        return -1;
    }
    char why[400];
    if (psp_user(user, &g_uid, &g_gid, why, sizeof(why)) != 0) {
        fprintf(stderr, "mncd: refusing to start: --privsep: %s\n", why);
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        fprintf(stderr, "mncd: refusing to start: socketpair: %s\n", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mncd: refusing to start: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0) {
        close(sv[1]);
        ek_main(sv[0], pid); /* the enforcer: never returns */
    }
    close(sv[0]);
    if (psp_drop_to_user(g_uid, g_gid, parent, why, sizeof(why)) != 0) {
        fprintf(stderr, "mncd: refusing to start: the monitor's drop to %s: %s\n", user, why);
        _exit(2);
    }
    mon_psp_init(&g_psp, sv[1], &ops, NULL);
    mnc_set_opener(mon_psp_open, &g_psp); /* config, policies, models: the enforcer opens them */
    *psp = &g_psp;
    return 1;
}

int mon_kern_configure(mncd *d)
{
    static uint32_t uid_of[MNCD_MAX_MAP];
    static int uid_agent[MNCD_MAX_MAP], cg_agent[MNCD_MAX_MAP];
    static const char *cg_path[MNCD_MAX_MAP];
    mon_psp_conf c = {.admin_uid = d->cfg.admin_uid,
                      .monitor_uid = (uint32_t)g_uid,
                      .monitor_gid = (uint32_t)g_gid,
                      .kernel = (uint32_t)d->cfg.kernel, /* enum mncd_kmode == enum psp_kmode */
                      .pin_root = d->cfg.pin_root,
                      .cgroup_tree = d->cfg.cgroup_tree,
                      .state_dir = d->cfg.state_dir,
                      .socket = d->cfg.socket,
                      .uid_of = uid_of,
                      .uid_agent = uid_agent,
                      .cg_path = cg_path,
                      .cg_agent = cg_agent};
    for (int i = 0; i < d->cfg.n_uids; i++) {
        uid_of[c.n_uids] = d->cfg.uids[i].uid;
        uid_agent[c.n_uids++] = mnc_policy_agent(d->policy, d->cfg.uids[i].agent); /* checked by main */
    }
    for (int i = 0; i < d->cfg.n_cgroups; i++) {
        cg_path[c.n_cgroups] = d->cfg.cgroups[i].path;
        cg_agent[c.n_cgroups++] = mnc_policy_agent(d->policy, d->cfg.cgroups[i].agent);
    }
    g_psp.arg = d;
    char why[PSP_DETAIL_MAX + 64];
    if (mon_psp_configure(&g_psp, &c, d->policy, why, sizeof(why)) != 0) {
        fprintf(stderr, "mncd: refusing to start: %s\n", why);
        return -1;
    }
    mnc_set_opener(NULL, NULL); /* sealed: the enforcer opens nothing more */
    /* the state dir's parents may be closed to this user: everything opens relative to it */
    if (fchdir(g_psp.state_fd) != 0) {
        fprintf(stderr, "mncd: refusing to start: the state dir from the enforcer: %s\n", strerror(errno));
        return -1;
    }
    snprintf(d->cfg.state_dir, sizeof(d->cfg.state_dir), ".");
    g_listen = g_psp.listen_fd;
    g_psp.listen_fd = -1;
    if (g_psp.audit_fd >= 0) { /* Landlock audit records are the single-process mncd's (llaudit.c) */
        close(g_psp.audit_fd);
        g_psp.audit_fd = -1;
    }
    if (g_psp.started.flags & PSP_SF_PIDFD)
        mncd_ident_expect_pidfd();
    d->psp_kernel = g_psp.started.backend != 0;
    return 0;
}

int mon_kern_listen_fd(mncd *d)
{
    (void)d;
    int fd = g_listen;
    g_listen = -1;
    return fd;
}

int mon_kern_sink_fd(mncd *d, int id)
{
    (void)d;
    if (id < 0 || (uint32_t)id >= g_psp.n_sink_fd || g_psp.sink_fd[id] < 0) {
        errno = ENOENT;
        return -1;
    }
    return fcntl(g_psp.sink_fd[id], F_DUPFD_CLOEXEC, 3);
}

/* ---- the kernel layer's entry points */

int mon_kern_start(mncd *d)
{
    if (d->psp_kernel && mncd_ident_set_tree(g_psp.started.tree_rel) != 0) {
        fprintf(stderr, "mncd: refusing to start: the mnc tree %s is too long\n", g_psp.started.tree_rel);
        return -1;
    }
    mon_psp_release(&g_psp); /* the enforcer's start records, now that the audit log is open */
    char det[256];
    snprintf(det, sizeof(det), "privsep: monitor uid %u, enforcer pid %d; kernel layer %s", (unsigned)g_uid,
             (int)getppid(), d->psp_kernel ? "on (the enforcer's)" : "off");
    mncd_audit_named(d, "daemon.privsep", NULL, NULL, NULL, "allow", "ok", det);
    return d->fatal ? -1 : 0;
}

void mon_kern_stop(mncd *d)
{
    (void)d;
    if (g_listen >= 0)
        close(g_listen);
    g_listen = -1;
    mon_psp_free(&g_psp);
}

int mon_kern_fds(mncd *d, int fds[MNCD_KERN_MAX_FDS])
{
    (void)d;
    fds[0] = mon_psp_fd(&g_psp);
    return fds[0] >= 0 ? 1 : 0;
}

void mon_kern_ready(mncd *d, int fd)
{
    (void)fd;
    if (!d->psp_broken && mon_psp_ready(&g_psp) != 0)
        broken(d);
}

int mon_kern_hold(mncd *d, int agent, const mnc_disclosure *o, const char *op)
{
    if (!d->psp_kernel)
        return 0; /* the enforcer's layer is off: nothing to hold (as with --kernel off) */
    const mnc_policy *p = d->policy;
    mnc_set sinks = o->scope.sinks;
    bool may_log = false, may_forward = false, may_external = false;
    for (int i = 0; i < p->n_principals; i++) { /* as kern_hold.c's mncd_kern_hold */
        const mnc_principal *s = &p->principals[i];
        if (s->cls == MNC_SINK_MEMORY && o->scope.memory)
            mnc_set_add(&sinks, (unsigned)i);
        if (!mnc_set_has(&o->scope.sinks, (unsigned)i))
            continue;
        may_log |= s->cls == MNC_SINK_LOG;
        may_forward |= s->cls == MNC_SINK_AGENT;
        may_external |= s->cls == MNC_SINK_EXTERNAL && !s->address[0];
    }
    char why[PSP_DETAIL_MAX + 64] = "";
    uint64_t gen = 0;
    int r = d->psp_broken ? -1
                          : mon_psp_hold(&g_psp, (uint32_t)agent,
                                         strcmp(op, "mem.get") == 0 ? PSP_OP_MEM_GET : PSP_OP_RECV, sinks.w, may_log,
                                         o->scope.memory, may_forward, may_external, o->id.b, &gen, why, sizeof(why));
    if (r == 0)
        return 0;
    if (r < 0) {
        char det[400];
        snprintf(det, sizeof(det), "%s refused: the enforcer did not hold the taint (%.200s); fail closed", op,
                 d->psp_broken ? "it is gone" : why);
        mncd_audit_named(d, "kernel.taint", NULL, mncd_peer_name(d, agent), &o->id, "error", "internal", det);
        broken(d);
    }
    return -1; /* refused: the enforcer's records came as notices */
}

static bool empty_array(const cJSON *a) { return !a || (cJSON_IsArray(a) && cJSON_GetArraySize(a) == 0); }

/* The paths of a request's string array into v (pointers into q), at most max. -1: not strings. */
static int strings(const cJSON *a, const char **v, int max)
{
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        if (!cJSON_IsString(it) || n == max)
            return -1;
        v[n++] = it->valuestring;
    }
    return n;
}

static cJSON *refuse(mncd *d, const mnc_request *q, int agent, const char *reason, const char *det)
{
    mncd_audit_named(d, mnc_verb_name(q->verb), NULL, agent >= 0 ? mncd_peer_name(d, agent) : NULL, NULL, "deny",
                     reason, det);
    return mnc_resp_deny(q->id, strcmp(reason, "unknown_agent") == 0 ? MNC_R_UNKNOWN_AGENT : MNC_R_INVALID,
                         "%s refused: %s", mnc_verb_name(q->verb), det);
}

cJSON *mon_kern_verb(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    (void)w;
    if (q->verb != MNC_V_AGENT_REGISTER) /* taint.reset, workspace.clear: they loosen */
        return refuse(d, q, -1, "invalid",
                      "under --privsep it loosens what the kernel enforces, so only the enforcer's admin "
                      "socket (SOCKET.admin) takes it");
    int agent = mnc_policy_agent(d->policy, q->agent);
    if (agent < 0)
        return refuse(d, q, -1, "unknown_agent", q->agent ? q->agent : "");
    /* data at rest (labels.h) is judged by the single-process mncd only: a launch that reads
     * through a grant or an fd beyond its stdin is refused rather than started unlabelled */
    const cJSON *it;
    bool fds_ok = true;
    cJSON_ArrayForEach(it, q->fds) fds_ok &= cJSON_IsNumber(it) && it->valuedouble == 0;
    if (!empty_array(q->reads) || !fds_ok)
        return refuse(d, q, agent, "invalid",
                      "read grants and inherited fds are not judged under --privsep yet (data at rest); "
                      "fail closed");
    const char *ws[MNC_MAX_WORKSPACE], *td[256];
    int n_ws = q->workspaces ? strings(q->workspaces, ws, MNC_MAX_WORKSPACE) : 0;
    int n_td = q->tainted_dirs ? strings(q->tainted_dirs, td, 256) : 0;
    if (n_ws < 0 || n_td < 0 || !q->cgroup)
        return refuse(d, q, agent, "invalid", "workspaces and tainted_dirs must be arrays of paths, cgroup a path");
    bool pass = q->stdio && strcmp(q->stdio, "passthrough") == 0;
    if (q->stdio && !pass && strcmp(q->stdio, "relay") != 0)
        return refuse(d, q, agent, "invalid", "\"stdio\" must be \"relay\" or \"passthrough\"");
    uint32_t flags = (q->uid >= 0 ? PSP_RF_UID_KNOWN : 0u) | (q->run_as_root == 1 ? PSP_RF_ROOT : 0u) |
                     (pass ? PSP_RF_STDIO_PASS : 0u);
    if (q->uid > UINT32_MAX)
        return refuse(d, q, agent, "invalid", "uid out of range");
    struct psp_registered out;
    struct psp_refused ref;
    char why[600] = "";
    int r = d->psp_broken ? -1
                          : mon_psp_register(&g_psp, (uint32_t)agent, q->uid >= 0 ? (uint32_t)q->uid : 0u, flags,
                                             q->cgroup, ws, n_ws, td, n_td, &out, &ref, why, sizeof(why));
    if (r < 0) {
        broken(d);
        mncd_audit_named(d, "agent.register", NULL, mncd_peer_name(d, agent), NULL, "error", "internal",
                         "the enforcer did not answer; fail closed");
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "agent.register: the enforcer did not answer; fail closed");
    }
    if (r > 0) /* audited by the enforcer */
        return mnc_resp_deny(q->id, ref.code == PSP_NO_INTERNAL ? MNC_R_INTERNAL : MNC_R_INVALID,
                             "agent.register refused: %s", ref.detail);
    cJSON *resp = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (resp) {
        cJSON_AddStringToObject(resp, "agent", mncd_peer_name(d, agent));
        cJSON_AddNumberToObject(resp, "agent_id", agent);
        cJSON_AddNumberToObject(resp, "cgroup_id", (double)out.cgid);
        cJSON_AddStringToObject(resp, "cgroup", out.cgroup_rel);
        cJSON_AddStringToObject(resp, "confinement", out.flags & PSP_GF_NETNS ? "netns" : "kernel");
        cJSON_AddBoolToObject(resp, "server", d->policy->principals[agent].server);
        cJSON *from = cJSON_AddArrayToObject(resp, "inherits_taint_from");
        for (int i = 0; from && i < g_psp.n_sources; i++)
            cJSON_AddItemToArray(from, cJSON_CreateString(g_psp.sources[i]));
        cJSON_AddArrayToObject(resp, "labels_from");
    }
    return resp;
}

int mon_kern_whoami(mncd *d, int agent, cJSON *t, char *why, size_t n)
{
    if (!d->psp_kernel) {
        if (cJSON_AddNullToObject(t, "kernel"))
            return 0;
        snprintf(why, n, "out of memory");
        return -1;
    }
    struct psp_taint tt;
    struct psp_refused ref;
    int r = d->psp_broken ? -1 : mon_psp_taint(&g_psp, (uint32_t)agent, &tt, &ref, why, n);
    if (r != 0) {
        if (r < 0)
            broken(d);
        if (d->psp_broken)
            snprintf(why, n, "the enforcer is gone");
        return -1; /* unreadable: callers count it as tainted (label_hold.c) */
    }
    return mncd_kern_taint_json(d, tt.entry != 0, &tt.t, t, why, n);
}

void mon_kern_status(mncd *d, cJSON *resp)
{
    cJSON *k = cJSON_AddObjectToObject(resp, "kernel");
    if (!k)
        return;
    cJSON_AddStringToObject(k, "mode", mncd_kern_mode_name(d->cfg.kernel));
    cJSON *ps = cJSON_AddObjectToObject(k, "privsep");
    if (ps) {
        cJSON_AddNumberToObject(ps, "monitor_uid", (double)g_uid);
        cJSON_AddNumberToObject(ps, "monitor_pid", (double)getpid());
        cJSON_AddNumberToObject(ps, "enforcer_pid", (double)getppid());
        cJSON_AddBoolToObject(ps, "broken", d->psp_broken);
    }
    if (!d->psp_kernel) {
        cJSON_AddBoolToObject(k, "active", false);
        return;
    }
    struct psp_status_r s;
    char why[400];
    if (d->psp_broken || mon_psp_status(&g_psp, &s, why, sizeof(why)) != 0) {
        cJSON_AddBoolToObject(k, "active", false);
        cJSON_AddStringToObject(k, "error", d->psp_broken ? "the enforcer is gone" : why);
        return;
    }
    cJSON_AddBoolToObject(k, "active", true);
    cJSON_AddStringToObject(k, "backend", s.backend == MNC_BACKEND_LSM ? "lsm" : "cgroup");
    cJSON_AddStringToObject(k, "pin_root", g_psp.started.pin_root);
    cJSON_AddStringToObject(k, "cgroup_tree", g_psp.started.tree);
    cJSON_AddNumberToObject(k, "links", s.n_links);
    cJSON_AddNumberToObject(k, "links_expected", s.n_links_expected);
    cJSON_AddNumberToObject(k, "agents", s.n_agents);
    cJSON_AddNumberToObject(k, "taints", s.n_taints);
    cJSON_AddNumberToObject(k, "registered", (double)s.registered);
    cJSON_AddNumberToObject(k, "exited", (double)s.exited);
    cJSON_AddNumberToObject(k, "holds", (double)s.holds);
    cJSON_AddNumberToObject(k, "hold_failures", (double)s.hold_failures);
    cJSON_AddNumberToObject(k, "sweeps", (double)s.sweeps);
    cJSON_AddNumberToObject(k, "deny_events", (double)s.deny_events);
}
