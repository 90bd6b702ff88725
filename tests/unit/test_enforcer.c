// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_enforcer.c - mncd's enforcer (user/mncd/enforcer/) as a real process pair: the test forks
 * the enforcer, which forks a scripted monitor that drops to uid nobody and talks the protocol
 * (user/mncd/privsep.h) as the real one will:
 *   - before the seal the enforcer opens for the monitor a file in a root-only directory (the
 *     monitor cannot), refuses a directory and a missing file; after the seal it opens nothing;
 *   - SEAL hands over the state dir (the monitor writes into it although its parent is closed to
 *     it; a file a root process left there becomes the monitor's, a sink directory stays root's)
 *     and the agent socket (0666, SO_PASSCRED), and binds the admin socket (0600: the monitor
 *     cannot connect; root outside the mnc tree can, and is answered);
 *   - a malformed message is refused and the enforcer goes on serving;
 *   - SIGTERM to the enforcer: STOP to the monitor, which exits 0; the enforcer exits with its
 *     status and removes both sockets;
 *   - kill -9 of the monitor: the enforcer exits non-zero; kill -9 of the enforcer: the monitor
 *     dies with it.
 * The kernel layer is off here (its tests are the kernel integration tests). Needs root. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/enforcer/enforcer.h"
#include "../../user/mncd/privdrop.h"

static char tmp[64];
static uid_t nobody_uid;
static gid_t nobody_gid;

static void path(char *out, size_t n, const char *rel) { snprintf(out, n, "%.60s/%.40s", tmp, rel); }

/* ---- the scripted monitor (a process of its own; returns the number of the failed step) */

static int n_start_records, stopped, n_sinks_written;

static void on_notice(void *arg, const void *msg, int fd)
{
    (void)arg;
    const struct psp_hdr *h = msg;
    if (h->type == PSP_AUDIT && ((const struct psp_audit *)msg)->op == PSP_A_KERNEL_START)
        n_start_records++;
    if (h->type == PSP_STOP)
        stopped = 1;
    if (h->type == PSP_SINKFD && fd >= 0 && ((const struct psp_sinkfd *)msg)->id == 1 &&
        write(fd, "logged by the monitor\n", 22) == 22)
        n_sinks_written++;
    if (fd >= 0)
        close(fd);
}

static int req_open(psp_client *c, const char *p, int *fd)
{
    static psp_buf m, r;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_OPEN, 0);
    struct psp_open *o = (void *)&m;
    o->what = PSP_OPEN_POLICY;
    snprintf(o->path, sizeof(o->path), "%s", p);
    int fds[PSP_MAX_FDS], nfds = 0;
    int t = psp_call(c, &m, &r, fds, &nfds);
    *fd = nfds == 1 ? fds[0] : -1;
    return t == PSP_REFUSED ? -(int)((struct psp_refused *)&r)->code : t;
}

static int configure(psp_client *c, const char *state)
{
    static psp_buf m;
    memset(&m, 0, sizeof(m));
    struct psp_config *cf = (void *)&m;
    psp_hdr_init(&cf->h, PSP_CONFIG, 0);
    cf->monitor_uid = nobody_uid;
    cf->monitor_gid = nobody_gid;
    cf->kernel = PSP_KERN_OFF;
    cf->n_principals = 2;
    snprintf(cf->state_dir, sizeof(cf->state_dir), "%s", state);
    snprintf(cf->socket, sizeof(cf->socket), "%.60s/mncd.sock", tmp);
    if (psp_tell(c, cf))
        return -1;
    for (uint32_t i = 0; i < 2; i++) {
        memset(&m, 0, sizeof(m));
        struct psp_principal *p = (void *)&m;
        psp_hdr_init(&p->h, PSP_PRINCIPAL, 0);
        p->id = i;
        p->cls = i ? MNC_SINK_LOG : MNC_SINK_AGENT;
        snprintf(p->name, sizeof(p->name), "%s", i ? "ops_log" : "worker");
        if (i)
            snprintf(p->path, sizeof(p->path), "%s/state/logs/ops.log", tmp);
        if (psp_tell(c, p))
            return -1;
    }
    return 0;
}

static int fake_monitor(int fd, int ready_w)
{
    char why[400] = "", p[512], buf[16];
    if (psp_drop_to_user(nobody_uid, nobody_gid, getppid(), why, sizeof(why)) != 0)
        return 1;
    psp_client c;
    psp_client_init(&c, fd, on_notice, NULL);
    /* a file in a directory closed to the monitor: the enforcer opens it before the seal */
    path(p, sizeof(p), "closed/policy.json");
    if (open(p, O_RDONLY) >= 0 || errno != EACCES)
        return 2;
    int f;
    if (req_open(&c, p, &f) != PSP_OPENED || f < 0 || read(f, buf, 5) != 5 || memcmp(buf, "hello", 5) != 0)
        return 3;
    close(f);
    path(p, sizeof(p), "closed");
    if (req_open(&c, p, &f) != -PSP_NO_INVALID || f >= 0)
        return 4;
    path(p, sizeof(p), "closed/none.json");
    if (req_open(&c, p, &f) != -PSP_NO_INVALID)
        return 5;
    path(p, sizeof(p), "state");
    if (configure(&c, p) != 0)
        return 6;
    static psp_buf m, r;
    memset(&m, 0, sizeof(m));
    struct psp_seal *s = (void *)&m;
    psp_hdr_init(&s->h, PSP_SEAL, 0);
    s->n_principals = 2;
    int fds[PSP_MAX_FDS], nfds = 0;
    if (psp_call(&c, s, &r, fds, &nfds) != PSP_STARTED || nfds != 2 || n_start_records != 1)
        return 7;
    /* the log sink's file came as an fd the monitor can append to (it could not open it) */
    if (((struct psp_started *)&r)->n_sinkfds != 1 || n_sinks_written != 1)
        return 20;
    c.n_principals = 2;
    /* the state dir: the monitor's, reached through its fd */
    if (fchdir(fds[0]) != 0)
        return 8;
    int w = open("audit.jsonl", O_WRONLY | O_APPEND | O_CLOEXEC); /* left by a root process: handed over */
    if (w < 0 || write(w, "x\n", 2) != 2)
        return 9;
    close(w);
    if (open("logs/ops.log", O_WRONLY | O_CREAT | O_CLOEXEC, 0600) >= 0) /* a sink dir stays root's */
        return 10;
    int one = 0;
    socklen_t ol = sizeof(one);
    if (getsockopt(fds[1], SOL_SOCKET, SO_PASSCRED, &one, &ol) != 0 || one != 1)
        return 11;
    close(fds[0]);
    close(fds[1]);
    /* after the seal: no file is opened, a malformed message is refused, the enforcer goes on */
    if (req_open(&c, "/etc/passwd", &f) != -PSP_NO_STATE)
        return 12;
    memset(&m, 0, sizeof(m));
    struct psp_hold *h = (void *)&m;
    psp_hdr_init(&h->h, PSP_HOLD, 0);
    h->agent = 1; /* a log sink: no agent */
    h->op = PSP_OP_RECV;
    if (psp_call(&c, h, &r, NULL, NULL) != PSP_REFUSED || ((struct psp_refused *)&r)->code != PSP_NO_MALFORMED)
        return 13;
    h->agent = 0;
    if (psp_call(&c, h, &r, NULL, NULL) != PSP_REFUSED || ((struct psp_refused *)&r)->code != PSP_NO_OFF)
        return 14;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_STATUS, 0);
    if (psp_call(&c, &m, &r, NULL, NULL) != PSP_STATUS_R)
        return 15;
    /* the admin socket is not the monitor's */
    int a = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/mncd.sock.admin", tmp);
    if (a < 0 || connect(a, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != EACCES)
        return 16;
    close(a);
    if (write(ready_w, "r", 1) != 1)
        return 17;
    /* now serve notices until STOP */
    for (int i = 0; i < 200 && !stopped; i++) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 100) == 1 && psp_drain(&c, &r) != 0)
            return 18;
    }
    return stopped ? 0 : 19;
}

/* Forks the enforcer, which forks the monitor. *mon_pid_r: a pipe end that gets the monitor's
 * pid; ready: a pipe end that gets 'r' when the monitor reaches its last step. */
static pid_t start_pair(int *ready_r, int *pid_r)
{
    int rp[2], pp[2];
    assert_int_equal(pipe(rp), 0);
    assert_int_equal(pipe(pp), 0);
    fflush(NULL);
    pid_t e = fork();
    assert_true(e >= 0);
    if (e == 0) {
        int sv[2];
        if (psp_pair(sv) != 0)
            _exit(90);
        pid_t m = fork();
        if (m < 0)
            _exit(91);
        if (m == 0) {
            close(sv[0]);
            close(rp[0]);
            close(pp[0]);
            close(pp[1]);
            _exit(fake_monitor(sv[1], rp[1]));
        }
        close(sv[1]);
        close(rp[0]);
        close(rp[1]);
        close(pp[0]);
        if (write(pp[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
            _exit(92);
        close(pp[1]);
        ek_main(sv[0], m);
    }
    close(rp[1]);
    close(pp[1]);
    *ready_r = rp[0];
    *pid_r = pp[0];
    return e;
}

static int wait_exit(pid_t p)
{
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int setup(void **st)
{
    (void)st;
    assert_int_equal(geteuid(), 0);
    char why[300];
    assert_int_equal(psp_user("nobody", &nobody_uid, &nobody_gid, why, sizeof(why)), 0);
    snprintf(tmp, sizeof(tmp), "/tmp/mnc-enforcer.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    assert_int_equal(chmod(tmp, 0755), 0); /* the agent socket's directory: anyone may reach it */
    char p[512];
    path(p, sizeof(p), "closed");
    assert_int_equal(mkdir(p, 0700), 0);
    path(p, sizeof(p), "closed/policy.json");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("hello", f);
    fclose(f);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* A fresh state dir whose parent is closed to the monitor, with a file a root process left. */
static void fresh_state(void)
{
    char p[512], cmd[600];
    path(p, sizeof(p), "state");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(chmod(tmp, 0711), 0); /* traversable, not listable */
    path(p, sizeof(p), "state/audit.jsonl");
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    path(p, sizeof(p), "state/logs");
    assert_int_equal(mkdir(p, 0700), 0);
}

static void test_life(void **st)
{
    (void)st;
    fresh_state();
    int ready, pidr;
    pid_t e = start_pair(&ready, &pidr);
    char b = 0;
    struct pollfd pf = {.fd = ready, .events = POLLIN};
    assert_int_equal(poll(&pf, 1, 20000), 1);
    if (read(ready, &b, 1) != 1) /* the monitor failed a step: its number is the exit status */
        fail_msg("the scripted monitor stopped early: status %d", wait_exit(e));
    char p[512];
    struct stat sb;
    path(p, sizeof(p), "mncd.sock");
    assert_int_equal(stat(p, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode) && (sb.st_mode & 0777) == 0666);
    path(p, sizeof(p), "mncd.sock.admin");
    assert_int_equal(stat(p, &sb), 0);
    assert_true((sb.st_mode & 0777) == 0600 && sb.st_uid == 0);
    path(p, sizeof(p), "state");
    assert_int_equal(stat(p, &sb), 0);
    assert_true(sb.st_uid == nobody_uid && (sb.st_mode & 0777) == 0700);
    path(p, sizeof(p), "state/logs");
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_uid, 0);
    path(p, sizeof(p), "state/logs/ops.log"); /* root's, 0600, with the monitor's line */
    assert_int_equal(stat(p, &sb), 0);
    assert_true(sb.st_uid == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 22);
    /* root outside the mnc tree is the admin: answered (the kernel layer is off) */
    int a = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    path(sa.sun_path, sizeof(sa.sun_path), "mncd.sock.admin");
    assert_int_equal(connect(a, (struct sockaddr *)&sa, sizeof(sa)), 0);
    static psp_buf m, r;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_ADM_RESET, 3);
    snprintf(((struct psp_adm_reset *)&m)->agent, PSP_NAME_MAX, "worker");
    assert_int_equal(psp_send(a, &m, NULL, 0, false), 0);
    int fds[PSP_MAX_FDS], nfds;
    ssize_t n = psp_recv(a, &r, fds, &nfds, false);
    char why[200];
    assert_int_equal(psp_check_reply(&r, (size_t)n, nfds, 0, why, sizeof(why)), PSP_REFUSED);
    assert_int_equal(((struct psp_refused *)&r)->code, PSP_NO_OFF);
    assert_int_equal(r.h.seq, 3);
    close(a);
    /* SIGTERM: STOP, the monitor exits 0, so does the enforcer, and the sockets go */
    assert_int_equal(kill(e, SIGTERM), 0);
    assert_int_equal(wait_exit(e), 0);
    path(p, sizeof(p), "mncd.sock");
    assert_int_equal(access(p, F_OK), -1);
    path(p, sizeof(p), "mncd.sock.admin");
    assert_int_equal(access(p, F_OK), -1);
    close(ready);
    close(pidr);
}

static void test_monitor_killed(void **st)
{
    (void)st;
    fresh_state();
    int ready, pidr;
    pid_t e = start_pair(&ready, &pidr);
    pid_t m;
    assert_int_equal(read(pidr, &m, sizeof(m)), (ssize_t)sizeof(m));
    char b;
    assert_int_equal(read(ready, &b, 1), 1);
    assert_int_equal(kill(m, SIGKILL), 0);
    assert_int_equal(wait_exit(e), 1); /* the enforcer follows, non-zero */
    char p[512];
    path(p, sizeof(p), "mncd.sock");
    assert_int_equal(access(p, F_OK), -1);
    close(ready);
    close(pidr);
}

static void test_enforcer_killed(void **st)
{
    (void)st;
    fresh_state();
    int ready, pidr;
    pid_t e = start_pair(&ready, &pidr);
    pid_t m;
    assert_int_equal(read(pidr, &m, sizeof(m)), (ssize_t)sizeof(m));
    char b;
    assert_int_equal(read(ready, &b, 1), 1);
    assert_int_equal(kill(e, SIGKILL), 0);
    assert_int_equal(wait_exit(e), 200 + SIGKILL);
    /* the monitor (reparented) dies with it: its pid goes within 5 s */
    int i = 0;
    while (i++ < 500 && kill(m, 0) == 0) {
        char sp[64], s2[256] = "";
        snprintf(sp, sizeof(sp), "/proc/%d/stat", (int)m);
        FILE *f = fopen(sp, "r");
        if (f) {
            if (!fgets(s2, sizeof(s2), f))
                s2[0] = 0;
            fclose(f);
        }
        if (strstr(s2, ") Z ")) /* a zombie of init's: dead */
            break;
        usleep(10000);
    }
    assert_true(i < 500);
    close(ready);
    close(pidr);
}

static void test_start_refused(void **st)
{
    (void)st;
    /* the state dir's parent is missing: SEAL is refused, both exit non-zero */
    char p[512], cmd[600];
    path(p, sizeof(p), "state");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
    assert_int_equal(system(cmd), 0);
    path(p, sizeof(p), "state");
    assert_int_equal(symlink("/nonexistent-mnc/x", p), 0); /* mkdir fails: EEXIST on a dangling link */
    int ready, pidr;
    pid_t e = start_pair(&ready, &pidr);
    assert_int_equal(wait_exit(e), 7); /* the monitor's SEAL step failed */
    unlink(p);
    close(ready);
    close(pidr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_life),
        cmocka_unit_test(test_monitor_killed),
        cmocka_unit_test(test_enforcer_killed),
        cmocka_unit_test(test_start_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
