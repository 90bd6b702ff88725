/* sockscan.c - the pre-taint connection sweep (contract in sockscan.h). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sockscan.h"

#define FREEZE_TIMEOUT_MS 2000
#define MAX_PIDS 65536
#define UNIX_LISTEN 10 /* TCP_LISTEN: unix sockets reuse the TCP state numbers */
#define UNIX_ESTABLISHED 1

/* ---- small helpers */

static void seterr(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t n, const char *fmt, ...)
{
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

typedef struct u32set {
    uint32_t *v;
    int n, cap;
    bool sorted;
} u32set;

static int u32set_add(u32set *s, uint32_t x)
{
    if (s->n == s->cap) {
        int c = s->cap ? s->cap * 2 : 64;
        uint32_t *t = realloc(s->v, (size_t)c * sizeof(*t));
        if (!t)
            return -ENOMEM;
        s->v = t;
        s->cap = c;
    }
    s->v[s->n++] = x;
    s->sorted = false;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool u32set_has(u32set *s, uint32_t x)
{
    if (!s->sorted) {
        if (s->n)
            qsort(s->v, (size_t)s->n, sizeof(*s->v), cmp_u32);
        s->sorted = true;
    }
    return s->n && bsearch(&x, s->v, (size_t)s->n, sizeof(*s->v), cmp_u32);
}

/* "socket:[12345]" -> 12345; 0 if not a socket */
static uint32_t socket_ino(const char *link)
{
    unsigned long v;
    char tail;
    if (sscanf(link, "socket:[%lu%c", &v, &tail) != 2 || tail != ']' || v == 0 || v > UINT32_MAX)
        return 0;
    return (uint32_t)v;
}

/* ---- cgroup freezer: nothing in the agent runs while its sockets are judged and shut, so no
 * fork, fd shuffle, accept or send can race the scan (sockscan.h) */

typedef struct frozen {
    char path[PATH_MAX];
    bool was_frozen; /* frozen by someone else before: left frozen */
} frozen;

static int read_small(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t r = read(fd, buf, n - 1);
    int e = errno;
    close(fd);
    if (r < 0)
        return -e;
    buf[r] = 0;
    return 0;
}

static int write_small(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t r = write(fd, s, strlen(s));
    int e = errno;
    close(fd);
    return r == (ssize_t)strlen(s) ? 0 : r < 0 ? -e : -EIO;
}

/* 1 frozen, 0 not (yet), -errno (a removed cgroup is -ENOENT) */
static int cg_frozen(const char *cg)
{
    char p[PATH_MAX + 32], b[256];
    snprintf(p, sizeof(p), "%s/cgroup.events", cg);
    int r = read_small(p, b, sizeof(b));
    if (r)
        return r;
    const char *f = strstr(b, "frozen ");
    return f ? f[7] == '1' : -EPROTO;
}

static void thaw(frozen *fz, int n)
{
    char p[PATH_MAX + 32];
    for (int i = 0; i < n; i++) {
        if (fz[i].was_frozen)
            continue;
        snprintf(p, sizeof(p), "%s/cgroup.freeze", fz[i].path);
        /* a failure leaves the agent stopped: fail closed, and the cgroup may be gone anyway */
        int r = write_small(p, "0");
        if (r != 0 && r != -ENOENT)
            fprintf(stderr, "mncd: sweep: cannot thaw %s: %s\n", fz[i].path, strerror(-r));
    }
}

static int freeze(const mncd_sweep_cg *cgs, int ncg, frozen *fz, int *nfz, char *err, size_t errlen)
{
    char p[PATH_MAX + 32], b[16];
    *nfz = 0;
    for (int i = 0; i < ncg; i++) {
        frozen *f = &fz[*nfz];
        snprintf(f->path, sizeof(f->path), "%s", cgs[i].path);
        snprintf(p, sizeof(p), "%s/cgroup.freeze", cgs[i].path);
        int r = read_small(p, b, sizeof(b));
        if (r == -ENOENT)
            continue; /* the cgroup went away (agent exited): nothing to sweep there */
        if (r) {
            seterr(err, errlen, "read %s: %s", p, strerror(-r));
            return -1;
        }
        f->was_frozen = b[0] == '1';
        if (!f->was_frozen && (r = write_small(p, "1")) != 0) {
            if (r == -ENOENT)
                continue;
            seterr(err, errlen, "freeze %s: %s", cgs[i].path, strerror(-r));
            return -1;
        }
        (*nfz)++;
    }
    long deadline = now_us() + FREEZE_TIMEOUT_MS * 1000L;
    for (int i = 0; i < *nfz; i++) {
        for (;;) {
            int r = cg_frozen(fz[i].path);
            if (r == 1 || r == -ENOENT)
                break;
            if (r < 0) {
                seterr(err, errlen, "read %s/cgroup.events: %s", fz[i].path, strerror(-r));
                return -1;
            }
            if (now_us() > deadline) {
                /* e.g. a task in uninterruptible sleep: judging a running agent would race */
                seterr(err, errlen, "%s did not freeze within %d ms", fz[i].path, FREEZE_TIMEOUT_MS);
                return -1;
            }
            struct timespec ts = {0, 200 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

/* ---- sock_diag */

typedef struct uent {
    uint32_t ino, peer;
    uint8_t type, state, shut, namelen; /* namelen 0: unnamed */
    uint32_t rqlen;
    char name[MNC_UNIX_PATH_MAX]; /* sun_path bytes; abstract: leading NUL */
} uent;

typedef struct tent {
    uint8_t family, state; /* as dumped (AF_INET / AF_INET6) */
    struct inet_diag_sockid id;
    uint8_t src[16], dst[16]; /* v4 as v4-mapped v6, for matching the two ends of a pair */
    uint16_t sport, dport;    /* host order */
    bool v4;                  /* IPv4 or v4-mapped */
    bool has_cg;
    uint64_t cgid;
    uint32_t ino;
} tent;

typedef struct diag {
    int nl;
    uint32_t seq;
    uent *u;
    int nu, cu;
    tent *t;
    int nt, ct;
} diag;

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
#define ATTR_OK(a, len) ((len) >= (int)sizeof(struct nlattr) && (a)->nla_len >= sizeof(struct nlattr) && (a)->nla_len <= (len))
#define ATTR_NEXT(a, len) ((len) -= NLA_ALIGN((a)->nla_len), (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))
#define ATTR_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a) ((int)(a)->nla_len - NLA_HDRLEN)

static int unix_cb(diag *g, const struct nlmsghdr *h)
{
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
        return 0;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (g->nu == g->cu) {
        int c = g->cu ? g->cu * 2 : 256;
        uent *t = realloc(g->u, (size_t)c * sizeof(*t));
        if (!t)
            return -ENOMEM;
        g->u = t;
        g->cu = c;
    }
    uent *e = &g->u[g->nu++];
    memset(e, 0, sizeof(*e));
    e->ino = m->udiag_ino;
    e->type = m->udiag_type;
    e->state = m->udiag_state;
    int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
    for (struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(sizeof(*m))); ATTR_OK(a, len); a = ATTR_NEXT(a, len)) {
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
            if (l >= (int)sizeof(struct unix_diag_rqlen))
                e->rqlen = ((struct unix_diag_rqlen *)ATTR_DATA(a))->udiag_rqueue;
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
    if (g->nt == g->ct) {
        int c = g->ct ? g->ct * 2 : 256;
        tent *t = realloc(g->t, (size_t)c * sizeof(*t));
        if (!t)
            return -ENOMEM;
        g->t = t;
        g->ct = c;
    }
    tent *e = &g->t[g->nt++];
    memset(e, 0, sizeof(*e));
    e->family = m->idiag_family;
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
    for (struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(sizeof(*m))); ATTR_OK(a, len); a = ATTR_NEXT(a, len))
        if (a->nla_type == INET_DIAG_CGROUP_ID && ATTR_LEN(a) >= 8) {
            memcpy(&e->cgid, ATTR_DATA(a), 8);
            e->has_cg = true;
        }
    return 0;
}

static int cmp_uent(const void *a, const void *b)
{
    return cmp_u32(&((const uent *)a)->ino, &((const uent *)b)->ino);
}

static uent *unix_find(diag *g, uint32_t ino)
{
    uent key = {.ino = ino};
    return g->nu ? bsearch(&key, g->u, (size_t)g->nu, sizeof(*g->u), cmp_uent) : NULL;
}

static int diag_load(diag *g, char *err, size_t errlen)
{
    g->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (g->nl < 0) {
        seterr(err, errlen, "sock_diag socket: %s", strerror(errno));
        return -1;
    }
    struct unix_diag_req ur = {.sdiag_family = AF_UNIX,
                               .udiag_states = ~0u,
                               .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN};
    int r = nl_send(g, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, &ur, sizeof(ur));
    if (!r)
        r = nl_recv(g, unix_cb);
    if (r) {
        seterr(err, errlen, "UNIX sock_diag dump: %s", strerror(-r));
        return -1;
    }
    if (g->nu)
        qsort(g->u, (size_t)g->nu, sizeof(*g->u), cmp_uent);
    for (int fam = 0; fam < 2; fam++) {
        struct inet_diag_req_v2 tr = {.sdiag_family = fam ? AF_INET6 : AF_INET, .sdiag_protocol = IPPROTO_TCP,
                                      .idiag_states = ~0u};
        r = nl_send(g, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, &tr, sizeof(tr));
        if (!r)
            r = nl_recv(g, tcp_cb);
        if (r == -ENOENT && fam)
            r = 0; /* no IPv6 in this kernel */
        if (r) {
            seterr(err, errlen, "TCP sock_diag dump: %s", strerror(-r));
            return -1;
        }
    }
    return 0;
}

static void diag_free(diag *g)
{
    if (g->nl >= 0)
        close(g->nl);
    free(g->u);
    free(g->t);
}

/* ---- processes and their socket fds */

typedef struct sfd {
    pid_t pid;
    int fd;
    uint32_t ino;
} sfd;

/* by inode, then pid and fd (a stable choice of which fd acts for a shared socket) */
static int cmp_sfd(const void *a, const void *b)
{
    const sfd *x = a, *y = b;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->fd > y->fd) - (x->fd < y->fd);
}

typedef struct scan {
    sfd *s;
    int n, cap;
    u32set inos;  /* every socket inode the agent holds */
    u32set mine;  /* mncd's own sockets (the monitor's end of the agents' connections) */
    int npids;
} scan;

/* Socket inodes in /proc/<pid>/fd. pid 0 = ourselves. -ENOENT/-ESRCH: the process is gone. */
static int scan_fds(scan *sc, pid_t pid, bool self)
{
    char dp[64];
    if (self)
        snprintf(dp, sizeof(dp), "/proc/self/fd");
    else
        snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dp);
    if (!d)
        return -errno;
    int dfd = dirfd(d), rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char link[64];
        ssize_t n = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
        if (n < 0)
            continue; /* closed meanwhile (the process is frozen; only mncd's own fds move) */
        link[n] = 0;
        uint32_t ino = socket_ino(link);
        if (!ino)
            continue;
        if (self) {
            if ((rc = u32set_add(&sc->mine, ino)) != 0)
                break;
            continue;
        }
        if ((rc = u32set_add(&sc->inos, ino)) != 0) /* duplicates are harmless for membership */
            break;
        if (sc->n == sc->cap) {
            int c = sc->cap ? sc->cap * 2 : 128;
            sfd *t = realloc(sc->s, (size_t)c * sizeof(*t));
            if (!t) {
                rc = -ENOMEM;
                break;
            }
            sc->s = t;
            sc->cap = c;
        }
        sc->s[sc->n++] = (sfd){pid, atoi(e->d_name), ino};
    }
    closedir(d);
    return rc;
}

static int scan_cgroups(scan *sc, const mncd_sweep_cg *cgs, int ncg, char *err, size_t errlen)
{
    u32set pids = {0};
    int rc = 0;
    for (int i = 0; i < ncg && !rc; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/cgroup.procs", cgs[i].path);
        FILE *f = fopen(p, "re");
        if (!f) {
            if (errno == ENOENT)
                continue; /* cgroup removed: its agent instance is gone */
            seterr(err, errlen, "read %s: %s", p, strerror(errno));
            rc = -1;
            break;
        }
        long pid;
        while (fscanf(f, "%ld", &pid) == 1) {
            if (pid <= 0 || pid > INT_MAX)
                continue;
            if (pids.n >= MAX_PIDS || u32set_add(&pids, (uint32_t)pid) != 0) {
                seterr(err, errlen, "too many processes in the agent's cgroups");
                rc = -1;
                break;
            }
        }
        if (ferror(f) && !rc) {
            seterr(err, errlen, "read %s: %s", p, strerror(errno));
            rc = -1;
        }
        fclose(f);
    }
    if (pids.n)
        qsort(pids.v, (size_t)pids.n, sizeof(*pids.v), cmp_u32);
    for (int i = 0; i < pids.n && !rc; i++) {
        if (i && pids.v[i] == pids.v[i - 1])
            continue;
        int r = scan_fds(sc, (pid_t)pids.v[i], false);
        if (r == -ENOENT || r == -ESRCH)
            continue; /* exited (a frozen process can still be killed) */
        if (r) {
            seterr(err, errlen, "list /proc/%u/fd: %s", pids.v[i], strerror(-r));
            rc = -1;
            break;
        }
        sc->npids++;
    }
    free(pids.v);
    if (!rc) {
        int r = scan_fds(sc, 0, true);
        if (r) {
            seterr(err, errlen, "list /proc/self/fd: %s", strerror(-r));
            rc = -1;
        }
    }
    return rc;
}

/* A copy of the agent's fd, checked to still be the socket we listed (fd numbers can be
 * reused; the cgroup is frozen, so this is belt and braces). -errno on failure. */
static int grab(pid_t pid, int fd, uint32_t ino)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return -errno;
    int c = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    int e = errno;
    close(pfd);
    if (c < 0)
        return -e;
    struct stat st;
    if (fstat(c, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_ino != ino) {
        close(c);
        return -ESTALE;
    }
    return c;
}

/* ---- decisions: the kernel's rules, on the peer of an existing connection */

typedef struct ctx {
    mnc_kern *k;
    uint32_t agent;
    const struct mnc_taint *t;
    int sock_unix, sock_inet;
    diag g;
    scan sc;
    mncd_sweep_fn fn;
    void *fctx;
    mncd_sweep_stats *st;
    char *err;
    size_t errlen;
    bool failed;
} ctx;

static void peer_text(const char *name, int len, char *out, size_t n)
{
    if (len <= 0) {
        snprintf(out, n, "(unnamed)");
        return;
    }
    size_t j = 0;
    for (int i = 0; i < len && j + 1 < n; i++) {
        char c = name[i];
        if (i == 0 && c == 0)
            c = '@';
        else if (c == 0)
            break;
        out[j++] = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    out[j] = 0;
}

/* A UNIX peer by its bound name, like connect_unix/sendmsg_unix judge the sun_path. */
static unsigned decide_unix_name(ctx *c, const char *name, int len, unsigned *cls, uint32_t *id)
{
    *cls = MNC_SINK_EXTERNAL;
    *id = MNC_ID_NONE;
    if (len <= 0)
        return mnc_decide(c->t, *cls, *id); /* unnamed peer: nobody we can name */
    struct mnc_unix_key key;
    memset(&key, 0, sizeof(key));
    if (name[0] == 0) {
        key.path[0] = '@';
        memcpy(key.path + 1, name + 1, (size_t)(len - 1 < MNC_UNIX_PATH_MAX - 1 ? len - 1 : MNC_UNIX_PATH_MAX - 1));
    } else {
        memcpy(key.path, name, (size_t)(len < MNC_UNIX_PATH_MAX ? len : MNC_UNIX_PATH_MAX));
        if (c->t->tainted && !mnc_unix_path_canonical(name, (uint32_t)len))
            return MNC_K_DENY_UNIX_PATH;
    }
    struct mnc_sink s;
    if (bpf_map_lookup_elem(c->sock_unix, &key, &s) == 0) {
        *cls = s.cls;
        *id = s.id;
    }
    return mnc_decide(c->t, *cls, *id);
}

static int report(ctx *c, mncd_sweep_act *a)
{
    if (a->err) {
        c->failed = true;
        if (!c->err[0])
            seterr(c->err, c->errlen, "%s %s of pid %d fd %d (peer %s) failed: %s", a->kind, a->action, (int)a->pid,
                   a->fd, a->peer, strerror(a->err));
    } else {
        c->st->acted++;
    }
    if (c->fn && c->fn(c->fctx, a) != 0) {
        c->failed = true;
        if (!c->err[0])
            seterr(c->err, c->errlen, "audit of a sweep action failed");
        return -1;
    }
    return 0;
}

static const char *unix_kind(uint8_t type)
{
    return type == SOCK_STREAM ? "unix_stream" : type == SOCK_SEQPACKET ? "unix_seqpacket" : "unix_dgram";
}

/* A listener of a tainted agent: shut it (no new connections: ECONNREFUSED) and take and shut
 * the connections still waiting in its backlog (accepted later they would be unjudged). */
static void shut_listener(ctx *c, const sfd *s, const uent *e)
{
    mncd_sweep_act a = {.pid = s->pid, .fd = s->fd, .ino = s->ino, .kind = "unix_listener", .action = "shutdown",
                        .dst_cls = MNC_SINK_EXTERNAL, .dst_id = MNC_ID_NONE, .reason = MNC_K_DENY_EXTERNAL};
    peer_text(e->name, e->namelen, a.peer, sizeof(a.peer));
    int fd = grab(s->pid, s->fd, s->ino);
    if (fd < 0) {
        a.err = -fd;
        report(c, &a);
        return;
    }
    if (shutdown(fd, SHUT_RDWR) != 0)
        a.err = errno;
    if (report(c, &a) != 0 || a.err) {
        close(fd);
        return;
    }
    /* The open file is shared with the agent, which is frozen: O_NONBLOCK for the drain is
     * invisible to it and restored before the thaw. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        mncd_sweep_act b = a;
        b.action = "drain";
        b.err = errno;
        report(c, &b);
        close(fd);
        return;
    }
    for (int i = 0; i < 100000; i++) {
        int p = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (p < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINVAL) {
                mncd_sweep_act b = a;
                b.kind = "unix_pending";
                b.action = "drain";
                b.err = errno;
                report(c, &b);
            }
            break; /* EINVAL: a shut-down listener with an empty backlog */
        }
        mncd_sweep_act b = a;
        b.kind = "unix_pending";
        b.fd = -1;
        struct stat st;
        b.ino = fstat(p, &st) == 0 ? (uint32_t)st.st_ino : 0;
        snprintf(b.peer, sizeof(b.peer), "(pending connection on %.150s)", a.peer);
        if (shutdown(p, SHUT_RDWR) != 0)
            b.err = errno;
        close(p);
        report(c, &b);
    }
    if (fcntl(fd, F_SETFL, fl) != 0) {
        mncd_sweep_act b = a;
        b.action = "restore flags";
        b.err = errno;
        report(c, &b);
    }
    close(fd);
}

static void judge_unix(ctx *c, const sfd *s, const uent *e)
{
    if ((e->shut & 3) == 3)
        return; /* already shut both ways (e.g. by an earlier sweep): nothing can be sent */
    if (e->state == UNIX_LISTEN) {
        if (c->t->tainted)
            shut_listener(c, s, e);
        return;
    }
    if (!e->peer)
        return; /* not connected: any later connect()/sendto() goes through the kernel hooks */
    if (u32set_has(&c->sc.inos, e->peer) || u32set_has(&c->sc.mine, e->peer)) {
        c->st->kept++; /* the same agent (no boundary crossed), or the monitor */
        return;
    }
    mncd_sweep_act a = {.pid = s->pid, .fd = s->fd, .ino = s->ino, .kind = unix_kind(e->type)};
    const uent *pe = unix_find(&c->g, e->peer);
    char name[MNC_UNIX_PATH_MAX];
    int len = 0;
    if (pe) {
        len = pe->namelen;
        memcpy(name, pe->name, (size_t)len);
    }
    int fd = -1;
    if (!pe) {
        /* the peer is not in our network namespace's table: ask the socket itself */
        fd = grab(s->pid, s->fd, s->ino);
        struct sockaddr_un su;
        socklen_t sl = sizeof(su);
        if (fd >= 0 && getpeername(fd, (struct sockaddr *)&su, &sl) == 0 && sl > offsetof(struct sockaddr_un, sun_path)) {
            len = (int)(sl - offsetof(struct sockaddr_un, sun_path));
            if (len > MNC_UNIX_PATH_MAX)
                len = MNC_UNIX_PATH_MAX;
            memcpy(name, su.sun_path, (size_t)len);
        }
    }
    while (len > 0 && name[0] != 0 && name[len - 1] == 0)
        len--; /* pathnames may carry their terminating NUL */
    peer_text(name, len, a.peer, sizeof(a.peer));
    a.reason = decide_unix_name(c, name, len, &a.dst_cls, &a.dst_id);
    if (mnc_kreason_allows(a.reason)) {
        c->st->kept++;
        if (fd >= 0)
            close(fd);
        return;
    }
    if (fd < 0)
        fd = grab(s->pid, s->fd, s->ino);
    if (fd < 0) {
        a.action = e->type == SOCK_DGRAM ? "disconnect" : "shutdown";
        a.err = -fd;
        report(c, &a);
        return;
    }
    if (e->type == SOCK_DGRAM) {
        /* disconnect (POSIX: connect with AF_UNSPEC): a send() without address then fails with
         * ENOTCONN; a sendto() with an address is judged by sendmsg_unix as usual */
        struct sockaddr sa = {.sa_family = AF_UNSPEC};
        a.action = "disconnect";
        if (connect(fd, &sa, sizeof(sa)) != 0)
            a.err = errno;
    } else {
        a.action = "shutdown";
        if (shutdown(fd, SHUT_RDWR) != 0)
            a.err = errno;
    }
    close(fd);
    report(c, &a);
}

/* The fd is a socket our table does not know: a UNIX socket in another network namespace
 * (the agent made one), or another family. UNIX ones are judged from the socket itself; the
 * peer's inode is then unknown, so only its name counts. */
static void judge_foreign(ctx *c, const sfd *s)
{
    int fd = grab(s->pid, s->fd, s->ino);
    if (fd == -EBADF || fd == -ESTALE || fd == -ESRCH)
        return; /* closed or exited meanwhile */
    if (fd < 0) {
        mncd_sweep_act a = {.pid = s->pid, .fd = s->fd, .ino = s->ino, .kind = "socket", .action = "inspect", .err = -fd};
        snprintf(a.peer, sizeof(a.peer), "?");
        report(c, &a);
        return;
    }
    int dom = 0, type = 0, acc = 0;
    socklen_t l = sizeof(dom);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) != 0 || dom != AF_UNIX) {
        close(fd); /* IP sockets are judged per packet by egress; TCP ones are in the table */
        return;
    }
    l = sizeof(type);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
    l = sizeof(acc);
    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l);
    uent e = {.ino = s->ino, .type = (uint8_t)type, .state = acc ? UNIX_LISTEN : UNIX_ESTABLISHED};
    struct sockaddr_un su;
    socklen_t sl = sizeof(su);
    bool connected = getpeername(fd, (struct sockaddr *)&su, &sl) == 0;
    close(fd);
    if (acc) {
        sl = sizeof(su);
        fd = grab(s->pid, s->fd, s->ino);
        if (fd >= 0 && getsockname(fd, (struct sockaddr *)&su, &sl) == 0 && sl > offsetof(struct sockaddr_un, sun_path)) {
            e.namelen = (uint8_t)(sl - offsetof(struct sockaddr_un, sun_path));
            memcpy(e.name, su.sun_path, e.namelen);
        }
        if (fd >= 0)
            close(fd);
        judge_unix(c, s, &e);
        return;
    }
    if (!connected)
        return;
    e.peer = UINT32_MAX; /* "some peer": unix_find misses, so the name comes from getpeername */
    judge_unix(c, s, &e);
}

/* ---- TCP: what egress would drop, aborted at once */

static bool tcp_may_send(uint8_t state)
{
    /* ESTABLISHED, SYN_SENT, FIN_WAIT1, CLOSE_WAIT, LAST_ACK, CLOSING */
    return state == 1 || state == 2 || state == 4 || state == 8 || state == 9 || state == 11;
}

static int inet_lookup(ctx *c, const tent *e, struct mnc_sink *s)
{
    struct mnc_inet_key k;
    memset(&k, 0, sizeof(k));
    k.family = e->v4 ? AF_INET : AF_INET6;
    if (e->v4)
        memcpy(k.addr, e->dst + 12, 4);
    else
        memcpy(k.addr, e->dst, 16);
    k.port = e->dport;
    if (bpf_map_lookup_elem(c->sock_inet, &k, s) == 0)
        return 0;
    if (k.port) {
        k.port = 0;
        if (bpf_map_lookup_elem(c->sock_inet, &k, s) == 0)
            return 0;
    }
    struct mnc_inet_key any;
    memset(&any, 0, sizeof(any));
    any.family = k.family;
    any.port = e->dport;
    return bpf_map_lookup_elem(c->sock_inet, &any, s) == 0 ? 0 : -ENOENT;
}

static bool agent_cg(const mncd_sweep_cg *cgs, int ncg, uint64_t id)
{
    for (int i = 0; i < ncg; i++)
        if (cgs[i].cgid == id)
            return true;
    return false;
}

static int destroy_tcp(ctx *c, const tent *e)
{
    struct inet_diag_req_v2 r = {.sdiag_family = e->family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u,
                                 .id = e->id};
    int rc = nl_send(&c->g, SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, &r, sizeof(r));
    return rc ? rc : nl_recv(&c->g, NULL);
}

static void judge_tcp(ctx *c, const mncd_sweep_cg *cgs, int ncg)
{
    for (int i = 0; i < c->g.nt && !c->failed; i++) {
        tent *e = &c->g.t[i];
        /* the socket's cgroup, as egress identifies it (bpf_skb_cgroup_id); kernels without the
         * attribute: the sockets the agent's processes hold */
        bool ours = e->has_cg ? agent_cg(cgs, ncg, e->cgid) : (e->ino && u32set_has(&c->sc.inos, e->ino));
        if (!ours || !tcp_may_send(e->state) || !c->t->tainted)
            continue;
        unsigned cls = MNC_SINK_EXTERNAL;
        uint32_t id = MNC_ID_NONE;
        struct mnc_sink s;
        if (inet_lookup(c, e, &s) == 0) {
            cls = s.cls;
            id = s.id;
        } else {
            /* a local peer: the other end of the pair is in the table; its creator's agent is
             * the destination (like egress's loopback socket lookup) */
            for (int j = 0; j < c->g.nt; j++) {
                tent *p = &c->g.t[j];
                if (p == e || p->sport != e->dport || p->dport != e->sport || memcmp(p->src, e->dst, 16) ||
                    memcmp(p->dst, e->src, 16) || !p->has_cg)
                    continue;
                struct mnc_agent pa;
                if (mnc_kern_lookup_cgroup(c->k, p->cgid, &pa) == 0) {
                    cls = MNC_SINK_AGENT;
                    id = pa.agent_id;
                }
                break;
            }
            if (cls == MNC_SINK_AGENT && id == c->agent) {
                c->st->kept++;
                continue; /* between processes of the same agent */
            }
        }
        unsigned r = mnc_decide(c->t, cls, id);
        if (mnc_kreason_allows(r)) {
            c->st->kept++;
            continue;
        }
        mncd_sweep_act a = {.ino = e->ino, .fd = -1, .kind = "tcp", .action = "destroy", .reason = r, .dst_cls = cls,
                            .dst_id = id};
        char ip[INET6_ADDRSTRLEN] = "?";
        inet_ntop(e->v4 ? AF_INET : AF_INET6, e->v4 ? (const void *)(e->dst + 12) : (const void *)e->dst, ip, sizeof(ip));
        snprintf(a.peer, sizeof(a.peer), e->v4 ? "%s:%u" : "[%s]:%u", ip, e->dport);
        int rc = destroy_tcp(c, e);
        if (rc == -EOPNOTSUPP) {
            /* CONFIG_INET_DIAG_DESTROY off: egress still drops every packet; only the prompt
             * error is lost. Not a reason to refuse the delivery. */
            c->st->tcp_destroy_unsupported++;
            continue;
        }
        if (rc == -ENOENT)
            continue; /* closed meanwhile */
        a.err = rc < 0 ? -rc : 0;
        report(c, &a);
    }
}

/* ---- the sweep */

int mncd_sweep(mnc_kern *k, uint32_t agent, const struct mnc_taint *t, const mncd_sweep_cg *cgs, int ncg,
               mncd_sweep_fn fn, void *fctx, mncd_sweep_stats *st, char *err, size_t errlen)
{
    mncd_sweep_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof(*st));
    if (errlen)
        err[0] = 0;
    if (ncg <= 0)
        return 0;
    long t0 = now_us();
    ctx c = {.k = k, .agent = agent, .t = t, .sock_unix = -1, .sock_inet = -1, .fn = fn, .fctx = fctx, .st = st,
             .err = err, .errlen = errlen};
    c.g.nl = -1;
    static char dummy_err[1];
    if (!errlen) {
        c.err = dummy_err;
        c.errlen = 1;
    }
    frozen *fz = calloc((size_t)ncg, sizeof(*fz));
    int nfz = 0, rc = -1;
    if (!fz) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    char mp[PATH_MAX];
    snprintf(mp, sizeof(mp), "%s/sock_unix", mnc_kern_root(k));
    c.sock_unix = bpf_obj_get(mp);
    snprintf(mp, sizeof(mp), "%s/sock_inet", mnc_kern_root(k));
    c.sock_inet = bpf_obj_get(mp);
    if (c.sock_unix < 0 || c.sock_inet < 0) {
        seterr(err, errlen, "open the pinned sink maps: %s", strerror(errno));
        goto out;
    }
    if (freeze(cgs, ncg, fz, &nfz, err, errlen) != 0)
        goto out;
    st->freeze_us = now_us() - t0;
    if (scan_cgroups(&c.sc, cgs, ncg, err, errlen) != 0 || diag_load(&c.g, err, errlen) != 0)
        goto out;
    st->pids = c.sc.npids;
    u32set tcp = {0};
    for (int i = 0; i < c.g.nt && !c.failed; i++)
        if (c.g.t[i].ino && u32set_add(&tcp, c.g.t[i].ino) != 0)
            c.failed = true;
    /* one decision per socket, however many fds and processes share it */
    if (c.sc.n)
        qsort(c.sc.s, (size_t)c.sc.n, sizeof(*c.sc.s), cmp_sfd);
    for (int i = 0; i < c.sc.n && !c.failed; i++) {
        sfd *s = &c.sc.s[i];
        if (i && s->ino == c.sc.s[i - 1].ino)
            continue;
        st->sockets++;
        uent *e = unix_find(&c.g, s->ino);
        if (e)
            judge_unix(&c, s, e);
        else if (!u32set_has(&tcp, s->ino))
            judge_foreign(&c, s);
    }
    free(tcp.v);
    if (c.failed && !c.err[0])
        seterr(err, errlen, "out of memory");
    if (!c.failed)
        judge_tcp(&c, cgs, ncg);
    rc = c.failed ? -1 : 0;
out:
    thaw(fz, nfz);
    free(fz);
    if (c.sock_unix >= 0)
        close(c.sock_unix);
    if (c.sock_inet >= 0)
        close(c.sock_inet);
    diag_free(&c.g);
    free(c.sc.s);
    free(c.sc.inos.v);
    free(c.sc.mine.v);
    st->total_us = now_us() - t0;
    return rc;
}
