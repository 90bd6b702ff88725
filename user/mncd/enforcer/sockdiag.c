// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockdiag.c - the sweep's sock_diag client (contract in sockdiag.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mnc_util.h"
#include "sockdiag.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int nl_send(diag *g, uint16_t type, uint16_t flags, const void *body, size_t len)
{
    char buf[NLMSG_SPACE(sizeof(struct inet_diag_req_v2)) + 64];
    if (NLMSG_SPACE(len) > sizeof(buf))
        return -EINVAL;
    memset(buf, 0, sizeof(buf));
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    h->nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
    h->nlmsg_type = type;
    h->nlmsg_flags = flags;
    h->nlmsg_seq = ++g->seq;
    memcpy(NLMSG_DATA(h), body, len);
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    ssize_t r = sendto(g->nl, buf, h->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa));
    return r == (ssize_t)h->nlmsg_len ? 0 : r < 0 ? -errno : -EIO;
}

/* Reads replies to the last request until DONE (dump) or the ACK/error (non-dump). cb gets
 * each data message. Returns 0 or -errno (including the kernel's error code). */
static int nl_recv(diag *g, int (*cb)(diag *, const struct nlmsghdr *))
{
    /* static: mncd is single-threaded and a dump message must fit whole */
    static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (;;) {
        ssize_t n = recv(g->nl, buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != g->seq)
                continue; /* a stale reply to an earlier request */
            if (h->nlmsg_type == NLMSG_DONE)
                return 0;
            if (h->nlmsg_type == NLMSG_ERROR) {
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                    return -EPROTO;
                const struct nlmsgerr *e = NLMSG_DATA(h);
                return e->error; /* 0 = ACK */
            }
            if (cb) {
                int r = cb(g, h);
                if (r)
                    return r;
            }
        }
    }
}

/* netlink attributes (same layout as struct nlattr) */
#define ATTR_OK(a, len)                                                                                                \
    ((len) >= (int)sizeof(struct nlattr) && (a)->nla_len >= sizeof(struct nlattr) && (a)->nla_len <= (len))
#define ATTR_NEXT(a, len) ((len) -= NLA_ALIGN((a)->nla_len), (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))
#define ATTR_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a) ((int)(a)->nla_len - NLA_HDRLEN)

static int unix_cb(diag *g, const struct nlmsghdr *h)
{
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
        return 0;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (mnc_grow((void **)&g->u, &g->cu, g->nu, sizeof(*g->u), 256) != 0)
        return -ENOMEM;
    uent *e = &g->u[g->nu++];
    memset(e, 0, sizeof(*e));
    e->ino = m->udiag_ino;
    e->type = m->udiag_type;
    e->state = m->udiag_state;
    int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
    for (struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(sizeof(*m))); ATTR_OK(a, len);
         a = ATTR_NEXT(a, len)) {
        int l = ATTR_LEN(a);
        switch (a->nla_type) {
        case UNIX_DIAG_NAME:
            if (l > 0) {
                e->namelen = (uint8_t)(l > MNC_UNIX_PATH_MAX ? MNC_UNIX_PATH_MAX : l);
                memcpy(e->name, ATTR_DATA(a), e->namelen);
            }
            break;
        case UNIX_DIAG_PEER:
            if (l >= 4)
                memcpy(&e->peer, ATTR_DATA(a), 4);
            break;
        case UNIX_DIAG_SHUTDOWN:
            if (l >= 1)
                e->shut = *(uint8_t *)ATTR_DATA(a);
            break;
        case UNIX_DIAG_RQLEN:
            if (l >= (int)sizeof(struct unix_diag_rqlen)) {
                e->rqlen = ((struct unix_diag_rqlen *)ATTR_DATA(a))->udiag_rqueue;
                e->wqlen = ((struct unix_diag_rqlen *)ATTR_DATA(a))->udiag_wqueue;
            }
            break;
        }
    }
    return 0;
}

static void to_v6(uint8_t out[16], const uint32_t in[4], bool v4)
{
    memset(out, 0, 16);
    if (v4) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &in[0], 4);
    } else {
        memcpy(out, in, 16);
    }
}

static int tcp_cb(diag *g, const struct nlmsghdr *h)
{
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
        return 0;
    const struct inet_diag_msg *m = NLMSG_DATA(h);
    if (mnc_grow((void **)&g->t, &g->ct, g->nt, sizeof(*g->t), 256) != 0)
        return -ENOMEM;
    tent *e = &g->t[g->nt++];
    memset(e, 0, sizeof(*e));
    e->family = m->idiag_family;
    e->proto = g->proto;
    e->state = m->idiag_state;
    e->id = m->id;
    e->ino = m->idiag_inode;
    e->sport = ntohs(m->id.idiag_sport);
    e->dport = ntohs(m->id.idiag_dport);
    bool v4 = m->idiag_family == AF_INET;
    to_v6(e->src, m->id.idiag_src, v4);
    to_v6(e->dst, m->id.idiag_dst, v4);
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    e->v4 = memcmp(e->dst, mapped, 12) == 0;
    int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
    for (struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(sizeof(*m))); ATTR_OK(a, len);
         a = ATTR_NEXT(a, len))
        if (a->nla_type == INET_DIAG_CGROUP_ID && ATTR_LEN(a) >= 8) {
            memcpy(&e->cgid, ATTR_DATA(a), 8);
            e->has_cg = true;
        }
    return 0;
}

static int cmp_uent(const void *a, const void *b) { return cmp_u32(&((const uent *)a)->ino, &((const uent *)b)->ino); }

uent *mncd_diag_unix_find(diag *g, uint32_t ino)
{
    uent key = {.ino = ino};
    return g->nu ? bsearch(&key, g->u, (size_t)g->nu, sizeof(*g->u), cmp_uent) : NULL;
}

int mncd_diag_load(diag *g, char *err, size_t errlen)
{
    g->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (g->nl < 0) {
        snprintf(err, errlen, "sock_diag socket: %s", strerror(errno));
        return -1;
    }
    struct unix_diag_req ur = {.sdiag_family = AF_UNIX,
                               .udiag_states = ~0u,
                               .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN};
    int r = nl_send(g, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, &ur, sizeof(ur));
    if (!r)
        r = nl_recv(g, unix_cb);
    if (r) {
        snprintf(err, errlen, "UNIX sock_diag dump: %s", strerror(-r));
        return -1;
    }
    if (g->nu)
        qsort(g->u, (size_t)g->nu, sizeof(*g->u), cmp_uent);
    return 0;
}

int mncd_diag_load_inet(diag *g, char *err, size_t errlen)
{
    if (g->inet_done) {
        if (g->inet_failed)
            snprintf(err, errlen, "inet sock_diag dump: %s", strerror(g->inet_failed));
        return g->inet_failed ? -1 : 0;
    }
    g->inet_done = true;
    /* TCP (judged by destination) and UDP (by creator: INET_DIAG_CGROUP_ID); an inet socket in
     * neither dump (raw, ping, another namespace) has no provable creator */
    for (int i = 0; i < 4; i++) {
        int fam = i & 1;
        g->proto = i < 2 ? IPPROTO_TCP : IPPROTO_UDP;
        struct inet_diag_req_v2 tr = {
            .sdiag_family = fam ? AF_INET6 : AF_INET, .sdiag_protocol = g->proto, .idiag_states = ~0u};
        int r = nl_send(g, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, &tr, sizeof(tr));
        if (!r)
            r = nl_recv(g, tcp_cb);
        if (r == -ENOENT && (fam || g->proto == IPPROTO_UDP))
            r = 0; /* no IPv6, or no udp_diag, in this kernel: those sockets count as foreign */
        if (r) {
            g->inet_failed = -r;
            snprintf(err, errlen, "%s sock_diag dump: %s", g->proto == IPPROTO_TCP ? "TCP" : "UDP", strerror(-r));
            return -1;
        }
    }
    return 0;
}

void mncd_diag_free(diag *g)
{
    if (g->nl >= 0)
        close(g->nl);
    free(g->u);
    free(g->t);
}

int mncd_diag_destroy_tcp(diag *g, const tent *e)
{
    struct inet_diag_req_v2 r = {
        .sdiag_family = e->family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u, .id = e->id};
    int rc = nl_send(g, SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, &r, sizeof(r));
    return rc ? rc : nl_recv(g, NULL);
}
