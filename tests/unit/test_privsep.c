// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_privsep.c - the monitor/enforcer protocol (user/mncd/privsep.h, privsep.c): layouts,
 * a whole session as the enforcer checks it (boot, config, seal, serve), a refusal for each kind
 * of malformed field, the phase and sequence rules, the enforcer's messages as the monitor checks
 * them, one-byte mutations of a hold, and the largest messages over a real SOCK_SEQPACKET pair
 * with fds.
 *
 * privsep.c is part of mncd, not libmnc: it is compiled into this test directly (the Makefile
 * names it as a prerequisite of this binary). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../user/mncd/privsep.c"

/* Every message is built in one of these (8-byte aligned, as the enforcer's receive buffer). */
typedef union msgbuf {
    struct psp_hdr h;
    struct psp_open open;
    struct psp_config config;
    struct psp_principal principal;
    struct psp_idmap idmap;
    struct psp_seal seal;
    struct psp_hold hold;
    struct psp_reg_begin reg_begin;
    struct psp_reg_path reg_path;
    struct psp_reg_commit reg_commit;
    struct psp_taint_get taint_get;
    struct psp_status status;
    struct psp_adm_reset adm_reset;
    struct psp_adm_ws_clear adm_ws_clear;
    struct psp_started started;
    struct psp_refused refused;
    struct psp_audit audit;
    struct psp_held held;
    struct psp_registered registered;
    struct psp_reg_change reg_change;
    uint64_t align;
    char bytes[PSP_MAX_MSG];
} msgbuf;

/* A string field set as the monitor does: zero, then the string (nothing left after its NUL). */
#define SET(field, s) (memset((field), 0, sizeof(field)), strcpy((field), (s)))

static msgbuf *mk(uint32_t type)
{
    msgbuf *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    psp_hdr_init(&m->h, type, 7);
    return m;
}

static int check(const psp_ctx *cx, const msgbuf *m)
{
    char why[300];
    int r = psp_check(cx, m, m->h.len, 0, why, sizeof(why));
    if (r < 0 && getenv("TEST_PRIVSEP_VERBOSE"))
        fprintf(stderr, "# refused: %s\n", why);
    return r;
}

/* Checks, and advances the session when accepted; returns psp_check's result. */
static int feed(psp_ctx *cx, msgbuf *m)
{
    int r = check(cx, m);
    if (r > 0)
        psp_advance(cx, m);
    free(m);
    return r;
}

/* The configuration of the session used below: 0 worker (agent), 1 coordinator (agent,
 * netns, a UNIX address), 2 ops_log (log file), 3 notes (memory directory), 4 partner
 * (external, an IP address), 5 chat (tool, an abstract UNIX name). */
#define NP 6

static msgbuf *principal_msg(uint32_t id)
{
    msgbuf *m = mk(PSP_PRINCIPAL);
    static const struct {
        const char *name;
        uint32_t cls;
    } p[NP] = {{"worker", MNC_SINK_AGENT}, {"coordinator", MNC_SINK_AGENT}, {"ops_log", MNC_SINK_LOG},
               {"notes", MNC_SINK_MEMORY}, {"partner", MNC_SINK_EXTERNAL},  {"chat", MNC_SINK_TOOL}};
    m->principal.id = id;
    m->principal.cls = p[id].cls;
    strcpy(m->principal.name, p[id].name);
    if (id == 1) {
        m->principal.flags = PSP_PF_NETNS;
        m->principal.addr = PSP_ADDR_UNIX;
        strcpy(m->principal.ukey.path, "/run/agents/coordinator.sock");
    } else if (id == 2) {
        strcpy(m->principal.path, "/var/log/mnc/ops.log");
    } else if (id == 3) {
        strcpy(m->principal.path, "/var/lib/mnc/memory");
    } else if (id == 4) {
        m->principal.addr = PSP_ADDR_INET;
        m->principal.ikey.family = MNC_AF_INET;
        m->principal.ikey.port = 443;
        m->principal.ikey.addr[0] = 192, m->principal.ikey.addr[1] = 0, m->principal.ikey.addr[2] = 2;
        m->principal.ikey.addr[3] = 1;
    } else if (id == 5) {
        m->principal.addr = PSP_ADDR_UNIX;
        strcpy(m->principal.ukey.path, "@chat");
        m->principal.ukey.alen = 5;
        m->principal.ukey.type = 1;
    }
    return m;
}

static msgbuf *config_msg(void)
{
    msgbuf *m = mk(PSP_CONFIG);
    m->config.admin_uid = 0;
    m->config.monitor_uid = 998;
    m->config.monitor_gid = 998;
    m->config.kernel = PSP_KERN_AUTO;
    m->config.n_principals = NP;
    m->config.n_idmap = 2;
    strcpy(m->config.state_dir, "/var/lib/mnc");
    strcpy(m->config.socket, "/run/mnc/mncd.sock");
    return m;
}

static msgbuf *idmap_msg(uint32_t kind)
{
    msgbuf *m = mk(PSP_IDMAP);
    m->idmap.kind = kind;
    m->idmap.agent = 0;
    if (kind == PSP_IDMAP_UID)
        m->idmap.uid = 1001;
    else
        strcpy(m->idmap.cgroup, "/mnc/worker");
    return m;
}

static msgbuf *seal_msg(void)
{
    msgbuf *m = mk(PSP_SEAL);
    m->seal.n_principals = NP;
    m->seal.n_idmap = 2;
    return m;
}

/* A session in the SERVE phase (everything above accepted). */
static void serving(psp_ctx *cx)
{
    psp_ctx_init(cx, PSP_PH_BOOT);
    msgbuf *o = mk(PSP_OPEN);
    o->open.what = PSP_OPEN_CONFIG;
    strcpy(o->open.path, "/etc/mnc/mncd.json");
    assert_int_equal(feed(cx, o), PSP_OPEN);
    assert_int_equal(feed(cx, config_msg()), PSP_CONFIG);
    for (uint32_t i = 0; i < NP; i++)
        assert_int_equal(feed(cx, principal_msg(i)), PSP_PRINCIPAL);
    assert_int_equal(feed(cx, idmap_msg(PSP_IDMAP_UID)), PSP_IDMAP);
    assert_int_equal(feed(cx, idmap_msg(PSP_IDMAP_CGROUP)), PSP_IDMAP);
    assert_int_equal(feed(cx, seal_msg()), PSP_SEAL);
    assert_int_equal(cx->phase, PSP_PH_SERVE);
}

static msgbuf *hold_msg(void)
{
    msgbuf *m = mk(PSP_HOLD);
    m->hold.agent = 1;
    m->hold.op = PSP_OP_RECV;
    m->hold.sinks[0] = (1u << 0) | (1u << 2); /* worker, ops_log */
    m->hold.may_log = 1;
    memset(m->hold.oid, 0xab, sizeof(m->hold.oid));
    return m;
}

static void test_layouts(void **st)
{
    (void)st;
    for (size_t i = 0; i < N_TYPES; i++) {
        assert_true(types[i].size >= sizeof(struct psp_hdr));
        assert_true(types[i].size <= PSP_MAX_MSG);
        assert_true(types[i].size % 4 == 0);
        assert_int_equal(psp_size(types[i].type), types[i].size);
        assert_string_not_equal(psp_type_name(types[i].type), "?");
        for (size_t j = 0; j < i; j++)
            assert_true(types[j].type != types[i].type);
    }
    assert_int_equal(psp_size(0), 0);
    assert_int_equal(psp_size(1000), 0);
    assert_int_equal(sizeof(struct psp_hold), 80);
    struct psp_hdr h;
    psp_hdr_init(&h, PSP_HOLD, 42);
    assert_int_equal(h.version, PSP_VERSION);
    assert_int_equal(h.len, sizeof(struct psp_hold));
    assert_int_equal(h.seq, 42);
    for (uint32_t op = 1; op <= PSP_A__MAX; op++)
        assert_non_null(psp_audit_op_name(op));
    assert_null(psp_audit_op_name(0));
    assert_null(psp_audit_op_name(PSP_A__MAX + 1));
    assert_string_equal(psp_refusal_name(PSP_NO_DENIED), "denied");
}

static void test_session(void **st)
{
    (void)st;
    psp_ctx cx;
    serving(&cx);
    assert_int_equal(cx.cls[0], MNC_SINK_AGENT);
    assert_int_equal(cx.cls[4], MNC_SINK_EXTERNAL);
    assert_string_equal(cx.names[1], "coordinator");
    assert_int_equal(feed(&cx, hold_msg()), PSP_HOLD);
    msgbuf *b = mk(PSP_REG_BEGIN);
    b->reg_begin.agent = 0;
    b->reg_begin.uid = 1001;
    b->reg_begin.flags = PSP_RF_UID_KNOWN | PSP_RF_STDIO_PASS;
    strcpy(b->reg_begin.cgroup, "/sys/fs/cgroup/mnc/worker.42");
    assert_int_equal(feed(&cx, b), PSP_REG_BEGIN);
    assert_int_equal(cx.in_reg, 1);
    msgbuf *p = mk(PSP_REG_PATH);
    p->reg_path.kind = PSP_REG_WORKSPACE;
    strcpy(p->reg_path.path, "/srv/ws/worker");
    assert_int_equal(feed(&cx, p), PSP_REG_PATH);
    p = mk(PSP_REG_PATH);
    p->reg_path.kind = PSP_REG_TAINTED;
    strcpy(p->reg_path.path, "/srv/ws/worker/a\nb"); /* an agent may name a directory so */
    assert_int_equal(feed(&cx, p), PSP_REG_PATH);
    msgbuf *c = mk(PSP_REG_COMMIT);
    c->reg_commit.n_ws = 1;
    c->reg_commit.n_tainted = 1;
    assert_int_equal(feed(&cx, c), PSP_REG_COMMIT);
    assert_int_equal(cx.in_reg, 0);
    msgbuf *t = mk(PSP_TAINT_GET);
    t->taint_get.agent = 1;
    assert_int_equal(feed(&cx, t), PSP_TAINT_GET);
    assert_int_equal(feed(&cx, mk(PSP_STATUS)), PSP_STATUS);

    psp_ctx adm;
    psp_ctx_init(&adm, PSP_PH_ADMIN);
    msgbuf *r = mk(PSP_ADM_RESET);
    strcpy(r->adm_reset.agent, "coordinator");
    assert_int_equal(feed(&adm, r), PSP_ADM_RESET);
    msgbuf *w = mk(PSP_ADM_WS_CLEAR);
    strcpy(w->adm_ws_clear.path, "/srv/ws/worker");
    assert_int_equal(feed(&adm, w), PSP_ADM_WS_CLEAR);
}

static void test_header(void **st)
{
    (void)st;
    psp_ctx cx;
    serving(&cx);
    msgbuf *m = hold_msg();
    char why[200];
    assert_int_equal(psp_check(&cx, m, 10, 0, why, sizeof(why)), -EBADMSG); /* shorter than a header */
    assert_int_equal(psp_check(&cx, m, m->h.len - 1, 0, why, sizeof(why)), -EBADMSG);
    assert_int_equal(psp_check(&cx, m, m->h.len + 8, 0, why, sizeof(why)), -EBADMSG); /* header says 80 */
    assert_int_equal(psp_check(&cx, m, m->h.len, 1, why, sizeof(why)), -EBADMSG);     /* an fd came with it */
    assert_non_null(strstr(why, "fds"));
    assert_int_equal(psp_check(&cx, m->bytes + 4, m->h.len, 0, why, sizeof(why)), -EINVAL); /* misaligned */
    m->h.len = 88;
    assert_int_equal(psp_check(&cx, m, 88, 0, why, sizeof(why)), -EBADMSG); /* agrees, but not a hold's size */
    m->h.len = sizeof(struct psp_hold);
    m->h.version = PSP_VERSION + 1;
    assert_int_equal(psp_check(&cx, m, m->h.len, 0, why, sizeof(why)), -EPROTO);
    m->h.version = PSP_VERSION;
    m->h.flags = 1;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->h.flags = 0;
    m->h.type = 15; /* no such type */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->h.type = PSP_HOLD;
    assert_int_equal(check(&cx, m), PSP_HOLD);
    assert_int_equal(psp_check(&cx, m, m->h.len, 0, NULL, 0), PSP_HOLD); /* why may be NULL */
    free(m);
}

static void test_phases(void **st)
{
    (void)st;
    psp_ctx boot, serve, adm;
    psp_ctx_init(&boot, PSP_PH_BOOT);
    serving(&serve);
    psp_ctx_init(&adm, PSP_PH_ADMIN);
    msgbuf *h = hold_msg();
    assert_int_equal(check(&boot, h), -EPERM); /* nothing is held before the seal */
    assert_int_equal(check(&adm, h), -EPERM);  /* an admin cannot hold */
    free(h);
    msgbuf *o = mk(PSP_OPEN);
    o->open.what = PSP_OPEN_POLICY;
    strcpy(o->open.path, "/etc/shadow");
    assert_int_equal(check(&serve, o), -EPERM); /* no file is opened for the monitor after the seal */
    assert_int_equal(check(&boot, o), PSP_OPEN);
    free(o);
    msgbuf *c = config_msg();
    assert_int_equal(check(&serve, c), -EPERM); /* the configuration is sealed */
    free(c);
    msgbuf *p = principal_msg(0);
    assert_int_equal(check(&serve, p), -EPERM); /* no sink is relabelled after the seal */
    free(p);
    msgbuf *r = mk(PSP_ADM_RESET);
    strcpy(r->adm_reset.agent, "worker");
    assert_int_equal(check(&serve, r), -EPERM); /* the monitor is not the admin */
    free(r);
    /* the enforcer's own messages are not accepted from the monitor */
    static const uint32_t theirs[] = {PSP_HELD, PSP_REFUSED, PSP_AUDIT, PSP_REG_ADD, PSP_RESET, PSP_STARTED};
    for (size_t i = 0; i < sizeof(theirs) / sizeof(theirs[0]); i++) {
        msgbuf *x = mk(theirs[i]);
        assert_int_equal(check(&serve, x), -EPERM);
        free(x);
    }
    /* only as many opens as PSP_MAX_OPENS */
    for (int i = 0; i < PSP_MAX_OPENS; i++) {
        o = mk(PSP_OPEN);
        o->open.what = PSP_OPEN_DEFAULT;
        strcpy(o->open.path, "policies/scheduling.json");
        assert_int_equal(feed(&boot, o), PSP_OPEN);
    }
    o = mk(PSP_OPEN);
    o->open.what = PSP_OPEN_DEFAULT;
    strcpy(o->open.path, "policies/scheduling.json");
    assert_int_equal(feed(&boot, o), -EBADMSG);
}

static void test_config_phase(void **st)
{
    (void)st;
    psp_ctx cx;
    psp_ctx_init(&cx, PSP_PH_BOOT);
    msgbuf *m = config_msg();
    m->config.monitor_uid = 0; /* the monitor never runs as root */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->config.monitor_uid = 998;
    m->config.kernel = 4;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->config.kernel = PSP_KERN_LSM;
    m->config.n_principals = 0;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->config.n_principals = PSP_MAX_PRINCIPALS + 1;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->config.n_principals = NP;
    m->config.pad[1] = 1;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->config.pad[1] = 0;
    strcpy(m->config.pin_root, "relative/pins");
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->config.pin_root, 0, sizeof(m->config.pin_root));
    memset(m->config.socket, 'a', 102); /* 102 + ".admin" + NUL does not fit 108 */
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->config.socket, 0, sizeof(m->config.socket));
    memset(m->config.socket, 'a', 101);
    assert_int_equal(check(&cx, m), PSP_CONFIG);
    strcpy(m->config.socket, "/run/mnc/mncd.sock"); /* over the 101 bytes: bytes left after its NUL */
    assert_int_equal(check(&cx, m), -EBADMSG);
    SET(m->config.socket, "/run/mnc/mncd.sock");
    m->config.state_dir[sizeof(m->config.state_dir) - 1] = 'x'; /* a byte after the NUL */
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->config.state_dir, 'x', sizeof(m->config.state_dir)); /* no NUL at all */
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->config.state_dir, 0, sizeof(m->config.state_dir));
    strcpy(m->config.state_dir, "/var/lib/\tmnc");
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->config.state_dir, 0, sizeof(m->config.state_dir));
    strcpy(m->config.state_dir, "/var/lib/mnc");
    assert_int_equal(feed(&cx, m), PSP_CONFIG);

    /* principals: in order, well formed, unique */
    m = principal_msg(1);
    assert_int_equal(check(&cx, m), -EBADMSG); /* out of order */
    free(m);
    m = idmap_msg(PSP_IDMAP_UID);
    assert_int_equal(check(&cx, m), -EBADMSG); /* before every principal */
    free(m);
    m = seal_msg();
    assert_int_equal(check(&cx, m), -EBADMSG); /* early */
    free(m);
    m = principal_msg(0);
    m->principal.cls = MNC_SINK_MNCD; /* only the enforcer labels mncd's socket */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.cls = 0;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.cls = MNC_SINK_AGENT;
    strcpy(m->principal.name, "wor ker");
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->principal.name, 0, sizeof(m->principal.name));
    assert_int_equal(check(&cx, m), -EBADMSG); /* empty */
    strcpy(m->principal.name, "worker");
    strcpy(m->principal.path, "/var/log/x"); /* an agent has no file to protect */
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->principal.path, 0, sizeof(m->principal.path));
    m->principal.ikey.port = 1; /* a key without addr */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.ikey.port = 0;
    assert_int_equal(feed(&cx, m), PSP_PRINCIPAL);
    m = principal_msg(1);
    strcpy(m->principal.name, "worker"); /* a second "worker" */
    assert_int_equal(check(&cx, m), -EBADMSG);
    strcpy(m->principal.name, "coordinator");
    strcpy(m->principal.ukey.path, "/run/agents/../coordinator.sock"); /* not canonical */
    assert_int_equal(check(&cx, m), -EBADMSG);
    memset(m->principal.ukey.path, 0, sizeof(m->principal.ukey.path));
    strcpy(m->principal.ukey.path, "@coord"); /* abstract without its length and type */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.ukey.alen = 6;
    m->principal.ukey.type = 3; /* SOCK_RAW is no UNIX socket type here */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.ukey.type = 5;
    assert_int_equal(feed(&cx, m), PSP_PRINCIPAL);
    m = principal_msg(2);
    m->principal.flags = PSP_PF_NETNS; /* a sink has no confinement */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.flags = 0;
    assert_int_equal(feed(&cx, m), PSP_PRINCIPAL);
    assert_int_equal(feed(&cx, principal_msg(3)), PSP_PRINCIPAL);
    m = principal_msg(4);
    m->principal.ikey.addr[9] = 1; /* IPv4 with bytes past the fourth */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.ikey.addr[9] = 0;
    m->principal.ikey.family = 1;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->principal.ikey.family = MNC_AF_INET6;
    assert_int_equal(feed(&cx, m), PSP_PRINCIPAL);
    assert_int_equal(feed(&cx, principal_msg(5)), PSP_PRINCIPAL);
    m = principal_msg(5);
    m->principal.id = NP; /* more than announced */
    assert_int_equal(check(&cx, m), -EBADMSG);
    free(m);

    /* idmap: agents only, as many as announced */
    m = idmap_msg(PSP_IDMAP_UID);
    m->idmap.agent = 2; /* ops_log is no agent */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->idmap.agent = 0;
    m->idmap.cgroup[0] = '/'; /* a uid entry with a cgroup */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->idmap.cgroup[0] = 0;
    assert_int_equal(feed(&cx, m), PSP_IDMAP);
    m = idmap_msg(PSP_IDMAP_CGROUP);
    m->idmap.uid = 5;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->idmap.uid = 0;
    m->idmap.kind = 3;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->idmap.kind = PSP_IDMAP_CGROUP;
    assert_int_equal(feed(&cx, m), PSP_IDMAP);
    assert_int_equal(feed(&cx, idmap_msg(PSP_IDMAP_UID)), -EBADMSG); /* a third of two */
    m = seal_msg();
    m->seal.n_idmap = 3;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->seal.n_idmap = 2;
    assert_int_equal(feed(&cx, m), PSP_SEAL);
    assert_int_equal(cx.phase, PSP_PH_SERVE);
}

static void test_hold_fields(void **st)
{
    (void)st;
    psp_ctx cx;
    serving(&cx);
    msgbuf *m = hold_msg();
    assert_int_equal(check(&cx, m), PSP_HOLD);
    m->hold.agent = 2; /* a sink */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.agent = NP;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.agent = 0xffffffffu;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.agent = 0;
    m->hold.op = 0;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.op = 3;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.op = PSP_OP_MEM_GET;
    m->hold.may_external = 2;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.may_external = 0;
    m->hold.sinks[0] |= 1u << NP; /* a principal the configuration does not have */
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.sinks[0] &= ~(1ull << NP);
    m->hold.sinks[3] = 1ull << 63;
    assert_int_equal(check(&cx, m), -EBADMSG);
    m->hold.sinks[3] = 0;
    assert_int_equal(check(&cx, m), PSP_HOLD);
    free(m);
}

/* Every single-byte change of a valid hold is refused, except in the object id (any 16 bytes)
 * and in the bits of sinks and may_* that keep naming principals and booleans. */
static void test_hold_mutations(void **st)
{
    (void)st;
    psp_ctx cx;
    serving(&cx);
    msgbuf *base = hold_msg();
    const size_t oid_at = offsetof(struct psp_hold, oid);
    for (size_t i = 0; i < sizeof(struct psp_hold); i++) {
        for (int bit = 0; bit < 8; bit++) {
            msgbuf *m = hold_msg();
            m->bytes[i] ^= (char)(1u << bit);
            int r = check(&cx, m);
            bool in_oid = i >= oid_at && i < oid_at + 16;
            bool in_sinks = i < oid_at && i >= offsetof(struct psp_hold, sinks) && i - 16 < 1 && bit < NP;
            bool in_flags =
                i >= offsetof(struct psp_hold, may_log) && i <= offsetof(struct psp_hold, may_external) && bit == 0;
            bool in_seq = i >= offsetof(struct psp_hdr, seq) && i < offsetof(struct psp_hdr, flags);
            bool agent = i == offsetof(struct psp_hold, agent) && bit == 0; /* coordinator -> worker */
            bool want = in_oid || in_sinks || in_flags || in_seq || agent;
            if ((r == PSP_HOLD) != want)
                fail_msg("byte %zu bit %d: psp_check %d, expected %s", i, bit, r, want ? "accepted" : "refused");
            free(m);
        }
    }
    free(base);
}

static void test_registration(void **st)
{
    (void)st;
    psp_ctx cx;
    serving(&cx);
    msgbuf *p = mk(PSP_REG_PATH);
    p->reg_path.kind = PSP_REG_WORKSPACE;
    strcpy(p->reg_path.path, "/srv/ws");
    assert_int_equal(check(&cx, p), -EPERM); /* outside a registration */
    msgbuf *c = mk(PSP_REG_COMMIT);
    assert_int_equal(check(&cx, c), -EPERM);
    msgbuf *b = mk(PSP_REG_BEGIN);
    b->reg_begin.agent = 1;
    strcpy(b->reg_begin.cgroup, "/sys/fs/cgroup/mnc/coordinator.7");
    b->reg_begin.uid = 5; /* a uid without the flag that says it is known */
    assert_int_equal(check(&cx, b), -EBADMSG);
    b->reg_begin.flags = PSP_RF_UID_KNOWN | PSP_RF_ROOT; /* --as-root with a uid */
    assert_int_equal(check(&cx, b), -EBADMSG);
    b->reg_begin.uid = 0;
    b->reg_begin.flags = PSP_RF_ROOT | 0x10;
    assert_int_equal(check(&cx, b), -EBADMSG);
    b->reg_begin.flags = PSP_RF_ROOT;
    SET(b->reg_begin.cgroup, "mnc/x"); /* relative */
    assert_int_equal(check(&cx, b), -EBADMSG);
    memset(b->reg_begin.cgroup, 0, sizeof(b->reg_begin.cgroup));
    strcpy(b->reg_begin.cgroup, "/sys/fs/cgroup/mnc/coordinator.7");
    b->reg_begin.agent = 3; /* a memory sink */
    assert_int_equal(check(&cx, b), -EBADMSG);
    b->reg_begin.agent = 1;
    assert_int_equal(check(&cx, b), PSP_REG_BEGIN);
    psp_advance(&cx, b);
    assert_int_equal(check(&cx, b), -EPERM); /* no second one inside the first */
    msgbuf *h = hold_msg();
    assert_int_equal(check(&cx, h), -EPERM); /* nor a hold */
    free(h);
    for (int i = 0; i < PSP_MAX_WS; i++) {
        assert_int_equal(check(&cx, p), PSP_REG_PATH);
        psp_advance(&cx, p);
    }
    assert_int_equal(check(&cx, p), -EBADMSG); /* a 17th workspace */
    p->reg_path.kind = PSP_REG_TAINTED;
    p->reg_path.path[0] = 'x'; /* relative */
    assert_int_equal(check(&cx, p), -EBADMSG);
    p->reg_path.path[0] = '/';
    p->reg_path.kind = 0;
    assert_int_equal(check(&cx, p), -EBADMSG);
    p->reg_path.kind = PSP_REG_TAINTED;
    for (int i = 0; i < PSP_MAX_TAINTED; i++)
        psp_advance(&cx, p);
    assert_int_equal(check(&cx, p), -EBADMSG); /* more tainted dirs than the launcher may send */
    c->reg_commit.n_ws = PSP_MAX_WS;
    c->reg_commit.n_tainted = PSP_MAX_TAINTED - 1;
    assert_int_equal(check(&cx, c), -EBADMSG); /* counts differ from what came */
    c->reg_commit.n_tainted = PSP_MAX_TAINTED;
    assert_int_equal(check(&cx, c), PSP_REG_COMMIT);
    psp_advance(&cx, c);
    assert_int_equal(check(&cx, b), PSP_REG_BEGIN); /* the next one may open */
    free(p);
    free(c);
    free(b);
}

static void test_admin(void **st)
{
    (void)st;
    psp_ctx adm;
    psp_ctx_init(&adm, PSP_PH_ADMIN);
    msgbuf *r = mk(PSP_ADM_RESET);
    strcpy(r->adm_reset.agent, "coord/inator");
    assert_int_equal(check(&adm, r), -EBADMSG);
    free(r);
    msgbuf *w = mk(PSP_ADM_WS_CLEAR);
    strcpy(w->adm_ws_clear.path, "ws");
    assert_int_equal(check(&adm, w), -EBADMSG);
    free(w);
    msgbuf *o = mk(PSP_OPEN);
    o->open.what = PSP_OPEN_CONFIG;
    strcpy(o->open.path, "/etc/mnc/mncd.json");
    assert_int_equal(check(&adm, o), -EPERM); /* the admin socket opens nothing */
    free(o);
}

static msgbuf *audit_msg(void)
{
    msgbuf *m = mk(PSP_AUDIT);
    m->h.seq = 0;
    m->audit.op = PSP_A_KERNEL_SWEEP;
    m->audit.decision = PSP_D_DENY;
    m->audit.sender = 1;
    m->audit.receiver = PSP_NONE;
    m->audit.has_oid = 1;
    memset(m->audit.oid, 0x5a, sizeof(m->audit.oid));
    strcpy(m->audit.reason, "deny_external");
    strcpy(m->audit.detail, "recv: pre-taint connection (socket 42, pid 7 fd 3) to 192.0.2.1:443: shut");
    return m;
}

static void test_replies(void **st)
{
    (void)st;
    char why[200];
    msgbuf *a = audit_msg();
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), PSP_AUDIT);
    a->audit.sender = NP;
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    assert_int_equal(psp_check_reply(a, a->h.len, 0, 0, why, sizeof(why)), PSP_AUDIT); /* before the seal */
    a->audit.sender = 1;
    SET(a->audit.reason, "Deny");
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    SET(a->audit.reason, "deny");
    a->audit.has_oid = 0; /* an oid left behind */
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    memset(a->audit.oid, 0, sizeof(a->audit.oid));
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), PSP_AUDIT);
    a->audit.op = PSP_A__MAX + 1;
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    a->audit.op = PSP_A_AGENT_EXIT;
    a->audit.decision = 4;
    assert_int_equal(psp_check_reply(a, a->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    a->audit.decision = PSP_D_ALLOW;
    assert_int_equal(psp_check_reply(a, a->h.len, 1, NP, why, sizeof(why)), -EBADMSG); /* an fd with it */
    free(a);

    msgbuf *h = mk(PSP_HELD);
    h->held.generation = 9;
    assert_int_equal(psp_check_reply(h, h->h.len, 0, NP, why, sizeof(why)), PSP_HELD);
    free(h);
    msgbuf *rq = hold_msg(); /* a request from the enforcer's side is refused */
    assert_int_equal(psp_check_reply(rq, rq->h.len, 0, NP, why, sizeof(why)), -EPERM);
    free(rq);
    msgbuf *r = mk(PSP_REFUSED);
    r->refused.code = PSP_NO_DENIED;
    r->refused.err = EPERM;
    strcpy(r->refused.detail, "recv refused: fd scan");
    assert_int_equal(psp_check_reply(r, r->h.len, 0, NP, why, sizeof(why)), PSP_REFUSED);
    r->refused.code = 0;
    assert_int_equal(psp_check_reply(r, r->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    r->refused.code = PSP_NO_INTERNAL;
    r->refused.err = -1;
    assert_int_equal(psp_check_reply(r, r->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    free(r);
    msgbuf *s = mk(PSP_STARTED);
    s->started.backend = MNC_BACKEND_CGROUP;
    s->started.n_fds = 2;
    s->started.selftest_n = 16;
    s->started.selftest_pass = 16;
    strcpy(s->started.tree, "/sys/fs/cgroup/mnc");
    assert_int_equal(psp_check_reply(s, s->h.len, 2, NP, why, sizeof(why)), PSP_STARTED);
    assert_int_equal(psp_check_reply(s, s->h.len, 3, NP, why, sizeof(why)), -EBADMSG); /* n_fds says 2 */
    s->started.flags = PSP_SF_LLAUDIT; /* the audit socket needs the third fd */
    assert_int_equal(psp_check_reply(s, s->h.len, 2, NP, why, sizeof(why)), -EBADMSG);
    s->started.n_fds = 3;
    assert_int_equal(psp_check_reply(s, s->h.len, 3, NP, why, sizeof(why)), PSP_STARTED);
    s->started.selftest_pass = 17;
    assert_int_equal(psp_check_reply(s, s->h.len, 3, NP, why, sizeof(why)), -EBADMSG);
    free(s);
    msgbuf *g = mk(PSP_REG_ADD);
    g->reg_change.agent = 0;
    strcpy(g->reg_change.cgroup_rel, "/mnc/worker.42");
    assert_int_equal(psp_check_reply(g, g->h.len, 0, NP, why, sizeof(why)), PSP_REG_ADD);
    g->reg_change.agent = PSP_NONE;
    assert_int_equal(psp_check_reply(g, g->h.len, 0, NP, why, sizeof(why)), -EBADMSG);
    free(g);
}

/* The largest messages go through a SOCK_SEQPACKET pair whole, fds with them, and a receive
 * buffer of PSP_MAX_MSG takes each in one recvmsg. */
static void test_transport(void **st)
{
    (void)st;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    msgbuf *s = mk(PSP_STARTED);
    s->started.n_fds = 2;
    int fds[2] = {open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), open("/dev/null", O_RDWR | O_CLOEXEC)};
    assert_true(fds[0] >= 0 && fds[1] >= 0);
    char cbuf[CMSG_SPACE(sizeof(fds))];
    memset(cbuf, 0, sizeof(cbuf));
    struct iovec iov = {.iov_base = s, .iov_len = s->h.len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(fds));
    memcpy(CMSG_DATA(cm), fds, sizeof(fds));
    assert_int_equal(sendmsg(sv[1], &mh, 0), (ssize_t)s->h.len);
    msgbuf *big = mk(PSP_CONFIG);
    assert_int_equal(send(sv[1], big, big->h.len, 0), (ssize_t)big->h.len);
    msgbuf *a = audit_msg();
    assert_int_equal(send(sv[1], a, a->h.len, 0), (ssize_t)a->h.len);

    msgbuf *in = calloc(1, sizeof(*in));
    assert_non_null(in);
    char rc[CMSG_SPACE(PSP_MAX_FDS * sizeof(int))];
    iov = (struct iovec){.iov_base = in, .iov_len = PSP_MAX_MSG};
    mh = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1, .msg_control = rc, .msg_controllen = sizeof(rc)};
    ssize_t n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
    assert_int_equal(n, (ssize_t)sizeof(struct psp_started));
    assert_false(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
    int got = 0;
    for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_type == SCM_RIGHTS) {
            got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            int f[PSP_MAX_FDS];
            memcpy(f, CMSG_DATA(cm), (size_t)got * sizeof(int));
            for (int i = 0; i < got; i++)
                close(f[i]);
        }
    assert_int_equal(got, 2);
    char why[200];
    assert_int_equal(psp_check_reply(in, (size_t)n, got, NP, why, sizeof(why)), PSP_STARTED);
    n = recv(sv[0], in, PSP_MAX_MSG, 0);
    assert_int_equal(n, (ssize_t)sizeof(struct psp_config));
    psp_ctx cx;
    psp_ctx_init(&cx, PSP_PH_BOOT);
    assert_int_equal(psp_check(&cx, in, (size_t)n, 0, why, sizeof(why)), -EBADMSG); /* zero counts */
    n = recv(sv[0], in, PSP_MAX_MSG, 0);
    assert_int_equal(n, (ssize_t)sizeof(struct psp_audit));
    assert_int_equal(psp_check_reply(in, (size_t)n, 0, NP, why, sizeof(why)), PSP_AUDIT);
    close(fds[0]);
    close(fds[1]);
    close(sv[0]);
    close(sv[1]);
    free(s);
    free(big);
    free(a);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),        cmocka_unit_test(test_session),      cmocka_unit_test(test_header),
        cmocka_unit_test(test_phases),         cmocka_unit_test(test_config_phase), cmocka_unit_test(test_hold_fields),
        cmocka_unit_test(test_hold_mutations), cmocka_unit_test(test_registration), cmocka_unit_test(test_admin),
        cmocka_unit_test(test_replies),        cmocka_unit_test(test_transport),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
