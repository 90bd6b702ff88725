// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* inflight.c - fds queued in SCM_RIGHTS messages (contract in inflight.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inflight.h"

#ifndef SO_PEEK_OFF
#define SO_PEEK_OFF 42
#endif
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04 /* SO_PASSPIDFD: a pidfd is installed too, and must be closed */
#endif

#define MAX_MSGS 16384        /* messages looked at per socket */
#define MAX_BYTES (64L << 20) /* bytes looked at per socket */
#define SCM_FDS_MAX 253       /* SCM_MAX_FD */

/* static: mncd is single-threaded; a whole datagram fits (wmem_max-sized) */
static char data[256 * 1024];
static char ctl[CMSG_SPACE(SCM_FDS_MAX * sizeof(int)) + CMSG_SPACE(64) + CMSG_SPACE(sizeof(int))];

/* One recvmsg; every fd that arrived is passed to fn (if any) and closed. Returns bytes, or
 * -errno; *got: fds that arrived; *trunc: MSG_CTRUNC. */
static ssize_t one(int sock, int flags, mncd_inflight_fn fn, void *cx, int *got, bool *trunc, int *fnrc, bool *cred)
{
    struct iovec iov = {data, sizeof(data)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
    ssize_t n;
    do
        n = recvmsg(sock, &m, flags | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    *got = 0;
    *cred = false;
    *trunc = (m.msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS)
            *cred = true;
        if (h->cmsg_level != SOL_SOCKET || (h->cmsg_type != SCM_RIGHTS && h->cmsg_type != SCM_PIDFD))
            continue;
        int k = (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(h) + (size_t)i * sizeof(int), sizeof(fd));
            if (h->cmsg_type == SCM_RIGHTS) {
                (*got)++;
                if (fn && !*fnrc)
                    *fnrc = fn(cx, fd);
            }
            close(fd);
        }
    }
    return n;
}

int mncd_peek_inflight(int sock, int type, mncd_inflight_fn fn, void *cx, int *nfds)
{
    *nfds = 0;
    int old = -1;
    socklen_t l = sizeof(old);
    if (getsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &old, &l) != 0)
        return -errno;
    /* seqpacket says end of stream with 0 bytes, and a message can be 0 bytes long: with
     * SO_PASSCRED on, every message carries SCM_CREDENTIALS and the end does not */
    int oldcred = 0, one_ = 1, zero = 0;
    l = sizeof(oldcred);
    if (type == SOCK_SEQPACKET && (getsockopt(sock, SOL_SOCKET, SO_PASSCRED, &oldcred, &l) != 0 ||
                                   setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one_, sizeof(one_)) != 0))
        return -errno;
    if (setsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero)) != 0) {
        int e = errno;
        if (type == SOCK_SEQPACKET)
            setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &oldcred, sizeof(oldcred));
        return -e;
    }
    int rc = 0, fnrc = 0;
    long bytes = 0;
    for (int i = 0;; i++) {
        if (i == MAX_MSGS || bytes > MAX_BYTES) {
            rc = -E2BIG;
            break;
        }
        int got = 0;
        bool trunc = false, cred = false;
        ssize_t n = one(sock, MSG_PEEK, fn, cx, &got, &trunc, &fnrc, &cred);
        if (n == -EAGAIN || n == -EWOULDBLOCK)
            break; /* the whole queue was seen */
        if (n < 0) {
            rc = (int)n;
            break;
        }
        *nfds += got;
        if (trunc) {
            rc = -EMSGSIZE;
            break;
        }
        if (fnrc) {
            rc = fnrc;
            break;
        }
        bytes += n;
        /* stream: 0 is end of stream (data always advances the peek offset); a datagram or
         * seqpacket message of 0 bytes is marked peeked and skipped by the next peek */
        if (n == 0 && (type == SOCK_STREAM || (type == SOCK_SEQPACKET && !cred && !got)))
            break;
    }
    if (setsockopt(sock, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old)) != 0 && !rc)
        rc = -errno;
    if (type == SOCK_SEQPACKET && setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &oldcred, sizeof(oldcred)) != 0 && !rc)
        rc = -errno;
    return rc;
}

int mncd_drain(int sock, int *nfds, long *bytes)
{
    *nfds = 0;
    *bytes = 0;
    int fnrc = 0;
    for (int i = 0; i < MAX_MSGS; i++) {
        int got = 0;
        bool trunc = false, cred = false;
        ssize_t n = one(sock, 0, NULL, NULL, &got, &trunc, &fnrc, &cred);
        if (n == -EAGAIN || n == -EWOULDBLOCK)
            return 0;
        if (n < 0)
            return (int)n;
        *nfds += got;
        *bytes += n;
        if (n == 0 && !got)
            return 0; /* end of stream; fds beyond a truncated control message were closed by the kernel */
    }
    return -E2BIG;
}
