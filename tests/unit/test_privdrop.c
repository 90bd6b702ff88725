// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_privdrop.c - mncd's privilege drops (user/mncd/privdrop.c) on the real kernel, each in a
 * forked child: the monitor's drop leaves uid nobody with every capability set empty (bounding
 * included), no_new_privs and no way back to root, and the process dies with its parent; the
 * enforcer's limit leaves exactly the run set (effective, permitted, bounding) and refuses to
 * keep what it no longer has; an unknown user and root are refused as the monitor's user.
 * Needs root (as every test of the kernel layer); without it each case fails, never skips. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/privdrop.c"

/* Runs fn in a child; returns its exit status (0: every check in it passed). */
static int in_child(int (*fn)(void))
{
    fflush(NULL);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0)
        _exit(fn());
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int monitor_drop(void)
{
    uid_t uid;
    gid_t gid;
    char why[400] = "";
    if (psp_user("nobody", &uid, &gid, why, sizeof(why)) != 0) {
        fprintf(stderr, "# %s\n", why);
        return 1;
    }
    if (psp_drop_to_user(uid, gid, getppid(), why, sizeof(why)) != 0) {
        fprintf(stderr, "# drop: %s\n", why);
        return 2;
    }
    psp_caps c;
    if (psp_caps_of(0, &c) != 0)
        return 3;
    if (c.inh || c.prm || c.eff || c.bnd || c.amb || c.no_new_privs != 1 || c.uid != uid || c.euid != uid) {
        fprintf(stderr, "# after the drop: inh %llx prm %llx eff %llx bnd %llx amb %llx nnp %d uid %u/%u\n",
                (unsigned long long)c.inh, (unsigned long long)c.prm, (unsigned long long)c.eff,
                (unsigned long long)c.bnd, (unsigned long long)c.amb, c.no_new_privs, (unsigned)c.uid,
                (unsigned)c.euid);
        return 4;
    }
    if (setuid(0) == 0 || setresuid(0, 0, 0) == 0 || getgroups(0, NULL) != 0)
        return 5;
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
        return 6;
    if (access("/proc/1/root/.", R_OK) == 0) /* another process's root: ptrace access, refused */
        return 7;
    return 0;
}

static void test_monitor_drop(void **st)
{
    (void)st;
    assert_int_equal(geteuid(), 0);
    assert_int_equal(in_child(monitor_drop), 0);
}

static int enforcer_limit(void)
{
    char why[400] = "";
    if (psp_caps_limit(PSP_CAPS_START, why, sizeof(why)) != 0) {
        fprintf(stderr, "# start: %s\n", why);
        return 1;
    }
    psp_caps c;
    if (psp_caps_of(0, &c) != 0 || c.eff != PSP_CAPS_START || c.bnd != PSP_CAPS_START || c.euid != 0)
        return 2;
    if (psp_caps_limit(PSP_CAPS_RUN, why, sizeof(why)) != 0) {
        fprintf(stderr, "# run: %s\n", why);
        return 3;
    }
    if (psp_caps_of(0, &c) != 0 || c.eff != PSP_CAPS_RUN || c.prm != PSP_CAPS_RUN || c.bnd != PSP_CAPS_RUN || c.inh ||
        c.amb) {
        fprintf(stderr, "# run set: eff %llx prm %llx bnd %llx\n", (unsigned long long)c.eff, (unsigned long long)c.prm,
                (unsigned long long)c.bnd);
        return 4;
    }
    /* what was given up does not come back */
    if (psp_caps_limit(PSP_CAPS_RUN | PSP_CAP(CAP_CHOWN), why, sizeof(why)) == 0 || !strstr(why, "not permitted"))
        return 5;
    if (chown("/proc/self/comm", 1, 1) == 0) /* CAP_CHOWN is gone */
        return 6;
    return 0;
}

static void test_enforcer_limit(void **st)
{
    (void)st;
    assert_int_equal(geteuid(), 0);
    assert_int_equal(in_child(enforcer_limit), 0);
}

/* The monitor dies with the enforcer: E forks M, M drops with E as its parent and says so on a
 * pipe, E exits; the pipe's write end (held by M alone) closes within 5 s. */
static void test_dies_with_parent(void **st)
{
    (void)st;
    assert_int_equal(geteuid(), 0);
    int pfd[2], rdy[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(pipe(rdy), 0);
    fflush(NULL);
    pid_t e = fork();
    assert_true(e >= 0);
    if (e == 0) {
        close(pfd[0]);
        pid_t self = getpid();
        pid_t m = fork();
        if (m < 0)
            _exit(1);
        if (m == 0) {
            close(rdy[0]);
            char why[400] = "";
            uid_t uid;
            gid_t gid;
            if (psp_user("nobody", &uid, &gid, why, sizeof(why)) != 0 ||
                psp_drop_to_user(uid, gid, self, why, sizeof(why)) != 0)
                _exit(2);
            if (write(pfd[1], "r", 1) != 1 || write(rdy[1], "r", 1) != 1)
                _exit(3);
            close(rdy[1]);
            pause(); /* until killed */
            _exit(4);
        }
        close(pfd[1]);
        close(rdy[1]);
        char b;
        /* the enforcer "dies" once the monitor has dropped; the monitor must follow */
        _exit(read(rdy[0], &b, 1) == 1 ? 0 : 5);
    }
    close(pfd[1]);
    close(rdy[0]);
    close(rdy[1]);
    int stat;
    assert_int_equal(waitpid(e, &stat, 0), e);
    assert_true(WIFEXITED(stat) && WEXITSTATUS(stat) == 0);
    char b = 0;
    assert_int_equal(read(pfd[0], &b, 1), 1); /* the monitor had dropped */
    assert_int_equal(b, 'r');
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    assert_int_equal(poll(&p, 1, 5000), 1);
    assert_int_equal(read(pfd[0], &b, 1), 0); /* EOF: the monitor is gone */
    close(pfd[0]);
}

static void test_users(void **st)
{
    (void)st;
    uid_t u;
    gid_t g;
    char why[400];
    assert_int_equal(psp_user("root", &u, &g, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "is root"));
    assert_int_equal(psp_user("no-such-user-mnc-test", &u, &g, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "does not exist"));
    assert_non_null(strstr(why, "systemd-sysusers"));
    assert_int_equal(psp_user("nobody", &u, &g, why, sizeof(why)), 0);
    assert_true(u != 0 && g != 0);
    assert_int_equal(psp_drop_to_user(0, 5, 0, why, sizeof(why)), -1); /* never to root */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_users),
        cmocka_unit_test(test_monitor_drop),
        cmocka_unit_test(test_enforcer_limit),
        cmocka_unit_test(test_dies_with_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
