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
 * Files: this one (start, stop, events); kern_records.c (options, deny events as records);
 * kern_watch.c (watches, registrations,
 * exits); kern_hold.c (taint holds: map update, workspace taint, pre-taint sweep, fd scan);
 * kern_verbs.c (agent.register, taint.reset, workspace.clear, status). Shared: kern_layer.h.
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
#include <arpa/inet.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "kern_layer.h"
#include "labels.h"
#include "llaudit.h"
#include "lsm_abi.h"

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
                snprintf(err, errlen, "socket sink %s (%s): %s%s", s->name, s->address, strerror(-r),
                         r == -EEXIST ? " (another UNIX sink's key has the same sock_unix hash; rename one of the "
                                        "sockets)"
                                      : "");
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
    struct {
        uint64_t cgid;
        struct mnc_agent a;
    } *ents = NULL;
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
    struct {
        uint64_t id;
        char name[256];
    } *kids = NULL;
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
            int lr = kl_reg_load(p, &reg); /* -ENODATA: registered by an older mncd: facts unknown */
            if (lr != 0 && lr != -ENODATA) {
                snprintf(det, sizeof(det), "cgroup %.3000s: registration facts unreadable (%s)", kl_rel_path(kk, p),
                         strerror(-lr));
                mncd_audit_named(d, "agent.adopt", mncd_peer_name(d, ag), NULL, NULL, "error", "internal", det);
            }
            if (reg.agent[0] && strcmp(reg.agent, d->policy->principals[ag].name) != 0) {
                /* adopted by name, never by number alone: a registration that names another agent
                 * than its pinned number is stopped (fail closed) */
                char kp[PATH_MAX + 16];
                snprintf(kp, sizeof(kp), "%s/cgroup.kill", p);
                int kr = mnc_write_file(kp, "1");
                mnc_kern_unregister_cgroup(kk->k, ents[i].cgid);
                snprintf(det, sizeof(det),
                         "cgroup %.3000s: registered as agent %s but pinned as %s: stopped and unregistered%s",
                         kl_rel_path(kk, p), reg.agent, d->policy->principals[ag].name,
                         kr == 0 ? "" : " (cgroup.kill FAILED)");
                mncd_audit_named(d, "agent.adopt", reg.agent, NULL, NULL, "deny", "unknown_agent", det);
                mncd_reg_free(&reg);
                continue;
            }
            if (kl_watch_add(kk, p, ents[i].cgid, (int)ag, &reg) != 0 ||
                mncd_ident_register_cgroup(kl_rel_path(kk, p), (int)ag) != 0) {
                mncd_reg_free(&reg);
                snprintf(err, errlen, "cannot track adopted cgroup %.600s", p);
                rc = -1;
                break;
            }
            snprintf(det, sizeof(det), "adopted pinned registration of cgroup %.3000s", kl_rel_path(kk, p));
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
    if (d->psp)
        return mon_kern_start(d); /* --privsep: the enforcer's (monitor/mon_kern.c) */
    const mncd_config *c = &d->cfg;
    if (c->kernel == MNCD_KERN_OFF) {
        fprintf(
            stderr,
            "mncd: kernel layer off (--kernel off): userspace monitor only, agents are NOT confined by the kernel\n");
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
                mncd_kern_mode_name(c->kernel), err,
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
    snprintf(kk->tree_rel, sizeof(kk->tree_rel), "%s", kl_rel_path(kk, kk->tree));
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
    /* the pinned numbers by name first (kern_principals.c), then the policy's in them */
    if (kl_principals_bind(d, err, sizeof(err)) != 0 || register_policy(d, err, sizeof(err)) != 0 ||
        kl_principals_prune(d, err, sizeof(err)) != 0 || adopt_agents(d, err, sizeof(err)) != 0) {
        fprintf(stderr, "mncd: refusing to start: kernel layer: %s\n", err);
        return -1;
    }
    /* what tainted instances wrote while mncd was down gets its labels (labels.h) */
    int lr = mncd_labels_start(d);
    if (lr != 0)
        fprintf(stderr, "mncd: kernel layer: the list of tainted workspaces: %s\n", strerror(-lr));
    int pass = 0;
    for (int i = 0; i < kk->st.n; i++)
        pass += kk->st.c[i].pass;
    char det[1536];
    int dl = snprintf(det, sizeof(det),
                      "backend %s, pin root %.300s, tree %.300s, self-test %d/%d passed, %" PRIu64
                      " agent cgroup(s) adopted",
                      kk->backend == MNC_BACKEND_LSM ? "lsm" : "cgroup", mnc_kern_root(kk->k), kk->tree, pass, kk->st.n,
                      kk->n_adopted);
    for (int i = 0; i < kk->st.n_not_run && dl > 0 && dl < (int)sizeof(det); i++)
        dl +=
            snprintf(det + dl, sizeof(det) - (size_t)dl, "%s%s", i ? "; " : "; self-test NOT RUN: ", kk->st.not_run[i]);
    fprintf(stderr, "mncd: kernel layer: %s\n", det);
    mncd_audit_named(d, "kernel.start", NULL, NULL, NULL, "allow", "ok", det);
    kk->ll = mncd_llaudit_start(d, mncd_kern_agent_of); /* on, or off with the reason in status; never fatal */
    return d->fatal ? -1 : 0;
}

void mncd_kern_stop(mncd *d)
{
    if (d->psp) {
        mon_kern_stop(d);
        return;
    }
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
    if (d->psp)
        return mon_kern_fds(d, fds);
    if (!d->kern)
        return 0;
    fds[0] = d->kern->ev_fd;
    fds[1] = d->kern->ino_fd;
    fds[2] = d->kern->timer_fd;
    return 3 + mncd_llaudit_fds(d->kern->ll, fds + 3);
}

static int on_event(const struct mnc_event *ev, void *ctx) { return mncd_kern_event(ctx, ev); }

void mncd_kern_ready(mncd *d, int fd)
{
    if (d->psp) {
        mon_kern_ready(d, fd);
        return;
    }
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
        kl_check_watches(d);
    } else if (fd == kk->timer_fd) {
        uint64_t ticks;
        if (read(kk->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
            fprintf(stderr, "mncd: timerfd: %s\n", strerror(errno));
        kl_check_watches(d);
    }
}
