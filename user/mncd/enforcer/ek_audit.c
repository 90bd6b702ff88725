// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_audit.c - the kernel audit socket for Landlock denials (ek_kern.h; the records themselves
 * are parsed by the monitor: docs/kernel.md, "Landlock denials in the audit log").
 *
 * What needs privilege is done here, once, at the start: the audit status (AUDIT_GET) and, when
 * kernel audit is off and no auditd owns it, enabling it and raising its backlog (AUDIT_SET,
 * CAP_AUDIT_CONTROL); binding the multicast group (CAP_AUDIT_READ); a receive buffer past
 * rmem_max (SO_RCVBUFFORCE, CAP_NET_ADMIN). The bound socket then goes to the monitor in
 * STARTED: reading it needs no privilege, and a process holding it cannot control audit (the
 * kernel checks the sender's capabilities on every control message). The enforcer keeps no copy.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "ek_kern.h"

#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#endif
#ifndef AUDIT_LANDLOCK_DOMAIN
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define LL_ABI_MIN 7         /* the first Landlock ABI that emits audit records */
#define LL_RCVBUF (16 << 20) /* ~16000 queued messages: only used when the monitor is behind */
#define LL_BACKLOG 8192      /* the kernel's audit queue, raised to this when no auditd runs */

/* AUDIT_GET / AUDIT_SET on a unicast socket of its own. 0 or -errno. */
static int audit_ctl(uint16_t type, const struct audit_status *set, struct audit_status *out)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
    if (fd < 0)
        return -errno;
    struct timeval tv = {.tv_sec = 0, .tv_usec = 500000};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    struct {
        struct nlmsghdr h;
        struct audit_status s;
    } req;
    memset(&req, 0, sizeof(req));
    req.h.nlmsg_len = NLMSG_LENGTH(set ? sizeof(*set) : 0);
    req.h.nlmsg_type = type;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.h.nlmsg_seq = 1;
    if (set)
        req.s = *set;
    struct sockaddr_nl k = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k)) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    /* AUDIT_GET: the status, then the ack (either order); AUDIT_SET: the ack */
    int rc = -ETIMEDOUT;
    bool got_status = false, got_ack = false;
    for (int tries = 0; tries < 4 && !(got_ack && (got_status || type != AUDIT_GET)); tries++) {
        char buf[8192] __attribute__((aligned(4)));
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0) {
            rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
            break;
        }
        int len = (int)n;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
                const struct nlmsgerr *er = NLMSG_DATA(h);
                got_ack = true;
                rc = er->error; /* 0 or -errno */
            } else if (h->nlmsg_type == AUDIT_GET && out) {
                size_t pl = h->nlmsg_len - NLMSG_HDRLEN;
                memset(out, 0, sizeof(*out));
                memcpy(out, NLMSG_DATA(h), pl < sizeof(*out) ? pl : sizeof(*out));
                got_status = true;
            }
        }
        if (got_ack && rc != 0)
            break;
    }
    close(fd);
    if (rc == 0 && type == AUDIT_GET && !got_status)
        rc = -EPROTO;
    return rc;
}

int ek_audit_status(uint32_t *enabled, uint32_t *pid, uint32_t *lost, uint32_t *backlog)
{
    struct audit_status st;
    int r = audit_ctl(AUDIT_GET, NULL, &st);
    if (r == 0) {
        *enabled = st.enabled;
        *pid = st.pid;
        *lost = st.lost;
        *backlog = st.backlog_limit;
    }
    return r;
}

__attribute__((format(printf, 2, 3))) static void off(ek_kern *kk, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kk->ll_why, sizeof(kk->ll_why), fmt, ap);
    va_end(ap);
}

void ek_audit_setup(ek *e)
{
    ek_kern *kk = e->kern;
    kk->audit_fd = -1;
    kk->ll_why[0] = 0;
    struct audit_status st;
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    int r;
    if (abi < LL_ABI_MIN) {
        if (abi < 0)
            off(kk, "Landlock unavailable (%s): no Landlock denials to audit", strerror(errno));
        else
            off(kk, "Landlock ABI %ld < %d: this kernel emits no Landlock audit records", abi, LL_ABI_MIN);
        return;
    }
    if ((r = audit_ctl(AUDIT_GET, NULL, &st)) != 0) {
        if (r == -EPROTONOSUPPORT)
            off(kk, "the kernel has no audit support (CONFIG_AUDIT off)");
        else
            off(kk, "kernel audit status (NETLINK_AUDIT AUDIT_GET): %s", strerror(-r));
        return;
    }
    if (st.enabled == 0 && st.pid != 0) {
        off(kk,
            "kernel audit is disabled and auditd (pid %u) manages it: mncd does not override the host's audit "
            "configuration (`auditctl -e 1` enables it; then restart mncd)",
            st.pid);
        return;
    }
    kk->audit_lost_at_start = st.lost;
    if (st.enabled == 0) {
        struct audit_status set;
        memset(&set, 0, sizeof(set));
        set.mask = AUDIT_STATUS_ENABLED;
        set.enabled = 1;
        if ((r = audit_ctl(AUDIT_SET, &set, NULL)) != 0) {
            off(kk, "kernel audit is disabled and enabling it failed (AUDIT_SET enabled=1): %s", strerror(-r));
            return;
        }
        kk->audit_enabled_by_us = true;
        ek_audit(e, PSP_A_LANDLOCK_AUDIT, PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL, "ok",
                 "kernel audit was disabled and no auditd runs: mncd enabled it (AUDIT_SET enabled=1) so that Landlock "
                 "denials are reported; it stays enabled when mncd stops");
    }
    /* The kernel's default queue of 64 records loses most of a burst of denials before kauditd
     * forwards them (measured: a 3000-denial flood lost ~2400). With no auditd, raised to the
     * value auditd's stock rules use; an auditd's setting is its own. */
    if (st.pid == 0 && st.backlog_limit < LL_BACKLOG) {
        struct audit_status set;
        memset(&set, 0, sizeof(set));
        set.mask = AUDIT_STATUS_BACKLOG_LIMIT;
        set.backlog_limit = LL_BACKLOG;
        r = audit_ctl(AUDIT_SET, &set, NULL);
        ek_audit(e, PSP_A_LANDLOCK_AUDIT, r ? PSP_D_ERROR : PSP_D_ALLOW, PSP_NONE, PSP_NONE, NULL,
                 r ? "internal" : "ok", "no auditd runs: kernel audit backlog_limit %u -> %d (AUDIT_SET)%s%s",
                 st.backlog_limit, LL_BACKLOG, r ? " FAILED: " : "", r ? strerror(-r) : "");
    }
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1)};
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_AUDIT);
    /* Only the record types the monitor reads are queued (the kernel runs the filter before it
     * queues a multicast copy): the rest of the host's audit traffic never fills the queue. */
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_type)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(AUDIT_LANDLOCK_ACCESS), 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(AUDIT_LANDLOCK_DOMAIN), 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(AUDIT_SYSCALL), 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(AUDIT_EOE), 1, 0),
        BPF_STMT(BPF_RET | BPF_K, 0),
        BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0)
        fprintf(stderr, "mncd: landlock audit: socket filter not attached (%s): every audit record is queued\n",
                strerror(errno));
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        off(kk, "audit multicast listener (NETLINK_AUDIT, AUDIT_NLGRP_READLOG; needs CAP_AUDIT_READ): %s",
            strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    int sz = LL_RCVBUF;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    kk->audit_fd = fd;
}
