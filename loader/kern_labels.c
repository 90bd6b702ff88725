// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_labels.c - the lsm backend's labels of data at rest (file_labels; mnc_kern.h, "file
 * labels"; docs/kernel.md, "Data at rest"). mncd writes them when it labels the inodes of a
 * tainted workspace; the file_open and file_receive programs refuse an agent a labelled file its
 * taint does not already imply. The cgroup backend has no such program: there the label is
 * decided at launch only. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kern_int.h"
#include "lsm_abi.h"

/* The map's fd, opened on first use; -ENOENT where the lsm backend never pinned it. */
static int labels_fd(mnc_kern *k)
{
    if (k->fd_labels >= 0)
        return k->fd_labels;
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/file_labels", k->root);
    int fd = bpf_obj_get(p);
    if (fd < 0)
        return -errno;
    struct bpf_map_info info;
    __u32 len = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || info.type != BPF_MAP_TYPE_HASH ||
        info.key_size != sizeof(struct mnc_file_key) || info.value_size != sizeof(struct mnc_label)) {
        close(fd);
        return -EPROTO; /* not this build's layout: never written */
    }
    k->fd_labels = fd;
    return fd;
}

int mnc_kern_label_set(mnc_kern *k, const struct mnc_file_key *key, const struct mnc_label *l)
{
    int fd = labels_fd(k);
    if (fd < 0)
        return fd;
    return bpf_map_update_elem(fd, key, l, BPF_ANY) == 0 ? 0 : -errno;
}

int mnc_kern_label_get(mnc_kern *k, const struct mnc_file_key *key, struct mnc_label *l)
{
    int fd = labels_fd(k);
    if (fd < 0)
        return fd;
    return bpf_map_lookup_elem(fd, key, l) == 0 ? 0 : -errno;
}

int mnc_kern_label_del(mnc_kern *k, const struct mnc_file_key *key)
{
    int fd = labels_fd(k);
    if (fd < 0)
        return fd;
    return bpf_map_delete_elem(fd, key) == 0 || errno == ENOENT ? 0 : -errno;
}
