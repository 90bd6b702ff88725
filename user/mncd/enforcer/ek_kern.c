// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_kern.c - the enforcer's kernel layer (enforcer.h, ek_kern.h): start (attach or adopt, never
 * wipe; names and sinks from the sealed configuration; the registrations still pinned adopted),
 * stop (everything stays pinned), deny events (KEVENT notices), TAINT_GET, STATUS, and the
 * answers with the layer off (--kernel off: every request that would touch the kernel is
 * REFUSED "off", as mncd answered its verbs without the layer). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "ek_kern.h"

static const char *const mode_names[] = {
    [PSP_KERN_AUTO] = "auto", [PSP_KERN_OFF] = "off", [PSP_KERN_CGROUP] = "cgroup", [PSP_KERN_LSM] = "lsm"};

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

/* A sink key of the configuration back in the loader's words. */
static int unix_key_str(const struct mnc_unix_key *k, char *out, size_t n)
{
    if (k->path[0] != '@')
        return snprintf(out, n, "%.*s", (int)sizeof(k->path), k->path) < (int)n ? 0 : -ENAMETOOLONG;
    const char *t = k->type == 1 ? "stream" : k->type == 2 ? "dgram" : k->type == 5 ? "seqpacket" : NULL;
    if (!t)
        return -EINVAL;
    return snprintf(out, n, "%s:%.*s", t, (int)sizeof(k->path), k->path) < (int)n ? 0 : -ENAMETOOLONG;
}

static int inet_key_str(const struct mnc_inet_key *k, char *out, size_t n)
{
    char a[INET6_ADDRSTRLEN];
    bool v6 = k->family == MNC_AF_INET6;
    if (!inet_ntop(v6 ? AF_INET6 : AF_INET, k->addr, a, sizeof(a)))
        return -EINVAL;
    return snprintf(out, n, v6 ? "[%s]:%u" : "%s:%u", a, k->port) < (int)n ? 0 : -ENAMETOOLONG;
}

/* The principals binding (loader/mnc_kern.h, kern_bind.c): the pinned numbers must stand for
 * the sealed principals. Nothing bound yet: the sealed numbering is written. Bound to exactly
 * the sealed names and classes: kept. Bound otherwise (a policy edit since the pins were made,
 * or a renumbering interrupted): refused, because the enforcer does not renumber pinned state
 * (the single-process mncd does, kern_principals.c); fail closed. 0, or -1 with err. */
static int bind_principals(ek *e, char *err, size_t errlen)
{
    ek_kern *kk = e->kern;
    static struct mnc_bind cur[PSP_MAX_PRINCIPALS], want[PSP_MAX_PRINCIPALS];
    int n = 0;
    bool interrupted = false;
    int r = mnc_kern_bind_read(kk->k, cur, PSP_MAX_PRINCIPALS, &n, &interrupted);
    if (r) {
        snprintf(err, errlen, "principals binding: read failed: %s", strerror(-r));
        return -1;
    }
    int np = (int)e->cfg.n_principals;
    memset(want, 0, sizeof(want));
    for (int i = 0; i < np; i++) {
        snprintf(want[i].name, sizeof(want[i].name), "%s", e->pr[i].name);
        want[i].cls = e->pr[i].cls;
    }
    if (n == 0 && !interrupted)
        return (r = mnc_kern_bind_write(kk->k, want, np)) == 0
                   ? 0
                   : (snprintf(err, errlen, "principals binding: write failed: %s", strerror(-r)), -1);
    bool same = !interrupted && n == np;
    for (int i = 0; same && i < np; i++)
        same = cur[i].cls == want[i].cls && strcmp(cur[i].name, want[i].name) == 0;
    if (!same) {
        snprintf(err, errlen,
                 "the pinned maps are bound to another numbering of the principals (%s); the enforcer "
                 "does not renumber pinned state: start mncd once without --privsep on this policy",
                 interrupted ? "an interrupted renumbering" : "a different policy");
        return -1;
    }
    return 0;
}

static int register_policy(ek *e, char *err, size_t errlen)
{
    ek_kern *kk = e->kern;
    for (uint32_t i = 0; i < e->cfg.n_principals; i++) {
        const ek_principal *s = &e->pr[i];
        int r = mnc_kern_name_set(kk->k, i, s->name, s->cls);
        if (r) {
            snprintf(err, errlen, "names map: %s: %s", s->name, strerror(-r));
            return -1;
        }
        if (s->path[0] && ((r = ensure_file_sink(s->path, s->cls == MNC_SINK_MEMORY)) != 0 ||
                           (r = mnc_kern_sink_file_add(kk->k, s->path, i, s->cls)) != 0)) {
            snprintf(err, errlen, "%s sink %s (%.600s) cannot be protected: %s", mnc_sink_class_name(s->cls), s->name,
                     s->path, strerror(-r));
            return -1;
        }
        char a[160];
        if (s->addr == PSP_ADDR_NONE)
            continue;
        bool ux = s->addr == PSP_ADDR_UNIX;
        r = ux ? unix_key_str(&s->ukey, a, sizeof(a)) : inet_key_str(&s->ikey, a, sizeof(a));
        if (!r)
            r = ux ? mnc_kern_sink_unix_add(kk->k, a, i, s->cls) : mnc_kern_sink_inet_add(kk->k, a, i, s->cls);
        if (r) {
            snprintf(err, errlen, "socket sink %s (%s%s): %s%s", s->name, ux ? "unix:" : "", a, strerror(-r),
                     r == -EEXIST ? " (another UNIX sink's key has the same sock_unix hash; rename one of the sockets)"
                                  : "");
            return -1;
        }
    }
    /* the monitor's own socket: always reachable, also for tainted agents */
    char sock[PATH_MAX + 112];
    if (e->cfg.socket[0] == '/') {
        snprintf(sock, sizeof(sock), "%s", e->cfg.socket);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd))) {
            snprintf(err, errlen, "getcwd: %s", strerror(errno));
            return -1;
        }
        snprintf(sock, sizeof(sock), "%s/%s", cwd, e->cfg.socket);
    }
    int r = mnc_kern_sink_unix_add(kk->k, sock, MNC_ID_NONE, MNC_SINK_MNCD);
    if (r) {
        snprintf(err, errlen, "mncd socket %.200s as class mncd: %s", sock, strerror(-r));
        return -1;
    }
    return 0;
}

/* After a restart: registrations in the pinned agents map whose cgroup still exists in the tree
 * are adopted (watch, REG_ADD); the others belonged to agents that ended while mncd was down:
 * removed, and so is the taint of an agent with no cgroup left. */
static int adopt_agents(ek *e, char *err, size_t errlen)
{
    ek_kern *kk = e->kern;
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
    struct {
        uint64_t id;
        char name[256];
    } *kids = NULL;
    int nk = 0, ck = 0;
    for (struct dirent *x; dir && (x = readdir(dir));) {
        if (x->d_type != DT_DIR || x->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        uint64_t id;
        if (snprintf(p, sizeof(p), "%s/%s", kk->tree, x->d_name) >= (int)sizeof(p) || mnc_cgroup_id(p, &id) != 0)
            continue;
        if (nk == ck) {
            ck = ck ? ck * 2 : 16;
            void *t = realloc(kids, (size_t)ck * sizeof(*kids));
            if (!t)
                break;
            kids = t;
        }
        kids[nk].id = id;
        snprintf(kids[nk].name, sizeof(kids[nk].name), "%s", x->d_name);
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
        if (j < nk && ag < e->cfg.n_principals && e->pr[ag].cls == MNC_SINK_AGENT) {
            char p[PATH_MAX];
            snprintf(p, sizeof(p), "%.3000s/%.255s", kk->tree, kids[j].name);
            ek_reg reg;
            int lr = ek_reg_load(p, &reg); /* -ENODATA: registered by an older mncd: facts unknown */
            if (lr != 0 && lr != -ENODATA)
                ek_audit(e, PSP_A_AGENT_ADOPT, PSP_D_ERROR, ag, PSP_NONE, NULL, "internal",
                         "cgroup %.3000s: registration facts unreadable (%s)", ek_rel(kk, p), strerror(-lr));
            if (ek_watch_add(e, p, ents[i].cgid, ag, ents[i].a.flags, &reg) != 0) {
                ek_reg_free(&reg);
                snprintf(err, errlen, "cannot track adopted cgroup %.600s", p);
                rc = -1;
                break;
            }
            ek_audit(e, PSP_A_AGENT_ADOPT, PSP_D_ALLOW, ag, PSP_NONE, NULL, "ok",
                     "adopted pinned registration of cgroup %.3000s", ek_rel(kk, p));
            kk->n_adopted++;
        } else if (j == nk) {
            mnc_kern_unregister_cgroup(kk->k, ents[i].cgid);
            int c = mnc_kern_agent_cgroups(kk->k, ag) == 0 ? mnc_kern_clear_agent(kk->k, ag) : 0;
            ek_audit(e, PSP_A_AGENT_EXIT, c == 0 ? PSP_D_ALLOW : PSP_D_ERROR, ek_name(e, ag) ? ag : PSP_NONE, PSP_NONE,
                     NULL, "ok", "cgroup id %" PRIu64 " gone while mncd was down; registration removed%s", ents[i].cgid,
                     c == 0 ? "" : "; taint clear FAILED");
        }
        /* a live cgroup registered to a non-agent id (kernel-only tooling): left as it is */
    }
    free(ents);
    free(kids);
    return rc;
}

int ek_kern_start(ek *e, struct psp_started *s, char *why, size_t n)
{
    const struct psp_config *c = &e->cfg;
    if (c->kernel == PSP_KERN_OFF) {
        fprintf(stderr, "mncd: kernel layer off (--kernel off): userspace monitor only, agents are NOT confined by the "
                        "kernel\n");
        ek_audit(e, PSP_A_KERNEL_START, PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL, "ok", "mode off: no kernel enforcement");
        s->backend = 0;
        return 0;
    }
    ek_kern *kk = calloc(1, sizeof(*kk));
    if (!kk) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    kk->ino_fd = kk->timer_fd = kk->ev_fd = kk->tree_wd = kk->audit_fd = -1;
    e->kern = kk;
    mnc_kern_opts o = {.pin_root = c->pin_root[0] ? c->pin_root : NULL,
                       .tree = c->cgroup_tree[0] ? c->cgroup_tree : NULL,
                       .backend = c->kernel == PSP_KERN_CGROUP ? MNC_BACKEND_CGROUP
                                  : c->kernel == PSP_KERN_LSM  ? MNC_BACKEND_LSM
                                                               : 0};
    char err[1024] = "";
    why[0] = 0; /* printed here: the refusal's text is mncd's as it always was */
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
    mnc_kern_status st;
    if ((rc = mnc_kern_status_get(kk->k, &st)) != 0 || st.n_links != st.n_links_expected) {
        snprintf(why, n, "kernel programs not all attached after attach (%s)", rc ? strerror(-rc) : st.missing);
        return -1;
    }
    kk->backend = st.cfg.backend;
    snprintf(kk->tree, sizeof(kk->tree), "%s", mnc_kern_tree(kk->k));
    if (mnc_cgroup2_mount(kk->cg2, sizeof(kk->cg2)) != 0 || strncmp(kk->tree, kk->cg2, strlen(kk->cg2)) != 0) {
        snprintf(why, n, "the mnc tree %s is not under the cgroup2 mount", kk->tree);
        return -1;
    }
    snprintf(kk->tree_rel, sizeof(kk->tree_rel), "%s", ek_rel(kk, kk->tree));
    if (strlen(kk->tree_rel) >= PSP_CGROUP_MAX) {
        snprintf(why, n, "the mnc tree path %s is too long", kk->tree_rel);
        return -1;
    }
    kk->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    kk->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    /* the re-check is the safety net behind inotify; MNCD_KERN_RECHECK_MS (tests: a minute, to
     * prove exits are seen without it) */
    long recheck_ms = 1000;
    const char *rs = getenv("MNCD_KERN_RECHECK_MS");
    if (rs && *rs) {
        char *end;
        errno = 0;
        recheck_ms = strtol(rs, &end, 10);
        if (errno || *end || recheck_ms < 10 || recheck_ms > 3600000) {
            snprintf(why, n, "MNCD_KERN_RECHECK_MS must be 10..3600000 (got \"%.40s\")", rs);
            return -1;
        }
    }
    struct itimerspec its = {.it_interval = {recheck_ms / 1000, (recheck_ms % 1000) * 1000000L}};
    its.it_value = its.it_interval;
    kk->ev_fd = mnc_kern_events_fd(kk->k);
    if (kk->ino_fd < 0 || kk->timer_fd < 0 || timerfd_settime(kk->timer_fd, 0, &its, NULL) != 0 || kk->ev_fd < 0) {
        snprintf(why, n, "kernel layer fds (inotify/timerfd/ring buffer): %s",
                 strerror(kk->ev_fd < 0 ? -kk->ev_fd : errno));
        return -1;
    }
    /* kernfs raises no inotify event on a removed cgroup's own files, only IN_DELETE in its parent */
    kk->tree_wd = inotify_add_watch(kk->ino_fd, kk->tree, IN_DELETE | IN_ONLYDIR);
    if (kk->tree_wd < 0) {
        snprintf(why, n, "inotify watch on the mnc tree %s: %s", kk->tree, strerror(errno));
        return -1;
    }
    if (bind_principals(e, err, sizeof(err)) != 0 || register_policy(e, err, sizeof(err)) != 0 ||
        adopt_agents(e, err, sizeof(err)) != 0) {
        snprintf(why, n, "kernel layer: %s", err);
        return -1;
    }
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
    ek_audit(e, PSP_A_KERNEL_START, PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL, "ok", "%s", det);
    const char *notice = mnc_kern_notice(kk->k);
    if (notice && notice[0]) {
        s->flags |= PSP_SF_NOTICE;
        snprintf(s->notice, sizeof(s->notice), "%s", notice);
    }
    ek_audit_setup(e); /* on, or off with the reason (the monitor reports it); never fatal */
    if (kk->audit_fd >= 0)
        s->flags |= PSP_SF_LLAUDIT | (kk->audit_enabled_by_us ? PSP_SF_AUDIT_ENABLED : 0);
    snprintf(s->ll_why, sizeof(s->ll_why), "%s", kk->ll_why);
    s->ll_lost_at_start = kk->audit_lost_at_start;
    s->backend = kk->backend;
    s->selftest_n = (uint32_t)kk->st.n;
    s->selftest_pass = (uint32_t)pass;
    s->n_not_run = (uint32_t)(kk->st.n_not_run < PSP_NOT_RUN_MAX ? kk->st.n_not_run : PSP_NOT_RUN_MAX);
    for (uint32_t i = 0; i < s->n_not_run; i++)
        snprintf(s->not_run[i], sizeof(s->not_run[i]), "%s", kk->st.not_run[i]);
    s->n_adopted = kk->n_adopted;
    snprintf(s->pin_root, sizeof(s->pin_root), "%s", mnc_kern_root(kk->k));
    snprintf(s->tree, sizeof(s->tree), "%s", kk->tree);
    snprintf(s->tree_rel, sizeof(s->tree_rel), "%s", kk->tree_rel);
    snprintf(s->cg2, sizeof(s->cg2), "%s", kk->cg2);
    return 0;
}

void ek_kern_stop(ek *e)
{
    ek_kern *kk = e->kern;
    if (!kk)
        return;
    if (kk->ino_fd >= 0)
        close(kk->ino_fd);
    if (kk->timer_fd >= 0)
        close(kk->timer_fd);
    if (kk->audit_fd >= 0)
        close(kk->audit_fd);
    mnc_kern_close(kk->k); /* also the ring buffer fd; nothing is detached */
    for (int i = 0; i < kk->n_w; i++)
        ek_reg_free(&kk->w[i].reg);
    free(kk->w);
    free(kk);
    e->kern = NULL;
}

int ek_kern_audit_fd(ek *e) { return e->kern ? e->kern->audit_fd : -1; }

void ek_kern_audit_fd_done(ek *e)
{
    if (e->kern && e->kern->audit_fd >= 0) {
        close(e->kern->audit_fd);
        e->kern->audit_fd = -1;
    }
}

int ek_kern_fds(ek *e, int fds[EK_KERN_MAX_FDS])
{
    if (!e->kern)
        return 0;
    fds[0] = e->kern->ev_fd;
    fds[1] = e->kern->ino_fd;
    fds[2] = e->kern->timer_fd;
    return 3;
}

static int on_event(const struct mnc_event *ev, void *ctx)
{
    ek *e = ctx;
    static struct psp_kevent m;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_KEVENT, 0);
    m.ev = *ev;
    ek_notice(e, &m, true); /* the monitor formats and audits it (comm dropped: agent-chosen) */
    e->kern->n_deny_events++;
    return e->mon_fd < 0;
}

void ek_kern_ready(ek *e, int fd)
{
    ek_kern *kk = e->kern;
    if (!kk)
        return;
    if (fd == kk->ev_fd) {
        int r = mnc_kern_poll_events(kk->k, 0, on_event, e);
        if (r < 0 && r != -EINTR)
            fprintf(stderr, "mncd enforcer: kernel deny events: %s\n", strerror(-r));
    } else if (fd == kk->ino_fd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        while (read(kk->ino_fd, buf, sizeof(buf)) > 0)
            ; /* which cgroup changed does not matter: the kernel state decides, not the event */
        ek_check_watches(e);
    } else if (fd == kk->timer_fd) {
        uint64_t ticks;
        if (read(kk->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
            fprintf(stderr, "mncd enforcer: timerfd: %s\n", strerror(errno));
        ek_check_watches(e);
    }
}

int ek_kern_cgroup_agent(ek *e, const char *cg)
{
    ek_kern *kk = e->kern;
    size_t n = kk ? strlen(kk->tree_rel) : 0;
    if (!kk || strncmp(cg, kk->tree_rel, n) != 0 || (cg[n] != '/' && cg[n] != 0))
        return -2;
    for (int i = 0; i < kk->n_w; i++) {
        const char *r = ek_rel(kk, kk->w[i].path);
        size_t rl = strlen(r);
        if (strncmp(cg, r, rl) == 0 && (cg[rl] == '/' || cg[rl] == 0))
            return (int)kk->w[i].agent;
    }
    return -1;
}

/* ---- TAINT_GET, STATUS */

void ek_kern_taint_get(ek *e, const struct psp_taint_get *m)
{
    ek_kern *kk = e->kern;
    if (!kk) {
        ek_refuse(e, m->h.seq, PSP_NO_OFF, 0, "taint: mncd runs without the kernel layer (--kernel off)");
        return;
    }
    struct psp_taint out;
    memset(&out, 0, sizeof(out));
    psp_hdr_init(&out.h, PSP_TAINT, m->h.seq);
    int r = mnc_kern_taint_get(kk->k, m->agent, &out.t);
    if (r == -ENOENT) {
        memset(&out.t, 0, sizeof(out.t)); /* no entry yet: untainted (agent.register creates it) */
    } else if (r) {
        ek_refuse(e, m->h.seq, PSP_NO_INTERNAL, -r, "taint map read failed: %s", strerror(-r));
        return;
    } else {
        out.entry = 1;
    }
    ek_reply(e, &out, NULL, 0);
}

void ek_kern_status(ek *e, const struct psp_status *m)
{
    static struct psp_status_r r;
    memset(&r, 0, sizeof(r));
    psp_hdr_init(&r.h, PSP_STATUS_R, m->h.seq);
    r.kevents_lost = e->n_kevents_lost;
    ek_kern *kk = e->kern;
    if (!kk) {
        ek_reply(e, &r, NULL, 0);
        return;
    }
    r.backend = kk->backend;
    mnc_kern_status s;
    if (mnc_kern_status_get(kk->k, &s) == 0) {
        r.n_links = (uint32_t)s.n_links;
        r.n_links_expected = (uint32_t)s.n_links_expected;
        r.n_agents = s.n_agents;
        r.n_taints = s.n_taints;
        r.n_unix = s.n_unix;
        r.n_inet = s.n_inet;
        r.n_files = s.n_files;
        snprintf(r.missing, sizeof(r.missing), "%s", s.missing);
    }
    r.watched = (uint32_t)kk->n_w;
    r.audit_ok = ek_audit_status(&r.audit_enabled, &r.audit_pid, &r.audit_lost, &r.audit_backlog) == 0;
    r.registered = kk->n_registered;
    r.exited = kk->n_exited;
    r.adopted = kk->n_adopted;
    r.holds = kk->n_holds;
    r.hold_failures = kk->n_hold_failures;
    r.deny_events = kk->n_deny_events;
    r.ws_holds = kk->n_ws_holds;
    r.ws_inherited = kk->n_ws_inherited;
    r.ws_cleared = kk->n_ws_cleared;
    r.sweeps = kk->n_sweeps;
    r.sweep_failures = kk->n_sweep_failures;
    r.swept = kk->n_swept;
    r.fdscan_refusals = kk->n_fdscan_refusals;
    r.netns_refusals = kk->n_netns_refusals;
    r.fd_fds = (uint32_t)kk->last_fdscan.fds;
    r.fd_shared = (uint32_t)kk->last_fdscan.shared;
    r.fd_host_pids = (uint32_t)kk->last_fdscan.host_pids;
    r.fd_total_us = (uint64_t)kk->last_fdscan.total_us;
    const mncd_sweep_stats *w = &kk->last_sweep;
    r.sw_pids = (uint32_t)w->pids;
    r.sw_sockets = (uint32_t)w->sockets;
    r.sw_kept = (uint32_t)w->kept;
    r.sw_acted = (uint32_t)w->acted;
    r.sw_tcp_destroy_unsupported = (uint32_t)w->tcp_destroy_unsupported;
    r.sw_foreign = (uint32_t)w->foreign;
    r.sw_inflight_fds = (uint32_t)w->inflight_fds;
    r.sw_host_pids = (uint32_t)w->host_pids;
    r.sw_host_fds = (uint32_t)w->host_fds;
    r.sw_hostscan_us = (uint64_t)w->hostscan_us;
    r.sw_freeze_us = (uint64_t)w->freeze_us;
    r.sw_total_us = (uint64_t)w->total_us;
    r.n_kcount = MNC_K__COUNT;
    if (mnc_kern_counters(kk->k, r.kcount) != 0)
        r.n_kcount = 0;
    ek_reply(e, &r, NULL, 0);
}
