// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_records.c - what mncd says about the kernel layer, whichever process holds it (kern.c in
 * mncd itself, or the enforcer under --privsep, monitor/mon_kern.c): the "kernel" option and
 * mode names, the kernel's deny events as audit records, and an agent's taint entry as
 * whoami's "kernel" object. Below kern*.c and mon_kern.c; calls neither.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <netinet/in.h>

#include "kern_layer.h"
#include "lsm_abi.h"

static const char *const mode_names[] = {
    [MNCD_KERN_AUTO] = "auto", [MNCD_KERN_OFF] = "off", [MNCD_KERN_CGROUP] = "cgroup", [MNCD_KERN_LSM] = "lsm"};

int mncd_kern_option(mncd_config *c, const char *key, const char *val, const char *where)
{
    if (strcmp(key, "kernel") == 0) {
        for (int m = 0; m < (int)(sizeof(mode_names) / sizeof(mode_names[0])); m++)
            if (strcmp(val, mode_names[m]) == 0) {
                c->kernel = m;
                return 0;
            }
        fprintf(stderr, "mncd: %s: kernel mode must be off, auto, cgroup or lsm (got \"%s\")\n", where, val);
        return -1;
    }
    char *dst = NULL;
    size_t n = 0;
    if (strcmp(key, "pin_root") == 0)
        dst = c->pin_root, n = sizeof(c->pin_root);
    else if (strcmp(key, "cgroup_tree") == 0)
        dst = c->cgroup_tree, n = sizeof(c->cgroup_tree);
    else
        return 1;
    if (!*val || strlen(val) >= n) {
        fprintf(stderr, "mncd: %s: %s must be 1..%zu bytes\n", where, key, n - 1);
        return -1;
    }
    if (dst == c->pin_root && val[0] != '/') {
        fprintf(stderr, "mncd: %s: pin_root must be an absolute path under a bpf filesystem\n", where);
        return -1;
    }
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

const char *mncd_kern_mode_name(int mode)
{
    return mode >= 0 && mode < (int)(sizeof(mode_names) / sizeof(mode_names[0])) && mode_names[mode] ? mode_names[mode]
                                                                                                     : "?";
}

/* ---- deny events as audit records (docs/threat-model.md, "Records about agents")
 *
 * An event carries what the agent asked for: the address, port, path, protocol, option or file
 * it named. The record never does: it names a registered destination by its principal (the
 * record's receiver) and gives an unregistered one, and every number the agent picked, as keyed
 * hashes (mncd_hv); families, socket types and levels it reduces to classes mncd names. Only
 * what mncd or the kernel chose stays as it is: hook, reason, destination class, cgroup id,
 * taint generation. A hook this table does not know gets every field hashed. */

static const char *family_class(unsigned f)
{
    switch (f) {
    case AF_UNIX:
        return "unix";
    case AF_INET:
        return "inet";
    case AF_INET6:
        return "inet6";
    case AF_NETLINK:
        return "netlink";
    case AF_PACKET:
        return "packet";
    default:
        return "other";
    }
}

static const char *socktype_class(unsigned t)
{
    switch (t & 0xf) { /* without SOCK_NONBLOCK / SOCK_CLOEXEC */
    case SOCK_STREAM:
        return "stream";
    case SOCK_DGRAM:
        return "dgram";
    case SOCK_RAW:
        return "raw";
    case SOCK_SEQPACKET:
        return "seqpacket";
    default:
        return "other";
    }
}

static const char *level_class(unsigned l)
{
    switch (l) {
    case SOL_SOCKET:
        return "socket";
    case IPPROTO_IP:
        return "ip";
    case IPPROTO_IPV6:
        return "ipv6";
    case IPPROTO_TCP:
        return "tcp";
    case IPPROTO_UDP:
        return "udp";
    default:
        return "other";
    }
}

/* ,"KEY":"h:..." for the decimal text of v */
static int put_hv_u64(mncd *d, char *o, size_t n, const char *key, uint64_t v)
{
    char h[MNC_AUDIT_HV_MAX];
    return snprintf(o, n, ",\"%s\":\"%s\"", key, mncd_hv_u64(d, v, h));
}

/* The destination part of a deny record (agent-chosen values hashed), appended at o. */
static void deny_dst(mncd *d, const struct mnc_event *ev, char *o, size_t n)
{
    char h[MNC_AUDIT_HV_MAX], h2[MNC_AUDIT_HV_MAX];
    bool registered = ev->dst_id != MNC_ID_NONE;
    bool file_hook = (ev->hook >= MNC_HOOK_LSM_FILE_OPEN && ev->hook <= MNC_HOOK_LSM_INODE_CREATE) ||
                     ev->hook == MNC_HOOK_LSM_FILE_RECEIVE;
    switch (ev->hook) {
    case MNC_HOOK_SOCK_CREATE:
    case MNC_HOOK_LSM_SOCKET_CREATE: {
        int w =
            snprintf(o, n, ",\"family\":\"%s\",\"type\":\"%s\"", family_class(ev->family), socktype_class(ev->port));
        if (w > 0 && (size_t)w < n)
            put_hv_u64(d, o + w, n - (size_t)w, "protocol", ev->protocol);
        return;
    }
    case MNC_HOOK_SETSOCKOPT:
    case MNC_HOOK_LSM_SOCKET_SETSOCKOPT: {
        int w = snprintf(o, n, ",\"level\":\"%s\"", level_class(ev->protocol));
        if (w > 0 && (size_t)w < n)
            put_hv_u64(d, o + w, n - (size_t)w, "optname", ev->port);
        return;
    }
    case MNC_HOOK_LSM_FILE_LOCK:
        snprintf(o, n, ",\"lock\":\"%s\"", ev->port == 0 ? "read" : ev->port == 1 ? "write" : "unlock");
        return;
    case MNC_HOOK_LSM_TASK_KILL:
    case MNC_HOOK_LSM_FILE_SEND_SIGIOTASK: {
        int w = put_hv_u64(d, o, n, "signal", ev->port);
        if (w > 0 && (size_t)w < n)
            put_hv_u64(d, o + w, n - (size_t)w, "target", ev->protocol);
        return;
    }
    case MNC_HOOK_LSM_MSGSND:
    case MNC_HOOK_LSM_SHMAT:
        put_hv_u64(d, o, n, "ipc_id", ev->protocol);
        return;
    default:
        break;
    }
    if (file_hook) {
        /* lsm_abi.h: the file key (dev, ino) in addr, its last name in path */
        uint64_t dev, ino;
        char key[48];
        memcpy(&dev, ev->addr, 8);
        memcpy(&ino, ev->addr + 8, 8);
        int kl = snprintf(key, sizeof(key), "%u:%u:%" PRIu64, major((dev_t)dev), minor((dev_t)dev), ino);
        size_t nl = strnlen(ev->path, sizeof(ev->path));
        int w = snprintf(o, n, ",\"file\":\"%s\",\"name\":\"%s\"", mncd_hv(d, key, (size_t)kl, h),
                         mncd_hv(d, ev->path, nl, h2));
        if (ev->hook == MNC_HOOK_LSM_FILE_RECEIVE && w > 0 && (size_t)w < n)
            snprintf(o + w, n - (size_t)w, ",\"writable\":%s", ev->protocol ? "true" : "false");
        return;
    }
    if (registered)
        return; /* the receiver names it; its address is the policy's */
    if (ev->family == AF_UNIX) {
        /* the bytes that name it: an abstract name with its length and socket type, so that
         * names that differ only there hash differently, as the kernel tells them apart */
        bool abstract = ev->path[0] == '@' && ev->path_alen > 0 && ev->path_alen <= sizeof(ev->path);
        char buf[MNC_UNIX_PATH_MAX + 8];
        size_t bl;
        if (abstract) {
            memcpy(buf, ev->path, ev->path_alen);
            memcpy(buf + ev->path_alen, &ev->path_type, sizeof(ev->path_type));
            bl = ev->path_alen + sizeof(ev->path_type);
        } else {
            bl = strnlen(ev->path, sizeof(ev->path));
            memcpy(buf, ev->path, bl);
        }
        snprintf(o, n, ",\"family\":\"unix\",\"name\":\"%s\",\"path\":\"%s\"", abstract ? "abstract" : "pathname",
                 mncd_hv(d, buf, bl, h));
        return;
    }
    if (ev->family == AF_INET || ev->family == AF_INET6) {
        char a[INET6_ADDRSTRLEN] = "?";
        if (!inet_ntop(ev->family, ev->addr, a, sizeof(a)))
            snprintf(a, sizeof(a), "?");
        int w = snprintf(o, n, ",\"family\":\"%s\",\"addr\":\"%s\"", family_class(ev->family), mncd_hv_str(d, a, h));
        if (w > 0 && (size_t)w < n)
            put_hv_u64(d, o + w, n - (size_t)w, "port", ev->port);
        return;
    }
    /* not a hook this table knows: every field the agent may have chosen, hashed */
    int w = snprintf(o, n, ",\"family\":\"%s\"", family_class(ev->family));
    size_t at = w > 0 ? (size_t)w : 0;
    if (at < n)
        at += (size_t)put_hv_u64(d, o + at, n - at, "port", ev->port);
    if (at < n)
        at += (size_t)put_hv_u64(d, o + at, n - at, "protocol", ev->protocol);
    if (at < n)
        snprintf(o + at, n - at, ",\"addr\":\"%s\",\"path\":\"%s\"", mncd_hv(d, ev->addr, sizeof(ev->addr), h),
                 mncd_hv(d, ev->path, sizeof(ev->path), h2));
}

int mncd_kern_event(mncd *d, const struct mnc_event *ev)
{
    char det[1024], dst[600] = "", pid[MNC_AUDIT_HV_MAX];
    deny_dst(d, ev, dst, sizeof(dst));
    /* the pid too: an agent picks which of its processes makes the call (pids are allocated
     * in order, so it can fork until one has the value it wants) */
    snprintf(det, sizeof(det),
             "{\"kind\":\"kernel_deny\",\"hook\":\"%s\",\"reason\":\"%s\",\"cgroup_id\":%llu,\"pid\":\"%s\","
             "\"generation\":%llu,\"dst_class\":\"%s\"%s}",
             mnc_hook_name(ev->hook), mnc_kreason_name(ev->reason), (unsigned long long)ev->cgroup_id,
             mncd_hv_u64(d, ev->pid, pid), (unsigned long long)ev->generation, mnc_sink_class_name(ev->dst_class), dst);
    int agent =
        ev->agent_id == 0xffffffffu || ev->agent_id >= (uint32_t)d->policy->n_principals ? -1 : (int)ev->agent_id;
    mncd_audit_event(d, "kernel.deny", agent, ev->dst_id == MNC_ID_NONE ? NULL : mncd_peer_name(d, ev->dst_id), NULL,
                     "deny", mnc_kreason_name(ev->reason), det);
    if (d->kern)
        d->kern->n_deny_events++;
    mncd_audit_tick(d);
    return d->fatal;
}

int mncd_kern_taint_json(mncd *d, bool entry, const struct mnc_taint *kt, cJSON *t, char *why, size_t n)
{
    cJSON *k = cJSON_AddObjectToObject(t, "kernel");
    cJSON *sinks = k ? cJSON_AddArrayToObject(k, "sinks") : NULL;
    bool ok = sinks && cJSON_AddBoolToObject(k, "entry", entry) && cJSON_AddBoolToObject(k, "tainted", kt->tainted) &&
              cJSON_AddBoolToObject(k, "log", kt->may_log) && cJSON_AddBoolToObject(k, "memory", kt->may_memory) &&
              cJSON_AddBoolToObject(k, "forward", kt->may_forward) &&
              cJSON_AddBoolToObject(k, "external", kt->may_external) &&
              cJSON_AddNumberToObject(k, "generation", (double)kt->generation);
    mnc_set s;
    memcpy(s.w, kt->sinks, sizeof(s.w));
    for (int i = 0; ok && i < d->policy->n_principals; i++)
        if (mnc_set_has(&s, (unsigned)i))
            ok = cJSON_AddItemToArray(sinks, cJSON_CreateString(d->policy->principals[i].name));
    if (!ok)
        snprintf(why, n, "out of memory");
    return ok ? 0 : -1;
}
