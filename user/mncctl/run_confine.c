// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_confine.c - the agent's confinement between fork and exec (contract in run_confine.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/if.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mnc_kern.h"
#include "mnc_util.h"
#include "run_confine.h"
#include "run_filter.h"
#include "run_filters.h" /* generated: $(BUILD)/include, run_filter.h */
#include "run_gate.h"

#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1) /* Landlock ABI 7 */
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* ---- 1. cgroup and cgroup namespace */

static int enter_cgroup(const char *cg, const run_cgv1 *v1, char *why, size_t n)
{
    if (v1 && run_cgv1_enter(v1, why, n) != 0)
        return -1;
    char procs[4200];
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
    int e = mnc_write_file(procs, "0");
    if (e) {
        snprintf(why, n, "enter cgroup %.400s: %s", cg, strerror(-e));
        return -1;
    }
    /* A cgroup namespace rooted at the agent's cgroup: /proc/self/cgroup reads "/", and the
     * agent cannot name (so cannot open) any cgroup above its own through cgroupfs paths it
     * would see mounted in a new mount namespace. Moving a process out is denied regardless:
     * cgroup.procs is not writable (uid, Landlock) and clone3 (CLONE_INTO_CGROUP) is ENOSYS. */
    if (unshare(CLONE_NEWCGROUP) != 0) {
        snprintf(why, n, "cgroup namespace: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* A network namespace of its own (--netns), with only its loopback up. Why: sock_diag and
 * /proc/net show every user each socket of a namespace with its queue lengths and state, which
 * a tainted agent sets without a send (answers from mncd it leaves unread: mncd_reply_rqlen;
 * bytes in its own socketpairs: unix_pair_rqlen). NETLINK_SOCK_DIAG answers for the asker's
 * namespace, and joining the agent's needs CAP_SYS_ADMIN over it (it belongs to the initial
 * user namespace). The price: the agent reaches no IP peer but itself, and no abstract UNIX
 * name outside (abstract names are per namespace); pathname sockets (mncd's, a sink's) work. */
static int enter_netns(char *why, size_t n)
{
    if (unshare(CLONE_NEWNET) != 0) {
        snprintf(why, n, "--netns: network namespace: %s", strerror(errno));
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq r;
    memset(&r, 0, sizeof(r));
    memcpy(r.ifr_name, "lo", 3);
    int rc = s < 0 || ioctl(s, SIOCGIFFLAGS, &r) != 0 ? -1 : 0;
    r.ifr_flags |= IFF_UP;
    if (rc == 0 && ioctl(s, SIOCSIFFLAGS, &r) != 0)
        rc = -1;
    if (rc != 0)
        snprintf(why, n, "--netns: bring up lo: %s", strerror(errno));
    if (s >= 0)
        close(s);
    return rc;
}

/* ---- 2. inherited fds */

static int close_inherited(const run_confine *c, char *why, size_t n)
{
    /* Mark everything from 3 up close-on-exec (the report pipe stays usable until exec), then
     * take the flag off the fds the operator asked to keep. */
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
        snprintf(why, n, "close_range: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < c->n_keep; i++) {
        int fl = fcntl(c->keep[i], F_GETFD);
        if (fl < 0 || fcntl(c->keep[i], F_SETFD, fl & ~FD_CLOEXEC) != 0) {
            snprintf(why, n, "--keep-fd %d: %s", c->keep[i], strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* ---- 3. privileges */

/* What an --as-root agent keeps: file ownership and permission overrides (it is root so that
 * it can act on files as root; Landlock still bounds which files) and low ports. Not kept,
 * among others: SYS_ADMIN (it would let the agent forge SCM_CREDENTIALS for mncd, reconfigure
 * the kernel, set trusted.* xattrs such as the workspace taint), NET_ADMIN / NET_RAW (netlink
 * unicast to other processes, raw sockets), SYS_PTRACE, SETUID / SETGID (another uid's
 * identity), KILL, BPF, PERFMON, SYS_MODULE, SYS_RAWIO, SYS_TIME, MKNOD, AUDIT_*. */
#define RUN_ROOT_CAPS                                                                                                  \
    ((1ull << CAP_CHOWN) | (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH) | (1ull << CAP_FOWNER) |         \
     (1ull << CAP_FSETID) | (1ull << CAP_NET_BIND_SERVICE))

static int drop_privileges(const run_confine *c, char *why, size_t n)
{
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
        snprintf(why, n, "clear ambient capabilities: %s", strerror(errno));
        return -1;
    }
    for (int cap = 0; cap <= 63; cap++) {
        if (c->as_root && (RUN_ROOT_CAPS & (1ull << cap)))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
            snprintf(why, n, "drop capability %d from the bounding set: %s", cap, strerror(errno));
            return -1;
        }
    }
    if (setgroups(0, NULL) != 0) {
        snprintf(why, n, "setgroups: %s", strerror(errno));
        return -1;
    }
    if (!c->as_root) {
        /* dedicated uid and gid: the kernel drops every capability on the change from 0 */
        if (setresgid(c->uid, c->uid, c->uid) != 0 || setresuid(c->uid, c->uid, c->uid) != 0) {
            snprintf(why, n, "run as uid %u: %s", (unsigned)c->uid, strerror(errno));
            return -1;
        }
        if (setuid(0) == 0) { /* must be impossible now */
            snprintf(why, n, "uid 0 could be regained after dropping it");
            return -1;
        }
    } else {
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2];
        memset(d, 0, sizeof(d));
        uint64_t keep = RUN_ROOT_CAPS;
        d[0].effective = d[0].permitted = (uint32_t)keep;
        d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
        if (syscall(SYS_capset, &h, d) != 0) {
            snprintf(why, n, "capset: %s", strerror(errno));
            return -1;
        }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(why, n, "no_new_privs: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- 4. Landlock */

int run_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

/* System directories an agent reads and executes from. /etc holds no secret an agent's uid could
 * read anyway; /proc and /sys answer by their own permission checks (another process's
 * sensitive files need ptrace access, which Landlock scopes to the agent's domain). Not here:
 * /var, /run, /tmp, /home, /root, /srv, /opt, /mnt, /media - mncd's state, other agents'
 * workspaces and other users' files live there. */
static const char *const sys_read[] = {"/usr",   "/bin",    "/sbin", "/lib",  "/lib32",
                                       "/lib64", "/libx32", "/etc",  "/proc", "/sys"};
/* Device nodes: read and write (no terminal, no /dev/pts, no /dev/ptmx: a terminal is a way out
 * to whoever reads it; the agent keeps its own stdio as inherited fds). */
static const char *const dev_rw[] = {"/dev/null", "/dev/zero", "/dev/full"};
static const char *const dev_ro[] = {"/dev/random", "/dev/urandom"};

static int ll_rule(int rs, const char *path, __u64 want, __u64 handled, bool must_exist, char *why, size_t n)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (!must_exist && errno == ENOENT)
            return 0; /* e.g. /lib32 on this host */
        snprintf(why, n, "open %.400s for its Landlock rule: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, n, "stat %.400s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    __u64 allowed = want & handled;
    if (!S_ISDIR(st.st_mode)) /* a file rule may only carry file rights */
        allowed &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV;
    struct landlock_path_beneath_attr pb = {.allowed_access = allowed, .parent_fd = fd};
    int rc = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    int e = errno;
    close(fd);
    if (rc != 0) {
        snprintf(why, n, "landlock_add_rule %.400s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

static int landlock_confine(const run_confine *c, char *why, size_t n)
{
    int abi = run_landlock_abi();
    if (abi < 1) {
        snprintf(why, n, "Landlock unavailable: file reads and writes cannot be confined");
        return -1;
    }
    const __u64 rd = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE;
    __u64 fs = rd | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2)
        fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    struct landlock_ruleset_attr attr = {.handled_access_fs = fs};
    size_t attr_size = offsetof(struct landlock_ruleset_attr, handled_access_net);
    if (abi >= 6) {
        /* abstract UNIX sockets have no path to label, signals no file: both stay inside the
         * agent's own Landlock domain */
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        attr_size = sizeof(attr);
    }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) {
        snprintf(why, n, "landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(sys_read) / sizeof(sys_read[0]); i++)
        rc = ll_rule(rs, sys_read[i], rd, fs, false, why, n);
    const __u64 devrw = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                        LANDLOCK_ACCESS_FS_IOCTL_DEV;
    for (size_t i = 0; rc == 0 && i < sizeof(dev_rw) / sizeof(dev_rw[0]); i++)
        rc = ll_rule(rs, dev_rw[i], devrw, fs, false, why, n);
    for (size_t i = 0; rc == 0 && i < sizeof(dev_ro) / sizeof(dev_ro[0]); i++)
        rc = ll_rule(rs, dev_ro[i], LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV, fs, false, why, n);
    for (int i = 0; rc == 0 && i < c->n_read; i++)
        rc = ll_rule(rs, c->read[i], rd, fs, true, why, n);
    /* the workspace: everything but device nodes (a whiteout, char 0:0, needs no CAP_MKNOD), which
     * the next launch refuses anyway (attack ws_launcher_msg) */
    const __u64 no_dev = LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK;
    for (int i = 0; rc == 0 && i < c->n_ws; i++)
        rc = ll_rule(rs, c->ws[i], fs & ~no_dev, fs, true, why, n);
    /* /dev/shm is the workspace's .mnc-shm bound there (run_mntns.h): a path below a mount's root
     * is judged from that root up, not through the workspace, so it gets the same rule */
    if (rc == 0 && c->mntns->shm_src)
        rc = ll_rule(rs, "/dev/shm", fs & ~no_dev, fs, true, why, n);
    if (rc != 0) {
        close(rs);
        return -1;
    }
    /* ABI 7: log this domain's denials to the kernel audit after the exec as well (mncd turns
     * them into audit records, docs/kernel.md) */
    unsigned flags = abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;
    rc = (int)syscall(SYS_landlock_restrict_self, rs, flags);
    int e = errno;
    close(rs);
    if (rc != 0) {
        snprintf(why, n, "landlock_restrict_self: %s", strerror(e));
        return -1;
    }
    return 0;
}

/* ---- 5. seccomp: the allowlist of run_filter.c, compiled at build time (run_filter.h) */

static int seccomp_confine(const run_confine *c, char *why, size_t n)
{
    unsigned variant = (c->as_root ? RUN_FILTER_ROOT : 0u) | (c->server ? RUN_FILTER_SERVER : 0u) |
                       (run_landlock_abi() >= 3 ? RUN_FILTER_TRUNCATE : 0u);
    const struct sock_fprog *prog = &run_filters[variant];
    if (c->gate_sock < 0) {
        snprintf(why, n, "seccomp filter: no launcher to answer locks and a server's bind/listen");
        return -1;
    }
    /* compiled at build time (run_filter.h); no_new_privs is set (drop_privileges). The
     * listener answers locks, and a server's bind/listen/autobind (run_gate.h): it goes to the
     * launcher, and our copy is closed before exec (the agent could answer its own calls) */
    int nfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
    if (nfd < 0) {
        snprintf(why, n, "seccomp filter (load): %s", strerror(errno));
        close(c->gate_sock);
        return -1;
    }
    int rc = run_gate_send_fd(c->gate_sock, nfd);
    close(nfd);
    close(c->gate_sock);
    if (rc != 0) {
        snprintf(why, n, "seccomp filter (hand the notification fd to the launcher): %s", strerror(-rc));
        return -1;
    }
    return 0;
}

int run_confine_apply(const run_confine *c, char *why, size_t whylen)
{
    if (!c->mntns) {
        snprintf(why, whylen, "no mount namespace settings");
        return -1;
    }
    if (enter_cgroup(c->cgroup, c->cgv1, why, whylen) != 0 || (c->netns && enter_netns(why, whylen) != 0) ||
        run_mntns_apply(c->mntns, why, whylen) != 0 ||
        (c->tty && run_tty_child(c->tty, c->gate_sock, why, whylen) != 0) ||
        run_mntns_env(c->mntns, why, whylen) != 0 || close_inherited(c, why, whylen) != 0)
        return -1;
    /* a session of its own: no controlling terminal, so no TIOCSTI into the operator's shell */
    if (setsid() < 0) {
        snprintf(why, whylen, "setsid: %s", strerror(errno));
        return -1;
    }
    if (drop_privileges(c, why, whylen) != 0 || landlock_confine(c, why, whylen) != 0 ||
        seccomp_confine(c, why, whylen) != 0)
        return -1;
    return 0;
}
