// SPDX-License-Identifier: GPL-2.0
/* lsm_files.bpf.c - BPF LSM: writes to files that are sinks or lie below a sink directory.
 *
 * file_open catches opening for write (open(O_WRONLY/O_RDWR), mq_open for sending, truncating
 * opens); file_permission with MAY_WRITE catches every write()/pwrite()/writev() on an fd,
 * including fds opened BEFORE the agent became tainted: the verdict is taken at each write from
 * the current taint, which is what a static lockout (Landlock, mount flags) cannot express.
 * Sinks are identified by (dev, ino) (file_sinks), so symlinks and hard links to a sink file
 * reach the same key. Every open, for reading too, and every file or directory received, is
 * also judged against the labels of data at rest (file_labels, mnc_lsm_label_gate): a labelled
 * file, or one below a labelled directory, only for an agent whose taint already implies the
 * label.
 *
 * file_receive catches the other way to a writable object: an fd arriving in a tainted agent
 * (SCM_RIGHTS, pidfd_getfd) that is not a socket or a read-only file or directory
 * (mnc_receive_harmless) - a file an outsider opened for writing, a pipe, a memfd - judged as an
 * unregistered external destination. It runs in the receiver, before the fd is installed:
 * refused, the fd is dropped from the message (MSG_CTRUNC), so an fd parked in a queue before
 * the taint is lost to the agent, not kept for later.
 *
 * file_lock catches taking, changing and dropping a lock (flock(2), fcntl F_SETLK, F_SETLKW,
 * F_OFD_SETLK*): once tainted, none (mnc_lock_verdict). A lock is published: its range and
 * owner to anyone who can open the file (F_GETLK) and to everyone through /proc/locks. */
#include "lsm_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(mnc_lsm_file_open, struct file *file, int ret)
{
    if (ret)
        return ret;
    if (file->f_mode & MNC_FMODE_WRITE) {
        int r = mnc_lsm_file_gate(file->f_path.dentry, 0, MNC_HOOK_LSM_FILE_OPEN);
        if (r)
            return r;
    }
    /* data at rest keeps its label: any open of a labelled file (docs/lsm.md) */
    return mnc_lsm_label_gate(file, MNC_HOOK_LSM_FILE_OPEN);
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

SEC("lsm/file_receive")
int BPF_PROG(mnc_lsm_file_receive, struct file *file, int ret)
{
    if (ret)
        return ret;
    struct inode *ino = file->f_inode;
    __u32 mode = ino ? ino->i_mode : 0;
    int writable = (file->f_mode & MNC_FMODE_WRITE) != 0;
    __u32 type = mode & MNC_S_IFMT;
    /* a file or directory passed in is read like one opened: its label first */
    if ((type == MNC_S_IFREG || type == MNC_S_IFDIR) && mnc_lsm_label_gate(file, MNC_HOOK_LSM_FILE_RECEIVE))
        return -EPERM;
    if (mnc_receive_harmless(mode, writable))
        return 0; /* sockets: nearly every fd passed on a host, decided without a helper call */
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct mnc_taint *t = 0;
    __u32 r = mnc_lsm_verdict(&s, MNC_SINK_EXTERNAL, MNC_ID_NONE, &t);
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = mnc_event_begin(s.cgid, s.a, t, r, MNC_HOOK_LSM_FILE_RECEIVE);
    if (ev) {
        ev->dst_class = MNC_SINK_EXTERNAL;
        ev->dst_id = MNC_ID_NONE;
        ev->port = (__u16)(mode >> 12);
        ev->protocol = (__u32)writable;
        struct mnc_file_key k = {};
        struct dentry *d = file->f_path.dentry;
        if (d)
            mnc_file_key_of(d, &k);
        mnc_event_file(ev, &k, d);
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

SEC("lsm/file_lock")
int BPF_PROG(mnc_lsm_file_lock, struct file *file, unsigned int type, int ret)
{
    if (ret)
        return ret;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct mnc_taint *t = mnc_lsm_taint(&s);
    __u32 r = s.kind == MNC_SUBJ_AGENT ? mnc_lock_verdict(t) : MNC_K_DENY_UNKNOWN_AGENT;
    return mnc_lsm_taint_end(&s, t, r, MNC_HOOK_LSM_FILE_LOCK, 0, (__u16)type);
}
