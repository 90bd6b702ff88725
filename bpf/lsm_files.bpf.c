// SPDX-License-Identifier: GPL-2.0
/* lsm_files.bpf.c - BPF LSM: writes to files that are sinks or lie below a sink directory.
 *
 * file_open catches opening for write (open(O_WRONLY/O_RDWR), mq_open for sending, truncating
 * opens); file_permission with MAY_WRITE catches every write()/pwrite()/writev() on an fd,
 * including fds opened BEFORE the agent became tainted: the verdict is taken at each write from
 * the current taint, which is what a static lockout (Landlock, mount flags) cannot express.
 * Sinks are identified by (dev, ino) (file_sinks), so symlinks and hard links to a sink file
 * reach the same key. Reads are never gated. */
#include "lsm_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(mnc_lsm_file_open, struct file *file, int ret)
{
    if (ret)
        return ret;
    if (!(file->f_mode & MNC_FMODE_WRITE))
        return 0;
    return mnc_lsm_file_gate(file->f_path.dentry, 0, MNC_HOOK_LSM_FILE_OPEN);
}

SEC("lsm/file_permission")
int BPF_PROG(mnc_lsm_file_perm, struct file *file, int mask, int ret)
{
    if (ret)
        return ret;
    if (!(mask & MNC_MAY_WRITE))
        return 0;
    return mnc_lsm_file_gate(file->f_path.dentry, 0, MNC_HOOK_LSM_FILE_PERMISSION);
}
