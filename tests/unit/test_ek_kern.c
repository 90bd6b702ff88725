// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_ek_kern.c - the enforcer's kernel layer (user/mncd/enforcer/ek_*.c) on the real kernel,
 * cgroup backend, with a private pin root and cgroup tree, driven through the protocol by a
 * scripted monitor (a child of the enforcer, as in mncd). It checks the invariants the enforcer
 * keeps whatever the monitor says (docs/privsep.md):
 *   - a registration labels a fresh cgroup of the tree (REG_ADD), and the same cgroup is never
 *     re-labelled as another agent;
 *   - a hold taints the agent; a second, looser hold does not loosen it (taint only tightens);
 *   - the workspace of the live instance carries the taint (a binary trusted.mnc.taint record);
 *   - taint.reset comes from the admin socket only (root outside the tree), and the monitor is
 *     told (RESET); workspace.clear is refused while the instance lives;
 *   - when the instance's process has run and exited, the enforcer itself retires the
 *     registration and clears the taint (REG_DEL, agent.exit), and then clears the label.
 * Needs root, BPF and cgroup v2. */
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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/enforcer/enforcer.h"
#include "../../user/mncd/privdrop.h"
#include "../../user/mncd/wsrec.h"
#include "mnc_kern.h"

static char tmp[64], pin[128], tree[64], treepath[512];
static uid_t nobody_uid;
static gid_t nobody_gid;
static int n_reg_add, n_reg_del, n_reset, n_exit_records;

static void on_notice(void *arg, const void *msg, int fd)
{
    (void)arg;
    if (fd >= 0)
        close(fd);
    const struct psp_hdr *h = msg;
    n_reg_add += h->type == PSP_REG_ADD;
    n_reg_del += h->type == PSP_REG_DEL;
    n_reset += h->type == PSP_RESET;
    if (h->type == PSP_AUDIT && ((const struct psp_audit *)msg)->op == PSP_A_AGENT_EXIT)
        n_exit_records++;
}

static psp_client c;
static psp_buf req, r;

static void set(char *f, size_t n, const char *s)
{
    memset(f, 0, n);
    size_t l = strlen(s);
    memcpy(f, s, l < n ? l : n - 1);
}

static int configure(void)
{
    memset(&req, 0, sizeof(req));
    struct psp_config *cf = (void *)&req;
    psp_hdr_init(&cf->h, PSP_CONFIG, 0);
    cf->monitor_uid = nobody_uid;
    cf->monitor_gid = nobody_gid;
    cf->kernel = PSP_KERN_CGROUP;
    cf->n_principals = 4;
    set(cf->pin_root, sizeof(cf->pin_root), pin);
    set(cf->cgroup_tree, sizeof(cf->cgroup_tree), tree);
    char p[256];
    snprintf(p, sizeof(p), "%s/state", tmp);
    set(cf->state_dir, sizeof(cf->state_dir), p);
    snprintf(p, sizeof(p), "%.60s/s.sock", tmp);
    set(cf->socket, sizeof(cf->socket), p);
    if (psp_tell(&c, cf))
        return -1;
    static const char *names[] = {"worker", "coordinator", "ops_log", "partner"};
    static const uint32_t cls[] = {MNC_SINK_AGENT, MNC_SINK_AGENT, MNC_SINK_LOG, MNC_SINK_EXTERNAL};
    for (uint32_t i = 0; i < 4; i++) {
        memset(&req, 0, sizeof(req));
        struct psp_principal *pr = (void *)&req;
        psp_hdr_init(&pr->h, PSP_PRINCIPAL, 0);
        pr->id = i;
        pr->cls = cls[i];
        set(pr->name, sizeof(pr->name), names[i]);
        if (i == 2)
            snprintf(pr->path, sizeof(pr->path), "%s/logs/ops.log", tmp);
        if (i == 3) {
            pr->addr = PSP_ADDR_INET;
            pr->ikey.family = MNC_AF_INET;
            pr->ikey.port = 443;
            pr->ikey.addr[0] = 192, pr->ikey.addr[2] = 2, pr->ikey.addr[3] = 1;
        }
        if (psp_tell(&c, pr))
            return -1;
    }
    memset(&req, 0, sizeof(req));
    struct psp_seal *s = (void *)&req;
    psp_hdr_init(&s->h, PSP_SEAL, 0);
    s->n_principals = 4;
    int fds[PSP_MAX_FDS], nfds = 0;
    int t = psp_call(&c, s, &r, fds, &nfds);
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    if (t != PSP_STARTED || ((struct psp_started *)&r)->backend != MNC_BACKEND_CGROUP) {
        fprintf(stderr, "# seal: %d %s\n", t, t == PSP_REFUSED ? ((struct psp_refused *)&r)->detail : c.err);
        return -1;
    }
    snprintf(treepath, sizeof(treepath), "%s", ((struct psp_started *)&r)->tree);
    c.n_principals = 4;
    return 0;
}

static int reg(uint32_t agent, const char *cg, const char *ws)
{
    memset(&req, 0, sizeof(req));
    struct psp_reg_begin *b = (void *)&req;
    psp_hdr_init(&b->h, PSP_REG_BEGIN, 0);
    b->agent = agent;
    b->uid = nobody_uid;
    b->flags = PSP_RF_UID_KNOWN;
    set(b->cgroup, sizeof(b->cgroup), cg);
    if (psp_tell(&c, b))
        return -100;
    memset(&req, 0, sizeof(req));
    struct psp_reg_path *p = (void *)&req;
    psp_hdr_init(&p->h, PSP_REG_PATH, 0);
    p->kind = PSP_REG_WORKSPACE;
    set(p->path, sizeof(p->path), ws);
    if (psp_tell(&c, p))
        return -100;
    memset(&req, 0, sizeof(req));
    struct psp_reg_commit *m = (void *)&req;
    psp_hdr_init(&m->h, PSP_REG_COMMIT, 0);
    m->n_ws = 1;
    int t = psp_call(&c, m, &r, NULL, NULL);
    if (t == PSP_REFUSED)
        fprintf(stderr, "# register: refused: %s\n", ((struct psp_refused *)&r)->detail);
    return t;
}

static int hold(uint32_t agent, uint64_t sinks, int may_log, int may_ext, uint64_t *gen)
{
    memset(&req, 0, sizeof(req));
    struct psp_hold *h = (void *)&req;
    psp_hdr_init(&h->h, PSP_HOLD, 0);
    h->agent = agent;
    h->op = PSP_OP_RECV;
    h->sinks[0] = sinks;
    h->may_log = (uint8_t)may_log;
    h->may_external = (uint8_t)may_ext;
    memset(h->oid, 0xc5, sizeof(h->oid));
    int t = psp_call(&c, h, &r, NULL, NULL);
    if (t == PSP_HELD)
        *gen = ((struct psp_held *)&r)->generation;
    else if (t == PSP_REFUSED)
        fprintf(stderr, "# hold refused: %s\n", ((struct psp_refused *)&r)->detail);
    return t;
}

static int taint(uint32_t agent, struct psp_taint *out)
{
    memset(&req, 0, sizeof(req));
    struct psp_taint_get *g = (void *)&req;
    psp_hdr_init(&g->h, PSP_TAINT_GET, 0);
    g->agent = agent;
    int t = psp_call(&c, g, &r, NULL, NULL);
    if (t == PSP_TAINT)
        memcpy(out, &r, sizeof(*out));
    return t;
}

/* One admin request on the admin socket; the reply's type (into *rep). */
static int admin(const void *m, psp_buf *rep)
{
    int a = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/s.sock.admin", tmp);
    if (a < 0 || connect(a, (struct sockaddr *)&sa, sizeof(sa)) != 0 || psp_send(a, m, NULL, 0, false) != 0)
        return -1;
    int fds[PSP_MAX_FDS], nfds;
    ssize_t n = psp_recv(a, rep, fds, &nfds, false);
    close(a);
    char why[200];
    return n > 0 ? psp_check_reply(rep, (size_t)n, nfds, 4, why, sizeof(why)) : -1;
}

static int monitor(int fd)
{
    psp_client_init(&c, fd, on_notice, NULL);
    if (configure() != 0)
        return 1;
    char cg[600], ws[256];
    snprintf(cg, sizeof(cg), "%s/worker.1", treepath);
    snprintf(ws, sizeof(ws), "%s/ws", tmp);
    if (mkdir(cg, 0755) != 0 || mkdir(ws, 0770) != 0)
        return 2;
    if (reg(0, cg, ws) != PSP_REGISTERED || n_reg_add != 1)
        return 3;
    if (reg(1, cg, ws) != PSP_REFUSED || !strstr(((struct psp_refused *)&r)->detail, "registered to another agent"))
        return 4; /* never re-labelled */
    uint64_t g1 = 0, g2 = 0;
    struct psp_taint t;
    if (hold(0, 0x6, 1, 0, &g1) != PSP_HELD || taint(0, &t) != PSP_TAINT || !t.entry || !t.t.tainted ||
        t.t.sinks[0] != 0x6 || !t.t.may_log || t.t.may_external)
        return 5;
    if (hold(0, 0xe, 1, 1, &g2) != PSP_HELD || g2 <= g1 || taint(0, &t) != PSP_TAINT || t.t.sinks[0] != 0x6 ||
        t.t.may_external)
        return 6; /* a looser hold does not loosen */
    uint8_t v[WSREC_MAX + 1];
    ssize_t n = getxattr(ws, WSREC_XATTR, v, sizeof(v));
    char names[4][WSREC_NAME] = {"worker", "coordinator", "ops_log", "partner"};
    wsrec_names nm = {names, 4};
    wsrec w;
    if (n <= 0 || wsrec_decode(v, (size_t)n, &nm, &w) != 0 || !w.tainted || w.sinks[0] != 0x6 || w.n_obj != 1)
        return 7;
    /* the admin socket: a reset (the monitor is told), a clear refused while the instance lives */
    static psp_buf m, rep;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_ADM_RESET, 9);
    set(((struct psp_adm_reset *)&m)->agent, PSP_NAME_MAX, "worker");
    if (admin(&m, &rep) != PSP_ADM_RESET_R || !((struct psp_adm_reset_r *)&rep)->was_tainted)
        return 8;
    if (taint(0, &t) != PSP_TAINT || t.t.tainted || n_reset != 1)
        return 9;
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_ADM_WS_CLEAR, 10);
    set(((struct psp_adm_ws_clear *)&m)->path, PSP_PATH_MAX, ws);
    if (admin(&m, &rep) != PSP_REFUSED || !strstr(((struct psp_refused *)&rep)->detail, "live instance"))
        return 10;
    /* a process runs in the cgroup and exits: the enforcer retires the registration itself */
    pid_t p = fork();
    if (p == 0) {
        char procs[700], s[32];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
        snprintf(s, sizeof(s), "%d", (int)getpid());
        int f = open(procs, O_WRONLY);
        _exit(f >= 0 && write(f, s, strlen(s)) > 0 ? 0 : 1);
    }
    int st;
    if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 11;
    for (int i = 0; i < 300 && n_reg_del == 0; i++) { /* 30 s: valgrind is slow */
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 100) == 1 && psp_drain(&c, &r) != 0)
            return 12;
    }
    int tr = taint(0, &t);
    if (n_reg_del != 1 || n_exit_records != 1 || tr != PSP_TAINT || t.entry) {
        fprintf(stderr, "# exit: reg_del %d, agent.exit records %d, taint_get %d, entry %u\n", n_reg_del,
                n_exit_records, tr, t.entry);
        return 13;
    }
    memset(&m, 0, sizeof(m));
    psp_hdr_init(&m.h, PSP_ADM_WS_CLEAR, 11);
    set(((struct psp_adm_ws_clear *)&m)->path, PSP_PATH_MAX, ws);
    if (admin(&m, &rep) != PSP_ADM_WS_CLEAR_R || !((struct psp_adm_ws_clear_r *)&rep)->was_tainted ||
        getxattr(ws, WSREC_XATTR, v, sizeof(v)) >= 0)
        return 14;
    memset(&req, 0, sizeof(req));
    psp_hdr_init(&req.h, PSP_STATUS, 0);
    if (psp_call(&c, &req, &r, NULL, NULL) != PSP_STATUS_R)
        return 15;
    struct psp_status_r *sr = (void *)&r;
    if (sr->holds != 2 || sr->registered != 1 || sr->exited != 1 || sr->n_links != sr->n_links_expected)
        return 16;
    rmdir(cg);
    return 0;
}

static void test_kernel_layer(void **st)
{
    (void)st;
    fflush(NULL);
    pid_t e = fork();
    assert_true(e >= 0);
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
    int s;
    assert_int_equal(waitpid(e, &s, 0), e);
    assert_true(WIFEXITED(s));
    if (WEXITSTATUS(s) != 0)
        fail_msg("the scripted monitor failed step %d", WEXITSTATUS(s));
}

static int setup(void **st)
{
    (void)st;
    assert_int_equal(geteuid(), 0);
    char why[300];
    assert_int_equal(psp_user("nobody", &nobody_uid, &nobody_gid, why, sizeof(why)), 0);
    snprintf(tmp, sizeof(tmp), "/tmp/mnc-ekkern.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    assert_int_equal(chmod(tmp, 0711), 0);
    snprintf(pin, sizeof(pin), "/sys/fs/bpf/mnc-ektest-%d", (int)getpid());
    snprintf(tree, sizeof(tree), "mnc-ektest-%d", (int)getpid());
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char err[300];
    mnc_kern_detach(pin, true, err, sizeof(err)); /* this test's own pin root only */
    char cg2[256];
    if (mnc_cgroup2_mount(cg2, sizeof(cg2)) == 0) {
        char p[600];
        snprintf(p, sizeof(p), "%s/%s/worker.1", cg2, tree);
        rmdir(p);
        snprintf(p, sizeof(p), "%s/%s", cg2, tree);
        rmdir(p);
    }
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kernel_layer)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
