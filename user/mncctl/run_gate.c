// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_gate.c - a server agent's bind/listen/autobind, answered by the launcher from the taint
 * (contract in run_gate.h). */
#include <errno.h>
#include <seccomp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run_gate.h"

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

int run_gate_send_fd(int sock, int fd)
{
    char c = 'n', cb[CMSG_SPACE(sizeof(int))];
    memset(cb, 0, sizeof(cb));
    struct iovec iov = {&c, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof(cb)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(int));
    ssize_t n;
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == 1 ? 0 : -errno;
}

int run_gate_recv_fd(int sock)
{
    char c, cb[CMSG_SPACE(sizeof(int))];
    memset(cb, 0, sizeof(cb));
    struct iovec iov = {&c, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof(cb)};
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *h = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
    int fd = -1;
    if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && h->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(h), sizeof(int));
    return fd;
}

int run_gate_answer(int nfd, mnc_kern *k, uint32_t agent_id, unsigned long *denied)
{
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    int rc = seccomp_notify_alloc(&req, &resp);
    if (rc != 0)
        return rc;
    rc = seccomp_notify_receive(nfd, req);
    if (rc == 0) {
        struct mnc_taint t;
        bool untainted = k && mnc_kern_taint_get(k, agent_id, &t) == 0 && !t.tainted;
        resp->id = req->id;
        resp->val = 0;
        resp->error = untainted ? 0 : -EPERM;
        resp->flags = untainted ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
        if (!untainted)
            (*denied)++;
        rc = seccomp_notify_respond(nfd, resp);
        if (rc == -ENOENT)
            rc = 0; /* the call was interrupted (a signal, the agent gone): nothing to answer */
    } else if (rc == -EINTR || rc == -ENOENT) {
        rc = 0;
    }
    seccomp_notify_free(req, resp);
    return rc;
}
