// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lsm_backend.c - load, attach, pin, detach and self-test the BPF-LSM backend; SysV IPC sink
 * registration. Contract: loader/lsm_backend.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kern_int.h"
#include "lsm_backend.h"
#include "lsm_files.skel.h"
#include "lsm_ipc.skel.h"
#include "lsm_paths.skel.h"
#include "lsm_sockets.skel.h"
#include "sock_egress.skel.h"

static const mnc_hook_info lsm_hooks[] = {
    {"mnc_lsm_file_open", "lsm/file_open",
     "open for writing of a sink file or a file below a sink directory (incl. mq_open for sending)"},
    {"mnc_lsm_file_perm", "lsm/file_permission",
     "every write() on such a file, also through fds opened before the taint"},
    {"mnc_lsm_mknod", "lsm/path_mknod", "creating a node (and open(O_CREAT)) in a sink directory"},
    {"mnc_lsm_mkdir", "lsm/path_mkdir", "creating a directory in a sink directory"},
    {"mnc_lsm_symlink", "lsm/path_symlink", "creating a symlink in a sink directory"},
    {"mnc_lsm_link", "lsm/path_link", "hard links into or out of a sink directory, or of a sink file"},
    {"mnc_lsm_rename", "lsm/path_rename", "renames into or out of a sink directory"},
    {"mnc_lsm_truncate", "lsm/path_truncate", "truncating a sink file"},
    {"mnc_lsm_icreate", "lsm/inode_create", "creating a regular file in a sink directory"},
    {"mnc_lsm_sock_create", "lsm/socket_create",
     "socket(2): no SOCK_RAW on IPv4/IPv6, no AF_PACKET; nothing for an unknown cgroup"},
    {"mnc_lsm_connect", "lsm/socket_connect", "connect(2) on IPv4/IPv6 sockets vs sock_inet"},
    {"mnc_lsm_sendmsg", "lsm/socket_sendmsg",
     "every send: its address, or the current peer of a connected IPv4/IPv6/UNIX stream socket"},
    {"mnc_lsm_setsockopt", "lsm/socket_setsockopt",
     "setsockopt(2): once tainted, only switches and timeouts whose value no dump (ss, /proc/net) reports"},
    {"mnc_lsm_ustream", "lsm/unix_stream_connect", "UNIX stream connect: the peer by inode, then name"},
    {"mnc_lsm_umaysend", "lsm/unix_may_send", "UNIX datagram connect and send: the peer"},
    {"mnc_lsm_msgsnd", "lsm/msg_queue_msgsnd", "msgsnd(2) to a SysV queue registered in ipc_sinks"},
    {"mnc_lsm_shmat", "lsm/shm_shmat", "shmat(2) for writing of a segment registered in ipc_sinks"},
    {"mnc_lsm_task_kill", "lsm/task_kill",
     "kill/sigqueue/tgkill/pidfd_send_signal to a task outside the agent's cgroup: an external destination"},
    {"mnc_lsm_fcntl", "lsm/file_fcntl", "F_SETOWN/F_SETOWN_EX by an agent: remembers the agent in sigio_owners"},
    {"mnc_lsm_ioctl", "lsm/file_ioctl", "FIOSETOWN/SIOCSPGRP by an agent: remembers the agent in sigio_owners"},
    {"mnc_lsm_sigiotask", "lsm/file_send_sigiotask",
     "SIGIO/SIGURG to the owner an agent set, outside the agent's cgroup: an external destination"},
    {"mnc_lsm_file_free", "lsm/file_free_security", "a freed file leaves sigio_owners"},
    {"mnc_lsm_file_receive", "lsm/file_receive",
     "an fd arriving in a tainted agent (SCM_RIGHTS, pidfd_getfd) that is not a socket or a read-only file or "
     "directory: an external destination"},
    {"mnc_lsm_file_lock", "lsm/file_lock",
     "flock(2) and fcntl F_SETLK*/F_OFD_SETLK*: once tainted, no lock taken, changed or dropped (others read "
     "lock ranges back)"},
    /* not an LSM hook: no LSM hook runs per received packet in the receiving socket's context,
     * and an LSM program on socket_sock_rcv_skb would run for every socket of the host */
    {"mnc_ingress", "cgroup_skb/ingress",
     "every IPv4/IPv6 packet to an agent's sockets (attached to the mnc tree): once tainted, only from peers it may "
     "send to (nobody else can fill its receive queues, whose lengths every user reads)"},
};
#define N_LSM_HOOKS ((int)(sizeof(lsm_hooks) / sizeof(lsm_hooks[0])))

const mnc_hook_info *mnc_lsm_hooks(int *n)
{
    *n = N_LSM_HOOKS;
    return lsm_hooks;
}

const char *mnc_lsm_hook_name(unsigned hook) { return mnc_hook_name(hook); }

int mnc_lsm_available(const mnc_features *f, char *err, size_t errlen)
{
    if (!f->lsm_list_known)
        return mnc_errf(err, errlen, -EOPNOTSUPP,
                        "backend lsm unavailable: /sys/kernel/security/lsm is unreadable (mount securityfs)");
    if (!f->lsm_has_bpf)
        return mnc_errf(err, errlen, -EOPNOTSUPP,
                        "backend lsm unavailable: \"bpf\" is not in the active LSM list (%s); LSM programs "
                        "would load and attach here but never run; boot with lsm=...,bpf",
                        f->lsm_list);
    if (!f->lsm_loads)
        return mnc_errf(err, errlen, -EOPNOTSUPP, "backend lsm unavailable: BPF LSM programs do not load here (%s)",
                        strerror(f->lsm_load_errno));
    if (!f->bpffs)
        return mnc_errf(err, errlen, -EOPNOTSUPP, "no bpf filesystem at /sys/fs/bpf: cannot pin");
    return 0;
}

/* ---- attach */
struct lsm_objs {
    struct lsm_files_bpf *files;
    struct lsm_paths_bpf *paths;
    struct lsm_sockets_bpf *sockets;
    struct lsm_ipc_bpf *ipc;
    struct sock_egress_bpf *skb; /* its mnc_ingress only, attached to the tree cgroup */
};

static void objs_destroy(struct lsm_objs *o)
{
    sock_egress_bpf__destroy(o->skb);
    lsm_ipc_bpf__destroy(o->ipc);
    lsm_sockets_bpf__destroy(o->sockets);
    lsm_paths_bpf__destroy(o->paths);
    lsm_files_bpf__destroy(o->files);
}

static int mkdir_one(const char *p, mode_t mode) { return mkdir(p, mode) == 0 || errno == EEXIST ? 0 : -errno; }

/* Depth of the cgroup directory `path` below the cgroup2 mount (the mount itself is 0): what
 * bpf_get_current_ancestor_cgroup_id() takes. Counted from the path, which must lie under the
 * mount and be canonical (no "." / ".." / "//"), as mnc_kern_attach resolves it. */
static int tree_level(const char *path, __u32 *level)
{
    char mnt[256];
    int rc = mnc_cgroup2_mount(mnt, sizeof(mnt));
    if (rc)
        return rc;
    size_t l = strlen(mnt);
    while (l > 1 && mnt[l - 1] == '/')
        l--;
    if (strncmp(path, mnt, l) != 0 || path[l] != '/')
        return -EXDEV;
    __u32 n = 0;
    for (const char *p = path + l; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t cl = e ? (size_t)(e - p) : strlen(p);
        if ((cl == 1 && p[0] == '.') || (cl == 2 && p[0] == '.' && p[1] == '.'))
            return -EINVAL;
        n++;
        p += cl;
    }
    if (n == 0)
        return -EINVAL; /* the root cgroup cannot be the tree */
    *level = n;
    return 0;
}

/* What one LSM attach changed: links (kern_int.h) and the settings map it overwrote. */
struct lsm_undo {
    mnc_attach_undo links;
    int settings_fd; /* dup of the pinned settings map, -1 if not written */
    bool have_prev;
    struct mnc_config prev;
};

static void lsm_undo_init(struct lsm_undo *u)
{
    mnc_attach_undo_init(&u->links);
    u->settings_fd = -1;
    u->have_prev = false;
}

static void lsm_undo_release(struct lsm_undo *u)
{
    mnc_attach_undo_release(&u->links);
    if (u->settings_fd >= 0)
        close(u->settings_fd);
    u->settings_fd = -1;
}

/* Undoes u (links first, then the previous settings) and appends what happened to err.
 * Returns 0 or the -errno of a failed undo (already printed loudly by mnc_attach_rollback). */
static int lsm_rollback(struct lsm_undo *u, const char *root, char *err, size_t errlen)
{
    char rb[700];
    int rr = mnc_attach_rollback(&u->links, root, rb, sizeof(rb));
    if (u->settings_fd >= 0 && u->have_prev) {
        __u32 key = 0;
        if (bpf_map_update_elem(u->settings_fd, &key, &u->prev, BPF_ANY) != 0 && rr == 0) {
            rr = -errno;
            snprintf(rb, sizeof(rb), "ROLLBACK FAILED: previous settings not restored: %s", strerror(-rr));
            fprintf(stderr, "mnc: loader: %s\n", rb);
        }
    }
    lsm_undo_release(u);
    if (err && errlen) {
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, "; %s", rb);
    }
    return rr;
}

/* mnc_lsm_attach, recording its changes in u. On failure it has rolled them back itself. */
static int lsm_attach_undo(const char *root, const char *tree_path, uint64_t tree_id, struct lsm_undo *u, char *err,
                           size_t errlen)
{
    if (!root || !*root)
        return mnc_errf(err, errlen, -EINVAL, "no pin root");
    char links[PATH_MAX + 8];
    snprintf(links, sizeof(links), "%s/links", root);
    int rc;
    if ((rc = mkdir_one(root, 0700)) != 0 || (rc = mkdir_one(links, 0700)) != 0)
        return mnc_errf(err, errlen, rc, "create %s: %s", links, strerror(-rc));

    struct lsm_objs o = {0};
    LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = root);
    if (!(o.files = lsm_files_bpf__open_opts(&oo)) || !(o.paths = lsm_paths_bpf__open_opts(&oo)) ||
        !(o.sockets = lsm_sockets_bpf__open_opts(&oo)) || !(o.ipc = lsm_ipc_bpf__open_opts(&oo)) ||
        !(o.skb = sock_egress_bpf__open_opts(&oo))) {
        rc = -errno;
        mnc_errf(err, errlen, rc ? rc : -EINVAL, "open LSM BPF objects: %s", strerror(rc ? -rc : EINVAL));
        rc = rc ? rc : -EINVAL;
        goto out;
    }
    /* socket_sendmsg checks every send against the socket's current peer: no egress program */
    if ((rc = bpf_program__set_autoload(o.skb->progs.mnc_egress, false)) != 0) {
        mnc_errf(err, errlen, rc, "leave out mnc_egress: %s", strerror(-rc));
        goto out;
    }
    if ((rc = lsm_files_bpf__load(o.files)) != 0 || (rc = lsm_paths_bpf__load(o.paths)) != 0 ||
        (rc = lsm_sockets_bpf__load(o.sockets)) != 0 || (rc = lsm_ipc_bpf__load(o.ipc)) != 0 ||
        (rc = sock_egress_bpf__load(o.skb)) != 0) {
        mnc_errf(err, errlen, rc,
                 "load LSM BPF programs: %s (kernel without BPF LSM, or a pinned map with another layout "
                 "under %s: detach --purge)",
                 strerror(-rc), root);
        goto out;
    }
    if (tree_path) {
        struct mnc_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.abi_version = MNC_ABI_VERSION;
        cfg.backend = MNC_BACKEND_LSM;
        cfg.tree_cgroup_id = tree_id;
        snprintf(cfg.tree_path, sizeof(cfg.tree_path), "%s", tree_path);
        __u32 key = 0;
        int sfd = bpf_map__fd(o.files->maps.settings); /* the pinned map, adopted with its contents */
        u->have_prev = bpf_map_lookup_elem(sfd, &key, &u->prev) == 0;
        u->settings_fd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
        if (u->settings_fd < 0) {
            rc = -errno;
            mnc_errf(err, errlen, rc, "settings map: %s", strerror(-rc));
            goto out;
        }
        if (bpf_map_update_elem(sfd, &key, &cfg, BPF_ANY) != 0) {
            rc = -errno;
            mnc_errf(err, errlen, rc, "write settings: %s", strerror(-rc));
            goto out;
        }
        struct mnc_lsm_tree lt = {.tree_cgroup_id = tree_id};
        if ((rc = tree_level(tree_path, &lt.tree_level)) != 0) {
            mnc_errf(err, errlen, rc, "cgroup level of %s: %s", tree_path, strerror(-rc));
            goto out;
        }
        if (bpf_map_update_elem(bpf_map__fd(o.files->maps.lsm_tree), &key, &lt, BPF_ANY) != 0) {
            rc = -errno;
            mnc_errf(err, errlen, rc, "write lsm_tree: %s", strerror(-rc));
            goto out;
        }
    }
    if ((rc = mnc_attach_pinned(o.files->obj, root, -1, &u->links, err, errlen)) != 0 ||
        (rc = mnc_attach_pinned(o.paths->obj, root, -1, &u->links, err, errlen)) != 0 ||
        (rc = mnc_attach_pinned(o.sockets->obj, root, -1, &u->links, err, errlen)) != 0 ||
        (rc = mnc_attach_pinned(o.ipc->obj, root, -1, &u->links, err, errlen)) != 0)
        goto out;
    /* the ingress filter goes on the tree: given, or the one the settings map names (a
     * re-attach without a tree); no tree anywhere leaves it out, and status reports it missing */
    struct mnc_config cur;
    __u32 skey = 0;
    const char *ingress_tree = tree_path;
    if (!ingress_tree && bpf_map_lookup_elem(bpf_map__fd(o.files->maps.settings), &skey, &cur) == 0 &&
        cur.tree_path[0] && memchr(cur.tree_path, 0, sizeof(cur.tree_path)))
        ingress_tree = cur.tree_path;
    if (ingress_tree) {
        int cg_fd = open(ingress_tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cg_fd < 0) {
            rc = -errno;
            mnc_errf(err, errlen, rc, "open %s: %s", ingress_tree, strerror(-rc));
            goto out;
        }
        rc = mnc_attach_pinned(o.skb->obj, root, cg_fd, &u->links, err, errlen);
        close(cg_fd);
        if (rc != 0)
            goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        (void)lsm_rollback(u, root, err, errlen); /* reports into err (and stderr if it failed) */
    objs_destroy(&o);
    return rc;
}

int mnc_lsm_attach(const char *root, const char *tree_path, uint64_t tree_id, char *err, size_t errlen)
{
    struct lsm_undo u;
    lsm_undo_init(&u);
    int rc = lsm_attach_undo(root, tree_path, tree_id, &u, err, errlen);
    if (rc == 0)
        lsm_undo_release(&u);
    return rc;
}

int mnc_lsm_detach(const char *root, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < N_LSM_HOOKS; i++) {
        char p[PATH_MAX + 80];
        snprintf(p, sizeof(p), "%s/links/%s", root, lsm_hooks[i].program);
        if (unlink(p) != 0 && errno != ENOENT && rc == 0)
            rc = mnc_errf(err, errlen, -errno, "unpin %s: %s", p, strerror(errno));
    }
    return rc;
}

int mnc_lsm_links_present(const char *root, char *missing, size_t len)
{
    int n = 0;
    if (missing && len)
        missing[0] = 0;
    for (int i = 0; i < N_LSM_HOOKS; i++) {
        char p[PATH_MAX + 80];
        snprintf(p, sizeof(p), "%s/links/%s", root, lsm_hooks[i].program);
        if (access(p, F_OK) == 0) {
            n++;
        } else if (missing && len) {
            size_t l = strlen(missing);
            if (l < len)
                snprintf(missing + l, len - l, "%s%s", l ? " " : "", lsm_hooks[i].program);
        }
    }
    return n;
}

/* ---- self-test */

#define ST_CASES 6
static const char *const st_names[ST_CASES] = {
    "lsm: write log sink, untainted with base right", "lsm: write() on fd held across taint -> EPERM",
    "lsm: open(O_WRONLY) log sink tainted -> EPERM",  "lsm: write non-sink file tainted",
    "ingress: untainted UDP receive delivered",       "ingress: tainted UDP gets nothing from an unregistered peer",
};
static const int st_want[ST_CASES] = {0, EPERM, EPERM, 0, 0, EPERM};

/* Runs in the child, inside the scratch cgroup. got[i]: 0 or the errno seen. `outsider`: a UDP
 * socket the parent made outside the tree (an unregistered peer) for the ingress cases. */
static void st_child(mnc_kern *k, uint32_t agent, const char *sink, const char *plain, int outsider, int got[ST_CASES])
{
    for (int i = 0; i < ST_CASES; i++)
        got[i] = -1;
    struct sockaddr_in ua = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t ual = sizeof(ua);
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int ue =
        u < 0 || bind(u, (struct sockaddr *)&ua, sizeof(ua)) != 0 || getsockname(u, (struct sockaddr *)&ua, &ual) != 0
            ? errno
            : 0;
    got[4] = ue ? ue : mnc_selftest_datagram_received(outsider, &ua, u, 1000);
    int fd = open(sink, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        got[0] = errno;
        return;
    }
    got[0] = write(fd, "a", 1) == 1 ? 0 : errno;
    struct mnc_taint t;
    memset(&t, 0, sizeof(t));
    t.tainted = 1;
    t.generation = 2;
    if (mnc_kern_taint_set(k, agent, &t) != 0) {
        close(fd);
        return;
    }
    got[1] = write(fd, "b", 1) == 1 ? 0 : errno;
    close(fd);
    fd = open(sink, O_WRONLY | O_APPEND | O_CLOEXEC);
    got[2] = fd >= 0 ? 0 : errno;
    if (fd >= 0)
        close(fd);
    fd = open(plain, O_WRONLY | O_APPEND | O_CLOEXEC);
    got[3] = fd < 0 ? errno : (write(fd, "c", 1) == 1 ? 0 : errno);
    if (fd >= 0)
        close(fd);
    got[5] = ue ? ue : mnc_selftest_datagram_received(outsider, &ua, u, 200);
    if (u >= 0)
        close(u);
}

int mnc_lsm_selftest(mnc_kern *k, mnc_selftest *st)
{
    memset(st, 0, sizeof(*st));
    const char *tree = mnc_kern_tree(k);
    if (!tree || !*tree) {
        snprintf(st->error, sizeof(st->error), "no mnc tree in the settings map (attach first)");
        return -ENOENT;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char cg[PATH_MAX], sink[PATH_MAX], plain[PATH_MAX], procs[PATH_MAX + 16];
    pid_t me = getpid();
    if (snprintf(cg, sizeof(cg), "%s/.lsm-selftest.%d", tree, (int)me) >= (int)sizeof(cg) ||
        snprintf(sink, sizeof(sink), "%s/.mnc-lsm-selftest-sink.%d", tmp, (int)me) >= (int)sizeof(sink) ||
        snprintf(plain, sizeof(plain), "%s/.mnc-lsm-selftest-plain.%d", tmp, (int)me) >= (int)sizeof(plain)) {
        snprintf(st->error, sizeof(st->error), "path too long");
        return -ENAMETOOLONG;
    }
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);

    /* A self-test agent id of its own (mnc_abi.h), distinct from the cgroup backend's
     * self-test in the same process (bit 19 flipped), so that the two never share entries. */
    uint32_t agent = MNC_SELFTEST_AGENT_BASE | (((uint32_t)me & 0xfffffu) ^ 0x80000u);
    int rc = 0, made_cg = 0, made_files = 0, registered = 0, sink_added = 0, outsider = -1;
    uint64_t cgid = 0;
    for (int i = 0; i < 2; i++) {
        int fd = open(i ? plain : sink, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            rc = -errno;
            snprintf(st->error, sizeof(st->error), "create %.100s: %s", i ? plain : sink, strerror(errno));
            goto undo;
        }
        close(fd);
        made_files |= 1 << i;
    }
    if (mkdir(cg, 0755) != 0) {
        rc = -errno;
        snprintf(st->error, sizeof(st->error), "mkdir %.100s: %s", cg, strerror(errno));
        goto undo;
    }
    made_cg = 1;
    if ((rc = mnc_cgroup_id(cg, &cgid)) != 0) {
        snprintf(st->error, sizeof(st->error), "cgroup id of %.100s: %s", cg, strerror(-rc));
        goto undo;
    }
    /* Untainted with the base right to write the sink (log id 255), so that case 1 proves
     * the sink is writable before the taint and case 2 isolates the taint's effect. */
    struct mnc_taint base;
    memset(&base, 0, sizeof(base));
    base.may_log = 1;
    base.sinks[255 / 64] = 1ull << (255 % 64);
    base.generation = 1;
    if ((rc = mnc_kern_taint_set(k, agent, &base)) != 0 ||
        (rc = mnc_kern_register_cgroup(k, cgid, agent, MNC_AGENT_F_SELFTEST)) != 0) {
        snprintf(st->error, sizeof(st->error), "register self-test agent: %s", strerror(-rc));
        goto undo;
    }
    registered = 1;
    if ((rc = mnc_kern_sink_file_add(k, sink, 255, MNC_SINK_LOG)) != 0) {
        snprintf(st->error, sizeof(st->error), "register %.100s as a log sink: %s", sink, strerror(-rc));
        goto undo;
    }
    sink_added = 1;

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        rc = -errno;
        snprintf(st->error, sizeof(st->error), "pipe: %s", strerror(errno));
        goto undo;
    }
    outsider = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); /* made here: outside the tree */
    if (outsider < 0) {
        rc = -errno;
        close(pfd[0]);
        close(pfd[1]);
        snprintf(st->error, sizeof(st->error), "socket: %s", strerror(errno));
        goto undo;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        close(pfd[0]);
        close(pfd[1]);
        snprintf(st->error, sizeof(st->error), "fork: %s", strerror(errno));
        goto undo;
    }
    if (pid == 0) {
        int got[ST_CASES + 1];
        char me_s[32];
        close(pfd[0]);
        snprintf(me_s, sizeof(me_s), "%d\n", (int)getpid());
        got[ST_CASES] = mnc_write_file(procs, me_s); /* join the scratch cgroup */
        if (got[ST_CASES] == 0)
            st_child(k, agent, sink, plain, outsider, got);
        ssize_t w = write(pfd[1], got, sizeof(got));
        _exit(w == (ssize_t)sizeof(got) ? 0 : 1);
    }
    close(pfd[1]);
    int got[ST_CASES + 1];
    ssize_t n = read(pfd[0], got, sizeof(got));
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof(got)) {
        rc = -EIO;
        snprintf(st->error, sizeof(st->error), "self-test child died (status %d)", status);
        goto undo;
    }
    if (got[ST_CASES] != 0) {
        rc = got[ST_CASES];
        snprintf(st->error, sizeof(st->error), "move into %.100s: %s", cg, strerror(-rc));
        goto undo;
    }
    for (int i = 0; i < ST_CASES; i++)
        mnc_selftest_add(st, st_names[i], st_want[i], got[i]);
    st->pass = st->n == ST_CASES;
    for (int i = 0; i < st->n; i++)
        st->pass = st->pass && st->c[i].pass;
    rc = st->pass ? 0 : -ENOTRECOVERABLE;

undo:
    /* Every step is undone even if an earlier one failed; the first error is kept. */
    if (outsider >= 0)
        close(outsider);
    if (sink_added)
        (void)mnc_kern_sink_file_del(k, sink);
    if (registered) {
        (void)mnc_kern_unregister_cgroup(k, cgid);
        (void)mnc_kern_clear_agent(k, agent);
    }
    if (made_cg && rmdir(cg) != 0 && rc == 0) {
        rc = -errno;
        snprintf(st->error, sizeof(st->error), "rmdir %.100s: %s", cg, strerror(errno));
    }
    if (made_files & 1)
        unlink(sink);
    if (made_files & 2)
        unlink(plain);
    return rc;
}

/* ---- IPC sinks */
int mnc_lsm_ipc_key(unsigned kind, int ipc_id, struct mnc_ipc_key *key)
{
    memset(key, 0, sizeof(*key));
    if ((kind != MNC_IPC_MSG && kind != MNC_IPC_SHM) || ipc_id < 0)
        return -EINVAL;
    struct stat st;
    if (stat("/proc/self/ns/ipc", &st) != 0)
        return -errno;
    key->kind = kind;
    key->id = (__u32)ipc_id;
    key->ns_ino = st.st_ino;
    return 0;
}

static int ipc_map(const char *root)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/ipc_sinks", root);
    int fd = bpf_obj_get(p);
    return fd < 0 ? -errno : fd;
}

int mnc_lsm_ipc_add(const char *root, unsigned kind, int ipc_id, uint32_t id, unsigned cls)
{
    if (cls < MNC_SINK_AGENT || cls > MNC_SINK_MNCD)
        return -EINVAL;
    struct mnc_ipc_key key;
    int rc = mnc_lsm_ipc_key(kind, ipc_id, &key);
    if (rc)
        return rc;
    int fd = ipc_map(root);
    if (fd < 0)
        return fd;
    struct mnc_sink v = {.id = id, .cls = cls};
    rc = bpf_map_update_elem(fd, &key, &v, BPF_ANY) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

int mnc_lsm_ipc_del(const char *root, unsigned kind, int ipc_id)
{
    struct mnc_ipc_key key;
    int rc = mnc_lsm_ipc_key(kind, ipc_id, &key);
    if (rc)
        return rc;
    int fd = ipc_map(root);
    if (fd < 0)
        return fd;
    rc = bpf_map_delete_elem(fd, &key) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

/* ---- the lsm branch of mnc_kern_attach / mnc_kern_detach */
int mnc_lsm_attach_verified(const char *root, const char *tree, uint64_t tree_id, bool skip_selftest, mnc_kern **out,
                            mnc_selftest *st, char *err, size_t errlen)
{
    *out = NULL;
    /* Undo on any failure after the attach: new links are unpinned, replaced links get their
     * previous programs back (leaving the new ones would run unverified code), settings as
     * before. */
    struct lsm_undo u;
    lsm_undo_init(&u);
    int rc = lsm_attach_undo(root, tree, tree_id, &u, err, errlen);
    if (rc)
        return rc;
    mnc_kern *k = NULL;
    if ((rc = mnc_kern_open(root, &k, err, errlen)) != 0) {
        (void)lsm_rollback(&u, root, err, errlen);
        return rc;
    }
    if (!skip_selftest) {
        mnc_selftest local;
        mnc_selftest *s = st ? st : &local;
        rc = mnc_selftest_test_hook(s, mnc_lsm_selftest(k, s));
        if (rc) {
            mnc_errf(err, errlen, -ENOTRECOVERABLE, "backend lsm: functional self-test failed: %s",
                     s->error[0]
                         ? s->error
                         : "the programs attached but did not deny (is \"bpf\" really in the kernel's lsm= list?)");
            mnc_kern_close(k);
            (void)lsm_rollback(&u, root, err, errlen);
            return -ENOTRECOVERABLE;
        }
    }
    lsm_undo_release(&u);
    *out = k;
    return 0;
}

int mnc_lsm_purge(const char *root, char *err, size_t errlen)
{
    static const char *const maps[] = {"ipc_sinks", "lsm_tree", "sigio_owners", "file_labels"};
    int rc = 0;
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
        char p[PATH_MAX + 16];
        snprintf(p, sizeof(p), "%s/%s", root, maps[i]);
        if (unlink(p) != 0 && errno != ENOENT && rc == 0)
            rc = mnc_errf(err, errlen, -errno, "unpin %s: %s", p, strerror(errno));
    }
    return rc;
}
