// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_load.c - attach (load + pin, through kern_links.c's atomic link replacement), adopt,
 * detach and status of the mnc BPF programs: the top of the loader, which calls the probe
 * (kern_probe.c), the handle (kern_open.c), the self-tests (kern_selftest.c) and the lsm
 * backend (lsm_backend.c). Contract: loader/mnc_kern.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/landlock.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/seccomp.h>

#include "kern_int.h"
#include "lsm_backend.h"
#include "sock_addr.skel.h"
#include "sock_create.skel.h"
#include "sock_egress.skel.h"

static int mkdir_p(const char *path, mode_t mode)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, mode) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static int resolve_tree(const char *cg2, const char *tree, char *out, size_t len)
{
    if (!tree || !*tree)
        tree = MNC_TREE_DEFAULT;
    int n;
    if (tree[0] == '/') {
        size_t l = strlen(cg2);
        if (strncmp(tree, cg2, l) != 0 || (tree[l] != '/' && tree[l] != 0))
            return -EXDEV;
        n = snprintf(out, len, "%s", tree);
    } else {
        if (strstr(tree, ".."))
            return -EINVAL;
        n = snprintf(out, len, "%s/%s", cg2, tree);
    }
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int mnc_kern_attach(const mnc_kern_opts *o, mnc_kern **out, mnc_selftest *st, char *err, size_t errlen)
{
    static const mnc_kern_opts defaults = {0};
    if (!o)
        o = &defaults;
    *out = NULL;
    mnc_features f;
    mnc_kern_probe(&f);
    int backend = mnc_kern_choose_backend(&f, o->backend, err, errlen);
    if (backend < 0)
        return backend;

    const char *root = mnc_kern_pin_root(o->pin_root);
    if (!f.bpffs && strncmp(root, "/sys/fs/bpf/", 12) == 0) {
        /* as systemd does at boot: without bpffs nothing can be pinned */
        if (mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") != 0)
            return mnc_errf(err, errlen, -errno, "no bpf filesystem at /sys/fs/bpf and mounting one failed: %s",
                            strerror(errno));
    }
    char tree[MNC_TREE_PATH_MAX];
    int rc = resolve_tree(f.cgroup2, o->tree, tree, sizeof(tree));
    if (rc)
        return mnc_errf(err, errlen, rc, "bad mnc tree \"%s\" (must be a name or a path under %s)",
                        o->tree ? o->tree : "", f.cgroup2);
    /* 0700, also when it exists already: every cgroup's cpu.stat, pressure files and (with the
     * controllers) pids.current and memory.stat count its whole subtree, and are 0444; a tree
     * others could search would show them the sum over every agent below it, past the agents'
     * own 0700 cgroups (attack cgroup_v2_tree_cpustat). Only root (mncd, the launcher) goes in. */
    if ((rc = mkdir_p(tree, 0700)) != 0)
        return mnc_errf(err, errlen, rc, "create cgroup %s: %s", tree, strerror(-rc));
    if (chmod(tree, 0700) != 0)
        return mnc_errf(err, errlen, -errno, "chmod 0700 %s: %s", tree, strerror(errno));
    uint64_t tree_id;
    if ((rc = mnc_cgroup_id(tree, &tree_id)) != 0)
        return mnc_errf(err, errlen, rc, "cgroup id of %s: %s", tree, strerror(-rc));
    char links[PATH_MAX + 8];
    snprintf(links, sizeof(links), "%s/links", root);
    if ((rc = mkdir_p(links, 0700)) != 0)
        return mnc_errf(err, errlen, rc, "create %s: %s", links, strerror(-rc));

    /* Refuse to re-point pinned links at another tree: the old tree would lose enforcement. */
    mnc_kern *k = mnc_kern_new(root);
    if (!k)
        return mnc_errf(err, errlen, -ENOMEM, "out of memory");
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/settings", root);
    int sfd = bpf_obj_get(p);
    struct mnc_config prev_cfg; /* put back if this attach is rolled back */
    bool have_prev_cfg = false;
    if (sfd >= 0) {
        struct mnc_config old;
        __u32 key = 0;
        int lr = mnc_kern_check_layout(sfd, "settings", p, err, errlen);
        if (lr) {
            close(sfd);
            mnc_kern_close(k);
            return lr;
        }
        lr = bpf_map_lookup_elem(sfd, &key, &old);
        close(sfd);
        if (lr == 0) {
            prev_cfg = old;
            have_prev_cfg = true;
        }
        if (lr == 0 && old.tree_cgroup_id && old.tree_cgroup_id != tree_id) {
            mnc_kern_close(k);
            return mnc_errf(err, errlen, -EBUSY,
                            "pinned state under %s enforces tree %.*s; detach it first or use another pin root", root,
                            (int)sizeof(old.tree_path), old.tree_path);
        }
    }

    if (backend == MNC_BACKEND_LSM) {
        /* the lsm backend (docs/lsm.md): attach, pin, self-test (loader/lsm_backend.c). --backend lsm: a failure is
         * final. auto: fall back to cgroup and keep the reason as the handle's notice. */
        mnc_kern *lk = NULL;
        char why[256] = "";
        rc = mnc_lsm_attach_verified(root, tree, tree_id, o->skip_selftest, &lk, st, why, sizeof(why));
        if (rc == 0 || o->backend == MNC_BACKEND_LSM) {
            mnc_kern_close(k);
            if (rc)
                return mnc_errf(err, errlen, rc, "%s", why);
            *out = lk;
            return 0;
        }
        snprintf(k->notice, sizeof(k->notice), "backend lsm not used (%.250s); falling back to cgroup", why);
        if (st)
            memset(st, 0, sizeof(*st));
        backend = mnc_kern_choose_backend(&f, MNC_BACKEND_CGROUP, err, errlen);
        if (backend < 0) {
            mnc_kern_close(k);
            return backend;
        }
    }

    int cg_fd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg_fd < 0) {
        rc = -errno;
        mnc_kern_close(k);
        return mnc_errf(err, errlen, rc, "open %s: %s", tree, strerror(-rc));
    }

    LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = root);
    struct sock_addr_bpf *sa = sock_addr_bpf__open_opts(&oo);
    struct sock_create_bpf *sc = sa ? sock_create_bpf__open_opts(&oo) : NULL;
    struct sock_egress_bpf *se = sc ? sock_egress_bpf__open_opts(&oo) : NULL;
    mnc_attach_undo undo;
    mnc_attach_undo_init(&undo);
    bool settings_written = false;
    if (!sa || !sc || !se) {
        rc = -errno;
        mnc_errf(err, errlen, rc, "open BPF objects: %s", strerror(-rc));
        goto out;
    }
    if ((rc = sock_addr_bpf__load(sa)) != 0 || (rc = sock_create_bpf__load(sc)) != 0 ||
        (rc = sock_egress_bpf__load(se)) != 0) {
        mnc_errf(err, errlen, rc, "load BPF programs: %s (a pinned map with another layout under %s? detach --purge)",
                 strerror(-rc), root);
        goto out;
    }
    if ((rc = mnc_attach_pinned(sa->obj, root, cg_fd, &undo, err, errlen)) != 0 ||
        (rc = mnc_attach_pinned(sc->obj, root, cg_fd, &undo, err, errlen)) != 0 ||
        (rc = mnc_attach_pinned(se->obj, root, cg_fd, &undo, err, errlen)) != 0)
        goto out;

    /* settings: ABI, backend, tree */
    struct mnc_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.abi_version = MNC_ABI_VERSION;
    cfg.backend = (unsigned)backend;
    cfg.tree_cgroup_id = tree_id;
    snprintf(cfg.tree_path, sizeof(cfg.tree_path), "%s", tree);
    __u32 key = 0;
    if (bpf_map_update_elem(bpf_map__fd(sa->maps.settings), &key, &cfg, BPF_ANY) != 0) {
        rc = -errno;
        mnc_errf(err, errlen, rc, "write settings: %s", strerror(-rc));
        goto out;
    }
    settings_written = true;
    if ((rc = mnc_kern_open_maps(k, err, errlen)) != 0)
        goto out;
    if (!o->skip_selftest) {
        mnc_selftest local;
        mnc_selftest *s = st ? st : &local;
        rc = mnc_selftest_test_hook(s, mnc_kern_selftest(k, s));
        if (rc) {
            mnc_errf(err, errlen, -ENOTRECOVERABLE, "functional self-test failed: %s",
                     s->error[0] ? s->error : "a case did not see the expected result (see mncctl doctor)");
            rc = -ENOTRECOVERABLE;
            goto out;
        }
    }
    rc = 0;
out:
    if (rc != 0) {
        /* an attach that did not prove itself: new links go, replaced links get their previous
         * programs back (leaving the new ones would run unverified code), settings as before */
        char rb[700];
        int rr = mnc_attach_rollback(&undo, root, rb, sizeof(rb));
        if (settings_written && have_prev_cfg) {
            __u32 skey = 0;
            if (bpf_map_update_elem(bpf_map__fd(sa->maps.settings), &skey, &prev_cfg, BPF_ANY) != 0 && rr == 0) {
                rr = -errno;
                snprintf(rb, sizeof(rb), "ROLLBACK FAILED: previous settings not restored: %s", strerror(-rr));
                fprintf(stderr, "mnc: loader: %s\n", rb);
            }
        }
        if (err && errlen) {
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, "; %s", rb);
        }
    } else {
        mnc_attach_undo_release(&undo);
    }
    sock_egress_bpf__destroy(se);
    sock_create_bpf__destroy(sc);
    sock_addr_bpf__destroy(sa);
    close(cg_fd);
    if (rc != 0) {
        mnc_kern_close(k);
        return rc;
    }
    *out = k;
    return 0;
}

int mnc_kern_detach(const char *pin_root, bool purge, char *err, size_t errlen)
{
    const char *root = mnc_kern_pin_root(pin_root);
    char p[PATH_MAX + 80];
    int rc = 0, n_hooks;
    const mnc_hook_info *hooks = mnc_kern_hooks(&n_hooks);
    for (int i = 0; i < n_hooks; i++) {
        snprintf(p, sizeof(p), "%s/links/%s", root, hooks[i].program);
        if (unlink(p) != 0 && errno != ENOENT && rc == 0)
            rc = mnc_errf(err, errlen, -errno, "unpin %s: %s", p, strerror(errno));
    }
    int lr = mnc_lsm_detach(root, rc ? NULL : err, errlen); /* the lsm backend's links */
    if (lr && rc == 0)
        rc = lr;
    snprintf(p, sizeof(p), "%s/links", root);
    if (rmdir(p) != 0 && errno != ENOENT && rc == 0)
        rc = mnc_errf(err, errlen, -errno, "rmdir %s: %s", p, strerror(errno));
    if (!purge)
        return rc;
    for (int i = 0; i < MNC_N_MAPS; i++) {
        snprintf(p, sizeof(p), "%s/%s", root, mnc_map_names[i]);
        if (unlink(p) != 0 && errno != ENOENT && rc == 0)
            rc = mnc_errf(err, errlen, -errno, "unpin %s: %s", p, strerror(errno));
    }
    lr = mnc_lsm_purge(root, rc ? NULL : err, errlen);
    if (lr && rc == 0)
        rc = lr;
    if (rmdir(root) != 0 && errno != ENOENT && rc == 0)
        rc = mnc_errf(err, errlen, -errno, "rmdir %s: %s", root, strerror(errno));
    return rc;
}

static uint32_t count_keys(int fd, size_t key_size)
{
    char a[256], b[256];
    if (key_size > sizeof(a))
        return 0;
    uint32_t n = 0;
    void *prev = NULL;
    while (bpf_map_get_next_key(fd, prev, prev == a ? b : a) == 0) {
        prev = prev == a ? b : a;
        n++;
    }
    return n;
}

int mnc_kern_status_get(mnc_kern *k, mnc_kern_status *s)
{
    memset(s, 0, sizeof(*s));
    int rc = mnc_kern_read_settings(k, &s->cfg);
    if (rc)
        return rc;
    int n_hooks;
    const mnc_hook_info *hooks = mnc_kern_hooks(&n_hooks);
    s->n_links_expected = n_hooks;
    for (int i = 0; i < n_hooks; i++) {
        char p[PATH_MAX + 80];
        snprintf(p, sizeof(p), "%s/links/%s", k->root, hooks[i].program);
        if (access(p, F_OK) == 0) {
            s->n_links++;
        } else {
            size_t l = strlen(s->missing);
            snprintf(s->missing + l, sizeof(s->missing) - l, "%s%s", l ? " " : "", hooks[i].program);
        }
    }
    if (s->cfg.backend == MNC_BACKEND_LSM) {
        mnc_lsm_hooks(&s->n_links_expected);
        s->n_links = mnc_lsm_links_present(k->root, s->missing, sizeof(s->missing));
    }
    s->n_agents = count_keys(k->fd_agents, sizeof(struct mnc_agent_key));
    s->n_taints = count_keys(k->fd_taint, sizeof(__u32));
    s->n_unix = count_keys(k->fd_unix, sizeof(struct mnc_unix_hkey));
    s->n_inet = count_keys(k->fd_inet, sizeof(struct mnc_inet_key));
    s->n_files = count_keys(k->fd_files, sizeof(struct mnc_file_key));
    s->n_names = count_keys(k->fd_names, sizeof(__u32));
    return 0;
}
