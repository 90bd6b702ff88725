// SPDX-License-Identifier: GPL-2.0
/* lsm_ipc.bpf.c - BPF LSM: SysV IPC objects registered as sinks (ipc_sinks, keyed by kind,
 * id and IPC namespace). msgsnd is checked at every send, so a queue id obtained before the
 * taint is useless after it. shmat is checked at attach time only (write mode): an attachment
 * made before the taint keeps working, because stores to memory pass no hook; register shared
 * segments before agents can attach them. POSIX message queues are files on the mqueue
 * filesystem and are covered by lsm_files (mq_open for writing, via their (dev, ino)).
 * Unregistered IPC objects are not gated, like unregistered files. */
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
