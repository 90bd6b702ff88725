// SPDX-License-Identifier: GPL-2.0
/* lsm_ipc.bpf.c - BPF LSM: signals out of an agent (kill and friends, SIGIO/SIGURG to a file's
 * owner), and SysV IPC objects registered as sinks (ipc_sinks, keyed by kind,
 * id and IPC namespace). msgsnd is checked at every send, so a queue id obtained before the
 * taint is useless after it. shmat is checked at attach time only (write mode): an attachment
 * made before the taint keeps working, because stores to memory pass no hook; register shared
 * segments before agents can attach them. POSIX message queues are files on the mqueue
 * filesystem and are covered by lsm_files (mq_open for writing, via their (dev, ino)).
 * Unregistered IPC objects are not gated, like unregistered files.
 *
 * Signals carry data: sigqueue() and rt_sigqueueinfo() send an int or pointer with each signal,
 * and the choice of signal number and timing alone is a channel. A signal from an agent to a
 * task outside the agent's own cgroup is judged as an unregistered external destination
 * (docs/lsm.md): free while untainted, denied once tainted unless the scope allows external
 * destinations. Landlock's signal scope (ABI 6) does the same for `mncctl run` on newer
 * kernels; this hook is what holds on kernels without it and for agents not started by
 * mncctl run. */
#include "lsm_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MNC_SHM_RDONLY 010000

static __always_inline int mnc_lsm_ipc_gate(struct kern_ipc_perm *perm, __u32 kind, __u8 hook)
{
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    struct task_struct *task = bpf_get_current_task_btf();
    struct mnc_ipc_key k = {.kind = kind};
    k.id = (__u32)BPF_CORE_READ(perm, id);
    k.ns_ino = BPF_CORE_READ(task, nsproxy, ipc_ns, ns.inum);
    struct mnc_sink *dst = bpf_map_lookup_elem(&ipc_sinks, &k);
    if (!dst)
        return 0;
    __u32 cls = (__u32)dst->cls, id = dst->id;
    struct mnc_taint *t = 0;
    __u32 r = mnc_lsm_verdict(&s, cls, id, &t);
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = mnc_event_begin(s.cgid, s.a, t, r, hook);
    if (ev) {
        ev->dst_class = (__u8)cls;
        ev->dst_id = id;
        ev->port = (__u16)kind;
        ev->protocol = k.id;
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

SEC("lsm/msg_queue_msgsnd")
int BPF_PROG(mnc_lsm_msgsnd, struct kern_ipc_perm *perm, struct msg_msg *msg, int msqflg, int ret)
{
    if (ret)
        return ret;
    return mnc_lsm_ipc_gate(perm, MNC_IPC_MSG, MNC_HOOK_LSM_MSGSND);
}

SEC("lsm/shm_shmat")
int BPF_PROG(mnc_lsm_shmat, struct kern_ipc_perm *perm, char *shmaddr, int shmflg, int ret)
{
    if (ret)
        return ret;
    if (shmflg & MNC_SHM_RDONLY)
        return 0;
    return mnc_lsm_ipc_gate(perm, MNC_IPC_SHM, MNC_HOOK_LSM_SHMAT);
}

/* The target's cgroup (v2) id, as bpf_get_current_cgroup_id() would report it for that task. */
static __always_inline __u64 mnc_task_cgroup_id(struct task_struct *p)
{
    return BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id);
}

/* One signal from subject s (an agent or an unknown cgroup of the tree) to task p: within the
 * agent's own cgroup it is free; anywhere else it is an unregistered external destination
 * (mnc_decide: free while untainted, denied once tainted unless the scope allows external
 * destinations). 0 or -EPERM, with a deny event. `by_current`: the caller is the sender (its pid
 * and comm go into the event); 0 when the hook may run in another task's or softirq context. */
static __always_inline int mnc_lsm_signal_gate(const struct mnc_subject *s, struct task_struct *p, int sig,
                                               __u8 hook, int by_current)
{
    if (s->kind == MNC_SUBJ_AGENT && mnc_task_cgroup_id(p) == s->cgid)
        return 0; /* within the agent: its own processes and threads */
    struct mnc_taint *t = 0;
    __u32 r = mnc_lsm_verdict(s, MNC_SINK_EXTERNAL, MNC_ID_NONE, &t);
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = by_current ? mnc_event_begin(s->cgid, s->a, t, r, hook)
                                      : mnc_event_reserve(s->cgid, s->a, t, r, hook);
    if (ev) {
        ev->dst_class = MNC_SINK_EXTERNAL;
        ev->dst_id = MNC_ID_NONE;
        ev->port = (__u16)sig;
        ev->protocol = (__u32)BPF_CORE_READ(p, tgid);
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}

SEC("lsm/task_kill")
int BPF_PROG(mnc_lsm_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
             const struct cred *cred, int ret)
{
    if (ret)
        return ret;
    /* sig 0 only probes for existence and delivers nothing; a non-NULL cred means the kernel
     * signals on behalf of an earlier requester (USB async I/O), not the current task */
    if (sig == 0 || cred)
        return 0;
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    return mnc_lsm_signal_gate(&s, p, sig, MNC_HOOK_LSM_TASK_KILL, 1);
}

/* ---- SIGIO and SIGURG: signals the kernel sends to a file's owner (fcntl(2) F_SETOWN,
 * F_SETOWN_EX, F_SETSIG; ioctl FIOSETOWN, SIOCSPGRP) when the file becomes readable or writable,
 * or urgent data arrives. The signal number (F_SETSIG) and si_fd (the fd number, which the agent
 * chooses with dup2) carry data, and the owner can be any task the setter may signal. They do
 * not pass task_kill: send_sigio() and send_sigurg() ask security_file_send_sigiotask(), in the
 * context of whichever task or softirq made the file ready, which need not be the agent. So the
 * agent is remembered when it sets the owner, and each signal is judged like the agent's own
 * kill() to that task, with the agent's taint at the time of the signal (an owner set before the
 * taint is judged after it). */

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MNC_MAX_SIGIO_OWNERS);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, __u64);   /* struct file * */
    __type(value, __u64); /* cgroup id of the agent that set the owner */
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} sigio_owners SEC(".maps");

#define MNC_F_SETOWN 8      /* include/uapi/asm-generic/fcntl.h */
#define MNC_F_SETOWN_EX 15
#define MNC_FIOSETOWN 0x8901 /* include/uapi/linux/sockios.h */
#define MNC_SIOCSPGRP 0x8902
#define MNC_SIGIO 29
#ifndef ENOSPC
#define ENOSPC 28
#endif

/* Older kernels (6.1 among them) embed the owner in struct file; newer ones (6.18 among them)
 * allocate it when it is first set and point back to the file from it. CO-RE picks the branch
 * at load time; the other one is dead code the verifier never sees. */
struct file___fown_embedded {
    struct fown_struct f_owner;
} __attribute__((preserve_access_index));

static __always_inline __u64 mnc_fown_file(struct fown_struct *fown)
{
    if (bpf_core_field_exists(struct fown_struct, file))
        return (__u64)BPF_CORE_READ(fown, file);
    return (__u64)fown - bpf_core_field_offset(struct file___fown_embedded, f_owner);
}

/* The owner is about to be set by the caller: remember the agent. The kernel's other callers
 * of __f_setown() name the caller itself (leases, dnotify, drivers' fasync) or a terminal's
 * foreground group (docs/lsm.md, "SIGIO and SIGURG"). An entry stays until the file is freed,
 * also if a non-agent sharing the file description sets the owner later: that can only deny
 * more. Refused (ENOSPC) when the entry cannot be stored (map full, or the bucket busy on this
 * CPU), so no owner an agent set goes unjudged. */
static __always_inline int mnc_sigio_owner_record(struct file *file)
{
    struct mnc_subject s;
    if (mnc_lsm_subject(&s) == MNC_SUBJ_NONE)
        return 0;
    __u64 key = (__u64)file;
    if (bpf_map_update_elem(&sigio_owners, &key, &s.cgid, BPF_ANY) != 0)
        return -ENOSPC;
    return 0;
}

SEC("lsm/file_fcntl")
int BPF_PROG(mnc_lsm_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
    if (ret)
        return ret;
    if (cmd != MNC_F_SETOWN && cmd != MNC_F_SETOWN_EX)
        return 0;
    return mnc_sigio_owner_record(file);
}

SEC("lsm/file_ioctl")
int BPF_PROG(mnc_lsm_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
    if (ret)
        return ret;
    if (cmd != MNC_FIOSETOWN && cmd != MNC_SIOCSPGRP)
        return 0;
    return mnc_sigio_owner_record(file);
}

SEC("lsm/file_send_sigiotask")
int BPF_PROG(mnc_lsm_sigiotask, struct task_struct *tsk, struct fown_struct *fown, int sig, int ret)
{
    if (ret)
        return ret;
    __u64 key = mnc_fown_file(fown);
    __u64 *cgid = bpf_map_lookup_elem(&sigio_owners, &key);
    if (!cgid)
        return 0; /* no agent set this owner */
    struct mnc_subject s = {.cgid = *cgid};
    struct mnc_agent_key ak = {.cgroup_id = s.cgid};
    s.a = bpf_map_lookup_elem(&agents, &ak);
    s.kind = s.a ? MNC_SUBJ_AGENT : MNC_SUBJ_UNKNOWN; /* unregistered since: fail closed */
    return mnc_lsm_signal_gate(&s, tsk, sig ? sig : MNC_SIGIO, MNC_HOOK_LSM_FILE_SEND_SIGIOTASK, 0);
}

/* Every file's last reference: forget it, so the key (its address) can be reused. */
SEC("lsm/file_free_security")
int BPF_PROG(mnc_lsm_file_free, struct file *file)
{
    __u64 key = (__u64)file;
    bpf_map_delete_elem(&sigio_owners, &key);
    return 0;
}
