// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_mon_psp.c - the two halves of mncd's protocol together: the monitor's side
 * (user/mncd/monitor/mon_psp.c) against the real enforcer (user/mncd/enforcer/), as processes.
 * For every shipped policy (every .json file of policies/ but its schema): the monitor, dropped to nobody, loads the policy
 * through the enforcer (the opener: the file lies in a directory closed to it), sends its
 * configuration, and the enforcer's checks accept every principal, address and path of it; SEAL
 * answers with one log-sink fd per log sink file it could open and STARTED; the start's audit record is
 * kept until mon_psp_release hands it over; the kernel layer being off, a hold is refused and
 * status answers. Needs root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/enforcer/enforcer.h"
#include "../../user/mncd/privdrop.h"
#include "../../user/mncd/monitor/mon_psp.h"

#include "mnc/policy.h"
#include "mnc_util.h"

static char srcdir[512] = ".";
static char tmp[64];
static uid_t nobody_uid;
static gid_t nobody_gid;

static int n_audit;
static void on_audit(void *arg, const struct psp_audit *a)
{
    (void)arg;
    n_audit += a->op == PSP_A_KERNEL_START;
}

/* The monitor's script for one policy file (copied into the closed directory as policy.json).
 * Returns 0, or the number of the step that failed. */
static int monitor(int fd)
{
    char why[600] = "";
    if (psp_drop_to_user(nobody_uid, nobody_gid, getppid(), why, sizeof(why)) != 0)
        return 1;
    static mon_psp m;
    mon_psp_ops ops = {.audit = on_audit};
    mon_psp_init(&m, fd, &ops, NULL);
    char p[256];
    snprintf(p, sizeof(p), "%s/closed/policy.json", tmp);
    if (access(p, R_OK) == 0)
        return 2; /* the monitor cannot read it itself */
    mnc_set_opener(mon_psp_open, &m);
    mnc_errors e;
    mnc_errors_init(&e);
    const char *files[] = {p};
    mnc_policy *pol = mnc_policy_load_files(files, 1, &e);
    if (!pol) {
        fprintf(stderr, "# policy: %s\n", e.n ? e.msg[0] : "?");
        return 3;
    }
    mnc_set_opener(NULL, NULL);
    char state[256], sock[108];
    snprintf(state, sizeof(state), "%s/state", tmp);
    snprintf(sock, sizeof(sock), "%.60s/mncd.sock", tmp);
    uint32_t u = 4242;
    int a0 = 0;
    const char *cg = "/mnc/static";
    mon_psp_conf c = {.admin_uid = 0,
                      .monitor_uid = nobody_uid,
                      .monitor_gid = nobody_gid,
                      .kernel = PSP_KERN_OFF,
                      .state_dir = state,
                      .socket = sock,
                      .n_uids = 1,
                      .uid_of = &u,
                      .uid_agent = &a0,
                      .n_cgroups = 1,
                      .cg_path = &cg,
                      .cg_agent = &a0};
    while (a0 < pol->n_principals && pol->principals[a0].cls != MNC_SINK_AGENT)
        a0++;
    if (mon_psp_configure(&m, &c, pol, why, sizeof(why)) != 0) {
        fprintf(stderr, "# configure: %s\n", why);
        return 4;
    }
    uint32_t want_sinks = 0;
    for (int i = 0; i < pol->n_principals; i++)
        want_sinks += pol->principals[i].cls == MNC_SINK_LOG && !pol->principals[i].stream[0];
    uint32_t got = 0;
    for (uint32_t i = 0; i < m.n_sink_fd; i++)
        got += m.sink_fd[i] >= 0;
    /* a sink whose directory does not exist (a shipped policy's /var/log/mnc) gets no fd with the
     * kernel layer off, which creates nothing: the log verb then refuses, as it did */
    if (m.started.n_sinkfds != got || got > want_sinks) {
        fprintf(stderr, "# sink fds: %u sent, %u kept, %u log sinks with a file\n", m.started.n_sinkfds, got,
                want_sinks);
        return 5;
    }
    if (n_audit != 0 || m.n_kept < 1)
        return 6; /* kept until released */
    mon_psp_release(&m);
    if (n_audit != 1)
        return 7;
    if (fchdir(m.state_fd) != 0)
        return 8;
    uint64_t sinks[MNC_SET_WORDS_ABI] = {1}, gen;
    uint8_t oid[16] = {1};
    int hr =
        mon_psp_hold(&m, (uint32_t)a0, PSP_OP_RECV, sinks, false, false, false, false, oid, &gen, why, sizeof(why));
    if (hr != 1 || !strstr(why, "kernel layer")) {
        fprintf(stderr, "# hold: %d %s\n", hr, why);
        return 9;
    }
    struct psp_status_r st;
    if (mon_psp_status(&m, &st, why, sizeof(why)) != 0)
        return 10;
    mnc_policy_free(pol);
    mnc_errors_free(&e);
    mon_psp_free(&m);
    return 0; /* the enforcer sees EOF, then our exit, and exits with it */
}

static int run_one(const char *policy)
{
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/state' && cp '%.1200s' '%s/closed/policy.json'", tmp, policy, tmp);
    if (system(cmd) != 0)
        return 100;
    fflush(NULL);
    pid_t e = fork();
    if (e < 0)
        return 101;
    if (e == 0) {
        int sv[2];
        if (psp_pair(sv) != 0)
            _exit(90);
        pid_t m = fork();
        if (m == 0) {
            close(sv[0]);
            _exit(monitor(sv[1]));
        }
        close(sv[1]);
        ek_main(sv[0], m);
    }
    int st;
    if (waitpid(e, &st, 0) != e)
        return 102;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

static void test_shipped_policies(void **st)
{
    (void)st;
    char dir[540], files[16][256];
    snprintf(dir, sizeof(dir), "%.500s/policies", srcdir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *x; n < 16 && (x = readdir(d));) {
        size_t l = strlen(x->d_name);
        if (l >= 6 && strcmp(x->d_name + l - 5, ".json") == 0 && strcmp(x->d_name, "schema.json") != 0)
            snprintf(files[n++], sizeof(files[0]), "%.250s", x->d_name);
    }
    closedir(d); /* before the forks: nothing of the parent's is left to the children */
    assert_true(n >= 4);
    for (int i = 0; i < n; i++) {
        char p[1200];
        snprintf(p, sizeof(p), "%.540s/%.250s", dir, files[i]);
        int rc = run_one(p);
        if (rc != 0)
            fail_msg("%s: the monitor failed step %d", files[i], rc);
    }
}

static int setup(void **st)
{
    (void)st;
    const char *sd = getenv("MNC_SRCDIR");
    if (sd && *sd)
        snprintf(srcdir, sizeof(srcdir), "%s", sd);
    assert_int_equal(geteuid(), 0);
    char why[300];
    assert_int_equal(psp_user("nobody", &nobody_uid, &nobody_gid, why, sizeof(why)), 0);
    snprintf(tmp, sizeof(tmp), "/tmp/mnc-monpsp.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    assert_int_equal(chmod(tmp, 0711), 0);
    char p[128];
    snprintf(p, sizeof(p), "%s/closed", tmp);
    assert_int_equal(mkdir(p, 0700), 0);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shipped_policies)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
