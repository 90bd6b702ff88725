// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llaudit.c - Landlock denials of agent processes as mncd audit records (see llaudit.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llaudit.h"
#include "mnc_util.h"

/* Record types of Landlock ABI 7 (Linux 6.15); older uapi headers lack them. */
#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#endif
#ifndef AUDIT_LANDLOCK_DOMAIN
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

#define LL_ABI_MIN 7     /* the first ABI that emits audit records */
#define LL_MSG_MAX 16384 /* one netlink message (the kernel's MAX_AUDIT_MESSAGE_LENGTH is 8970) */
#define LL_BATCH 256     /* messages handled per wakeup */
#define LL_RATE 100      /* denials audited one by one per second, sustained */
#define LL_BURST 500     /* ... and in a burst */
#define LL_PENDING 32    /* events waiting for their SYSCALL/EOE records */
#define LL_PER_EVENT 8   /* denials kept per event (one syscall can be denied more than once) */
#define LL_DOMAINS 512   /* Landlock domains remembered (creator, attribution) */
#define LL_FLUSH_MS 50   /* an event without EOE (task without audit context) waits this long */
#define LL_SELFTEST_MS 2000
#define LL_RCVBUF (16 << 20) /* ~16000 queued messages (truesize ~1 KiB); only used when behind */
#define LL_PIDCACHE 8
#define LL_PIDCACHE_MS 100
#define LL_BACKLOG 8192 /* kernel audit queue raised to this when no auditd runs */

enum ll_verdict { V_UNKNOWN = 0, V_AGENT, V_TREE, V_FOREIGN, V_GONE };

typedef struct ll_denial {
    uint64_t domain;
    char blockers[128];
    char obj[LL_OBJ_MAX + 64];
} ll_denial;

typedef struct ll_event {
    bool used;
    uint32_t serial;
    uint64_t t_ms;
    int n;
    unsigned extra; /* denials beyond LL_PER_EVENT (counted as dropped) */
    ll_denial den[LL_PER_EVENT];
    long pid; /* from the SYSCALL record, 0 if none yet */
    long uid; /* -1 if unknown */
} ll_event;

typedef struct ll_domain {
    uint64_t id; /* 0 = free slot */
    long creator, creator_uid;
    enum ll_verdict v;
    int agent;
} ll_domain;

struct mncd_llaudit {
    mncd_agent_of_fn agent_of;
    bool on;
    char why[400];
    bool enabled_by_mncd;
    int nl, tfd;
    uint32_t lost_at_start, lost_reported; /* the kernel's (host-wide) lost counter */
    ll_event ev[LL_PENDING];
    ll_domain dom[LL_DOMAINS];
    unsigned dom_next;
    /* rate limit: one token bucket per agent (index agent + 1; 0 = not attributed), so that a
     * flooding agent cannot use up another agent's records; and drop reporting */
    struct ll_bucket {
        double tokens;
        uint64_t ms, unreported;
    } * b;
    int n_b;
    uint64_t last_drop_report_ms;
    uint64_t n_audited, n_dropped, n_ignored, n_unattributed, n_overflows, n_records;
    uint64_t drops_unreported, overflows_unreported;
    /* the start self-test */
    long selftest_pid;
    bool selftest_seen;
    int selftest_sync; /* write end the probe child waits on; closed after a second */
    uint64_t selftest_close_ms;
    uint64_t due_ms; /* when the timer fires next, 0 = not armed */
    /* where() of the last few pids (a flood repeats one pid: no /proc reads per denial) */
    struct ll_pidc {
        long pid, uid;
        uint64_t t_ms;
        enum ll_verdict v;
        int agent;
        char cg[512];
    } pc[LL_PIDCACHE];
    unsigned pc_next;
};

/* A count as the power-of-two class it falls in ("0", "1", "2-3", "4-7", ...): the exact count
 * of an agent's denials is the agent's to choose (docs/threat-model.md, "Records about agents"). */
static const char *count_class(uint64_t n, char *out, size_t len)
{
    if (n < 2) {
        snprintf(out, len, "%" PRIu64, n);
        return out;
    }
    int k = 0;
    while (k < 62 && (n >> (k + 1)))
        k++;
    snprintf(out, len, "%" PRIu64 "-%" PRIu64, (uint64_t)1 << k, ((uint64_t)2 << k) - 1);
    return out;
}

static void ll_audit_state(mncd *d, const char *decision, const char *reason, const char *detail)
{
    mncd_audit_named(d, "kernel.landlock_audit", NULL, NULL, NULL, decision, reason, detail);
}

/* ---- the audit control channel (AUDIT_GET / AUDIT_SET, unicast to the kernel) */

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
    /* AUDIT_GET: the status, then the ack (either order is handled); AUDIT_SET: the ack */
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
                const struct nlmsgerr *e = NLMSG_DATA(h);
                got_ack = true;
                rc = e->error; /* 0 or -errno */
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

/* ---- attribution */

static ll_domain *dom_find(mncd_llaudit *la, uint64_t id)
{
    for (int i = 0; id && i < LL_DOMAINS; i++)
        if (la->dom[i].id == id)
            return &la->dom[i];
    return NULL;
}

static ll_domain *dom_get(mncd_llaudit *la, uint64_t id)
{
    ll_domain *e = dom_find(la, id);
    if (e || !id)
        return e;
    for (int i = 0; i < LL_DOMAINS; i++)
        if (!la->dom[i].id) {
            e = &la->dom[i];
            break;
        }
    if (!e) /* full: replace round-robin (the oldest-ish); its attribution is lost, not made up */
        e = &la->dom[la->dom_next++ % LL_DOMAINS];
    memset(e, 0, sizeof(*e));
    e->id = id;
    e->creator_uid = -1;
    return e;
}

/* Where process pid is, according to the kernel now. uid (>= 0) must be its real uid, else the
 * pid was reused by another process: V_GONE. cg receives the cgroup path. */
static enum ll_verdict where_proc(mncd *d, const mncd_llaudit *la, long pid, long uid, int *agent, char *cg, size_t cgn)
{
    char p[64], buf[4096];
    *agent = -1;
    cg[0] = 0;
    if (pid <= 0)
        return V_GONE;
    snprintf(p, sizeof(p), "/proc/%ld/cgroup", pid);
    if (mnc_read_file(p, buf, sizeof(buf)) != 0)
        return V_GONE;
    const char *l = strncmp(buf, "0::", 3) == 0 ? buf : strstr(buf, "\n0::");
    if (!l)
        return V_GONE;
    l += l == buf ? 3 : 4;
    size_t cl = strcspn(l, "\n");
    if (cl >= cgn)
        return V_GONE;
    memcpy(cg, l, cl);
    cg[cl] = 0;
    if (uid >= 0) {
        snprintf(p, sizeof(p), "/proc/%ld/status", pid);
        if (mnc_read_file(p, buf, sizeof(buf)) != 0)
            return V_GONE;
        const char *u = strstr(buf, "\nUid:\t");
        if (!u || strtol(u + 6, NULL, 10) != uid)
            return V_GONE;
    }
    int a = la->agent_of(d, cg);
    *agent = a;
    return a >= 0 ? V_AGENT : a == -1 ? V_TREE : V_FOREIGN;
}

/* where_proc, remembered for LL_PIDCACHE_MS per (pid, uid): a pid is not reused that fast. */
static enum ll_verdict where(mncd *d, mncd_llaudit *la, long pid, long uid, int *agent, char *cg, size_t cgn)
{
    uint64_t now = mnc_now_ms();
    for (int i = 0; i < LL_PIDCACHE; i++) {
        struct ll_pidc *c = &la->pc[i];
        if (c->pid == pid && c->uid == uid && pid > 0 && now - c->t_ms < LL_PIDCACHE_MS) {
            *agent = c->agent;
            snprintf(cg, cgn, "%s", c->cg);
            return c->v;
        }
    }
    enum ll_verdict v = where_proc(d, la, pid, uid, agent, cg, cgn);
    if (v != V_GONE) {
        struct ll_pidc *c = &la->pc[la->pc_next++ % LL_PIDCACHE];
        *c = (struct ll_pidc){.pid = pid, .uid = uid, .t_ms = now, .v = v, .agent = *agent};
        snprintf(c->cg, sizeof(c->cg), "%s", cg);
    }
    return v;
}

static struct ll_bucket *bucket(mncd_llaudit *la, int agent)
{
    return &la->b[agent >= 0 && agent + 1 < la->n_b ? agent + 1 : 0];
}

static bool take_token(struct ll_bucket *b)
{
    uint64_t now = mnc_now_ms();
    b->tokens += (double)(now - b->ms) * LL_RATE / 1000.0;
    if (b->tokens > LL_BURST)
        b->tokens = LL_BURST;
    b->ms = now;
    if (b->tokens < 1.0)
        return false;
    b->tokens -= 1.0;
    return true;
}

/* One timer serves the flush, the drop reports and the probe's release: arming only ever brings
 * the next tick forward; each tick clears it and every need re-arms itself. */
static void arm(mncd_llaudit *la, long ms)
{
    if (ms < 1)
        ms = 1;
    uint64_t due = mnc_now_ms() + (uint64_t)ms;
    if (la->tfd < 0 || (la->due_ms && la->due_ms <= due))
        return;
    struct itimerspec its = {.it_value = {ms / 1000, (ms % 1000) * 1000000L}};
    if (timerfd_settime(la->tfd, 0, &its, NULL) != 0)
        fprintf(stderr, "mncd: landlock audit timer: %s\n", strerror(errno));
    else
        la->due_ms = due;
}

/* At most once a second: one landlock_dropped record per agent whose denials were not all
 * audited (sender = the agent), and one with sender null for unattributed or unparsable ones,
 * overflows of mncd's receive queue and what the kernel's own audit queue lost meanwhile. */
static void report_drops(mncd *d, mncd_llaudit *la, bool force)
{
    if (!la->drops_unreported && !la->overflows_unreported)
        return;
    uint64_t now = mnc_now_ms();
    if (!force && now - la->last_drop_report_ms < 1000) {
        arm(la, (long)(1000 - (now - la->last_drop_report_ms)));
        return;
    }
    char ov[320] = "", c1[48], c2[48], c3[48];
    int ol = 0;
    if (la->overflows_unreported)
        ol = snprintf(ov, sizeof(ov),
                      "; mncd's receive queue overflowed (%s time(s)): an unknown number of records were lost",
                      count_class(la->overflows_unreported, c1, sizeof(c1)));
    struct audit_status st;
    if (audit_ctl(AUDIT_GET, NULL, &st) == 0 && st.lost != la->lost_reported) {
        snprintf(ov + ol, sizeof(ov) - (size_t)ol,
                 "; the kernel's audit queue lost %s record(s) (host-wide, any type) since the last report",
                 count_class(st.lost - la->lost_reported, c1, sizeof(c1)));
        la->lost_reported = st.lost;
    }
    for (int i = 0; i < la->n_b; i++) {
        struct ll_bucket *b = &la->b[i];
        if (!b->unreported && (i || !ov[0]))
            continue;
        char det[700];
        snprintf(det, sizeof(det),
                 "%s Landlock denial(s)%s not audited one by one (rate limit %d/s, burst %d, per agent)%s; %s "
                 "dropped in total (all agents)",
                 count_class(b->unreported, c2, sizeof(c2)), i ? "" : " (not attributed, or unparsable)", LL_RATE,
                 LL_BURST, i ? "" : ov, count_class(la->n_dropped, c3, sizeof(c3)));
        /* a summary, at most one per agent per second: not charged to the agent's budget */
        mncd_audit_summary(d, "kernel.landlock", i ? d->policy->principals[i - 1].name : NULL, "deny",
                           "landlock_dropped", det);
        b->unreported = 0;
    }
    la->drops_unreported = la->overflows_unreported = 0;
    la->last_drop_report_ms = now;
}

static void drop(mncd_llaudit *la, int agent, uint64_t n)
{
    la->n_dropped += n;
    la->drops_unreported += n;
    bucket(la, agent)->unreported += n;
}

/* One denial: attribute it, then audit it (or ignore it: outside the tree). */
static void emit(mncd *d, mncd_llaudit *la, const ll_event *e, const ll_denial *dn)
{
    ll_domain *dm = dom_find(la, dn->domain);
    long pid = e->pid > 0 ? e->pid : dm ? dm->creator : 0;
    /* the uid check (pid reuse) only for the SYSCALL record's pid: it is the uid at the denial;
     * a creator may have changed uid after landlock_restrict_self */
    long uid = e->pid > 0 ? e->uid : -1;
    if (la->selftest_pid && pid == la->selftest_pid) {
        la->selftest_seen = true;
        return;
    }
    char cg[512];
    int agent;
    enum ll_verdict v = where(d, la, pid, uid, &agent, cg, sizeof(cg));
    const char *how = "";
    char howbuf[700], cgh[MNC_AUDIT_HV_MAX], pidh[MNC_AUDIT_HV_MAX];
    if (!dm && (v == V_AGENT || v == V_FOREIGN))
        dm = dom_get(la, dn->domain); /* its allocated record came before mncd started */
    if (dm && v == V_AGENT && dm->v == V_UNKNOWN) {
        dm->v = V_AGENT; /* every later denial of this domain is this agent's */
        dm->agent = agent;
    } else if (dm && v == V_FOREIGN && dm->v == V_UNKNOWN) {
        dm->v = V_FOREIGN;
    }
    if (v == V_FOREIGN && dm && dm->v == V_AGENT) {
        agent = dm->agent;
        snprintf(howbuf, sizeof(howbuf),
                 " (now in cgroup %s, outside the agent's: agent known from its Landlock domain)",
                 mncd_hv_str(d, cg, cgh));
        how = howbuf;
    } else if (v == V_FOREIGN || (v == V_GONE && dm && dm->v == V_FOREIGN)) {
        la->n_ignored++; /* not an mnc agent's process */
        return;
    } else if (v == V_GONE && dm && dm->v == V_AGENT) {
        agent = dm->agent;
        how = " (exited before mncd read its cgroup: agent known from its Landlock domain)";
    } else if (v == V_GONE) {
        agent = -1;
        how = " (exited before mncd could read its cgroup: NOT attributed to an agent)";
        la->n_unattributed++;
    } else if (v == V_TREE) {
        agent = dm && dm->v == V_AGENT ? dm->agent : -1;
        snprintf(howbuf, sizeof(howbuf), " (cgroup %s: in the mnc tree, not a registered agent cgroup)",
                 mncd_hv_str(d, cg, cgh));
        how = howbuf;
    } else {
        snprintf(howbuf, sizeof(howbuf), " (cgroup %.500s)", cg);
        how = howbuf;
    }
    if (!take_token(bucket(la, agent))) {
        drop(la, agent, 1);
        report_drops(d, la, false);
        return;
    }
    char det[1600];
    /* the pid as a keyed hash: an agent picks which of its processes is refused, and pids are
     * allocated in order (`mncctl audit hash PID` finds a process's records) */
    snprintf(det, sizeof(det), "Landlock denied %s: %s; pid %s%s%s; domain %" PRIx64, dn->blockers,
             dn->obj[0] ? dn->obj : "(no object)", mncd_hv_u64(d, (uint64_t)pid, pidh),
             e->pid > 0 ? "" : " (the domain's creator)", how, dn->domain);
    mncd_audit_event(d, "kernel.landlock", agent >= 0 && agent < d->policy->n_principals ? agent : -1, NULL, NULL,
                     "deny", "landlock", det);
    la->n_audited++;
}

static void flush_event(mncd *d, mncd_llaudit *la, ll_event *e)
{
    for (int i = 0; i < e->n && !d->fatal; i++)
        emit(d, la, e, &e->den[i]);
    if (e->extra) {
        drop(la, -1, e->extra);
        report_drops(d, la, false);
    }
    e->used = false;
}

static ll_event *event_get(mncd *d, mncd_llaudit *la, uint32_t serial, bool create)
{
    ll_event *old = NULL;
    for (int i = 0; i < LL_PENDING; i++) {
        if (la->ev[i].used && la->ev[i].serial == serial)
            return &la->ev[i];
        if (la->ev[i].used && (!old || la->ev[i].t_ms < old->t_ms))
            old = &la->ev[i];
    }
    if (!create)
        return NULL;
    for (int i = 0; i < LL_PENDING; i++)
        if (!la->ev[i].used) {
            old = &la->ev[i];
            goto init;
        }
    flush_event(d, la, old); /* table full: the oldest goes out now, with what it has */
init:
    memset(old, 0, sizeof(*old));
    old->used = true;
    old->serial = serial;
    old->t_ms = mnc_now_ms();
    old->uid = -1;
    arm(la, LL_FLUSH_MS);
    return old;
}

static void flush_old(mncd *d, mncd_llaudit *la, bool all)
{
    uint64_t now = mnc_now_ms();
    bool left = false;
    for (int i = 0; i < LL_PENDING; i++) {
        if (!la->ev[i].used)
            continue;
        if (all || now - la->ev[i].t_ms >= LL_FLUSH_MS)
            flush_event(d, la, &la->ev[i]);
        else
            left = true;
    }
    if (left)
        arm(la, LL_FLUSH_MS);
}

static void on_record(mncd *d, mncd_llaudit *la, int type, const char *s)
{
    uint32_t serial;
    const char *f = llr_header(s, &serial);
    if (!f)
        return;
    char v[64];
    if (type == AUDIT_LANDLOCK_ACCESS) {
        ll_event *e = event_get(d, la, serial, true);
        if (e->n == LL_PER_EVENT) {
            e->extra++;
            return;
        }
        ll_denial *dn = &e->den[e->n++];
        dn->domain = llr_field(f, "domain", v, sizeof(v)) > 0 ? strtoull(v, NULL, 16) : 0;
        char b[128];
        if (llr_field(f, "blockers", b, sizeof(b)) < 0)
            snprintf(b, sizeof(b), "?");
        llr_untrusted(b, strlen(b), false, dn->blockers, sizeof(dn->blockers));
        llr_object(d, f, dn->obj, sizeof(dn->obj));
    } else if (type == AUDIT_LANDLOCK_DOMAIN) {
        uint64_t id = llr_field(f, "domain", v, sizeof(v)) > 0 ? strtoull(v, NULL, 16) : 0;
        char st[32];
        if (!id || llr_field(f, "status", st, sizeof(st)) < 0)
            return;
        if (strcmp(st, "allocated") == 0) {
            ll_domain *dm = dom_get(la, id);
            dm->creator = llr_field(f, "pid", v, sizeof(v)) > 0 ? strtol(v, NULL, 10) : 0;
            dm->creator_uid = llr_field(f, "uid", v, sizeof(v)) > 0 ? strtol(v, NULL, 10) : -1;
            if (la->selftest_pid && dm->creator == la->selftest_pid)
                return;
            /* the creator made the domain inside its cgroup: that is where its processes belong */
            char cg[512];
            int agent;
            enum ll_verdict w = where(d, la, dm->creator, -1, &agent, cg, sizeof(cg));
            if (w == V_AGENT || w == V_FOREIGN || w == V_TREE) {
                dm->v = w;
                dm->agent = agent;
            }
        } else if (strcmp(st, "deallocated") == 0) {
            /* its last denials may still wait for a context-less flush: do them first */
            for (int i = 0; i < LL_PENDING; i++)
                for (int j = 0; la->ev[i].used && j < la->ev[i].n; j++)
                    if (la->ev[i].den[j].domain == id) {
                        flush_event(d, la, &la->ev[i]);
                        break;
                    }
            ll_domain *dm = dom_find(la, id);
            if (dm)
                dm->id = 0;
        }
    } else if (type == AUDIT_SYSCALL) {
        ll_event *e = event_get(d, la, serial, false);
        if (e) {
            e->pid = llr_field(f, "pid", v, sizeof(v)) > 0 ? strtol(v, NULL, 10) : 0;
            e->uid = llr_field(f, "uid", v, sizeof(v)) > 0 ? strtol(v, NULL, 10) : -1;
        }
    } else if (type == AUDIT_EOE) {
        ll_event *e = event_get(d, la, serial, false);
        if (e)
            flush_event(d, la, e);
    }
}

/* Reads up to LL_BATCH messages. Returns how many were read. */
static int drain(mncd *d, mncd_llaudit *la)
{
    static char buf[LL_MSG_MAX] __attribute__((aligned(4)));
    int got = 0;
    while (got < LL_BATCH && !d->fatal) {
        ssize_t n = recv(la->nl, buf, sizeof(buf) - 1, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) { /* the kernel could not queue some records for us */
                la->n_overflows++;
                la->overflows_unreported++;
                report_drops(d, la, false);
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "mncd: landlock audit socket: %s\n", strerror(errno));
            break;
        }
        got++;
        if ((size_t)n >= sizeof(buf)) { /* truncated: cannot be parsed safely */
            drop(la, -1, 1);
            report_drops(d, la, false);
            continue;
        }
        int len = (int)n;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
            int t = h->nlmsg_type;
            if (t != AUDIT_LANDLOCK_ACCESS && t != AUDIT_LANDLOCK_DOMAIN && t != AUDIT_SYSCALL && t != AUDIT_EOE)
                continue;
            size_t pl = h->nlmsg_len - NLMSG_HDRLEN;
            char *p = NLMSG_DATA(h);
            char save = p[pl]; /* inside buf: pl < n < sizeof(buf) */
            p[pl] = 0;         /* the payload is not NUL-terminated on the wire */
            if (t == AUDIT_LANDLOCK_ACCESS || t == AUDIT_LANDLOCK_DOMAIN)
                la->n_records++;
            on_record(d, la, t, p);
            p[pl] = save;
        }
    }
    return got;
}

/* ---- start: status, enable, bind, self-test */

__attribute__((format(printf, 2, 3))) static void set_off(mncd_llaudit *la, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    la->on = false;
    vsnprintf(la->why, sizeof(la->why), fmt, ap);
    va_end(ap);
}

/* The probe child: a fresh Landlock domain that handles directory reads, then a read of "/".
 * Same exec: the default logging (LOG_SAME_EXEC on) reports it. Waits on `sync` (up to 3 s) so
 * that every listener (other mncd instances too) sees it alive: outside their trees, ignored. */
static void probe_child(int res, int sync)
{
    /* First drop every other fd inherited from mncd: the probe outlives a killed mncd by a few
     * ms, and a copy of the state journal's fd would keep its flock for that long (a restarted
     * mncd then refused to start: "journal is in use"). */
    int lo = res < sync ? res : sync, hi = res < sync ? sync : res;
    if ((lo > 3 && syscall(SYS_close_range, 3u, (unsigned)lo - 1, 0u) != 0) ||
        (hi > lo + 1 && syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0u) != 0) ||
        syscall(SYS_close_range, (unsigned)hi + 1, ~0u, 0u) != 0)
        _exit(2);
    struct landlock_ruleset_attr a;
    memset(&a, 0, sizeof(a));
    a.handled_access_fs = LANDLOCK_ACCESS_FS_READ_DIR;
    int e = 0;
    int rs = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof(a.handled_access_fs), 0);
    if (rs < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, rs, 0) != 0)
        e = errno ? errno : EINVAL;
    else {
        int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        e = fd >= 0 ? 0 : errno;
    }
    if (write(res, &e, sizeof(e)) != (ssize_t)sizeof(e))
        _exit(2);
    struct pollfd p = {.fd = sync, .events = POLLIN};
    (void)poll(&p, 1, 3000);
    _exit(0);
}

static void selftest(mncd *d, mncd_llaudit *la)
{
    int res[2], sync[2];
    if (pipe2(res, O_CLOEXEC) != 0)
        return set_off(la, "self-test: pipe: %s", strerror(errno));
    if (pipe2(sync, O_CLOEXEC) != 0) {
        close(res[0]);
        close(res[1]);
        return set_off(la, "self-test: pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(res[0]);
        close(sync[1]);
        probe_child(res[1], sync[0]);
    }
    close(res[1]);
    close(sync[0]);
    if (pid < 0) {
        close(res[0]);
        close(sync[1]);
        return set_off(la, "self-test: fork: %s", strerror(errno));
    }
    la->selftest_pid = pid;
    la->selftest_sync = sync[1];
    la->selftest_close_ms = mnc_now_ms() + 1000;
    int e = -1;
    struct pollfd rp = {.fd = res[0], .events = POLLIN};
    if (poll(&rp, 1, LL_SELFTEST_MS) == 1 && read(res[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
        e = -1;
    close(res[0]);
    if (e != EACCES) {
        set_off(la, "self-test: the probe's Landlock-denied read of / returned %s (want EACCES)",
                e < 0    ? "nothing"
                : e == 0 ? "success"
                         : strerror(e));
        return;
    }
    uint64_t t0 = mnc_now_ms(), end = t0 + LL_SELFTEST_MS;
    while (!la->selftest_seen && mnc_now_ms() < end && !d->fatal) {
        struct pollfd p = {.fd = la->nl, .events = POLLIN};
        if (poll(&p, 1, 20) > 0)
            drain(d, la);
        flush_old(d, la, false); /* events without EOE (a task without audit context) */
    }
    if (!la->selftest_seen)
        set_off(la, "self-test: the kernel delivered no record of the probe's Landlock denial within %d ms",
                LL_SELFTEST_MS);
    else
        snprintf(la->why, sizeof(la->why), "self-test: the probe's Landlock denial arrived in %" PRIu64 " ms%s",
                 mnc_now_ms() - t0, la->enabled_by_mncd ? "; kernel audit enabled by mncd (no auditd)" : "");
    la->on = la->selftest_seen;
    arm(la, 1000); /* releases the probe */
}

mncd_llaudit *mncd_llaudit_start(mncd *d, mncd_agent_of_fn agent_of)
{
    mncd_llaudit *la = calloc(1, sizeof(*la));
    if (!la) {
        fprintf(stderr, "mncd: landlock audit: out of memory\n");
        return NULL;
    }
    la->agent_of = agent_of;
    la->nl = la->tfd = la->selftest_sync = -1;
    la->n_b = d->policy->n_principals + 1;
    la->b = calloc((size_t)la->n_b, sizeof(*la->b));
    if (!la->b) {
        free(la);
        fprintf(stderr, "mncd: landlock audit: out of memory\n");
        return NULL;
    }
    for (int i = 0; i < la->n_b; i++)
        la->b[i] = (struct ll_bucket){.tokens = LL_BURST, .ms = mnc_now_ms()};
    struct audit_status st;
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    int r;
    if (abi < LL_ABI_MIN) {
        if (abi < 0)
            set_off(la, "Landlock unavailable (%s): no Landlock denials to audit", strerror(errno));
        else
            set_off(la, "Landlock ABI %ld < %d: this kernel emits no Landlock audit records", abi, LL_ABI_MIN);
    } else if ((r = audit_ctl(AUDIT_GET, NULL, &st)) != 0) {
        set_off(la, "kernel audit status (NETLINK_AUDIT AUDIT_GET): %s", strerror(-r));
        if (r == -EPROTONOSUPPORT)
            snprintf(la->why, sizeof(la->why), "the kernel has no audit support (CONFIG_AUDIT off)");
    } else if (st.enabled == 0 && st.pid != 0) {
        set_off(la,
                "kernel audit is disabled and auditd (pid %u) manages it: mncd does not override the host's audit "
                "configuration (`auditctl -e 1` enables it; then restart mncd)",
                st.pid);
    } else {
        la->lost_at_start = la->lost_reported = st.lost;
        if (st.enabled == 0) {
            struct audit_status set;
            memset(&set, 0, sizeof(set));
            set.mask = AUDIT_STATUS_ENABLED;
            set.enabled = 1;
            if ((r = audit_ctl(AUDIT_SET, &set, NULL)) != 0)
                set_off(la, "kernel audit is disabled and enabling it failed (AUDIT_SET enabled=1): %s", strerror(-r));
            else {
                la->enabled_by_mncd = true;
                ll_audit_state(d, "allow", "ok",
                               "kernel audit was disabled and no auditd runs: mncd enabled it (AUDIT_SET enabled=1) "
                               "so that Landlock denials are reported; it stays enabled when mncd stops");
            }
        }
        /* The kernel's default queue of 64 records loses most of a burst of denials before
         * kauditd forwards them (measured: a 3000-denial flood lost ~2400 records). With no
         * auditd, mncd raises it to the value auditd's stock rules use. An auditd's setting is
         * its own: left alone. */
        if (!la->why[0] && st.pid == 0 && st.backlog_limit < LL_BACKLOG) {
            struct audit_status set;
            memset(&set, 0, sizeof(set));
            set.mask = AUDIT_STATUS_BACKLOG_LIMIT;
            set.backlog_limit = LL_BACKLOG;
            char det[300];
            r = audit_ctl(AUDIT_SET, &set, NULL);
            snprintf(det, sizeof(det), "no auditd runs: kernel audit backlog_limit %u -> %d (AUDIT_SET)%s%s",
                     st.backlog_limit, LL_BACKLOG, r ? " FAILED: " : "", r ? strerror(-r) : "");
            ll_audit_state(d, r ? "error" : "allow", r ? "internal" : "ok", det);
        }
        if (!la->why[0]) {
            struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1)};
            int sz = LL_RCVBUF;
            la->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_AUDIT);
            /* Only the record types mncd reads are queued to it (the kernel runs the socket filter
             * before queueing a multicast copy): PROCTITLE, BPF, CONFIG_CHANGE... of every
             * event on the host never fill its queue. ldh loads in network order: htons. */
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
            if (la->nl >= 0 && setsockopt(la->nl, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0)
                fprintf(stderr,
                        "mncd: landlock audit: socket filter not attached (%s): every audit record is queued to mncd\n",
                        strerror(errno));
            la->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
            if (la->nl < 0 || la->tfd < 0 || bind(la->nl, (struct sockaddr *)&sa, sizeof(sa)) != 0)
                set_off(la, "audit multicast listener (NETLINK_AUDIT, AUDIT_NLGRP_READLOG; needs CAP_AUDIT_READ): %s",
                        strerror(errno));
            else {
                /* a burst must queue, not overflow; FORCE passes rmem_max (root), else best effort */
                if (setsockopt(la->nl, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
                    (void)setsockopt(la->nl, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
                selftest(d, la);
            }
        }
    }
    if (!la->on && la->nl >= 0) { /* off means off: no listener claims anything */
        close(la->nl);
        la->nl = -1;
    }
    char det[600];
    snprintf(det, sizeof(det), "%s: %s", la->on ? "on" : "OFF (Landlock denials of agents are NOT audited)", la->why);
    fprintf(stderr, "mncd: landlock audit %s\n", det);
    ll_audit_state(d, la->on ? "allow" : "error", la->on ? "ok" : "internal", det);
    return la;
}

void mncd_llaudit_stop(mncd_llaudit *la)
{
    if (!la)
        return;
    if (la->nl >= 0)
        close(la->nl);
    if (la->tfd >= 0)
        close(la->tfd);
    if (la->selftest_sync >= 0)
        close(la->selftest_sync);
    if (la->selftest_pid > 0)
        (void)waitpid((pid_t)la->selftest_pid, NULL, 0); /* exits at EOF on its sync pipe */
    free(la->b);
    free(la);
}

int mncd_llaudit_fds(const mncd_llaudit *la, int fds[MNCD_LLAUDIT_MAX_FDS])
{
    int n = 0;
    if (la && la->nl >= 0)
        fds[n++] = la->nl;
    if (la && la->tfd >= 0)
        fds[n++] = la->tfd;
    return n;
}

bool mncd_llaudit_ready(mncd *d, mncd_llaudit *la, int fd)
{
    if (!la || fd < 0 || (fd != la->nl && fd != la->tfd))
        return false;
    if (fd == la->nl) {
        drain(d, la);
        return true;
    }
    uint64_t ticks;
    if (read(la->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
        fprintf(stderr, "mncd: landlock audit timer: %s\n", strerror(errno));
    la->due_ms = 0;
    flush_old(d, la, false);
    report_drops(d, la, false);
    if (la->selftest_sync >= 0 && mnc_now_ms() >= la->selftest_close_ms) {
        close(la->selftest_sync); /* the probe has been seen by every listener: let it go */
        la->selftest_sync = -1;
        (void)waitpid((pid_t)la->selftest_pid, NULL, 0);
        la->selftest_pid = 0;
    } else if (la->selftest_sync >= 0) {
        arm(la, (long)(la->selftest_close_ms - mnc_now_ms()));
    }
    return true;
}

void mncd_llaudit_status(const mncd_llaudit *la, const char *why_off, cJSON *kernel_obj)
{
    cJSON *k = kernel_obj;
    bool on = la && la->on;
    char why[600];
    snprintf(why, sizeof(why), "%s", la ? la->why : why_off);
    struct audit_status st;
    int r = la && la->on ? audit_ctl(AUDIT_GET, NULL, &st) : 0;
    if (on && r != 0) {
        snprintf(why, sizeof(why), "kernel audit status unreadable now (%s)", strerror(-r));
        on = false;
    } else if (on && st.enabled == 0) {
        snprintf(why, sizeof(why),
                 "kernel audit was disabled after mncd started (enabled=0): Landlock reports nothing");
        on = false;
    }
    cJSON_AddStringToObject(k, "landlock_audit", on ? "on" : "off");
    cJSON_AddStringToObject(k, "landlock_audit_why", why);
    if (!la)
        return;
    cJSON_AddNumberToObject(k, "landlock_denials_audited", (double)la->n_audited);
    cJSON_AddNumberToObject(k, "landlock_dropped", (double)la->n_dropped);
    cJSON_AddNumberToObject(k, "landlock_ignored", (double)la->n_ignored);
    cJSON_AddNumberToObject(k, "landlock_unattributed", (double)la->n_unattributed);
    cJSON_AddNumberToObject(k, "landlock_records", (double)la->n_records);
    cJSON_AddNumberToObject(k, "landlock_queue_overflows", (double)la->n_overflows);
    if (la->on && r == 0) {
        cJSON_AddNumberToObject(k, "audit_enabled", st.enabled);
        cJSON_AddNumberToObject(k, "auditd_pid", st.pid);
        cJSON_AddNumberToObject(k, "audit_lost_since_start",
                                st.lost >= la->lost_at_start ? st.lost - la->lost_at_start : st.lost);
        cJSON_AddBoolToObject(k, "audit_enabled_by_mncd", la->enabled_by_mncd);
    }
}
