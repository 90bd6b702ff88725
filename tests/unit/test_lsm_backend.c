// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_lsm_backend.c - the host-side, kernel-independent parts of the BPF-LSM backend: the
 * availability decision (including the "bpf missing from lsm=" trap), hook tables and names,
 * IPC sink keys, and that the LSM programs really are in the skeletons. The programs
 * themselves can only run in a guest with BPF LSM: tests/vm (make vmtest). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "lsm_backend.h"
#include "lsm_files.skel.h"
#include "lsm_ipc.skel.h"
#include "lsm_paths.skel.h"
#include "lsm_sockets.skel.h"
#include "sock_egress.skel.h"

static mnc_features good(void)
{
    mnc_features f;
    memset(&f, 0, sizeof(f));
    f.lsm_list_known = true;
    snprintf(f.lsm_list, sizeof(f.lsm_list), "lockdown,capability,landlock,yama,apparmor,bpf");
    f.lsm_has_bpf = true;
    f.lsm_loads = true;
    f.bpffs = true;
    return f;
}

static void available_when_everything_is_there(void **state)
{
    (void)state;
    mnc_features f = good();
    char err[256] = "untouched";
    assert_int_equal(mnc_lsm_available(&f, err, sizeof(err)), 0);
}

static void refused_without_bpf_in_lsm_list(void **state)
{
    (void)state;
    /* the trap: programs would load (lsm_loads) but never run */
    mnc_features f = good();
    f.lsm_has_bpf = false;
    snprintf(f.lsm_list, sizeof(f.lsm_list), "lockdown,capability,landlock,yama,apparmor");
    char err[256] = "";
    assert_int_equal(mnc_lsm_available(&f, err, sizeof(err)), -EOPNOTSUPP);
    assert_non_null(strstr(err, "never run"));
    assert_non_null(strstr(err, "apparmor"));
}

static void refused_for_each_missing_piece(void **state)
{
    (void)state;
    char err[256];
    mnc_features f = good();
    f.lsm_list_known = false;
    assert_int_equal(mnc_lsm_available(&f, err, sizeof(err)), -EOPNOTSUPP);
    assert_non_null(strstr(err, "securityfs"));
    f = good();
    f.lsm_loads = false;
    f.lsm_load_errno = EPERM;
    assert_int_equal(mnc_lsm_available(&f, err, sizeof(err)), -EOPNOTSUPP);
    assert_non_null(strstr(err, "do not load"));
    f = good();
    f.bpffs = false;
    assert_int_equal(mnc_lsm_available(&f, err, sizeof(err)), -EOPNOTSUPP);
    /* errlen 0 / NULL err must not crash */
    assert_int_equal(mnc_lsm_available(&f, NULL, 0), -EOPNOTSUPP);
}

static void choose_backend_agrees(void **state)
{
    (void)state;
    char err[256];
    mnc_features f = good();
    assert_int_equal(mnc_kern_choose_backend(&f, MNC_BACKEND_LSM, err, sizeof(err)), (int)MNC_BACKEND_LSM);
    assert_int_equal(mnc_kern_choose_backend(&f, 0, err, sizeof(err)), (int)MNC_BACKEND_LSM);
    f.lsm_has_bpf = false;
    assert_true(mnc_kern_choose_backend(&f, MNC_BACKEND_LSM, err, sizeof(err)) < 0);
    /* auto never picks lsm where it cannot run */
    assert_int_not_equal(mnc_kern_choose_backend(&f, 0, err, sizeof(err)), (int)MNC_BACKEND_LSM);
}

/* every hook listed is a program of one of the four objects (or sock_egress's mnc_ingress, the
 * one cgroup program the lsm backend attaches), with the listed section, and every program of
 * the objects is listed (detach/status rely on the list being complete) */
static void hook_table_matches_objects(void **state)
{
    (void)state;
    int n = 0;
    const mnc_hook_info *h = mnc_lsm_hooks(&n);
    assert_int_equal(n, 25);
    struct lsm_files_bpf *a = lsm_files_bpf__open();
    struct lsm_paths_bpf *b = lsm_paths_bpf__open();
    struct lsm_sockets_bpf *c = lsm_sockets_bpf__open();
    struct lsm_ipc_bpf *d = lsm_ipc_bpf__open();
    struct sock_egress_bpf *e = sock_egress_bpf__open();
    assert_non_null(e);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(d);
    struct bpf_object *objs[4] = {a->obj, b->obj, c->obj, d->obj};
    int total = 0;
    for (int o = 0; o < 4; o++) {
        struct bpf_program *p;
        bpf_object__for_each_program(p, objs[o])
        {
            total++;
            int found = 0;
            for (int i = 0; i < n; i++)
                if (strcmp(h[i].program, bpf_program__name(p)) == 0) {
                    assert_string_equal(h[i].section, bpf_program__section_name(p));
                    found = 1;
                }
            assert_true(found);
        }
    }
    int ingress = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(h[i].program, bpf_program__name(e->progs.mnc_ingress)) == 0) {
            assert_string_equal(h[i].section, bpf_program__section_name(e->progs.mnc_ingress));
            ingress++;
        }
    assert_int_equal(ingress, 1);
    assert_int_equal(total + ingress, n);
    sock_egress_bpf__destroy(e);
    lsm_files_bpf__destroy(a);
    lsm_paths_bpf__destroy(b);
    lsm_sockets_bpf__destroy(c);
    lsm_ipc_bpf__destroy(d);
}

static void hook_names(void **state)
{
    (void)state;
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_FILE_OPEN), "file_open");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_FILE_PERMISSION), "file_permission");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_SHMAT), "shm_shmat");
    /* cgroup backend hooks fall through to mnc_hook_name */
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_CONNECT4), mnc_hook_name(MNC_HOOK_CONNECT4));
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_TASK_KILL), "task_kill");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_FILE_SEND_SIGIOTASK), "file_send_sigiotask");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_FILE_RECEIVE), "file_receive");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_SOCKET_SETSOCKOPT), "socket_setsockopt");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_FILE_LOCK), "file_lock");
    assert_string_equal(mnc_lsm_hook_name(MNC_HOOK_LSM_FILE_LOCK + 1), "?");
}

static void ipc_keys(void **state)
{
    (void)state;
    struct mnc_ipc_key k;
    struct stat st;
    assert_int_equal(stat("/proc/self/ns/ipc", &st), 0);
    assert_int_equal(mnc_lsm_ipc_key(MNC_IPC_MSG, 32769, &k), 0);
    assert_int_equal(k.kind, MNC_IPC_MSG);
    assert_int_equal(k.id, 32769);
    assert_int_equal(k.ns_ino, (uint64_t)st.st_ino);
    assert_int_equal(mnc_lsm_ipc_key(MNC_IPC_SHM, 0, &k), 0);
    assert_int_equal(mnc_lsm_ipc_key(0, 1, &k), -EINVAL);
    assert_int_equal(mnc_lsm_ipc_key(3, 1, &k), -EINVAL);
    assert_int_equal(mnc_lsm_ipc_key(MNC_IPC_MSG, -1, &k), -EINVAL);
    /* a pin root without the map: a clear errno, not a crash */
    assert_int_equal(mnc_lsm_ipc_add("/nonexistent-mnc-root", MNC_IPC_MSG, 1, 3, MNC_SINK_AGENT), -ENOENT);
    assert_int_equal(mnc_lsm_ipc_add("/nonexistent-mnc-root", MNC_IPC_MSG, 1, 3, 99), -EINVAL);
}

static void links_absent_under_empty_root(void **state)
{
    (void)state;
    char missing[1024];
    assert_int_equal(mnc_lsm_links_present("/nonexistent-mnc-root", missing, sizeof(missing)), 0);
    assert_non_null(strstr(missing, "mnc_lsm_file_perm"));
    assert_int_equal(mnc_lsm_detach("/nonexistent-mnc-root", NULL, 0), 0); /* nothing to unpin */
    char err[64];
    assert_int_equal(mnc_lsm_attach(NULL, NULL, 0, err, sizeof(err)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(available_when_everything_is_there),
        cmocka_unit_test(refused_without_bpf_in_lsm_list),
        cmocka_unit_test(refused_for_each_missing_piece),
        cmocka_unit_test(choose_backend_agrees),
        cmocka_unit_test(hook_table_matches_objects),
        cmocka_unit_test(hook_names),
        cmocka_unit_test(ipc_keys),
        cmocka_unit_test(links_absent_under_empty_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
