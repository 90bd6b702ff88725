// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_psp_io.c - privsep messages on a real SOCK_SEQPACKET pair (user/mncd/psp_io.c): the
 * monitor's psp_call gets its reply after the notices sent before it, in order; fds come with
 * the reply that carries them; a reply to another request, a malformed message or the
 * enforcer's exit break the client for good (every later call fails: no delivery without a
 * hold); psp_drain hands over pending notices and refuses a stray reply; an oversized message
 * or too many fds are refused whole, with no fd left open.
 *
 * privsep.c and psp_io.c are part of mncd: compiled in directly (the Makefile names them). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/privsep.c"
#include "../../user/mncd/psp_io.c"

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own fd */
}

/* ---- a scripted enforcer on the other end (a thread) */
enum script { S_STATUS, S_OPEN, S_WRONG_SEQ, S_EXIT, S_MALFORMED };

typedef struct fake {
    int fd;
    enum script s;
    uint32_t got_type; /* the request it received */
} fake;

static void send_audit(int fd, const char *detail)
{
    static psp_buf m;
    memset(&m, 0, sizeof(m));
    struct psp_audit *a = (void *)&m;
    psp_hdr_init(&a->h, PSP_AUDIT, 0);
    a->op = PSP_A_KERNEL_SWEEP;
    a->decision = PSP_D_DENY;
    a->sender = 0;
    a->receiver = PSP_NONE;
    strcpy(a->reason, "deny_scope");
    strcpy(a->detail, detail);
    assert_int_equal(psp_send(fd, a, NULL, 0, false), 0);
}

static void *fake_main(void *arg)
{
    fake *f = arg;
    static psp_buf in, out;
    int fds[PSP_MAX_FDS], nfds;
    ssize_t n = psp_recv(f->fd, &in, fds, &nfds, false);
    if (n <= 0)
        return NULL;
    f->got_type = in.h.type;
    memset(&out, 0, sizeof(out));
    switch (f->s) {
    case S_STATUS:
        send_audit(f->fd, "first");
        send_audit(f->fd, "second");
        psp_hdr_init(&out.h, PSP_STATUS_R, in.h.seq);
        ((struct psp_status_r *)&out)->holds = 42;
        psp_send(f->fd, &out, NULL, 0, false);
        break;
    case S_OPEN: {
        psp_hdr_init(&out.h, PSP_OPENED, in.h.seq);
        int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
        psp_send(f->fd, &out, &dn, 1, false);
        close(dn);
        break;
    }
    case S_WRONG_SEQ:
        psp_hdr_init(&out.h, PSP_HELD, in.h.seq + 1);
        psp_send(f->fd, &out, NULL, 0, false);
        break;
    case S_MALFORMED:
        psp_hdr_init(&out.h, PSP_REFUSED, in.h.seq);
        ((struct psp_refused *)&out)->code = 99;
        psp_send(f->fd, &out, NULL, 0, false);
        break;
    case S_EXIT:
        break;
    }
    close(f->fd);
    return NULL;
}

typedef struct seen {
    int n;
    char detail[4][32];
} seen;

static void on_notice(void *arg, const void *msg, int fd)
{
    if (fd >= 0)
        close(fd);
    seen *s = arg;
    const struct psp_audit *a = msg;
    if (a->h.type == PSP_AUDIT && s->n < 4)
        snprintf(s->detail[s->n++], sizeof(s->detail[0]), "%.31s", a->detail);
}

/* One call against a fake running script s; returns psp_call's result. */
static int run(enum script s, uint32_t type, psp_client *c, seen *sn, psp_buf *reply, int *fds, int *nfds)
{
    int sv[2];
    assert_int_equal(psp_pair(sv), 0);
    fake f = {.fd = sv[1], .s = s};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fake_main, &f), 0);
    psp_client_init(c, sv[0], on_notice, sn);
    c->n_principals = 3;
    static psp_buf req;
    memset(&req, 0, sizeof(req));
    psp_hdr_init(&req.h, type, 0);
    int r = psp_call(c, &req, reply, fds, nfds);
    pthread_join(th, NULL);
    assert_int_equal(f.got_type, type);
    return r;
}

static void test_call_and_notices(void **st)
{
    (void)st;
    int before = open_fds();
    psp_client c;
    seen sn = {0};
    static psp_buf reply;
    assert_int_equal(run(S_STATUS, PSP_STATUS, &c, &sn, &reply, NULL, NULL), PSP_STATUS_R);
    assert_int_equal(((struct psp_status_r *)&reply)->holds, 42);
    assert_int_equal(sn.n, 2);
    assert_string_equal(sn.detail[0], "first");
    assert_string_equal(sn.detail[1], "second");
    assert_false(c.broken);
    /* the enforcer has exited since: the next call fails and the client stays broken */
    static psp_buf req;
    psp_hdr_init(&req.h, PSP_STATUS, 0);
    assert_int_equal(psp_call(&c, &req, &reply, NULL, NULL), -EPIPE);
    assert_true(c.broken);
    assert_non_null(strstr(c.err, "exited"));
    assert_int_equal(psp_call(&c, &req, &reply, NULL, NULL), -EPIPE);
    close(c.fd);
    assert_int_equal(open_fds(), before);
}

static void test_fds(void **st)
{
    (void)st;
    int before = open_fds();
    psp_client c;
    seen sn = {0};
    static psp_buf reply;
    int fds[PSP_MAX_FDS], nfds = -1;
    assert_int_equal(run(S_OPEN, PSP_OPEN, &c, &sn, &reply, fds, &nfds), PSP_OPENED);
    assert_int_equal(nfds, 1);
    assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
    close(fds[0]);
    close(c.fd);
    /* the same reply to a caller that wants no fds: refused, the fd closed */
    assert_int_equal(run(S_OPEN, PSP_OPEN, &c, &sn, &reply, NULL, NULL), -EPROTO);
    assert_true(c.broken);
    close(c.fd);
    assert_int_equal(open_fds(), before);
}

static void test_out_of_protocol(void **st)
{
    (void)st;
    psp_client c;
    seen sn = {0};
    static psp_buf reply;
    assert_int_equal(run(S_WRONG_SEQ, PSP_HOLD, &c, &sn, &reply, NULL, NULL), -EPROTO);
    assert_non_null(strstr(c.err, "pending"));
    close(c.fd);
    assert_true(run(S_MALFORMED, PSP_HOLD, &c, &sn, &reply, NULL, NULL) < 0);
    assert_non_null(strstr(c.err, "malformed"));
    close(c.fd);
    assert_int_equal(run(S_EXIT, PSP_HOLD, &c, &sn, &reply, NULL, NULL), -EPIPE);
    close(c.fd);
}

static void test_drain(void **st)
{
    (void)st;
    int sv[2];
    assert_int_equal(psp_pair(sv), 0);
    psp_client c;
    seen sn = {0};
    psp_client_init(&c, sv[0], on_notice, &sn);
    static psp_buf buf;
    assert_int_equal(psp_drain(&c, &buf), 0); /* nothing waiting */
    send_audit(sv[1], "a");
    send_audit(sv[1], "b");
    assert_int_equal(psp_drain(&c, &buf), 0);
    assert_int_equal(sn.n, 2);
    memset(&buf, 0, sizeof(buf));
    psp_hdr_init(&buf.h, PSP_HELD, 5);
    assert_int_equal(psp_send(sv[1], &buf, NULL, 0, false), 0);
    assert_int_equal(psp_drain(&c, &buf), -EPROTO); /* a reply nobody asked for */
    assert_true(c.broken);
    close(sv[0]);
    close(sv[1]);
}

static void test_recv_bounds(void **st)
{
    (void)st;
    int before = open_fds();
    int sv[2];
    assert_int_equal(psp_pair(sv), 0);
    static char big[PSP_MAX_MSG + 100];
    memset(big, 0, sizeof(big));
    assert_int_equal(send(sv[1], big, sizeof(big), 0), (ssize_t)sizeof(big));
    static psp_buf buf;
    int fds[PSP_MAX_FDS], nfds;
    assert_int_equal(psp_recv(sv[0], &buf, fds, &nfds, false), -EMSGSIZE);
    /* more fds than any message carries: refused, every one closed */
    int four[4];
    for (int i = 0; i < 4; i++)
        four[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    char cb[CMSG_SPACE(sizeof(four))];
    memset(cb, 0, sizeof(cb));
    psp_buf m;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_HELD, 1);
    struct iovec iov = {.iov_base = &m, .iov_len = m.h.len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof(cb)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(four));
    memcpy(CMSG_DATA(cm), four, sizeof(four));
    assert_int_equal(sendmsg(sv[1], &mh, 0), (ssize_t)m.h.len);
    psp_close_fds(four, 4);
    assert_int_equal(psp_recv(sv[0], &buf, fds, &nfds, false), -EMSGSIZE);
    assert_int_equal(nfds, 0);
    assert_int_equal(psp_recv(sv[0], &buf, fds, &nfds, true), -EAGAIN);
    close(sv[1]);
    assert_int_equal(psp_recv(sv[0], &buf, fds, &nfds, false), 0); /* EOF */
    close(sv[0]);
    assert_int_equal(open_fds(), before);
    assert_int_equal(psp_send(-1, &m, NULL, 0, false), -EBADF);
    assert_int_equal(psp_send(sv[0], &m, NULL, PSP_MAX_FDS + 1, false), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_and_notices), cmocka_unit_test(test_fds),
        cmocka_unit_test(test_out_of_protocol),  cmocka_unit_test(test_drain),
        cmocka_unit_test(test_recv_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
