// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_inflight.c - fds in flight in SCM_RIGHTS (user/mncd/enforcer/inflight.c) on real sockets: a peek
 * sees every queued fd without consuming anything (stream, datagram with 0-byte messages,
 * seqpacket up to its end), restores SO_PEEK_OFF and SO_PASSCRED; a drain empties the queue
 * and closes every fd that was in flight. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "inflight.h"

/* sends len bytes with nfd fds (the same fd repeated) */
static void send_fds(int s, const char *data, size_t len, int fd, int nfd)
{
    char ctl[CMSG_SPACE(4 * sizeof(int))];
    memset(ctl, 0, sizeof(ctl));
    struct iovec iov = {(void *)data, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfd) {
        m.msg_control = ctl;
        m.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
        for (int i = 0; i < nfd; i++)
            memcpy(CMSG_DATA(h) + (size_t)i * sizeof(int), &fd, sizeof(int));
    }
    assert_int_equal(sendmsg(s, &m, 0), (ssize_t)len);
}

typedef struct seen {
    int n;
    ino_t ino[16];
} seen;

static int collect(void *arg, int fd)
{
    seen *s = arg;
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    if (s->n < 16)
        s->ino[s->n] = st.st_ino;
    s->n++;
    return 0;
}

static ino_t ino_of(int fd)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    return st.st_ino;
}

/* receives one message; returns its byte count, *nfd its fds (closed) */
static ssize_t recv_one(int s, int *nfd)
{
    char buf[256], ctl[CMSG_SPACE(8 * sizeof(int))];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
    ssize_t n = recvmsg(s, &m, MSG_DONTWAIT);
    *nfd = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); n >= 0 && h; h = CMSG_NXTHDR(&m, h))
        if (h->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
                close(fd);
                (*nfd)++;
            }
    return n;
}

static void peek_stream(void **state)
{
    (void)state;
    int sv[2], p[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(pipe(p), 0);
    send_fds(sv[0], "aaaa", 4, -1, 0);
    send_fds(sv[0], "bb", 2, p[0], 1);
    send_fds(sv[0], "cccccc", 6, -1, 0);
    send_fds(sv[0], "d", 1, p[1], 1);
    seen s = {0};
    int n = -1;
    assert_int_equal(mncd_peek_inflight(sv[1], SOCK_STREAM, collect, &s, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(s.n, 2);
    assert_true(s.ino[0] == ino_of(p[0]) && s.ino[1] == ino_of(p[1]));
    int off = 0;
    socklen_t l = sizeof(off);
    assert_int_equal(getsockopt(sv[1], SOL_SOCKET, SO_PEEK_OFF, &off, &l), 0);
    assert_int_equal(off, -1); /* restored */
    /* nothing consumed: all 13 bytes and both fds are still there */
    int total = 0, fds = 0, k;
    ssize_t r;
    while ((r = recv_one(sv[1], &k)) > 0) {
        total += (int)r;
        fds += k;
    }
    assert_int_equal(total, 13);
    assert_int_equal(fds, 2);
    close(sv[0]);
    close(sv[1]);
    close(p[0]);
    close(p[1]);
}

static void peek_dgram_zero_length(void **state)
{
    (void)state;
    int sv[2], p[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    assert_int_equal(pipe(p), 0);
    send_fds(sv[0], "", 0, -1, 0);      /* a 0-byte message without fds */
    send_fds(sv[0], "", 0, p[0], 1);    /* a 0-byte message with one */
    send_fds(sv[0], "xyz", 3, p[1], 2); /* data with two */
    seen s = {0};
    int n = -1;
    assert_int_equal(mncd_peek_inflight(sv[1], SOCK_DGRAM, collect, &s, &n), 0);
    assert_int_equal(n, 3);
    int msgs = 0, fds = 0, k;
    while (recv_one(sv[1], &k) >= 0) {
        msgs++;
        fds += k;
    }
    assert_int_equal(msgs, 3); /* all still queued */
    assert_int_equal(fds, 3);
    close(sv[0]);
    close(sv[1]);
    close(p[0]);
    close(p[1]);
}

static void peek_seqpacket_to_the_end(void **state)
{
    (void)state;
    int sv[2], p[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    assert_int_equal(pipe(p), 0);
    send_fds(sv[0], "", 0, -1, 0);
    send_fds(sv[0], "", 0, -1, 0);
    send_fds(sv[0], "", 0, p[0], 1); /* after two empty messages: must still be seen */
    close(sv[0]);                    /* the peer is gone: 0 bytes is also "the end" */
    seen s = {0};
    int n = -1;
    assert_int_equal(mncd_peek_inflight(sv[1], SOCK_SEQPACKET, collect, &s, &n), 0);
    assert_int_equal(n, 1);
    int cred = -1;
    socklen_t l = sizeof(cred);
    assert_int_equal(getsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &cred, &l), 0);
    assert_int_equal(cred, 0); /* restored */
    close(sv[1]);
    close(p[0]);
    close(p[1]);
}

static void drain_closes_fds(void **state)
{
    (void)state;
    int sv[2], p[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    assert_int_equal(pipe(p), 0);
    send_fds(sv[0], "one", 3, p[0], 1);
    send_fds(sv[0], "", 0, p[0], 2);
    close(p[0]); /* the read end now exists only in flight */
    int n = -1;
    long bytes = -1;
    assert_int_equal(mncd_drain(sv[1], &n, &bytes), 0);
    assert_int_equal(n, 3);
    assert_int_equal(bytes, 3);
    int k;
    assert_true(recv_one(sv[1], &k) < 0 && errno == EAGAIN); /* empty */
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(write(p[1], "x", 1), -1); /* every copy of the read end was closed */
    assert_int_equal(errno, EPIPE);
    close(sv[0]);
    close(sv[1]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peek_stream),
        cmocka_unit_test(peek_dgram_zero_length),
        cmocka_unit_test(peek_seqpacket_to_the_end),
        cmocka_unit_test(drain_closes_fds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
