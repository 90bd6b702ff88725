// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_open.c - the handle: opens the pinned maps of an attached mnc (checking each map's
 * layout and the pinned ABI version against this build), its accessors, and close.
 * Contract: loader/mnc_kern.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kern_int.h"

/* ---- open pinned maps */
const char *const mnc_map_names[MNC_N_MAPS] = {"agents", "taint",    "sock_unix", "sock_inet", "file_sinks",
                                               "names",  "settings", "counters",  "events",    "principals"};

static int *map_slot(mnc_kern *k, int i)
{
    int *slots[MNC_N_MAPS] = {&k->fd_agents, &k->fd_taint,    &k->fd_unix,     &k->fd_inet,   &k->fd_files,
                              &k->fd_names,  &k->fd_settings, &k->fd_counters, &k->fd_events, &k->fd_principals};
    return slots[i];
}

mnc_kern *mnc_kern_new(const char *root)
{
    mnc_kern *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    snprintf(k->root, sizeof(k->root), "%s", root);
    for (int i = 0; i < MNC_N_MAPS; i++)
        *map_slot(k, i) = -1;
    k->fd_labels = -1;
    return k;
}

void mnc_kern_close(mnc_kern *k)
{
    if (!k)
        return;
    if (k->rb)
        ring_buffer__free(k->rb);
    for (int i = 0; i < MNC_N_MAPS; i++)
        if (*map_slot(k, i) >= 0)
            close(*map_slot(k, i));
    if (k->fd_labels >= 0)
        close(k->fd_labels);
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
    {"sock_unix", BPF_MAP_TYPE_HASH, sizeof(struct mnc_unix_hkey), sizeof(struct mnc_unix_sink)},
    {"sock_inet", BPF_MAP_TYPE_HASH, sizeof(struct mnc_inet_key), sizeof(struct mnc_sink)},
    {"file_sinks", BPF_MAP_TYPE_HASH, sizeof(struct mnc_file_key), sizeof(struct mnc_sink)},
    {"names", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_name)},
    {"principals", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_bind)},
    {"settings", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct mnc_config)},
    {"counters", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(__u64)},
    {"events", BPF_MAP_TYPE_RINGBUF, 0, 0},
};

/* 0 if fd is a map with the layout of `name`, else -EPROTO with the difference in err. */
int mnc_kern_check_layout(int fd, const char *name, const char *path, char *err, size_t errlen)
{
    const struct map_layout *want = NULL;
    for (size_t i = 0; i < sizeof(map_layouts) / sizeof(map_layouts[0]); i++)
        if (strcmp(map_layouts[i].name, name) == 0)
            want = &map_layouts[i];
    if (!want)
        return mnc_errf(err, errlen, -EINVAL, "internal: no layout for map %s", name);
    struct bpf_map_info info;
    __u32 len = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
        return mnc_errf(err, errlen, -EPROTO, "%s is not a BPF map: %s", path, strerror(errno));
    if (info.type != want->type || info.key_size != want->key_size || info.value_size != want->value_size)
        return mnc_errf(err, errlen, -EPROTO,
                        "pinned map %s has type %u, key %u, value %u bytes; this build (ABI %u) expects "
                        "type %u, key %u, value %u: refused (detach --purge and re-attach)",
                        path, info.type, info.key_size, info.value_size, MNC_ABI_VERSION, want->type, want->key_size,
                        want->value_size);
    return 0;
}

int mnc_kern_read_settings(mnc_kern *k, struct mnc_config *c)
{
    __u32 key = 0;
    if (bpf_map_lookup_elem(k->fd_settings, &key, c) != 0)
        return -errno;
    return 0;
}

int mnc_kern_open_maps(mnc_kern *k, char *err, size_t errlen)
{
    for (int i = 0; i < MNC_N_MAPS; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s", k->root, mnc_map_names[i]);
        int fd = bpf_obj_get(p);
        if (fd < 0) {
            int e = errno;
            return mnc_errf(err, errlen, -e, "cannot open pinned map %s: %s%s", p, strerror(e),
                            e == ENOENT ? " (not attached: run `mncctl kern attach`)" : "");
        }
        *map_slot(k, i) = fd;
        int lr = mnc_kern_check_layout(fd, mnc_map_names[i], p, err, errlen);
        if (lr)
            return lr;
    }
    struct mnc_config c;
    int rc = mnc_kern_read_settings(k, &c);
    if (rc)
        return mnc_errf(err, errlen, rc, "cannot read %s/settings: %s", k->root, strerror(-rc));
    if (c.abi_version != 0 && c.abi_version != MNC_ABI_VERSION)
        return mnc_errf(err, errlen, -EPROTO, "pinned state under %s has ABI %u, this build has %u", k->root,
                        c.abi_version, MNC_ABI_VERSION);
    snprintf(k->tree, sizeof(k->tree), "%.*s", (int)sizeof(c.tree_path), c.tree_path);
    return 0;
}

int mnc_kern_open(const char *pin_root, mnc_kern **out, char *err, size_t errlen)
{
    *out = NULL;
    mnc_kern *k = mnc_kern_new(mnc_kern_pin_root(pin_root));
    if (!k)
        return mnc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = mnc_kern_open_maps(k, err, errlen);
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
