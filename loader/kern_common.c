// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_common.c - what every loader file shares and nothing else: the hook, reason and sink
 * class name tables, the pin root, and the cgroup v2 helpers. It calls no other loader file.
 * Contract: loader/mnc_kern.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kern_int.h"
#include "lsm_abi.h"

static const mnc_hook_info hooks[] = {
    {"mnc_connect4", "cgroup/connect4",
     "connect(2) on IPv4 sockets (TCP, UDP): destination address:port vs sock_inet, by taint"},
    {"mnc_connect6", "cgroup/connect6", "connect(2) on IPv6 sockets; IPv4-mapped destinations are checked as IPv4"},
    {"mnc_connect_unix", "cgroup/connect_unix",
     "connect(2) on UNIX sockets: sun_path vs sock_unix; agents must use absolute canonical paths"},
    {"mnc_sendmsg4", "cgroup/sendmsg4", "sendto/sendmsg with an IPv4 destination (UDP)"},
    {"mnc_sendmsg6", "cgroup/sendmsg6", "sendto/sendmsg with an IPv6 destination (UDP)"},
    {"mnc_sendmsg_unix", "cgroup/sendmsg_unix", "sendto/sendmsg with a UNIX destination (datagrams)"},
    {"mnc_sock_create", "cgroup/sock_create",
     "socket(2) for AF_INET/AF_INET6 only (kernel limit): no SOCK_RAW; no IP socket for an unknown cgroup (AF_PACKET: "
     "seccomp in mncctl run)"},
    {"mnc_setsockopt", "cgroup/setsockopt",
     "setsockopt(2) on any socket: once tainted, only switches and timeouts whose value no dump (ss, /proc/net) "
     "reports"},
    {"mnc_egress", "cgroup_skb/egress",
     "every IPv4/IPv6 packet of an agent's sockets vs its current taint: sends on connections made before the taint "
     "and on accepted sockets (UDP: EPERM; TCP: dropped, connection stalls)"},
    {"mnc_ingress", "cgroup_skb/ingress",
     "every IPv4/IPv6 packet to an agent's sockets: once tainted, only from peers it may send to (nobody else can "
     "fill its receive queues, whose lengths every user reads)"},
};
#define N_HOOKS ((int)(sizeof(hooks) / sizeof(hooks[0])))

const mnc_hook_info *mnc_kern_hooks(int *n)
{
    *n = N_HOOKS;
    return hooks;
}

const char *mnc_kern_pin_root(const char *override)
{
    if (override && *override)
        return override;
    const char *e = getenv("MNC_PIN_ROOT");
    if (e && *e)
        return e;
    return MNC_PIN_ROOT_DEFAULT;
}

int mnc_cgroup2_mount(char *buf, size_t len)
{
    FILE *f = fopen("/proc/mounts", "re");
    if (!f)
        return -errno;
    char line[1024];
    int rc = -ENOENT;
    while (fgets(line, sizeof(line), f)) {
        char dev[256], mnt[512], type[64];
        if (sscanf(line, "%255s %511s %63s", dev, mnt, type) != 3)
            continue;
        if (strcmp(type, "cgroup2") == 0) {
            if (strlen(mnt) >= len) {
                rc = -ENAMETOOLONG;
                break;
            }
            snprintf(buf, len, "%s", mnt);
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

int mnc_cgroup_id(const char *path, uint64_t *id)
{
    /* The cgroup id is the kernfs node id, exposed as the file handle of the directory. */
    struct {
        struct file_handle fh;
        uint64_t id;
    } h;
    int mount_id;
    h.fh.handle_bytes = sizeof(uint64_t);
    if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
        return -errno;
    if (h.fh.handle_bytes != sizeof(uint64_t))
        return -EPROTO;
    memcpy(id, h.fh.f_handle, sizeof(*id));
    return 0;
}

/* Loads `insns` as a BPF LSM program on file_open: the only honest test that the lsm backend
 * can work (on this host LSM programs fail to load with EPERM although "bpf" is listed). */

/* ---- names */
static const char *const reason_names[MNC_K__COUNT] = {
    [MNC_K_ALLOW_MNCD] = "allow_mncd",           [MNC_K_ALLOW_UNTAINTED] = "allow_untainted",
    [MNC_K_ALLOW_SCOPE] = "allow_scope",         [MNC_K_ALLOW_SOCKET] = "allow_socket",
    [MNC_K_ALLOW_OWN_FDS] = "allow_own_fds",     [MNC_K_DENY_UNKNOWN_AGENT] = "deny_unknown_agent",
    [MNC_K_DENY_NO_TAINT] = "deny_no_taint",     [MNC_K_DENY_EXTERNAL] = "deny_external",
    [MNC_K_DENY_SCOPE] = "deny_scope",           [MNC_K_DENY_LOG] = "deny_log",
    [MNC_K_DENY_MEMORY] = "deny_memory",         [MNC_K_DENY_UNIX_PATH] = "deny_unix_path",
    [MNC_K_DENY_RAW_SOCKET] = "deny_raw_socket", [MNC_K_DENY_PACKET_SOCKET] = "deny_packet_socket",
    [MNC_K_DENY_BAD_CLASS] = "deny_bad_class",   [MNC_K_EVENT_LOST] = "event_lost",
    [MNC_K_DENY_WALK_DEPTH] = "deny_walk_depth", [MNC_K_DENY_FDS_OUT] = "deny_fds_out",
    [MNC_K_DENY_SOCKOPT] = "deny_sockopt",       [MNC_K_DENY_LOCK] = "deny_lock",
    [MNC_K_DENY_LABEL] = "deny_label",
};

const char *mnc_kreason_name(unsigned r) { return r < MNC_K__COUNT && reason_names[r] ? reason_names[r] : "?"; }

static const char *const class_names[] = {"none", "agent", "log", "memory", "tool", "external", "mncd"};

const char *mnc_sink_class_name(unsigned c)
{
    return c < sizeof(class_names) / sizeof(class_names[0]) ? class_names[c] : "?";
}

int mnc_sink_class_parse(const char *s)
{
    for (unsigned c = 1; c < sizeof(class_names) / sizeof(class_names[0]); c++)
        if (strcmp(s, class_names[c]) == 0)
            return (int)c;
    return -EINVAL;
}

const char *mnc_hook_name(unsigned h)
{
    static const char *const n[] = {"?",        "connect4",   "connect6",     "connect_unix",
                                    "sendmsg4", "sendmsg6",   "sendmsg_unix", "sock_create",
                                    "egress",   "setsockopt", "ingress"};
    /* the lsm backend's, numbered from MNC_HOOK_LSM_FILE_OPEN (lsm_abi.h) */
    static const char *const l[] = {
        "file_open",      "file_permission", "path_mknod",          "path_mkdir",    "path_link",
        "path_rename",    "path_symlink",    "path_truncate",       "inode_create",  "socket_create",
        "socket_connect", "socket_sendmsg",  "unix_stream_connect", "unix_may_send", "msg_queue_msgsnd",
        "shm_shmat",      "task_kill",       "file_send_sigiotask", "file_receive",  "socket_setsockopt",
        "file_lock"};
    if (h >= MNC_HOOK_LSM_FILE_OPEN && h < MNC_HOOK_LSM_FILE_OPEN + sizeof(l) / sizeof(l[0]))
        return l[h - MNC_HOOK_LSM_FILE_OPEN];
    return h < sizeof(n) / sizeof(n[0]) ? n[h] : "?";
}
