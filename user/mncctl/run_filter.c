// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_filter.c - the agent's seccomp allowlist, by class (contract in run_filter.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "run_filter.h"

/* ---- 5. seccomp: an allowlist, by class */

/* Allowed without conditions. Every name is resolved for the running architecture; a name the
 * architecture lacks is skipped. Each class says why it is harmless to the scope: none of them
 * moves bytes to another process except through fds, whose destinations the kernel layer
 * (cgroup hooks, egress, Landlock) and mncd's sweep judge. */
static const char *const allow_plain[] = {
    /* file I/O on fds the agent holds (what an fd reaches is decided at open/connect time) */
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "lseek",
    "_llseek",
    "close",
    "close_range",
    "dup",
    "dup2",
    "dup3",
    "fcntl64",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "ftruncate",
    "ftruncate64",
    "truncate64",
    "fallocate",
    /* Not sendfile, splice, tee or vmsplice (ENOSYS, the default action, on which libuv,
     * CPython's shutil and coreutils fall back to read/write): they put references to pages,
     * not copies, into a pipe or socket, so bytes the agent writes into its memory or a file
     * after its taint reach whoever reads that pipe or socket later, with nothing of the agent's
     * held outside at the delivery (attacks vmsplice_page_out, splice_ws_page_out,
     * sendfile_ws_page_out). copy_file_range copies between files. */
    "copy_file_range",
    "fadvise64",
    "fadvise64_64",
    "readahead",
    "sync",
    "syncfs",
    /* paths (Landlock decides which ones) */
    "open",
    "openat",
    "openat2",
    "creat",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "fstatat64",
    "stat64",
    "fstat64",
    "lstat64",
    "statx",
    "statfs",
    "fstatfs",
    "statfs64",
    "fstatfs64",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "umask",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "mknod",
    "mknodat",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    /* pipes and in-process objects (anything shared with another process leaves as an fd) */
    "pipe",
    "pipe2",
    "memfd_create",
    "eventfd",
    "eventfd2",
    "signalfd",
    "signalfd4",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "poll",
    "ppoll",
    "select",
    "_newselect",
    "pselect6",
    /* memory of the agent itself */
    "brk",
    "mmap",
    "mmap2",
    "munmap",
    "mprotect",
    "mremap",
    "madvise",
    "mlock",
    "mlock2",
    "munlock",
    "mlockall",
    "munlockall",
    "mincore",
    "msync",
    "membarrier",
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
    "set_mempolicy",
    "get_mempolicy",
    "mbind",
    "remap_file_pages",
    "map_shadow_stack",
    /* processes and threads of the agent (clone is below, with its namespace flags checked) */
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "getpid",
    "getppid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "getpgid",
    "setpgid",
    "getpgrp",
    "setsid",
    "getsid",
    "getpriority",
    "setpriority",
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "sched_getparam",
    "sched_setparam",
    "sched_getscheduler",
    "sched_setscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_rr_get_interval",
    "sched_getattr",
    "sched_setattr",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "get_robust_list",
    "rseq",
    "futex",
    "futex_waitv",
    "futex_wake",
    "futex_wait",
    "futex_requeue",
    "capget",
    "capset",
    "personality",
    "uname",
    "sysinfo",
    "getrlimit",
    "setrlimit",
    "getrusage",
    "times",
    "getcpu",
    "ioprio_get",
    "ioprio_set",
    "pidfd_open",
    "pidfd_send_signal",
    "landlock_create_ruleset",
    "landlock_add_rule",
    "landlock_restrict_self",
    /* signals (Landlock scopes them to the agent's domain) */
    "kill",
    "tkill",
    "tgkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigsuspend",
    "sigaltstack",
    "pause",
    "restart_syscall",
    /* time (reading it; setting it is denied below) */
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "gettimeofday",
    "time",
    "nanosleep",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "alarm",
    "getitimer",
    "setitimer",
    "getrandom",
    /* sockets whose domain was allowed at socket() (connect/sendmsg are judged by the cgroup
     * hooks and egress; listen is below) */
    "connect",
    "accept",
    "accept4",
    "getsockname",
    "getpeername",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "getsockopt",
};

/* Denied to an --as-root agent only: uid 0 owns most files of the host, and Landlock does not
 * govern metadata, so mode bits, owners and timestamps of files outside the workspace would be
 * storage any process can read. (An agent with its own uid owns nothing outside its workspace,
 * and its workspace's top directory belongs to root.) */
static const char *const deny_root_meta[] = {
    "chmod",  "fchmod",   "fchmodat", "fchmodat2", "chown",     "fchown",
    "lchown", "fchownat", "utime",    "utimes",    "utimensat", "futimesat",
};

/* Denied with EPERM: each carries data to another process past the kernel layer's checks, or
 * changes the enforcement or the clock the scopes are measured by. */
static const char *const deny_eperm[] = {
    /* extended attributes: user.* ones need only DAC write permission, not ownership, so any
     * agent could store bytes on a world-writable file an outsider leaves anywhere (attack
     * xattr_outside); Landlock does not govern xattrs. Reading them stays allowed. */
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "removexattrat",
    /* SysV and POSIX IPC: objects any process of the host can open by key or name */
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "mq_open",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "mq_unlink",
    /* kernel keyrings (a key is readable by other processes of the same uid/possessor) */
    "add_key",
    "request_key",
    "keyctl",
    /* namespaces: a new one would shed the cgroup, mount and network views mnc relies on */
    "unshare",
    "setns",
    /* io_uring runs operations outside the syscall paths seccomp sees */
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    /* other processes' memory and fds */
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_getfd",
    "kcmp",
    "move_pages",
    "migrate_pages",
    "userfaultfd",
    /* file handles bypass path-based rules; fanotify watches other processes' files */
    "name_to_handle_at",
    "open_by_handle_at",
    "fanotify_init",
    "fanotify_mark",
    /* the enforcement itself and the host */
    "bpf",
    "perf_event_open",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "swapon",
    "swapoff",
    "reboot",
    "sethostname",
    "setdomainname",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "vhangup",
    "lookup_dcookie",
    "nfsservctl",
    "uselib",
    "ustat",
    "sysfs",
    "listmount",
    "statmount",
    "open_tree_attr",
};

/* Commands that write an inode's metadata where other processes read it back, past Landlock
 * (which judges the open, and a read-only open suffices) and the deny_root_meta syscalls:
 * inode flags (`lsattr`: FS_IOC_GETFLAGS, FS_IOC_FSGETXATTR), the inode generation
 * (FS_IOC_GETVERSION) and the write-life hint (F_GET_RW_HINT, F_GET_FILE_RW_HINT). An agent
 * owns its workspace's files and, --as-root, nearly every file of the host: refused for every
 * agent (EPERM), the two syscalls otherwise allowed. */
/* And the state of a terminal, which every holder of it reads back (tcgetattr, TIOCGWINSZ): the
 * caller's stdin may be its terminal, kept read-only, and no job-control check applies to an
 * agent in a session of its own (attack stdin_tty_termios: the canary in c_cc). Every ioctl
 * that sets a terminal's settings, size, line discipline, modes, lines or flow. */
#define MNC_TCSETS2 0x402C542Bu /* _IOW('T', 0x2B, struct termios2), x86_64 */
#define MNC_TCSETSW2 0x402C542Cu
#define MNC_TCSETSF2 0x402C542Du
static const uint32_t deny_ioctl_cmds[] = {FS_IOC_SETFLAGS,
                                           FS_IOC32_SETFLAGS,
                                           FS_IOC_FSSETXATTR,
                                           FS_IOC_SETVERSION,
                                           FS_IOC32_SETVERSION,
                                           TCSETS,
                                           TCSETSW,
                                           TCSETSF,
                                           TCSETA,
                                           TCSETAW,
                                           TCSETAF,
                                           TCSBRK,
                                           TCSBRKP,
                                           TCXONC,
                                           TCFLSH,
                                           TIOCEXCL,
                                           TIOCNXCL,
                                           TIOCSCTTY,
                                           TIOCSPGRP,
                                           TIOCSTI,
                                           TIOCSWINSZ,
                                           TIOCMBIS,
                                           TIOCMBIC,
                                           TIOCMSET,
                                           TIOCSSOFTCAR,
                                           TIOCCONS,
                                           TIOCPKT,
                                           TIOCSETD,
                                           TIOCSBRK,
                                           TIOCCBRK,
                                           TIOCVHANGUP,
                                           MNC_TCSETS2,
                                           MNC_TCSETSW2,
                                           MNC_TCSETSF2,
                                           TIOCSLCKTRMIOS};
#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT 1036 /* F_LINUX_SPECIFIC_BASE + 12 */
#endif
#ifndef F_SET_FILE_RW_HINT
#define F_SET_FILE_RW_HINT 1038 /* removed in Linux 6.9, still in 6.1 */
#endif
/* Also state that lives in an object other processes share, set through any fd on it: a
 * pipe's size (F_SETPIPE_SZ on the caller's stdin pipe: the caller reads it back with
 * F_GETPIPE_SZ, attack stdin_pipe_size), and a lease (F_SETLEASE through a read-only fd, for a
 * file's owner - an --as-root agent owns nearly every file: anyone's open(O_NONBLOCK) of it
 * then fails with EWOULDBLOCK, and a plain open stalls up to lease-break-time; lease_outside). */
static const uint32_t deny_fcntl_cmds[] = {F_SET_RW_HINT, F_SET_FILE_RW_HINT, F_SETPIPE_SZ, F_SETLEASE};

/* Lock commands: a lock's range is two 63-bit numbers the locker chooses, and anyone who can
 * open the file reads it back (fcntl F_GETLK, no /proc needed: attack getlk_outsider), or any
 * lock at all from /proc/locks (covert_flock). No cgroup hook sees locks, and this filter is
 * fixed at launch while the taint comes later, so taking, changing or dropping a lock stops in
 * seccomp (SECCOMP_RET_USER_NOTIF) and the launcher answers from the agent's taint
 * (run_gate.h): an untainted agent (SQLite, say) locks as usual, a tainted one gets EPERM.
 * Unlocking is asked too: unlocking the middle of a held range splits it into two locks whose
 * ends carry data. F_GETLK/F_OFD_GETLK only read. The flock(2) syscall is gated the same way.
 * (x86-64 and arm64 have no separate F_SETLK64: their fcntl takes F_SETLK for 64-bit ranges.) */
static const uint32_t gate_fcntl_cmds[] = {F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW};

/* Adds ALLOW rules for syscall nr covering every 32-bit value of argument `arg` whose top `len`
 * bits are `prefix` (the low 32 - len bits of prefix zero) and that is not in cmds[0..n): one
 * masked compare per rule (plus `also`, a comparison on another argument, when not NULL),
 * splitting the prefix where it still holds an excluded value. libseccomp 2.5 accepts only one
 * comparison per argument and rule, so "not one of n values" becomes at most 32 n disjoint
 * prefixes (as a CIDR set minus n hosts). 0 or an error. */
static int allow_prefixes(scmp_filter_ctx ctx, int nr, unsigned arg, const struct scmp_arg_cmp *also, uint32_t prefix,
                          int len, const uint32_t *cmds, size_t n)
{
    uint32_t mask = len ? ~0u << (32 - len) : 0;
    bool holds = false;
    for (size_t i = 0; i < n; i++)
        holds |= (cmds[i] & mask) == prefix;
    if (!holds) {
        struct scmp_arg_cmp cmp[2];
        unsigned nc = 0;
        if (len)
            cmp[nc++] = SCMP_CMP32(arg, SCMP_CMP_MASKED_EQ, mask, prefix);
        if (also)
            cmp[nc++] = *also;
        return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, nc, cmp);
    }
    if (len == 32)
        return 0; /* an excluded value itself */
    int rc = allow_prefixes(ctx, nr, arg, also, prefix, len + 1, cmds, n);
    return rc ? rc : allow_prefixes(ctx, nr, arg, also, prefix | (1u << (31 - len)), len + 1, cmds, n);
}

/* Allows syscall nr except when its second argument (a 32-bit command) is one of cmds[0..n),
 * which gets EPERM, or one of gated[0..ng), which the launcher answers (SCMP_ACT_NOTIFY,
 * run_gate.h). 0 or a libseccomp error (-E2BIG past 64 commands in all). */
static int allow_except_cmds(scmp_filter_ctx ctx, int nr, const uint32_t *cmds, size_t n, const uint32_t *gated,
                             size_t ng)
{
    uint32_t all[64];
    if (n + ng > sizeof(all) / sizeof(all[0]))
        return -E2BIG;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n + ng; i++) {
        all[i] = i < n ? cmds[i] : gated[i - n];
        rc = seccomp_rule_add(ctx, i < n ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_NOTIFY, nr, 1,
                              SCMP_A1_32(SCMP_CMP_EQ, all[i]));
    }
    return rc ? rc : allow_prefixes(ctx, nr, 1, NULL, 0, 0, all, n + ng);
}

/* Socket options that make the kernel give an unnamed UNIX socket an abstract name of its own
 * (autobind, on the next connect or send): a name an outsider can send to. */
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif
static const uint32_t deny_sockopts[] = {SO_PASSCRED, SO_PASSPIDFD};

/* Options that make the kernel publish something any process reads, or send something no
 * socket hook sees: a multicast or anycast membership (listed in /proc/net/igmp, igmp6,
 * anycast6, mcfilter; the join itself sends an IGMP/MLD report from the kernel's own socket,
 * which egress does not see: attacks ip6_mcast_group, ip6_mld_report), an IPv6 flow label
 * (listed with its destination in /proc/net/ip6_flowlabel, kept 60 s after the socket is gone:
 * ip6_flowlabel) and a netlink group membership (/proc/net/netlink: netlink_groups). EPERM for
 * every agent. */
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
static const uint32_t deny_ip_opts[] = {IP_ADD_MEMBERSHIP, IP_ADD_SOURCE_MEMBERSHIP, MCAST_JOIN_GROUP,
                                        MCAST_JOIN_SOURCE_GROUP};
static const uint32_t deny_ip6_opts[] = {IPV6_ADD_MEMBERSHIP, IPV6_JOIN_ANYCAST, IPV6_FLOWLABEL_MGR, MCAST_JOIN_GROUP,
                                         MCAST_JOIN_SOURCE_GROUP};
static const uint32_t deny_netlink_opts[] = {1 /* NETLINK_ADD_MEMBERSHIP */};
/* TCP keepalive timers: asked of the launcher, which lets an untainted agent's call go on and
 * accepts a tainted agent's without applying it (run_gate.c, tainted_keepalive): the value is
 * shown to every user as the connection's timer, and the cgroup/LSM hooks would refuse it
 * (deny_sockopt), failing Node's and Go's connections. TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT. */
static const uint32_t gate_tcp_opts[] = {4, 5, 6};

/* At level `level`: the options opts[0..n) get `action`, every other option is allowed. */
static int sockopt_level(scmp_filter_ctx ctx, uint32_t level, uint32_t action, const uint32_t *opts, size_t n)
{
    const int nr = SCMP_SYS(setsockopt);
    const struct scmp_arg_cmp at = SCMP_A1_32(SCMP_CMP_EQ, level);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = seccomp_rule_add(ctx, action, nr, 2, at, SCMP_CMP32(2, SCMP_CMP_EQ, opts[i]));
    return rc ? rc : allow_prefixes(ctx, nr, 2, &at, 0, 0, opts, n);
}

/* setsockopt: every option at every level, except deny_sockopts at SOL_SOCKET, which get
 * `action` (EPERM for an agent that is not a server, the launcher's answer for a server:
 * run_gate.h), and the publishing options above (EPERM). 0 or a libseccomp error. */
static int allow_setsockopt_but_names(scmp_filter_ctx ctx, uint32_t action)
{
#define N(a) (sizeof(a) / sizeof((a)[0]))
    static const uint32_t levels[] = {SOL_SOCKET, IPPROTO_IP, IPPROTO_IPV6, SOL_NETLINK, IPPROTO_TCP};
    int rc = allow_prefixes(ctx, SCMP_SYS(setsockopt), 1, NULL, 0, 0, levels, N(levels));
    if (rc == 0)
        rc = sockopt_level(ctx, SOL_SOCKET, action, deny_sockopts, N(deny_sockopts));
    if (rc == 0)
        rc = sockopt_level(ctx, IPPROTO_IP, SCMP_ACT_ERRNO(EPERM), deny_ip_opts, N(deny_ip_opts));
    if (rc == 0)
        rc = sockopt_level(ctx, IPPROTO_IPV6, SCMP_ACT_ERRNO(EPERM), deny_ip6_opts, N(deny_ip6_opts));
    if (rc == 0)
        rc = sockopt_level(ctx, SOL_NETLINK, SCMP_ACT_ERRNO(EPERM), deny_netlink_opts, N(deny_netlink_opts));
    if (rc == 0)
        rc = sockopt_level(ctx, IPPROTO_TCP, SCMP_ACT_NOTIFY, gate_tcp_opts, N(gate_tcp_opts));
    return rc;
#undef N
}

static int add_named(scmp_filter_ctx ctx, uint32_t action, const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture */
    return seccomp_rule_add(ctx, action, nr, 0);
}

int run_filter_build(scmp_filter_ctx ctx, unsigned variant, const char **at)
{
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    /* a binary tree over syscall numbers: ~log2(200) comparisons per syscall instead of a
     * linear walk of the allowlist (bench_run measures it) */
    if (rc == 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    *at = "attributes";
    for (size_t i = 0; rc == 0 && i < sizeof(allow_plain) / sizeof(allow_plain[0]); i++) {
        bool meta = false;
        for (size_t j = 0; (variant & RUN_FILTER_ROOT) && j < sizeof(deny_root_meta) / sizeof(deny_root_meta[0]); j++)
            meta |= strcmp(allow_plain[i], deny_root_meta[j]) == 0;
        if ((rc = add_named(ctx, meta ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_ALLOW, allow_plain[i])) != 0)
            *at = allow_plain[i];
    }
    for (size_t i = 0; rc == 0 && i < sizeof(deny_eperm) / sizeof(deny_eperm[0]); i++)
        if ((rc = add_named(ctx, SCMP_ACT_ERRNO(EPERM), deny_eperm[i])) != 0)
            *at = deny_eperm[i];
#define N(a) (sizeof(a) / sizeof((a)[0]))
    if (rc == 0 && (rc = allow_except_cmds(ctx, SCMP_SYS(ioctl), deny_ioctl_cmds, N(deny_ioctl_cmds), NULL, 0)) != 0)
        *at = "ioctl";
    if (rc == 0 && (rc = allow_except_cmds(ctx, SCMP_SYS(fcntl), deny_fcntl_cmds, N(deny_fcntl_cmds), gate_fcntl_cmds,
                                           N(gate_fcntl_cmds))) != 0)
        *at = "fcntl";
#undef N
    /* flock(2): asked of the launcher like the lock commands of fcntl above */
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(flock), 0)) != 0)
        *at = "flock";
    /* shutdown(2) records the directions even on an unconnected UDP socket (failing with
     * ENOTCONN), and sock_diag shows them to every user: once tainted, the launcher does it only
     * for a connection to a named peer, on its own copy of the socket (run_gate.h) */
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(shutdown), 0)) != 0)
        *at = "shutdown";
    /* clone3 is deliberately in neither list: it passes its flags in memory seccomp cannot read
     * (CLONE_INTO_CGROUP would move the child out of the agent's cgroup), so it gets the default
     * ENOSYS, and the C libraries fall back to clone(2). */
    /* clone(2) without namespace flags: fork (a new process, listed in cgroup.procs) and
     * threads that share their process's fd table. A thread with a table of its own (CLONE_THREAD
     * without CLONE_FILES) would hold fds that mncd's sweep and fd scan, which read
     * /proc/TGID/fd of every process in the agent's cgroup, never see: refused (unshare, the
     * other way to get a private table, is denied above). */
    const uint64_t ns = 0x7E020000ull; /* CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET */
    const uint64_t thr = CLONE_THREAD | CLONE_FILES;
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, ns | CLONE_THREAD, 0))) != 0)
        *at = "clone";
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, ns | thr, thr))) != 0)
        *at = "clone(thread)";
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, ns | thr, CLONE_THREAD))) != 0)
        *at = "clone(thread, own fd table)";
    /* socket domains: UNIX (judged by the unix hooks and mncd's sweep) and IPv4/IPv6 (connect,
     * sendmsg and egress hooks). Everything else (packet, netlink, vsock, ...) is denied.
     * Netlink too, routing sockets included: the kernel's answers to requests the agent never
     * reads stay queued, and /proc/net/netlink (and /proc/PID/net/netlink in the agent's own
     * namespace) shows every user each socket's queued bytes (attack netlink_rmem). glibc's
     * name resolution does without: getaddrinfo's AI_ADDRCONFIG check assumes both families
     * when it cannot open one (sysdeps/unix/sysv/linux/check_pf.c); getifaddrs fails. */
    static const int domains[] = {AF_UNIX, AF_INET, AF_INET6};
    for (size_t i = 0; rc == 0 && i < sizeof(domains) / sizeof(domains[0]); i++)
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                                   SCMP_A0(SCMP_CMP_EQ, (uint64_t)domains[i]))) != 0)
            *at = "socket";
    /* the denied domains an agent is most likely to try get EPERM rather than the default ENOSYS,
     * so the refusal reads as one */
    if (rc == 0 &&
        (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_PACKET))) != 0)
        *at = "socket(packet)";
    if (rc == 0 &&
        (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK))) != 0)
        *at = "socket(netlink)";
    if (rc == 0 &&
        (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX))) != 0)
        *at = "socketpair";
    /* listen: only an agent the policy declares a server (a listener is a way in for anyone
     * who can connect; mncd's sweep shuts a tainted agent's UNIX listeners at each delivery),
     * and then only while it is untainted: the launcher answers (run_gate.h) */
    const uint32_t way_in = (variant & RUN_FILTER_SERVER) ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
    if (rc == 0 && (rc = seccomp_rule_add(ctx, way_in, SCMP_SYS(listen), 0)) != 0)
        *at = "listen";
    /* bind, and the socket options that autobind a UNIX socket: only a server. A bound UNIX
     * socket is a way in that needs no listen(): an outsider sends a datagram to its name and
     * SCM_RIGHTS in it hands the agent a file, pipe or socket opened outside, after the last
     * delivery and its sweep (attacks late_file_fd, late_socket_fd, late_pipe_fd). Clients
     * connect and send unbound; the kernel picks their ports. */
    if (rc == 0 && (rc = seccomp_rule_add(ctx, way_in, SCMP_SYS(bind), 0)) != 0)
        *at = "bind";
    if (rc == 0 && (rc = allow_setsockopt_but_names(ctx, way_in)) != 0)
        *at = "setsockopt";
    /* prlimit64 on the caller only (pid 0, as the C library's setrlimit/getrlimit call it): on
     * another process of the same uid - any root process, for an --as-root agent - it writes
     * limits every user reads in /proc/PID/limits, and could lower mncd's (attack
     * prlimit_outside); EPERM otherwise */
    if (rc == 0 &&
        ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A0_32(SCMP_CMP_EQ, 0))) != 0 ||
         (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1, SCMP_A0_32(SCMP_CMP_NE, 0))) != 0))
        *at = "prlimit64";
    /* prctl, except PR_SET_NAME and PR_SET_MM: a thread's name is world-readable in /proc
     * (the option is an int: compared on its low 32 bits, as the kernel reads it) */
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 2, SCMP_A0_32(SCMP_CMP_NE, PR_SET_NAME),
                                          SCMP_A0_32(SCMP_CMP_NE, PR_SET_MM))) != 0) {
        /* older libseccomp: two comparisons on one argument are refused; keep PR_SET_NAME out */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0_32(SCMP_CMP_NE, PR_SET_NAME));
        if (rc != 0)
            *at = "prctl";
    }
    if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1,
                                          SCMP_A0_32(SCMP_CMP_EQ, PR_SET_NAME))) != 0)
        *at = "prctl(PR_SET_NAME)";
    /* seccomp(2), but never a filter with a user-notification listener: the listener's holder
     * reads every matching call's six argument registers and can install fds into the agent
     * (attacks seccomp_notify_out, seccomp_addfd_in), and it is handed out like any fd */
    const scmp_datum_t listener = SECCOMP_FILTER_FLAG_NEW_LISTENER;
    if (rc == 0 && ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
                                           SCMP_A1(SCMP_CMP_MASKED_EQ, listener, 0))) != 0 ||
                    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 1,
                                           SCMP_A1(SCMP_CMP_MASKED_EQ, listener, listener))) != 0))
        *at = "seccomp";
    /* truncate(2) by path: Landlock judges it from ABI 3 on (LANDLOCK_ACCESS_FS_TRUNCATE); before,
     * a world-writable file anywhere was storage by its size (attack truncate_outside in the 6.1
     * guest). ftruncate needs an fd open for writing, which Landlock judged at open. */
    if (rc == 0 && (rc = seccomp_rule_add(ctx, (variant & RUN_FILTER_TRUNCATE) ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM),
                                          SCMP_SYS(truncate), 0)) != 0)
        *at = "truncate";
    return rc;
}
