// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_maps.c - the map operations of loader/mnc_kern.h: agents, taint, names, sinks,
 * counters and the deny-event ring buffer. Each update is one bpf() syscall, so the programs
 * never see a half-written entry. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kern_int.h"
#include "lsm_abi.h"

static int sys_rc(int rc) { return rc == 0 ? 0 : -errno; }

int mnc_kern_register_cgroup(mnc_kern *k, uint64_t cgid, uint32_t agent_id, uint32_t flags)
{
    struct mnc_agent_key key = {.cgroup_id = cgid};
    struct mnc_agent val = {.agent_id = agent_id, .flags = flags};
    return sys_rc(bpf_map_update_elem(k->fd_agents, &key, &val, BPF_ANY));
}

int mnc_kern_unregister_cgroup(mnc_kern *k, uint64_t cgid)
{
    struct mnc_agent_key key = {.cgroup_id = cgid};
    return sys_rc(bpf_map_delete_elem(k->fd_agents, &key));
}

int mnc_kern_lookup_cgroup(mnc_kern *k, uint64_t cgid, struct mnc_agent *a)
{
    struct mnc_agent_key key = {.cgroup_id = cgid};
    return sys_rc(bpf_map_lookup_elem(k->fd_agents, &key, a));
}

/* Calls fn for each cgroup of agent_id; collecting first, so deletions do not disturb the
 * iteration. */
static int agent_cgroups(mnc_kern *k, uint32_t agent_id, uint64_t **out, int *n)
{
    struct mnc_agent_key cur, next;
    struct mnc_agent_key *prev = NULL;
    int cap = 0;
    *out = NULL;
    *n = 0;
    while (bpf_map_get_next_key(k->fd_agents, prev, &next) == 0) {
        struct mnc_agent a;
        cur = next;
        prev = &cur;
        if (bpf_map_lookup_elem(k->fd_agents, &cur, &a) != 0 || a.agent_id != agent_id)
            continue;
        if (*n == cap) {
            int nc = cap ? cap * 2 : 16;
            uint64_t *t = realloc(*out, (size_t)nc * sizeof(**out));
            if (!t) {
                free(*out);
                *out = NULL;
                return -ENOMEM;
            }
            *out = t;
            cap = nc;
        }
        (*out)[(*n)++] = cur.cgroup_id;
    }
    return 0;
}

int mnc_kern_agent_cgroups(mnc_kern *k, uint32_t agent_id)
{
    uint64_t *ids;
    int n, rc = agent_cgroups(k, agent_id, &ids, &n);
    free(ids);
    return rc ? rc : n;
}

int mnc_kern_taint_ensure(mnc_kern *k, uint32_t agent_id)
{
    struct mnc_taint t;
    memset(&t, 0, sizeof(t));
    if (bpf_map_update_elem(k->fd_taint, &agent_id, &t, BPF_NOEXIST) == 0 || errno == EEXIST)
        return 0;
    return -errno;
}

int mnc_kern_taint_set(mnc_kern *k, uint32_t agent_id, const struct mnc_taint *t)
{
    return sys_rc(bpf_map_update_elem(k->fd_taint, &agent_id, t, BPF_ANY));
}

int mnc_kern_taint_get(mnc_kern *k, uint32_t agent_id, struct mnc_taint *t)
{
    return sys_rc(bpf_map_lookup_elem(k->fd_taint, &agent_id, t));
}

int mnc_kern_taint_hold(mnc_kern *k, uint32_t agent_id, const uint64_t sinks[MNC_SET_WORDS_ABI], bool may_log,
                        bool may_memory, bool may_forward, bool may_external, uint64_t *gen)
{
    struct mnc_taint t;
    int rc = mnc_kern_taint_get(k, agent_id, &t);
    if (rc == -ENOENT)
        memset(&t, 0, sizeof(t));
    else if (rc)
        return rc;
    struct mnc_taint n = t;
    if (!t.tainted) {
        /* first disclosure: the scope replaces the base rights */
        memcpy(n.sinks, sinks, sizeof(n.sinks));
        n.may_log = may_log;
        n.may_memory = may_memory;
        n.may_forward = may_forward;
        n.may_external = may_external;
    } else {
        for (int i = 0; i < MNC_SET_WORDS_ABI; i++)
            n.sinks[i] &= sinks[i];
        n.may_log = t.may_log && may_log;
        n.may_memory = t.may_memory && may_memory;
        n.may_forward = t.may_forward && may_forward;
        n.may_external = t.may_external && may_external;
    }
    n.tainted = 1;
    n.generation = t.generation + 1;
    rc = mnc_kern_taint_set(k, agent_id, &n);
    if (rc == 0 && gen)
        *gen = n.generation;
    return rc;
}

int mnc_kern_clear_agent(mnc_kern *k, uint32_t agent_id)
{
    uint64_t *ids;
    int n, rc = agent_cgroups(k, agent_id, &ids, &n);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        int r = mnc_kern_unregister_cgroup(k, ids[i]);
        if (r != 0 && r != -ENOENT && rc == 0)
            rc = r;
    }
    free(ids);
    if (bpf_map_delete_elem(k->fd_taint, &agent_id) != 0 && errno != ENOENT && rc == 0)
        rc = -errno;
    return rc;
}

/* ---- names */
int mnc_kern_name_set(mnc_kern *k, uint32_t id, const char *name, unsigned cls)
{
    struct mnc_name v;
    memset(&v, 0, sizeof(v));
    if (!name || !*name || strlen(name) >= sizeof(v.name))
        return -EINVAL;
    memcpy(v.name, name, strlen(name));
    v.cls = cls;
    return sys_rc(bpf_map_update_elem(k->fd_names, &id, &v, BPF_ANY));
}

int mnc_kern_name_find(mnc_kern *k, const char *name, uint32_t *id, unsigned *cls)
{
    __u32 cur, next, *prev = NULL;
    while (bpf_map_get_next_key(k->fd_names, prev, &next) == 0) {
        struct mnc_name v;
        cur = next;
        prev = &cur;
        if (bpf_map_lookup_elem(k->fd_names, &cur, &v) != 0)
            continue;
        if (strncmp(v.name, name, sizeof(v.name)) == 0) {
            *id = cur;
            if (cls)
                *cls = (unsigned)v.cls;
            return 0;
        }
    }
    return -ENOENT;
}

/* ---- sinks */
static int check_class(unsigned cls) { return cls >= MNC_SINK_AGENT && cls <= MNC_SINK_MNCD ? 0 : -EINVAL; }

int mnc_kern_unix_key(const char *path, struct mnc_unix_key *key)
{
    static const struct {
        const char *prefix;
        uint16_t type;
    } types[] = {{"stream:@", SOCK_STREAM}, {"dgram:@", SOCK_DGRAM}, {"seqpacket:@", SOCK_SEQPACKET}};
    memset(key, 0, sizeof(*key));
    if (!path)
        return -EINVAL;
    uint16_t type = 0;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strncmp(path, types[i].prefix, strlen(types[i].prefix)) == 0) {
            type = types[i].type;
            path += strlen(types[i].prefix) - 1; /* to the '@' */
        }
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(key->path))
        return -EINVAL;
    if (path[0] == '@') {
        if (n < 2 || type == 0)
            return -EINVAL; /* an abstract name is one socket per type: the type is part of it */
    } else if (type != 0 || !mnc_unix_path_canonical(path, (uint32_t)n)) {
        return -EINVAL; /* a non-canonical key could never match a tainted agent's connect */
    }
    memcpy(key->path, path, n);
    if (path[0] == '@') { /* as mnc_unix_key_build keys a sun_path of n bytes from a `type` socket */
        key->alen = (uint16_t)n;
        key->type = type;
    }
    return 0;
}

/* Labels key (already built) in the sink map fd with (id, cls). 0 or -errno. */
static int sink_put(int fd, const void *key, uint32_t id, unsigned cls)
{
    int rc = check_class(cls);
    if (rc)
        return rc;
    struct mnc_sink v = {.id = id, .cls = cls};
    return sys_rc(bpf_map_update_elem(fd, key, &v, BPF_ANY));
}

/* path's key as a buffer, its sock_unix hash key, and the entry stored under that hash now
 * (*have: 1 if there is one, whatever key it holds). 0 or -errno. */
static int unix_entry(mnc_kern *k, const char *path, union mnc_unix_buf *b, struct mnc_unix_hkey *hk,
                      struct mnc_unix_sink *cur, int *have)
{
    memset(b, 0, sizeof(*b));
    int rc = mnc_kern_unix_key(path, &b->key);
    if (rc)
        return rc;
    hk->hash = mnc_unix_key_hash(b);
    *have = 0;
    if (bpf_map_lookup_elem(k->fd_unix, hk, cur) == 0)
        *have = 1;
    else if (errno != ENOENT)
        return -errno;
    return 0;
}

int mnc_kern_sink_unix_add(mnc_kern *k, const char *path, uint32_t id, unsigned cls)
{
    union mnc_unix_buf b;
    struct mnc_unix_hkey hk;
    struct mnc_unix_sink cur, v = {.sink = {.id = id, .cls = cls}};
    int have, rc = check_class(cls);
    if (rc || (rc = unix_entry(k, path, &b, &hk, &cur, &have)) != 0)
        return rc;
    if (have && !mnc_unix_key_same(&b, &cur.key))
        return -EEXIST; /* another sink's key has this hash: overwriting would drop that sink */
    v.key = b.key;
    return sys_rc(bpf_map_update_elem(k->fd_unix, &hk, &v, BPF_ANY));
}

int mnc_kern_sink_unix_del(mnc_kern *k, const char *path)
{
    union mnc_unix_buf b;
    struct mnc_unix_hkey hk;
    struct mnc_unix_sink cur;
    int have, rc = unix_entry(k, path, &b, &hk, &cur, &have);
    if (rc)
        return rc;
    if (!have || !mnc_unix_key_same(&b, &cur.key))
        return -ENOENT; /* the entry under this hash, if any, is another sink's */
    return sys_rc(bpf_map_delete_elem(k->fd_unix, &hk));
}

int mnc_unix_sink_lookup(int map_fd, const union mnc_unix_buf *b, struct mnc_sink *out)
{
    struct mnc_unix_hkey hk = {.hash = mnc_unix_key_hash(b)};
    struct mnc_unix_sink v;
    if (bpf_map_lookup_elem(map_fd, &hk, &v) != 0)
        return -errno;
    if (!mnc_unix_key_same(b, &v.key))
        return -ENOENT;
    *out = v.sink;
    return 0;
}

int mnc_kern_inet_key(const char *s, struct mnc_inet_key *key)
{
    memset(key, 0, sizeof(*key));
    if (!s)
        return -EINVAL;
    char host[64];
    const char *port;
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof(host))
            return -EINVAL;
        memcpy(host, s + 1, (size_t)(e - s - 1));
        host[e - s - 1] = 0;
        port = e + 2;
        struct in6_addr a6;
        if (inet_pton(AF_INET6, host, &a6) != 1)
            return -EINVAL;
        mnc_inet_key_set6(key, a6.s6_addr); /* as the hooks see an IPv4-mapped destination */
    } else {
        const char *c = strrchr(s, ':');
        if (!c || (size_t)(c - s) >= sizeof(host))
            return -EINVAL;
        memcpy(host, s, (size_t)(c - s));
        host[c - s] = 0;
        port = c + 1;
        struct in_addr a4;
        if (inet_pton(AF_INET, host, &a4) != 1)
            return -EINVAL;
        key->family = AF_INET;
        memcpy(key->addr, &a4, 4);
    }
    char *end;
    errno = 0;
    unsigned long p = strtoul(port, &end, 10);
    if (!*port || *end || errno || p > 65535 || port[0] == '-' || port[0] == '+')
        return -EINVAL;
    key->port = (uint16_t)p;
    return 0;
}

int mnc_kern_sink_inet_add(mnc_kern *k, const char *addr, uint32_t id, unsigned cls)
{
    struct mnc_inet_key key;
    int rc = mnc_kern_inet_key(addr, &key);
    return rc ? rc : sink_put(k->fd_inet, &key, id, cls);
}

int mnc_kern_sink_inet_del(mnc_kern *k, const char *addr)
{
    struct mnc_inet_key key;
    int rc = mnc_kern_inet_key(addr, &key);
    return rc ? rc : sys_rc(bpf_map_delete_elem(k->fd_inet, &key));
}

int mnc_inet_sink_lookup(int map_fd, const struct mnc_inet_key *dst, struct mnc_sink *out)
{
    struct mnc_inet_key q;
    for (int i = 0; i < MNC_INET_LOOKUP_STEPS; i++) {
        if (!mnc_inet_lookup_key(dst, i, &q))
            continue;
        if (bpf_map_lookup_elem(map_fd, &q, out) == 0)
            return 0;
        if (errno != ENOENT)
            return -errno;
    }
    return -ENOENT;
}

int mnc_kern_file_key(const char *path, struct mnc_file_key *key)
{
    struct stat st;
    memset(key, 0, sizeof(*key));
    if (!path || stat(path, &st) != 0)
        return path ? -errno : -EINVAL;
    /* the kernel's s_dev encoding, which is what an LSM program reads from i_sb->s_dev */
    key->dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
    key->ino = st.st_ino;
    return 0;
}

int mnc_kern_sink_file_add(mnc_kern *k, const char *path, uint32_t id, unsigned cls)
{
    struct mnc_file_key key;
    int rc = mnc_kern_file_key(path, &key);
    return rc ? rc : sink_put(k->fd_files, &key, id, cls);
}

int mnc_kern_sink_file_del(mnc_kern *k, const char *path)
{
    struct mnc_file_key key;
    int rc = mnc_kern_file_key(path, &key);
    return rc ? rc : sys_rc(bpf_map_delete_elem(k->fd_files, &key));
}

int mnc_kern_sink_file_lookup(mnc_kern *k, const struct mnc_file_key *key, struct mnc_sink *s)
{
    return sys_rc(bpf_map_lookup_elem(k->fd_files, key, s));
}

/* ---- observability */
int mnc_kern_counters(mnc_kern *k, uint64_t out[MNC_K__COUNT])
{
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0)
        return ncpu < 0 ? ncpu : -EINVAL;
    uint64_t *v = calloc((size_t)ncpu, sizeof(*v));
    if (!v)
        return -ENOMEM;
    int rc = 0;
    for (__u32 r = 0; r < MNC_K__COUNT; r++) {
        out[r] = 0;
        if (bpf_map_lookup_elem(k->fd_counters, &r, v) != 0) {
            rc = -errno;
            break;
        }
        for (int c = 0; c < ncpu; c++)
            out[r] += v[c];
    }
    free(v);
    return rc;
}

static int rb_cb(void *ctx, void *data, size_t size)
{
    mnc_kern *k = ctx;
    if (size < sizeof(struct mnc_event) || k->cb_stop)
        return 0;
    struct mnc_event ev;
    memcpy(&ev, data, sizeof(ev));
    k->cb_count++;
    if (k->cb && k->cb(&ev, k->cb_ctx) != 0) {
        k->cb_stop = 1;
        return 1; /* stops ring_buffer__poll early */
    }
    return 0;
}

static int ensure_rb(mnc_kern *k)
{
    if (k->rb)
        return 0;
    k->rb = ring_buffer__new(k->fd_events, rb_cb, k, NULL);
    return k->rb ? 0 : -errno;
}

int mnc_kern_events_fd(mnc_kern *k)
{
    int rc = ensure_rb(k);
    return rc ? rc : ring_buffer__epoll_fd(k->rb);
}

int mnc_kern_poll_events(mnc_kern *k, int timeout_ms, mnc_kern_event_fn fn, void *ctx)
{
    int rc = ensure_rb(k);
    if (rc)
        return rc;
    k->cb = fn;
    k->cb_ctx = ctx;
    k->cb_count = 0;
    k->cb_stop = 0;
    rc = ring_buffer__poll(k->rb, timeout_ms);
    if (rc < 0 && rc != -EINTR && !k->cb_stop)
        return rc;
    if (!k->cb_stop && timeout_ms != 0)
        ring_buffer__consume(k->rb); /* whatever arrived while we handled the first batch */
    return k->cb_count;
}

/* s as a JSON string body: up to max bytes, stopping at a NUL unless binary (then all max
 * bytes, NULs escaped: an abstract UNIX name) */
static void json_str(char *out, size_t len, const char *s, size_t max, bool binary)
{
    size_t o = 0;
    for (size_t i = 0; i < max && (binary || s[i]) && o + 7 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o < len ? o : len - 1] = 0;
}

/* st_mode >> 12 as ls -l would say it */
static const char *mnc_file_type_name(unsigned t)
{
    switch (t) {
    case 001:
        return "fifo";
    case 002:
        return "char_device";
    case 004:
        return "directory";
    case 006:
        return "block_device";
    case 010:
        return "regular";
    case 012:
        return "symlink";
    case 014:
        return "socket";
    default:
        return "anonymous";
    }
}

int mnc_kern_event_json(const struct mnc_event *ev, char *buf, size_t len)
{
    if (!ev || !buf || !len)
        return -EINVAL;
    char comm[16 * 6 + 1], dst[MNC_UNIX_PATH_MAX * 6 + 64];
    json_str(comm, sizeof(comm), ev->comm, sizeof(ev->comm), false);
    bool file_hook = (ev->hook >= MNC_HOOK_LSM_FILE_OPEN && ev->hook <= MNC_HOOK_LSM_INODE_CREATE) ||
                     ev->hook == MNC_HOOK_LSM_FILE_RECEIVE;
    if (ev->hook == MNC_HOOK_SOCK_CREATE) {
        snprintf(dst, sizeof(dst), "\"family\":%u,\"type\":%u,\"protocol\":%u", ev->family, ev->port, ev->protocol);
    } else if (file_hook) {
        /* lsm_abi.h: the file key in addr (dev, ino; host order), its last name in path */
        uint64_t dev, ino;
        memcpy(&dev, ev->addr, 8);
        memcpy(&ino, ev->addr + 8, 8);
        char p[MNC_UNIX_PATH_MAX * 6 + 1];
        json_str(p, sizeof(p), ev->path, sizeof(ev->path), false);
        int o = snprintf(dst, sizeof(dst), "\"dev\":\"%u:%u\",\"ino\":%llu,\"name\":\"%s\"", major((dev_t)dev),
                         minor((dev_t)dev), (unsigned long long)ino, p);
        if (ev->hook == MNC_HOOK_LSM_FILE_RECEIVE && o > 0 && (size_t)o < sizeof(dst))
            snprintf(dst + o, sizeof(dst) - (size_t)o, ",\"file_type\":\"%s\",\"writable\":%s",
                     mnc_file_type_name(ev->port), ev->protocol ? "true" : "false");
    } else if (ev->family == AF_UNIX) {
        char p[MNC_UNIX_PATH_MAX * 6 + 1];
        /* an abstract name with its length, so that "@name" and "@name\u0000" differ */
        bool abstract = ev->path[0] == '@' && ev->path_alen > 0 && ev->path_alen <= sizeof(ev->path);
        json_str(p, sizeof(p), ev->path, abstract ? ev->path_alen : sizeof(ev->path), abstract);
        snprintf(dst, sizeof(dst), "\"family\":\"unix\",\"path\":\"%s\"", p);
    } else {
        char a[INET6_ADDRSTRLEN] = "?";
        if (!inet_ntop(ev->family == AF_INET6 ? AF_INET6 : AF_INET, ev->addr, a, sizeof(a)))
            snprintf(a, sizeof(a), "?");
        snprintf(dst, sizeof(dst), "\"family\":\"%s\",\"addr\":\"%s\",\"port\":%u",
                 ev->family == AF_INET6 ? "inet6" : "inet", a, ev->port);
    }
    int n = snprintf(buf, len,
                     "{\"kind\":\"kernel_deny\",\"ts_ns\":%llu,\"hook\":\"%s\",\"reason\":\"%s\","
                     "\"cgroup_id\":%llu,\"pid\":%u,\"comm\":\"%s\",\"agent_id\":%lld,\"generation\":%llu,"
                     "\"dst_class\":\"%s\",\"dst_id\":%lld,%s}",
                     (unsigned long long)ev->ts_ns, mnc_hook_name(ev->hook), mnc_kreason_name(ev->reason),
                     (unsigned long long)ev->cgroup_id, ev->pid, comm,
                     ev->agent_id == 0xffffffffu ? -1LL : (long long)ev->agent_id, (unsigned long long)ev->generation,
                     mnc_sink_class_name(ev->dst_class), ev->dst_id == MNC_ID_NONE ? -1LL : (long long)ev->dst_id, dst);
    return n;
}
