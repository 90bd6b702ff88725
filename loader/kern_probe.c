// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_probe.c - what this kernel can do (mnc_kern_probe) and which backend an attach gets
 * (mnc_kern_choose_backend). Contract: loader/mnc_kern.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/landlock.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
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

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

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
            return mnc_errf(err, errlen, -EOPNOTSUPP,
                            "backend lsm unavailable: /sys/kernel/security/lsm is unreadable "
                            "(mount securityfs); refusing rather than falling back");
        if (!f->lsm_has_bpf)
            return mnc_errf(err, errlen, -EOPNOTSUPP,
                            "backend lsm unavailable: \"bpf\" is not in the active LSM list (%s); "
                            "boot with lsm=...,bpf or use --backend cgroup; refusing rather than falling back",
                            f->lsm_list);
        if (!f->lsm_loads)
            return mnc_errf(err, errlen, -EOPNOTSUPP,
                            "backend lsm unavailable: BPF LSM programs do not load here (%s); "
                            "use --backend cgroup; refusing rather than falling back",
                            strerror(f->lsm_load_errno));
        /* lsm backend (docs/lsm.md, loader/lsm_backend.c); mnc_kern_attach still has to see
         * its functional self-test pass */
        return mnc_lsm_available(f, err, errlen) == 0 ? (int)MNC_BACKEND_LSM : -EOPNOTSUPP;
    }
    if (requested == 0 && mnc_lsm_available(f, NULL, 0) == 0)
        return MNC_BACKEND_LSM; /* auto: preferred when it can run; attach falls back if it fails */
    if (requested != 0 && requested != MNC_BACKEND_CGROUP)
        return mnc_errf(err, errlen, -EINVAL, "unknown backend %u", requested);
    if (!f->cgroup2[0])
        return mnc_errf(err, errlen, -EOPNOTSUPP, "backend cgroup unavailable: no cgroup2 mount in /proc/mounts");
    if (!f->sock_addr_loads || !f->sock_create_loads)
        return mnc_errf(err, errlen, -EOPNOTSUPP,
                        "backend cgroup unavailable: cgroup sock_addr/sock programs do not load");
    if (!f->ringbuf)
        return mnc_errf(err, errlen, -EOPNOTSUPP, "backend cgroup unavailable: no BPF ring buffer");
    if (!f->skb_loads)
        return mnc_errf(err, errlen, -EOPNOTSUPP,
                        "backend cgroup unavailable: cgroup_skb programs do not load (sends on connections "
                        "made before a taint could not be re-checked)");
    return MNC_BACKEND_CGROUP;
}
