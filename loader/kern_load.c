/* kern_load.c - feature probe, backend choice, attach (load + pin + atomic link replacement),
 * adopt, detach and status of the mnc BPF programs. Contract: loader/mnc_kern.h. */
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

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

int mnc_kerr(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static const mnc_hook_info hooks[] = {
    {"mnc_connect4", "cgroup/connect4",
     "connect(2) on IPv4 sockets (TCP, UDP): destination address:port vs sock_inet, by taint"},
    {"mnc_connect6", "cgroup/connect6",
     "connect(2) on IPv6 sockets; IPv4-mapped destinations are checked as IPv4"},
    {"mnc_connect_unix", "cgroup/connect_unix",
     "connect(2) on UNIX sockets: sun_path vs sock_unix; agents must use absolute canonical paths"},
    {"mnc_sendmsg4", "cgroup/sendmsg4", "sendto/sendmsg with an IPv4 destination (UDP)"},
    {"mnc_sendmsg6", "cgroup/sendmsg6", "sendto/sendmsg with an IPv6 destination (UDP)"},
    {"mnc_sendmsg_unix", "cgroup/sendmsg_unix", "sendto/sendmsg with a UNIX destination (datagrams)"},
    {"mnc_sock_create", "cgroup/sock_create",
     "socket(2) for AF_INET/AF_INET6 only (kernel limit): no SOCK_RAW; no IP socket for an unknown cgroup (AF_PACKET: seccomp in mncctl run)"},
    {"mnc_egress", "cgroup_skb/egress",
     "every IPv4/IPv6 packet of an agent's sockets vs its current taint: sends on connections made before the taint and on accepted sockets (UDP: EPERM; TCP: dropped, connection stalls)"},
};
#define N_HOOKS ((int)(sizeof(hooks) / sizeof(hooks[0])))

const mnc_hook_info *mnc_kern_hooks(int *n)
{
    *n = N_HOOKS;
    return hooks;
}

const char *mnc_kern_pin_root(const char *override)
{
    if (override && *override)
        return override;
    const char *e = getenv("MNC_PIN_ROOT");
    if (e && *e)
        return e;
    return MNC_PIN_ROOT_DEFAULT;
}

int mnc_cgroup2_mount(char *buf, size_t len)
{
    FILE *f = fopen("/proc/mounts", "re");
    if (!f)
        return -errno;
    char line[1024];
    int rc = -ENOENT;
    while (fgets(line, sizeof(line), f)) {
        char dev[256], mnt[512], type[64];
        if (sscanf(line, "%255s %511s %63s", dev, mnt, type) != 3)
            continue;
        if (strcmp(type, "cgroup2") == 0) {
            if (strlen(mnt) >= len) {
                rc = -ENAMETOOLONG;
                break;
            }
            snprintf(buf, len, "%s", mnt);
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

int mnc_cgroup_id(const char *path, uint64_t *id)
{
    /* The cgroup id is the kernfs node id, exposed as the file handle of the directory. */
    struct {
        struct file_handle fh;
        uint64_t id;
    } h;
    int mount_id;
    h.fh.handle_bytes = sizeof(uint64_t);
    if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
        return -errno;
    if (h.fh.handle_bytes != sizeof(uint64_t))
        return -EPROTO;
    memcpy(id, h.fh.f_handle, sizeof(*id));
    return 0;
}

/* Loads `insns` as a BPF LSM program on file_open: the only honest test that the lsm backend
 * can work (on this host LSM programs fail to load with EPERM although "bpf" is listed). */
static int probe_lsm_load(void)
{
    struct btf *vm = btf__load_vmlinux_btf();
    if (!vm)
        return -ENOENT;
    int id = btf__find_by_name_kind(vm, "bpf_lsm_file_open", BTF_KIND_FUNC);
    btf__free(vm);
    if (id < 0)
        return -ENOENT;
    struct bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT},
    };
    LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = BPF_LSM_MAC, .attach_btf_id = (__u32)id);
    int fd = bpf_prog_load(BPF_PROG_TYPE_LSM, "mnc_probe", "GPL", insns, 2, &po);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

static int silent_print(enum libbpf_print_level l, const char *f, va_list ap)
{
    (void)l, (void)f, (void)ap;
    return 0;
}

void mnc_kern_probe(mnc_features *f)
{
    memset(f, 0, sizeof(*f));
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(f->kernel, sizeof(f->kernel), "%.16s %.64s %.100s", u.sysname, u.release, u.version);

    FILE *lf = fopen("/sys/kernel/security/lsm", "re");
    if (!lf && errno == ENOENT && access("/sys/kernel/security", F_OK) == 0 &&
        mount("securityfs", "/sys/kernel/security", "securityfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
        lf = fopen("/sys/kernel/security/lsm", "re"); /* securityfs was just not mounted */
    if (lf) {
        size_t n = fread(f->lsm_list, 1, sizeof(f->lsm_list) - 1, lf);
        f->lsm_list[n] = 0;
        fclose(lf);
        f->lsm_list_known = true;
        /* comma-separated list: look for the whole word */
        char tmp[sizeof(f->lsm_list)];
        snprintf(tmp, sizeof(tmp), "%s", f->lsm_list);
        char *save = NULL;
        for (char *t = strtok_r(tmp, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save))
            if (strcmp(t, "bpf") == 0)
                f->lsm_has_bpf = true;
    }

    libbpf_print_fn_t old = libbpf_set_print(silent_print);
    int rc = probe_lsm_load();
    f->lsm_loads = rc == 0;
    f->lsm_load_errno = rc < 0 ? -rc : 0;
    f->sock_addr_loads = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, NULL) == 1;
    f->sock_create_loads = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK, NULL) == 1;
    f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
    f->skb_loads = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SKB, NULL) == 1;
    libbpf_set_print(old);

    if (mnc_cgroup2_mount(f->cgroup2, sizeof(f->cgroup2)) != 0)
        f->cgroup2[0] = 0;
    struct statfs sf;
    f->bpffs = statfs("/sys/fs/bpf", &sf) == 0 && (unsigned long)sf.f_type == BPF_FS_MAGIC;

    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    f->landlock_abi = abi >= 0 ? (int)abi : -errno;
    /* PR_GET_SECCOMP works everywhere; probing filter support means asking the kernel for the
     * filter action list, which fails with EINVAL/ENOSYS without CONFIG_SECCOMP_FILTER. */
    uint32_t act = SECCOMP_RET_ERRNO;
    f->seccomp_filter = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) == 0;
}

int mnc_kern_choose_backend(const mnc_features *f, unsigned requested, char *err, size_t errlen)
{
    if (requested == MNC_BACKEND_LSM) {
        if (!f->lsm_list_known)
            return mnc_kerr(err, errlen, -EOPNOTSUPP,
                            "backend lsm unavailable: /sys/kernel/security/lsm is unreadable "
                            "(mount securityfs); refusing rather than falling back");
        if (!f->lsm_has_bpf)
            return mnc_kerr(err, errlen, -EOPNOTSUPP,
                            "backend lsm unavailable: \"bpf\" is not in the active LSM list (%s); "
                            "boot with lsm=...,bpf or use --backend cgroup; refusing rather than falling back",
                            f->lsm_list);
        if (!f->lsm_loads)
            return mnc_kerr(err, errlen, -EOPNOTSUPP,
                            "backend lsm unavailable: BPF LSM programs do not load here (%s); "
                            "use --backend cgroup; refusing rather than falling back",
                            strerror(f->lsm_load_errno));
        /* lsm backend (issue 5, loader/lsm_backend.c); mnc_kern_attach still has to see
         * its functional self-test pass */
        return mnc_lsm_available(f, err, errlen) == 0 ? (int)MNC_BACKEND_LSM : -EOPNOTSUPP;
    }
    if (requested == 0 && mnc_lsm_available(f, NULL, 0) == 0)
        return MNC_BACKEND_LSM; /* auto: preferred when it can run; attach falls back if it fails */
    if (requested != 0 && requested != MNC_BACKEND_CGROUP)
        return mnc_kerr(err, errlen, -EINVAL, "unknown backend %u", requested);
    if (!f->cgroup2[0])
        return mnc_kerr(err, errlen, -EOPNOTSUPP, "backend cgroup unavailable: no cgroup2 mount in /proc/mounts");
    if (!f->sock_addr_loads || !f->sock_create_loads)
        return mnc_kerr(err, errlen, -EOPNOTSUPP,
                        "backend cgroup unavailable: cgroup sock_addr/sock programs do not load");
    if (!f->ringbuf)
        return mnc_kerr(err, errlen, -EOPNOTSUPP, "backend cgroup unavailable: no BPF ring buffer");
    if (!f->skb_loads)
        return mnc_kerr(err, errlen, -EOPNOTSUPP,
                        "backend cgroup unavailable: cgroup_skb programs do not load (sends on connections "
                        "made before a taint could not be re-checked)");
    return MNC_BACKEND_CGROUP;
}

/* ---- names */
static const char *const reason_names[MNC_K__COUNT] = {
    [MNC_K_ALLOW_MNCD] = "allow_mncd",
    [MNC_K_ALLOW_UNTAINTED] = "allow_untainted",
    [MNC_K_ALLOW_SCOPE] = "allow_scope",
    [MNC_K_ALLOW_SOCKET] = "allow_socket",
    [MNC_K_DENY_UNKNOWN_AGENT] = "deny_unknown_agent",
    [MNC_K_DENY_NO_TAINT] = "deny_no_taint",
    [MNC_K_DENY_EXTERNAL] = "deny_external",
    [MNC_K_DENY_SCOPE] = "deny_scope",
    [MNC_K_DENY_LOG] = "deny_log",
    [MNC_K_DENY_MEMORY] = "deny_memory",
    [MNC_K_DENY_UNIX_PATH] = "deny_unix_path",
    [MNC_K_DENY_RAW_SOCKET] = "deny_raw_socket",
    [MNC_K_DENY_PACKET_SOCKET] = "deny_packet_socket",
    [MNC_K_DENY_BAD_CLASS] = "deny_bad_class",
    [MNC_K_EVENT_LOST] = "event_lost",
};

const char *mnc_kreason_name(unsigned r)
{
    return r < MNC_K__COUNT && reason_names[r] ? reason_names[r] : "?";
}

static const char *const class_names[] = {"none", "agent", "log", "memory", "tool", "external", "mncd"};

const char *mnc_sink_class_name(unsigned c)
{
    return c < sizeof(class_names) / sizeof(class_names[0]) ? class_names[c] : "?";
}

int mnc_sink_class_parse(const char *s)
{
    for (unsigned c = 1; c < sizeof(class_names) / sizeof(class_names[0]); c++)
        if (strcmp(s, class_names[c]) == 0)
            return (int)c;
    return -EINVAL;
}

const char *mnc_hook_name(unsigned h)
{
    static const char *const n[] = {"?", "connect4", "connect6", "connect_unix", "sendmsg4",
                                    "sendmsg6", "sendmsg_unix", "sock_create", "egress"};
    return h < sizeof(n) / sizeof(n[0]) ? n[h] : "?";
}

/* ---- open pinned maps */
static const char *const map_names[] = {"agents", "taint", "sock_unix", "sock_inet", "file_sinks",
                                        "names", "settings", "counters", "events"};
#define N_MAPS ((int)(sizeof(map_names) / sizeof(map_names[0])))

static int *map_slot(mnc_kern *k, int i)
{
    int *slots[N_MAPS] = {&k->fd_agents, &k->fd_taint, &k->fd_unix, &k->fd_inet, &k->fd_files,
                          &k->fd_names, &k->fd_settings, &k->fd_counters, &k->fd_events};
    return slots[i];
}

static mnc_kern *kern_new(const char *root)
{
    mnc_kern *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    snprintf(k->root, sizeof(k->root), "%s", root);
    for (int i = 0; i < N_MAPS; i++)
        *map_slot(k, i) = -1;
    return k;
}

void mnc_kern_close(mnc_kern *k)
{
    if (!k)
        return;
    if (k->rb)
        ring_buffer__free(k->rb);
    for (int i = 0; i < N_MAPS; i++)
        if (*map_slot(k, i) >= 0)
            close(*map_slot(k, i));
    free(k);
}

/* The layout each pinned map must have. A pinned map is found by name only; one left by a
 * build with another layout (or planted by someone else) must not be used: every lookup here
 * copies value_size bytes into a struct of this build's size, so a larger pinned value would
 * overflow our buffer and a smaller one would be read as garbage taint. Checked before any
 * lookup, including the ABI version in settings. */
static const struct map_layout {
    const char *name;
    __u32 type, key_size, value_size;
} map_layouts[] = {
    {"agents", BPF_MAP_TYPE_HASH, sizeof(struct mnc_agent_key), sizeof(struct mnc_agent)},
    {"taint", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_taint)},
    {"sock_unix", BPF_MAP_TYPE_HASH, sizeof(struct mnc_unix_key), sizeof(struct mnc_sink)},
    {"sock_inet", BPF_MAP_TYPE_HASH, sizeof(struct mnc_inet_key), sizeof(struct mnc_sink)},
    {"file_sinks", BPF_MAP_TYPE_HASH, sizeof(struct mnc_file_key), sizeof(struct mnc_sink)},
    {"names", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_name)},
    {"settings", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct mnc_config)},
    {"counters", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(__u64)},
    {"events", BPF_MAP_TYPE_RINGBUF, 0, 0},
};

/* 0 if fd is a map with the layout of `name`, else -EPROTO with the difference in err. */
static int check_layout(int fd, const char *name, const char *path, char *err, size_t errlen)
{
    const struct map_layout *want = NULL;
    for (size_t i = 0; i < sizeof(map_layouts) / sizeof(map_layouts[0]); i++)
        if (strcmp(map_layouts[i].name, name) == 0)
            want = &map_layouts[i];
    if (!want)
        return mnc_kerr(err, errlen, -EINVAL, "internal: no layout for map %s", name);
    struct bpf_map_info info;
    __u32 len = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
        return mnc_kerr(err, errlen, -EPROTO, "%s is not a BPF map: %s", path, strerror(errno));
    if (info.type != want->type || info.key_size != want->key_size || info.value_size != want->value_size)
        return mnc_kerr(err, errlen, -EPROTO,
                        "pinned map %s has type %u, key %u, value %u bytes; this build (ABI %u) expects "
                        "type %u, key %u, value %u: refused (detach --purge and re-attach)",
                        path, info.type, info.key_size, info.value_size, MNC_ABI_VERSION, want->type,
                        want->key_size, want->value_size);
    return 0;
}

static int read_settings(mnc_kern *k, struct mnc_config *c)
{
    __u32 key = 0;
    if (bpf_map_lookup_elem(k->fd_settings, &key, c) != 0)
        return -errno;
    return 0;
}

static int open_maps(mnc_kern *k, char *err, size_t errlen)
{
    for (int i = 0; i < N_MAPS; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s", k->root, map_names[i]);
        int fd = bpf_obj_get(p);
        if (fd < 0) {
            int e = errno;
            return mnc_kerr(err, errlen, -e, "cannot open pinned map %s: %s%s", p, strerror(e),
                            e == ENOENT ? " (not attached: run `mncctl kern attach`)" : "");
        }
        *map_slot(k, i) = fd;
        int lr = check_layout(fd, map_names[i], p, err, errlen);
        if (lr)
            return lr;
    }
    struct mnc_config c;
    int rc = read_settings(k, &c);
    if (rc)
        return mnc_kerr(err, errlen, rc, "cannot read %s/settings: %s", k->root, strerror(-rc));
    if (c.abi_version != 0 && c.abi_version != MNC_ABI_VERSION)
        return mnc_kerr(err, errlen, -EPROTO, "pinned state under %s has ABI %u, this build has %u",
                        k->root, c.abi_version, MNC_ABI_VERSION);
    snprintf(k->tree, sizeof(k->tree), "%.*s", (int)sizeof(c.tree_path), c.tree_path);
    return 0;
}

int mnc_kern_open(const char *pin_root, mnc_kern **out, char *err, size_t errlen)
{
    *out = NULL;
    mnc_kern *k = kern_new(mnc_kern_pin_root(pin_root));
    if (!k)
        return mnc_kerr(err, errlen, -ENOMEM, "out of memory");
    int rc = open_maps(k, err, errlen);
    if (rc) {
        mnc_kern_close(k);
        return rc;
    }
    *out = k;
    return 0;
}

const char *mnc_kern_root(const mnc_kern *k) { return k->root; }
const char *mnc_kern_notice(const mnc_kern *k) { return k->notice; }
const char *mnc_kern_tree(const mnc_kern *k) { return k->tree; }

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

/* ---- attach with undo (see kern_int.h) */

void mnc_attach_undo_init(mnc_attach_undo *u)
{
    memset(u, 0, sizeof(*u));
}

static int obj_prog_id(int fd, bool is_link, uint32_t *id)
{
    if (is_link) {
        struct bpf_link_info li;
        __u32 len = sizeof(li);
        memset(&li, 0, sizeof(li));
        if (bpf_obj_get_info_by_fd(fd, &li, &len) != 0)
            return -errno;
        *id = li.prog_id;
    } else {
        struct bpf_prog_info pi;
        __u32 len = sizeof(pi);
        memset(&pi, 0, sizeof(pi));
        if (bpf_obj_get_info_by_fd(fd, &pi, &len) != 0)
            return -errno;
        *id = pi.id;
    }
    return 0;
}

/* Replaces the program of the pinned link lfd (taken over: closed or recorded in u) with prog,
 * as a compare-and-swap against the program the link holds now. */
static int replace_in_link(int lfd, struct bpf_program *prog, const char *lp, mnc_attach_undo *u, char *err,
                           size_t errlen)
{
    const char *name = bpf_program__name(prog);
    if (u->n_replaced >= MNC_UNDO_MAX) {
        close(lfd);
        return mnc_kerr(err, errlen, -E2BIG, "more replaced links than the rollback table holds (%d)", MNC_UNDO_MAX);
    }
    mnc_replaced_link *r = &u->replaced[u->n_replaced];
    memset(r, 0, sizeof(*r));
    r->kind = MNC_REPL_UPDATE;
    r->link_fd = lfd;
    r->old_prog_fd = r->new_prog_fd = r->new_link_fd = -1;
    int rc = obj_prog_id(lfd, true, &r->old_prog_id);
    if (rc) {
        mnc_kerr(err, errlen, rc, "read pinned link %s: %s", lp, strerror(-rc));
        goto fail;
    }
    /* our own reference on the previous program: the link drops its one at the update, and
     * without this the program would be freed and could not be swapped back */
    r->old_prog_fd = bpf_prog_get_fd_by_id(r->old_prog_id);
    if (r->old_prog_fd < 0) {
        rc = -errno;
        mnc_kerr(err, errlen, rc, "open program %u of %s (kept to swap back on failure): %s", r->old_prog_id, lp,
                 strerror(-rc));
        goto fail;
    }
    r->new_prog_fd = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
    if (r->new_prog_fd < 0 || (rc = obj_prog_id(r->new_prog_fd, false, &r->new_prog_id)) != 0) {
        rc = r->new_prog_fd < 0 ? -errno : rc;
        mnc_kerr(err, errlen, rc, "program %s: %s", name, strerror(-rc));
        goto fail;
    }
    /* compare-and-swap: the old program runs until this syscall swaps in the new one, and it
     * fails (EPERM) if someone else replaced the program since we read it */
    LIBBPF_OPTS(bpf_link_update_opts, uo, .flags = BPF_F_REPLACE, .old_prog_fd = r->old_prog_fd);
    if (bpf_link_update(lfd, r->new_prog_fd, &uo) != 0) {
        rc = -errno;
        mnc_kerr(err, errlen, rc, "bpf_link_update %s: %s%s", lp, strerror(-rc),
                 rc == -EPERM ? " (the link's program changed after it was read: another attacher at work?)"
                 : rc == -EINVAL ? " (this link type cannot be updated in place on this kernel)"
                                 : "");
        goto fail;
    }
    snprintf(r->name, sizeof(r->name), "%s", name);
    u->n_replaced++;
    return 0;
fail:
    close(lfd);
    if (r->old_prog_fd >= 0)
        close(r->old_prog_fd);
    if (r->new_prog_fd >= 0)
        close(r->new_prog_fd);
    return rc;
}

static int link_id(int fd, uint32_t *id)
{
    struct bpf_link_info li;
    __u32 len = sizeof(li);
    memset(&li, 0, sizeof(li));
    if (bpf_obj_get_info_by_fd(fd, &li, &len) != 0)
        return -errno;
    *id = li.id;
    return 0;
}

/* Does the pin at lp still name the link whose id is want? 0 yes, -EPERM no, other -errno. */
static int pin_names(const char *lp, uint32_t want)
{
    int fd = bpf_obj_get(lp);
    if (fd < 0)
        return -errno;
    uint32_t id = 0;
    int rc = link_id(fd, &id);
    close(fd);
    return rc ? rc : id == want ? 0 : -EPERM;
}

/* Pins link fd at <lp>__<sfx> and renames that over lp (bpffs rename replaces the target in one
 * step: the path never names no link). Not "<lp>.<sfx>": bpffs refuses dots in names (EPERM). */
static int pin_over(int fd, const char *lp, const char *sfx)
{
    char tmp[PATH_MAX + 100];
    snprintf(tmp, sizeof(tmp), "%s__%s", lp, sfx);
    unlink(tmp); /* a leftover of a crashed attach */
    if (bpf_obj_pin(fd, tmp) != 0)
        return -errno;
    if (rename(tmp, lp) != 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}

/* LSM links: bpf_link_update is refused for tracing links (EINVAL, measured on 6.1). Attach the
 * new program beside the old one (both enforce meanwhile), then swap the pin; the old link is
 * kept alive by old_lfd (taken over) until the attach is committed or rolled back. */
static int swap_lsm_link(int old_lfd, struct bpf_program *prog, const char *lp, mnc_attach_undo *u, char *err,
                         size_t errlen)
{
    const char *name = bpf_program__name(prog);
    if (u->n_replaced >= MNC_UNDO_MAX) {
        close(old_lfd);
        return mnc_kerr(err, errlen, -E2BIG, "more replaced links than the rollback table holds (%d)", MNC_UNDO_MAX);
    }
    mnc_replaced_link *r = &u->replaced[u->n_replaced];
    memset(r, 0, sizeof(*r));
    r->kind = MNC_REPL_PIN_SWAP;
    r->link_fd = old_lfd;
    r->old_prog_fd = r->new_prog_fd = r->new_link_fd = -1;
    uint32_t old_id = 0;
    int rc = link_id(old_lfd, &old_id);
    if (rc == 0)
        rc = obj_prog_id(old_lfd, true, &r->old_prog_id);
    if (rc) {
        mnc_kerr(err, errlen, rc, "read pinned link %s: %s", lp, strerror(-rc));
        goto fail;
    }
    struct bpf_link *l = bpf_program__attach_lsm(prog);
    if (!l) {
        rc = -errno;
        mnc_kerr(err, errlen, rc, "attach %s (%s): %s", name, bpf_program__section_name(prog), strerror(-rc));
        goto fail;
    }
    r->new_link_fd = fcntl(bpf_link__fd(l), F_DUPFD_CLOEXEC, 3);
    rc = r->new_link_fd < 0 ? -errno : 0;
    /* our dup keeps the new link (and its attachment) alive after libbpf's handle is gone */
    bpf_link__destroy(l);
    if (rc == 0)
        rc = obj_prog_id(r->new_link_fd, true, &r->new_prog_id);
    if (rc) {
        mnc_kerr(err, errlen, rc, "new link for %s: %s", name, strerror(-rc));
        goto fail;
    }
    /* compare-and-swap, as close as pins allow: the pin must still name the link read above */
    if ((rc = pin_names(lp, old_id)) != 0) {
        mnc_kerr(err, errlen, rc, "pinned link %s changed while attaching%s: %s", lp,
                 rc == -EPERM ? " (another attacher at work?)" : "", strerror(-rc));
        goto fail;
    }
    if ((rc = pin_over(r->new_link_fd, lp, "new")) != 0) {
        mnc_kerr(err, errlen, rc, "pin new link over %s: %s", lp, strerror(-rc));
        goto fail;
    }
    snprintf(r->name, sizeof(r->name), "%s", name);
    u->n_replaced++;
    return 0;
fail:
    close(old_lfd);
    if (r->new_link_fd >= 0)
        close(r->new_link_fd); /* not pinned: detaches */
    return rc;
}

int mnc_attach_pinned(struct bpf_object *obj, const char *root, int cg_fd, mnc_attach_undo *u, char *err,
                      size_t errlen)
{
    struct bpf_program *prog;
    bpf_object__for_each_program(prog, obj)
    {
        const char *name = bpf_program__name(prog);
        char lp[PATH_MAX + 80];
        snprintf(lp, sizeof(lp), "%s/links/%s", root, name);
        int lfd = bpf_obj_get(lp);
        if (lfd >= 0) {
            int rc = cg_fd >= 0 ? replace_in_link(lfd, prog, lp, u, err, errlen)
                                : swap_lsm_link(lfd, prog, lp, u, err, errlen);
            if (rc)
                return rc;
            continue;
        }
        if (errno != ENOENT)
            return mnc_kerr(err, errlen, -errno, "open pinned link %s: %s", lp, strerror(errno));
        /* Room in the rollback table first, so a link we create is never left unrecorded. */
        if (u->n_created >= MNC_UNDO_MAX)
            return mnc_kerr(err, errlen, -E2BIG, "more links than the rollback table holds (%d)", MNC_UNDO_MAX);
        struct bpf_link *l = cg_fd >= 0 ? bpf_program__attach_cgroup(prog, cg_fd) : bpf_program__attach_lsm(prog);
        if (!l) {
            int e = errno;
            return mnc_kerr(err, errlen, -e, "attach %s (%s): %s", name, bpf_program__section_name(prog),
                            strerror(e));
        }
        int rc = bpf_link__pin(l, lp);
        /* closing our fd leaves the pinned link (and so the attachment) in place */
        bpf_link__destroy(l);
        if (rc != 0)
            return mnc_kerr(err, errlen, rc, "pin link %s: %s", lp, strerror(-rc));
        snprintf(u->created[u->n_created], sizeof(u->created[0]), "%s", name);
        u->n_created++;
    }
    return 0;
}

void mnc_attach_undo_release(mnc_attach_undo *u)
{
    for (int i = 0; i < u->n_replaced; i++) {
        mnc_replaced_link *r = &u->replaced[i];
        int fds[] = {r->link_fd, r->old_prog_fd, r->new_prog_fd, r->new_link_fd};
        for (size_t j = 0; j < sizeof(fds) / sizeof(fds[0]); j++)
            if (fds[j] >= 0)
                close(fds[j]); /* PIN_SWAP: closing the old link detaches the old program */
    }
    u->n_replaced = u->n_created = 0;
}

int mnc_attach_rollback(mnc_attach_undo *u, const char *root, char *err, size_t errlen)
{
    int rc = 0;
    char bad[512] = "";
    size_t bl = 0;
    /* newest first: the reverse of the order they were made */
    for (int i = u->n_replaced - 1; i >= 0; i--) {
        mnc_replaced_link *r = &u->replaced[i];
        int e = 0;
        if (r->kind == MNC_REPL_PIN_SWAP) {
            /* only take back what this attach put in: the pin must name our new link */
            char lp[PATH_MAX + 80];
            snprintf(lp, sizeof(lp), "%s/links/%s", root, r->name);
            uint32_t nid = 0;
            int x = link_id(r->new_link_fd, &nid);
            if (x == 0)
                x = pin_names(lp, nid);
            if (x == 0)
                x = pin_over(r->link_fd, lp, "rollback");
            e = -x;
        } else {
            /* compare-and-swap again: only take back what this attach put in */
            LIBBPF_OPTS(bpf_link_update_opts, uo, .flags = BPF_F_REPLACE, .old_prog_fd = r->new_prog_fd);
            if (bpf_link_update(r->link_fd, r->old_prog_fd, &uo) != 0)
                e = errno;
        }
        if (e) {
            rc = rc ? rc : -e;
            int n = snprintf(bad + bl, sizeof(bad) - bl, "%s%s (program %u, not back to %u: %s)", bl ? ", " : "",
                             r->name, r->new_prog_id, r->old_prog_id, strerror(e));
            if (n > 0)
                bl = bl + (size_t)n < sizeof(bad) ? bl + (size_t)n : sizeof(bad) - 1;
        }
    }
    for (int i = 0; i < u->n_created; i++) {
        char lp[PATH_MAX + 80];
        snprintf(lp, sizeof(lp), "%s/links/%s", root, u->created[i]);
        if (unlink(lp) != 0 && errno != ENOENT) {
            int e = errno;
            rc = rc ? rc : -e;
            int n = snprintf(bad + bl, sizeof(bad) - bl, "%s%s (new link not unpinned: %s)", bl ? ", " : "",
                             u->created[i], strerror(e));
            if (n > 0)
                bl = bl + (size_t)n < sizeof(bad) ? bl + (size_t)n : sizeof(bad) - 1;
        }
    }
    int n_rep = u->n_replaced, n_cre = u->n_created;
    mnc_attach_undo_release(u);
    if (rc) {
        mnc_kerr(err, errlen, rc, "ROLLBACK FAILED: still running the new, UNVERIFIED programs: %s", bad);
        fprintf(stderr, "mnc: loader: %s\n", err); /* loud: the caller's own report may be cut short */
        return rc;
    }
    mnc_kerr(err, errlen, 0, "rolled back: %d replaced link(s) have their previous program again, %d new link(s) "
             "unpinned", n_rep, n_cre);
    return 0;
}

int mnc_selftest_test_hook(mnc_selftest *st, int rc)
{
    const char *want = getenv("MNC_TEST_SELFTEST_FAIL");
    if (!want || !*want || !st)
        return rc;
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->c[i].name, want) == 0) {
            st->c[i].got = -1;
            st->c[i].pass = false;
            st->pass = false;
            return -ENOTRECOVERABLE;
        }
    return rc;
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
            return mnc_kerr(err, errlen, -errno, "no bpf filesystem at /sys/fs/bpf and mounting one failed: %s",
                            strerror(errno));
    }
    char tree[MNC_TREE_PATH_MAX];
    int rc = resolve_tree(f.cgroup2, o->tree, tree, sizeof(tree));
    if (rc)
        return mnc_kerr(err, errlen, rc, "bad mnc tree \"%s\" (must be a name or a path under %s)",
                        o->tree ? o->tree : "", f.cgroup2);
    if ((rc = mkdir_p(tree, 0755)) != 0)
        return mnc_kerr(err, errlen, rc, "create cgroup %s: %s", tree, strerror(-rc));
    uint64_t tree_id;
    if ((rc = mnc_cgroup_id(tree, &tree_id)) != 0)
        return mnc_kerr(err, errlen, rc, "cgroup id of %s: %s", tree, strerror(-rc));
    char links[PATH_MAX + 8];
    snprintf(links, sizeof(links), "%s/links", root);
    if ((rc = mkdir_p(links, 0700)) != 0)
        return mnc_kerr(err, errlen, rc, "create %s: %s", links, strerror(-rc));

    /* Refuse to re-point pinned links at another tree: the old tree would lose enforcement. */
    mnc_kern *k = kern_new(root);
    if (!k)
        return mnc_kerr(err, errlen, -ENOMEM, "out of memory");
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/settings", root);
    int sfd = bpf_obj_get(p);
    struct mnc_config prev_cfg; /* put back if this attach is rolled back */
    bool have_prev_cfg = false;
    if (sfd >= 0) {
        struct mnc_config old;
        __u32 key = 0;
        int lr = check_layout(sfd, "settings", p, err, errlen);
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
            return mnc_kerr(err, errlen, -EBUSY,
                            "pinned state under %s enforces tree %.*s; detach it first or use another pin root",
                            root, (int)sizeof(old.tree_path), old.tree_path);
        }
    }

    if (backend == MNC_BACKEND_LSM) {
        /* issue 5: attach, pin, self-test (loader/lsm_backend.c). --backend lsm: a failure is
         * final. auto: fall back to cgroup and keep the reason as the handle's notice. */
        mnc_kern *lk = NULL;
        char why[256] = "";
        rc = mnc_lsm_attach_verified(root, tree, tree_id, o->skip_selftest, &lk, st, why, sizeof(why));
        if (rc == 0 || o->backend == MNC_BACKEND_LSM) {
            mnc_kern_close(k);
            if (rc)
                return mnc_kerr(err, errlen, rc, "%s", why);
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
        return mnc_kerr(err, errlen, rc, "open %s: %s", tree, strerror(-rc));
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
        mnc_kerr(err, errlen, rc, "open BPF objects: %s", strerror(-rc));
        goto out;
    }
    if ((rc = sock_addr_bpf__load(sa)) != 0 || (rc = sock_create_bpf__load(sc)) != 0 ||
        (rc = sock_egress_bpf__load(se)) != 0) {
        mnc_kerr(err, errlen, rc,
                 "load BPF programs: %s (a pinned map with another layout under %s? detach --purge)",
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
        mnc_kerr(err, errlen, rc, "write settings: %s", strerror(-rc));
        goto out;
    }
    settings_written = true;
    if ((rc = open_maps(k, err, errlen)) != 0)
        goto out;
    if (!o->skip_selftest) {
        mnc_selftest local;
        mnc_selftest *s = st ? st : &local;
        rc = mnc_selftest_test_hook(s, mnc_kern_selftest(k, s));
        if (rc) {
            mnc_kerr(err, errlen, -ENOTRECOVERABLE, "functional self-test failed: %s",
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
    int rc = 0;
    for (int i = 0; i < N_HOOKS; i++) {
        snprintf(p, sizeof(p), "%s/links/%s", root, hooks[i].program);
        if (unlink(p) != 0 && errno != ENOENT && rc == 0)
            rc = mnc_kerr(err, errlen, -errno, "unpin %s: %s", p, strerror(errno));
    }
    int lr = mnc_lsm_detach(root, rc ? NULL : err, errlen); /* the lsm backend's links */
    if (lr && rc == 0)
        rc = lr;
    snprintf(p, sizeof(p), "%s/links", root);
    if (rmdir(p) != 0 && errno != ENOENT && rc == 0)
        rc = mnc_kerr(err, errlen, -errno, "rmdir %s: %s", p, strerror(errno));
    if (!purge)
        return rc;
    for (int i = 0; i < N_MAPS; i++) {
        snprintf(p, sizeof(p), "%s/%s", root, map_names[i]);
        if (unlink(p) != 0 && errno != ENOENT && rc == 0)
            rc = mnc_kerr(err, errlen, -errno, "unpin %s: %s", p, strerror(errno));
    }
    lr = mnc_lsm_purge(root, rc ? NULL : err, errlen);
    if (lr && rc == 0)
        rc = lr;
    if (rmdir(root) != 0 && errno != ENOENT && rc == 0)
        rc = mnc_kerr(err, errlen, -errno, "rmdir %s: %s", root, strerror(errno));
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
    int rc = read_settings(k, &s->cfg);
    if (rc)
        return rc;
    s->n_links_expected = N_HOOKS;
    for (int i = 0; i < N_HOOKS; i++) {
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
    s->n_unix = count_keys(k->fd_unix, sizeof(struct mnc_unix_key));
    s->n_inet = count_keys(k->fd_inet, sizeof(struct mnc_inet_key));
    s->n_files = count_keys(k->fd_files, sizeof(struct mnc_file_key));
    s->n_names = count_keys(k->fd_names, sizeof(__u32));
    return 0;
}
