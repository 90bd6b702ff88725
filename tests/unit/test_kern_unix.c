// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_kern_unix.c - the cgroup sendmsg_unix hook on the real kernel: how each spelling of a
 * UNIX datagram destination is keyed and judged (mnc_unix_key_build, mnc_unix_refused).
 *
 * A tainted agent (destination id 1 in scope, nothing external) sends one datagram per case
 * from a child inside its cgroup; each case checks the errno and which per-reason counter
 * moved. The paths are long enough that the spellings under test sit past character 64 (the
 * second 64-bit mask word of the key builder) and up to the 108-byte limit of sun_path.
 * Needs root, cgroup v2 and the cgroup/sendmsg_unix hook (Linux >= 6.7): skipped otherwise,
 * and a skip counts as a failure in `make test`. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "mnc_abi.h"
#include "mnc_kern.h"
#include "mnc_util.h"

static char root[128], tree[64], dir[64], deep[160], agent_cg[512], cg2[256];
static char p_in[200], p_out[200], abs_in[64], abs_st[64];
static mnc_kern *k;
static int fds[5] = {-1, -1, -1, -1, -1};

#define ID_IN 1  /* in the agent's scope */
#define ID_OUT 2 /* a registered agent outside it */

/* Moves the calling process into cgroup cg: 0 or -1. */
static int enter(const char *cg)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
    return mnc_write_file(p, "0") == 0 ? 0 : -1;
}

/* sendto() of one datagram to sun_path bytes a[0..n) (addrlen = 2 + n) from a child inside
 * the agent cgroup; returns 0 or the errno */
static int send_from_agent(const char *a, size_t n)
{
    int p[2];
    if (n > MNC_UNIX_PATH_MAX)
        return -1;
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int e = -1;
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        memcpy(sa.sun_path, a, n);
        /* the hooks run for the cgroup a socket was created in: enter first */
        int s = enter(agent_cg) == 0 ? socket(AF_UNIX, SOCK_DGRAM, 0) : -1;
        if (s >= 0)
            e = sendto(s, "x", 1, 0, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) ==
                        1
                    ? 0
                    : errno;
        _exit(write(p[1], &e, sizeof(e)) == sizeof(e) ? 0 : 1);
    }
    close(p[1]);
    int e = -1;
    if (read(p[0], &e, sizeof(e)) != sizeof(e))
        e = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return e;
}

static int bind_dgram(const char *a, size_t n)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, a, n);
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) != 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    return s;
}

static int setup(void **state)
{
    (void)state;
    if (geteuid() != 0 || mnc_cgroup2_mount(cg2, sizeof(cg2)) != 0)
        return 0; /* each test skips */
    int pid = (int)getpid();
    snprintf(root, sizeof(root), "/sys/fs/bpf/mnc-kunix-%d", pid);
    snprintf(tree, sizeof(tree), "mnc-kunix-%d", pid);
    snprintf(dir, sizeof(dir), "/tmp/mnc-kunix-%d", pid);
    /* six 10-letter directories: the file names start past character 64 */
    snprintf(deep, sizeof(deep), "%s/aaaaaaaaaa/bbbbbbbbbb/cccccccccc/dddddddddd/eeeeeeeeee/ffffffffff", dir);
    char p[sizeof(deep)];
    snprintf(p, sizeof(p), "%s", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    for (char *s = deep + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        memcpy(p, deep, (size_t)(s - deep));
        p[s - deep] = 0;
        assert_int_equal(mkdir(p, 0700), 0);
    }
    assert_int_equal(mkdir(deep, 0700), 0);
    snprintf(p_in, sizeof(p_in), "%s/in.sock", deep);
    snprintf(p_out, sizeof(p_out), "%s/out.sock", deep);
    snprintf(abs_in, sizeof(abs_in), "@mnc-kunix-%d", pid);
    snprintf(abs_st, sizeof(abs_st), "@mnc-kunix-st-%d", pid);
    assert_true(strlen(p_in) > 70 && strlen(p_out) < MNC_UNIX_PATH_MAX);

    char err[512];
    mnc_kern_opts o = {.pin_root = root, .tree = tree};
    mnc_selftest st;
    if (mnc_kern_attach(&o, &k, &st, err, sizeof(err)) != 0) {
        print_error("attach: %s\n", err);
        return -1;
    }
    snprintf(agent_cg, sizeof(agent_cg), "%s/agent", mnc_kern_tree(k));
    uint64_t cgid;
    struct mnc_taint t;
    memset(&t, 0, sizeof(t));
    t.tainted = 1;
    t.sinks[0] = 1u << ID_IN;
    assert_int_equal(mkdir(agent_cg, 0755), 0);
    assert_int_equal(mnc_cgroup_id(agent_cg, &cgid), 0);
    assert_int_equal(mnc_kern_register_cgroup(k, cgid, 7, MNC_AGENT_F_LAUNCHED), 0);
    assert_int_equal(mnc_kern_taint_set(k, 7, &t), 0);
    assert_int_equal(mnc_kern_sink_unix_add(k, p_in, ID_IN, MNC_SINK_AGENT), 0);
    assert_int_equal(mnc_kern_sink_unix_add(k, p_out, ID_OUT, MNC_SINK_AGENT), 0);
    char reg[80];
    snprintf(reg, sizeof(reg), "dgram:%s", abs_in);
    assert_int_equal(mnc_kern_sink_unix_add(k, reg, ID_IN, MNC_SINK_AGENT), 0);
    /* a registered stream socket's name; the kernel keeps abstract names per socket type, so
     * an outsider's datagram socket can hold the same name (bound below) */
    snprintf(reg, sizeof(reg), "stream:%s", abs_st);
    assert_int_equal(mnc_kern_sink_unix_add(k, reg, ID_IN, MNC_SINK_AGENT), 0);
    char an[64];
    size_t al = strlen(abs_in);
    memcpy(an, abs_in, al);
    an[0] = 0;
    fds[0] = bind_dgram(p_in, strlen(p_in) + 1);
    fds[1] = bind_dgram(p_out, strlen(p_out) + 1);
    fds[2] = bind_dgram(an, al);
    /* an outsider's socket whose name is the registered one plus a NUL: another socket to the
     * kernel, so it must not share the registered name's key */
    an[al] = 0;
    fds[3] = bind_dgram(an, al + 1);
    size_t sl = strlen(abs_st);
    memcpy(an, abs_st, sl);
    an[0] = 0;
    fds[4] = bind_dgram(an, sl);
    assert_true(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0 && fds[3] >= 0 && fds[4] >= 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (k) {
        char err[512];
        rmdir(agent_cg);
        mnc_kern_close(k);
        mnc_kern_detach(root, true, err, sizeof(err));
        char tp[600];
        snprintf(tp, sizeof(tp), "%s/%s", cg2, tree);
        rmdir(tp);
    }
    if (dir[0]) {
        unlink(p_in);
        unlink(p_out);
        char p[sizeof(deep)];
        snprintf(p, sizeof(p), "%s", deep);
        for (char *s; strlen(p) >= strlen(dir); *s = 0) {
            rmdir(p);
            if ((s = strrchr(p, '/')) == NULL)
                break;
        }
    }
    return 0;
}

/* one case: sun_path bytes a[0..n) -> want_errno, and the counter of want_reason moved by one */
static void expect(const char *what, const char *a, size_t n, int want_errno, unsigned want_reason)
{
    uint64_t c0[MNC_K__COUNT], c1[MNC_K__COUNT];
    assert_int_equal(mnc_kern_counters(k, c0), 0);
    int e = send_from_agent(a, n);
    assert_int_equal(mnc_kern_counters(k, c1), 0);
    if (e != want_errno || c1[want_reason] - c0[want_reason] != 1) {
        print_error("%s: errno %d (want %d), reason %u counted %llu times (want 1)\n", what, e, want_errno, want_reason,
                    (unsigned long long)(c1[want_reason] - c0[want_reason]));
        fail();
    }
}

static void t_spellings(void **state)
{
    (void)state;
    if (!k)
        skip();
    char a[256];
    size_t n = strlen(p_in);

    expect("registered, NUL-terminated", p_in, n + 1, 0, MNC_K_ALLOW_SCOPE);
    expect("registered, no NUL", p_in, n, 0, MNC_K_ALLOW_SCOPE);
    memset(a, 0, sizeof(a));
    memcpy(a, p_in, n);
    expect("registered, zero padded to 108 bytes", a, MNC_UNIX_PATH_MAX, 0, MNC_K_ALLOW_SCOPE);
    memcpy(a + n + 1, "junk", 4);
    expect("registered, \"\\0junk\" after it", a, MNC_UNIX_PATH_MAX, 0, MNC_K_ALLOW_SCOPE);
    expect("registered, cut short by the address length", p_in, n - 3, EPERM, MNC_K_DENY_EXTERNAL);
    expect("registered peer out of scope", p_out, strlen(p_out) + 1, EPERM, MNC_K_DENY_SCOPE);

    /* the same socket, spelled otherwise past character 64 */
    snprintf(a, sizeof(a), "%s/./in.sock", deep);
    expect("\"/./\" past character 64", a, strlen(a) + 1, EPERM, MNC_K_DENY_UNIX_PATH);
    snprintf(a, sizeof(a), "%s//in.sock", deep);
    expect("\"//\" past character 64", a, strlen(a) + 1, EPERM, MNC_K_DENY_UNIX_PATH);
    snprintf(a, sizeof(a), "%s/../in.sock", deep);
    expect("\"/../\" past character 64", a, strlen(a) + 1, EPERM, MNC_K_DENY_UNIX_PATH);
    expect("relative", "in.sock", 8, EPERM, MNC_K_DENY_UNIX_PATH);

    /* 108 bytes and no NUL: the last character is the path's */
    memset(a, 'z', sizeof(a));
    memcpy(a, deep, strlen(deep));
    a[strlen(deep)] = '/';
    expect("108 characters, canonical, unregistered", a, MNC_UNIX_PATH_MAX, EPERM, MNC_K_DENY_EXTERNAL);
    a[MNC_UNIX_PATH_MAX - 2] = '/';
    a[MNC_UNIX_PATH_MAX - 1] = '.';
    expect("108 characters ending in \"/.\"", a, MNC_UNIX_PATH_MAX, EPERM, MNC_K_DENY_UNIX_PATH);
    a[MNC_UNIX_PATH_MAX - 1] = '/';
    expect("108 characters ending in \"//\"", a, MNC_UNIX_PATH_MAX, EPERM, MNC_K_DENY_UNIX_PATH);

    /* abstract names: binary, every byte up to the address length counts */
    size_t al = strlen(abs_in);
    memcpy(a, abs_in, al);
    a[0] = 0;
    expect("registered abstract name", a, al, 0, MNC_K_ALLOW_SCOPE);
    a[al] = 'x';
    expect("unregistered abstract name", a, al + 1, EPERM, MNC_K_DENY_EXTERNAL);
    /* the name's length is part of it: trailing NULs make another socket (bound above) */
    memset(a + al, 0, sizeof(a) - al);
    expect("registered abstract name plus a NUL", a, al + 1, EPERM, MNC_K_DENY_EXTERNAL);
    expect("registered abstract name zero padded to 108 bytes", a, MNC_UNIX_PATH_MAX, EPERM, MNC_K_DENY_EXTERNAL);
    /* the socket type is part of it too: a datagram to a name registered for a stream socket
     * reaches an outsider's datagram socket of that name */
    size_t sl = strlen(abs_st);
    memset(a, 0, sizeof(a));
    memcpy(a, abs_st, sl);
    a[0] = 0;
    expect("abstract name registered for another socket type", a, sl, EPERM, MNC_K_DENY_EXTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_spellings)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
