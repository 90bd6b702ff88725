// SPDX-License-Identifier: GPL-2.0
/* lsm_paths.bpf.c - BPF LSM: namespace changes into (or out of) sink directories.
 *
 * A tainted agent must not plant data in a memory directory by any route other than write():
 * creating a file (inode_create, path_mknod - which open(O_CREAT) also reaches), a directory
 * (path_mkdir, whose name can carry data), a symlink (the target string is data), a hard link
 * or a rename of a file it wrote elsewhere. Linking or renaming a file OUT of a sink directory
 * is gated too: it modifies the sink, and a hard link outside would let later writes through
 * a path whose parents are no longer the sink directory. Truncation is a write. */
#include "lsm_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/path_mknod")
int BPF_PROG(mnc_lsm_mknod, const struct path *dir, struct dentry *dentry, umode_t mode, unsigned int dev, int ret)
{
    if (ret)
        return ret;
    return mnc_lsm_file_gate(dir->dentry, dentry, MNC_HOOK_LSM_PATH_MKNOD);
}

SEC("lsm/path_mkdir")
int BPF_PROG(mnc_lsm_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode, int ret)
{
    if (ret)
        return ret;
    return mnc_lsm_file_gate(dir->dentry, dentry, MNC_HOOK_LSM_PATH_MKDIR);
}

SEC("lsm/path_symlink")
int BPF_PROG(mnc_lsm_symlink, const struct path *dir, struct dentry *dentry, const char *old_name, int ret)
{
    if (ret)
        return ret;
    return mnc_lsm_file_gate(dir->dentry, dentry, MNC_HOOK_LSM_PATH_SYMLINK);
}

SEC("lsm/path_link")
int BPF_PROG(mnc_lsm_link, struct dentry *old_dentry, const struct path *new_dir, struct dentry *new_dentry, int ret)
{
    if (ret)
        return ret;
    int r = mnc_lsm_file_gate(new_dir->dentry, new_dentry, MNC_HOOK_LSM_PATH_LINK);
    if (r)
        return r;
    return mnc_lsm_file_gate(old_dentry, 0, MNC_HOOK_LSM_PATH_LINK);
}

SEC("lsm/path_rename")
int BPF_PROG(mnc_lsm_rename, const struct path *old_dir, struct dentry *old_dentry, const struct path *new_dir,
             struct dentry *new_dentry)
{
    /* No `ret` argument here: the hook's last parameter (flags) differs between kernels, and
     * a BPF LSM program's return value is ANDed with the others anyway. */
    int r = mnc_lsm_file_gate(new_dir->dentry, new_dentry, MNC_HOOK_LSM_PATH_RENAME);
    if (r)
        return r;
    return mnc_lsm_file_gate(old_dentry, 0, MNC_HOOK_LSM_PATH_RENAME);
}

SEC("lsm/path_truncate")
int BPF_PROG(mnc_lsm_truncate, const struct path *path, int ret)
{
    if (ret)
        return ret;
    return mnc_lsm_file_gate(path->dentry, 0, MNC_HOOK_LSM_PATH_TRUNCATE);
}

SEC("lsm/inode_create")
int BPF_PROG(mnc_lsm_icreate, struct inode *dir, struct dentry *dentry, umode_t mode, int ret)
{
    if (ret)
        return ret;
    /* dentry is the (negative) new name; its d_parent is the directory */
    return mnc_lsm_file_gate(dentry->d_parent, dentry, MNC_HOOK_LSM_INODE_CREATE);
}
