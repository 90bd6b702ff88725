// SPDX-License-Identifier: GPL-2.0
/* lsm_ipc.bpf.c - BPF LSM: signals out of an agent, and SysV IPC objects registered as sinks (ipc_sinks, keyed by kind,
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
    if (s.kind == MNC_SUBJ_AGENT && mnc_task_cgroup_id(p) == s.cgid)
        return 0; /* within the agent: its own processes and threads */
    struct mnc_taint *t = 0;
    __u32 r = mnc_lsm_verdict(&s, MNC_SINK_EXTERNAL, MNC_ID_NONE, &t);
    mnc_count(r);
    if (mnc_kreason_allows(r))
        return 0;
    struct mnc_event *ev = mnc_event_begin(s.cgid, s.a, t, r, MNC_HOOK_LSM_TASK_KILL);
    if (ev) {
        ev->dst_class = MNC_SINK_EXTERNAL;
        ev->dst_id = MNC_ID_NONE;
        ev->port = (__u16)sig;
        ev->protocol = (__u32)BPF_CORE_READ(p, tgid);
        bpf_ringbuf_submit(ev, 0);
    }
    return -EPERM;
}
