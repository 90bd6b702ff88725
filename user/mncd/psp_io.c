// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* psp_io.c - privsep messages over SOCK_SEQPACKET, and the monitor's client (psp_io.h). */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "psp_io.h"

int psp_pair(int sv[2]) { return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 ? 0 : -errno; }

void psp_close_fds(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int psp_send(int fd, const void *msg, const int *fds, int nfds, bool nonblock)
{
    const struct psp_hdr *h = msg;
    if (nfds < 0 || nfds > PSP_MAX_FDS || h->len < sizeof(*h) || h->len > PSP_MAX_MSG)
        return -EINVAL;
    union {
        char b[CMSG_SPACE(PSP_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } cbuf;
    memset(&cbuf, 0, sizeof(cbuf));
    struct iovec iov = {.iov_base = (void *)msg, .iov_len = h->len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        mh.msg_control = cbuf.b;
        mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t n;
    while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0))) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    return n == (ssize_t)h->len ? 0 : -EIO; /* SOCK_SEQPACKET: all or nothing */
}

ssize_t psp_recv(int fd, psp_buf *buf, int fds[PSP_MAX_FDS], int *nfds, bool nonblock)
{
    union {
        char b[CMSG_SPACE(PSP_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } cbuf;
    struct iovec iov = {.iov_base = buf->b, .iov_len = sizeof(buf->b)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b, .msg_controllen = sizeof(cbuf.b)};
    *nfds = 0;
    ssize_t n;
    while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | (nonblock ? MSG_DONTWAIT : 0))) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    bool extra = false; /* more fds than any message carries (the buffer's padding holds one) */
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
            if (*nfds < PSP_MAX_FDS) {
                fds[(*nfds)++] = f;
            } else {
                close(f);
                extra = true;
            }
        }
    }
    if (extra || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        psp_close_fds(fds, *nfds);
        *nfds = 0;
        return -EMSGSIZE;
    }
    if (n == 0 && *nfds) { /* a SEQPACKET message is never empty: this is EOF */
        psp_close_fds(fds, *nfds);
        *nfds = 0;
    }
    return n;
}

void psp_client_init(psp_client *c, int fd, psp_notice_fn notice, void *arg)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->notice = notice;
    c->arg = arg;
}

__attribute__((format(printf, 3, 4))) static int broke(psp_client *c, int rc, const char *fmt, ...)
{
    if (!c->broken) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, sizeof(c->err), fmt, ap);
        va_end(ap);
        c->broken = true;
    }
    return rc < 0 ? rc : -EPROTO;
}

static bool is_notice(uint32_t type) { return type >= PSP_AUDIT || type == PSP_REG_SOURCE || type == PSP_SINKFD; }

/* Receives and checks one message. Returns its type, or -errno (broken). */
static int next(psp_client *c, psp_buf *buf, int fds[PSP_MAX_FDS], int *nfds, bool nonblock)
{
    ssize_t n = psp_recv(c->fd, buf, fds, nfds, nonblock);
    if (n == -EAGAIN)
        return -EAGAIN;
    if (n == 0)
        return broke(c, -EPIPE, "the enforcer closed its end (it exited)");
    if (n < 0)
        return broke(c, (int)n, "receive from the enforcer: %s", strerror((int)-n));
    char why[200];
    int t = psp_check_reply(buf, (size_t)n, *nfds, c->n_principals, why, sizeof(why));
    if (t < 0) {
        psp_close_fds(fds, *nfds);
        *nfds = 0;
        return broke(c, t, "malformed message from the enforcer: %s", why);
    }
    return t;
}

int psp_tell(psp_client *c, void *req)
{
    if (c->broken)
        return -EPIPE;
    struct psp_hdr *h = req;
    h->seq = ++c->seq;
    int rc = psp_send(c->fd, req, NULL, 0, false);
    if (rc == -EPIPE || rc == -ECONNRESET)
        return broke(c, -EPIPE, "the enforcer closed its end (it exited)");
    return rc ? broke(c, rc, "send %s to the enforcer: %s", psp_type_name(h->type), strerror(-rc)) : 0;
}

int psp_call(psp_client *c, void *req, psp_buf *reply, int fds[PSP_MAX_FDS], int *nfds)
{
    int local[PSP_MAX_FDS], nlocal = 0;
    if (!fds)
        fds = local;
    if (!nfds)
        nfds = &nlocal;
    *nfds = 0;
    int rc = psp_tell(c, req);
    if (rc)
        return rc;
    uint32_t seq = ((struct psp_hdr *)req)->seq;
    for (;;) {
        int t = next(c, reply, fds, nfds, false);
        if (t < 0)
            return t;
        if (is_notice((uint32_t)t)) {
            int nfd = *nfds ? fds[0] : -1; /* psp_check_reply: at most the one of a SINKFD */
            *nfds = 0;
            if (c->notice)
                c->notice(c->arg, reply, nfd);
            else if (nfd >= 0)
                close(nfd);
            continue;
        }
        if (reply->h.seq != seq) {
            psp_close_fds(fds, *nfds);
            *nfds = 0;
            return broke(c, -EPROTO, "the enforcer answered request %u while %u was pending", reply->h.seq, seq);
        }
        if (fds == local && nlocal) {
            psp_close_fds(local, nlocal);
            return broke(c, -EPROTO, "the enforcer sent fds no one asked for");
        }
        return t;
    }
}

int psp_drain(psp_client *c, psp_buf *buf)
{
    if (c->broken)
        return -EPIPE;
    for (;;) {
        int fds[PSP_MAX_FDS], nfds = 0;
        int t = next(c, buf, fds, &nfds, true);
        if (t == -EAGAIN)
            return 0;
        if (t < 0)
            return t;
        if (!is_notice((uint32_t)t)) {
            psp_close_fds(fds, nfds);
            return broke(c, -EPROTO, "the enforcer sent %s with no request pending", psp_type_name((uint32_t)t));
        }
        int nfd = nfds ? fds[0] : -1;
        if (c->notice)
            c->notice(c->arg, buf, nfd);
        else if (nfd >= 0)
            close(nfd);
    }
}
