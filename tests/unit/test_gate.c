// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_gate.c - the launcher's gate (user/mncctl/run_gate.c) on the real kernel: a lock call
 * held in seccomp cannot slip past a taint.
 *
 * mncctl run sends every lock call of an agent through a seccomp user notification that the
 * launcher answers from the agent's taint. The launcher reads the taint, then answers; if mncd
 * tainted the agent in between and delivered, a "go on" read before the taint would let a lock
 * carrying delivered bytes through. What prevents it is the kernel: mncd sets the taint, then
 * freezes the agent's cgroup (its sweep) before it delivers, and freezing withdraws a pending
 * notification; the call restarts after the thaw and is asked again. This test makes that
 * interleaving happen on purpose: a child in a cgroup of its own (the filter loaded, its fd
 * handed over with run_gate_send_fd / run_gate_recv_fd as mncctl run does) calls flock; the
 * parent receives the notification, freezes the cgroup, answers "go on" (the stale verdict) and
 * must be refused; after the thaw the call comes again and run_gate_answer_with, now with a
 * tainted verdict, refuses it: the child sees EPERM and holds no lock. Then the plain cases: an
 * untainted verdict lets flock, fcntl F_SETLK and F_OFD_SETLK through, a tainted one refuses them.
 * Needs root and cgroup v2: skipped otherwise (a skip counts as a failure in `make test`). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "mnc_util.h"
#include "run_gate.h"

static char cg[512], file[256];
static const char *self; /* this test's path (argv[0]) */

static int setup(void **state)
{
    (void)state;
    char cg2[256];
    if (geteuid() != 0 || mnc_cgroup2_mount(cg2, sizeof(cg2)) != 0) {
        fprintf(stderr, "SKIP: test_gate needs root and a cgroup2 mount\n");
        return 0; /* each test skips */
    }
    /* the launcher takes the notification fd with pidfd_open + pidfd_getfd (Linux >= 5.6);
     * valgrind 3.19 (`make valgrind`) does not know these calls */
    int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (pfd < 0) {
        fprintf(stderr, "SKIP: test_gate: pidfd_open: %s (under valgrind?)\n", strerror(errno));
        return 0;
    }
    close(pfd);
    snprintf(cg, sizeof(cg), "%s/mnc-test-gate-%d", cg2, (int)getpid());
    snprintf(file, sizeof(file), "/tmp/mnc-test-gate-%d", (int)getpid());
    int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mkdir(cg, 0755), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (cg[0])
        rmdir(cg);
    if (file[0])
        unlink(file);
    return 0;
}

static bool verdict(void *arg) { return *(bool *)arg; }

/* The child: enters cg, loads a filter that notifies on flock and the fcntl lock commands,
 * hands its fd over, then runs `op` and writes the errno (0: success) to out. */
_Noreturn static void child(int sock, int out, char op)
{
    char pid[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    char procs[600];
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (mnc_write_file(procs, pid) != 0 || !ctx || seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(flock), 0) != 0 ||
        seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fcntl), 1, SCMP_A1_32(SCMP_CMP_EQ, F_SETLK)) != 0 ||
        seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fcntl), 1, SCMP_A1_32(SCMP_CMP_EQ, F_OFD_SETLK)) != 0 ||
        seccomp_load(ctx) != 0)
        _exit(2);
    int nfd = seccomp_notify_fd(ctx);
    if (nfd < 0 || run_gate_send_fd(sock, nfd) != 0)
        _exit(3);
    close(nfd);
    seccomp_release(ctx);
    int fd = open(file, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 4096, .l_len = 1};
    int r = fd < 0      ? -1
            : op == 'f' ? flock(fd, LOCK_EX | LOCK_NB)
            : op == 'p' ? fcntl(fd, F_SETLK, &fl)
                        : fcntl(fd, F_OFD_SETLK, &fl);
    int e = r == 0 ? 0 : errno;
    if (write(out, &e, sizeof(e)) != (ssize_t)sizeof(e))
        _exit(4);
    /* keep the lock (if any) until the parent has looked */
    char b;
    while (read(out, &b, 1) < 0 && errno == EINTR)
        ;
    _exit(0);
}

typedef struct {
    pid_t pid;
    int gate; /* the notification fd, as the launcher holds it */
    int res;  /* the child's result socket */
} kid;

static void start(kid *k, char op)
{
    int sp[2], rp[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rp), 0);
    k->pid = fork();
    assert_true(k->pid >= 0);
    if (k->pid == 0) {
        /* exec'd afresh (main's --child): under `make valgrind` the child then runs natively,
         * as valgrind does not follow exec by default and cannot run seccomp(2) itself */
        close(sp[0]);
        close(rp[0]);
        char a_op[2] = {op, 0}, a_sock[16], a_out[16];
        snprintf(a_sock, sizeof(a_sock), "%d", sp[1]);
        snprintf(a_out, sizeof(a_out), "%d", rp[1]);
        if (fcntl(sp[1], F_SETFD, 0) != 0 || fcntl(rp[1], F_SETFD, 0) != 0)
            _exit(5);
        execl(self, self, "--child", a_op, a_sock, a_out, cg, file, (char *)NULL);
        _exit(6);
    }
    close(sp[1]);
    close(rp[1]);
    k->gate = run_gate_recv_fd(sp[0], k->pid);
    close(sp[0]);
    k->res = rp[0];
    assert_true(k->gate >= 0);
}

/* The child's errno, then whether an outsider can take the same lock now (so: none is held). */
static int finish(kid *k, bool *held)
{
    int e = -1;
    assert_int_equal(read(k->res, &e, sizeof(e)), (ssize_t)sizeof(e));
    int fd = open(file, O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 4096, .l_len = 1};
    *held = flock(fd, LOCK_EX | LOCK_NB) != 0 || (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK);
    close(fd);
    assert_int_equal(write(k->res, "x", 1), 1);
    int st;
    assert_int_equal(waitpid(k->pid, &st, 0), k->pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(k->res);
    close(k->gate);
    return e;
}

static void freeze(bool on)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/cgroup.freeze", cg);
    assert_int_equal(mnc_write_file(p, on ? "1" : "0"), 0);
    snprintf(p, sizeof(p), "%s/cgroup.events", cg);
    for (int i = 0; i < 200; i++) {
        char ev[256] = "";
        FILE *f = fopen(p, "r");
        assert_non_null(f);
        size_t n = fread(ev, 1, sizeof(ev) - 1, f);
        fclose(f);
        ev[n] = 0;
        if (strstr(ev, on ? "frozen 1" : "frozen 0"))
            return;
        usleep(10000);
    }
    fail_msg("cgroup %s did not %s", cg, on ? "freeze" : "thaw");
}

static void t_freeze_withdraws_pending_call(void **state)
{
    (void)state;
    if (!cg[0])
        skip();
    kid k;
    start(&k, 'f');
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    assert_int_equal(seccomp_notify_alloc(&req, &resp), 0);
    assert_int_equal(seccomp_notify_receive(k.gate, req), 0); /* the child's flock, waiting */
    freeze(true);                                             /* mncd's sweep, after the taint */
    assert_int_equal(seccomp_notify_id_valid(k.gate, req->id), -ENOENT);
    resp->id = req->id; /* the stale "go on", read before the taint */
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    int r = seccomp_notify_respond(k.gate, resp);
    assert_true(r == -ENOENT || r == -ECANCELED);
    freeze(false);
    struct pollfd p = {.fd = k.gate, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 10000), 1); /* the call comes again after the thaw */
    bool tainted_verdict = false;
    unsigned long denied = 0;
    assert_int_equal(run_gate_answer_with(k.gate, verdict, &tainted_verdict, &denied), 0);
    assert_int_equal(denied, 1);
    bool held = true;
    assert_int_equal(finish(&k, &held), EPERM);
    assert_false(held);
    seccomp_notify_free(req, resp);
}

/* One call under a verdict: the child's errno and whether the lock is held afterwards. */
static void one(char op, bool untainted, int want, bool want_held)
{
    kid k;
    start(&k, op);
    struct pollfd p = {.fd = k.gate, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 10000), 1);
    unsigned long denied = 0;
    assert_int_equal(run_gate_answer_with(k.gate, verdict, &untainted, &denied), 0);
    assert_int_equal(denied, untainted ? 0 : 1);
    bool held = !want_held;
    assert_int_equal(finish(&k, &held), want);
    assert_int_equal(held, want_held);
}

static void t_verdicts(void **state)
{
    (void)state;
    if (!cg[0])
        skip();
    one('f', true, 0, true); /* flock */
    one('p', true, 0, true); /* fcntl F_SETLK */
    one('o', true, 0, true); /* fcntl F_OFD_SETLK */
    one('f', false, EPERM, false);
    one('p', false, EPERM, false);
    one('o', false, EPERM, false);
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc == 7 && strcmp(argv[1], "--child") == 0) {
        snprintf(cg, sizeof(cg), "%s", argv[5]);
        snprintf(file, sizeof(file), "%s", argv[6]);
        child(atoi(argv[3]), atoi(argv[4]), argv[2][0]);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_freeze_withdraws_pending_call),
        cmocka_unit_test(t_verdicts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
