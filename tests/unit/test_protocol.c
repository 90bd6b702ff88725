// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_protocol.c - request parsing/validation, response building, the client call's spin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mnc/protocol.h"

static int parse(const char *s, mnc_request *r, char *err)
{
    cJSON *id = NULL;
    int rc = mnc_request_parse(s, strlen(s), r, &id, err, 256);
    cJSON_Delete(id);
    return rc;
}

static void test_valid(void **st)
{
    (void)st;
    mnc_request r;
    char err[256];
    assert_int_equal(parse("{\"verb\":\"send\",\"id\":3,\"object\":\"0123456789abcdef0123456789abcdef\","
                           "\"to\":\"coordinator\",\"channel\":\"tool\"}",
                           &r, err),
                     0);
    assert_int_equal(r.verb, MNC_V_SEND);
    assert_string_equal(r.to, "coordinator");
    assert_string_equal(r.channel, "tool");
    assert_int_equal(r.id->valueint, 3);
    mnc_request_free(&r);
    assert_int_equal(parse("{\"verb\":\"disclose\",\"contract\":\"c\",\"state\":{}}", &r, err), 0);
    assert_non_null(r.state);
    mnc_request_free(&r);
    assert_int_equal(parse("  {\"verb\":\"recv\",\"max\":5}  ", &r, err), 0);
    assert_int_equal(r.max, 5);
    assert_int_equal(r.memory, -1);
    mnc_request_free(&r);
}

/* quarantine.put (the stdio relay's admin verb): base64 data, padded, any length */
static void test_quarantine_put(void **st)
{
    (void)st;
    mnc_request r;
    char err[256];
    assert_int_equal(parse("{\"verb\":\"quarantine.put\",\"agent\":\"coordinator\",\"stream\":\"stdout\","
                           "\"data\":\"aGk=\",\"lost\":5}",
                           &r, err),
                     0);
    assert_int_equal(r.verb, MNC_V_QUARANTINE_PUT);
    assert_true(mnc_verb_is_admin(r.verb));
    assert_string_equal(r.data, "aGk=");
    assert_int_equal(r.lost, 5);
    mnc_request_free(&r);
    assert_int_equal(
        parse("{\"verb\":\"quarantine.put\",\"agent\":\"a\",\"stream\":\"stderr\",\"data\":\"\"}", &r, err), 0);
    assert_int_equal(r.lost, -1);
    mnc_request_free(&r);
    static const char *const bad[] = {"aGk", "a=Gk", "aG=k", "aGk!", "=aGk", "a===", "aGk=\\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char q[256];
        snprintf(q, sizeof(q), "{\"verb\":\"quarantine.put\",\"agent\":\"a\",\"stream\":\"stdout\",\"data\":\"%s\"}",
                 bad[i]);
        assert_int_equal(parse(q, &r, err), -1);
        assert_non_null(strstr(err, "base64"));
    }
    assert_int_equal(
        parse("{\"verb\":\"agent.register\",\"agent\":\"a\",\"cgroup\":\"/x\",\"stdio\":\"passthrough\"}", &r, err), 0);
    assert_string_equal(r.stdio, "passthrough");
    mnc_request_free(&r);
}

static void test_invalid(void **st)
{
    (void)st;
    static const struct {
        const char *req, *msg;
    } bad[] = {
        {"{\"verb\":\"send\"", "malformed JSON"},
        {"[]", "must be a JSON object"},
        {"{}", "missing \"verb\""},
        {"{\"verb\":\"nope\"}", "unknown verb"},
        {"{\"verb\":\"recv\",\"x\":1}", "unknown field \"x\""},
        {"{\"verb\":\"recv\",\"max\":0}", "\"max\" must be an integer"},
        {"{\"verb\":\"recv\",\"max\":1.5}", "\"max\" must be an integer"},
        {"{\"verb\":\"send\",\"object\":\"zz\",\"to\":\"a\"}", "object id"},
        {"{\"verb\":\"send\",\"object\":\"0123456789abcdef0123456789abcdef\"}", "needs \"to\""},
        {"{\"verb\":\"send\",\"object\":\"0123456789abcdef0123456789abcdef\",\"to\":\"a b\"}", "must be a name"},
        {"{\"verb\":\"disclose\",\"state\":{}}", "either \"contract\""},
        {"{\"verb\":\"disclose\",\"contract\":\"c\",\"purpose\":\"p\",\"state\":{}}", "either"},
        {"{\"verb\":\"recv\",\"verb\":\"recv\"}", "duplicate key"},
        {"{\"verb\":\"whoami\",\"as\":7}", "\"as\" must be a name"},
        {"{\"verb\":\"whoami\"} x", "trailing bytes"},
        {"{\"verb\":\"whoami\",\"id\":[1]}", "\"id\" must be"},
        {"{\"verb\":\"mem.put\",\"key\":\"a\\nb\",\"object\":\"0123456789abcdef0123456789abcdef\"}", "a key"},
        {"{\"verb\":\"workspace.clear\",\"path\":\"rel/dir\"}", "must be an absolute path"},
        {"{\"verb\":\"workspace.clear\"}", "needs \"path\""},
        {"{\"verb\":\"agent.register\",\"agent\":\"a\",\"cgroup\":\"/c\",\"tainted_dirs\":\"/x\"}",
         "\"tainted_dirs\" must be an array"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mnc_request r;
        char err[256] = "";
        assert_int_equal(parse(bad[i].req, &r, err), -1);
        if (!strstr(err, bad[i].msg))
            fail_msg("request %zu: error \"%s\" lacks \"%s\"", i, err, bad[i].msg);
        assert_null(r.root);
    }
    /* An embedded NUL is rejected, and the id is handed back for the error response. */
    mnc_request r;
    char err[256];
    cJSON *id = NULL;
    const char nul[] = "{\"verb\":\"x\",\"id\":\"q\"}\0junk";
    assert_int_equal(mnc_request_parse(nul, sizeof(nul) - 1, &r, &id, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "NUL"));
    const char unk[] = "{\"verb\":\"x\",\"id\":\"q\"}";
    assert_int_equal(mnc_request_parse(unk, sizeof(unk) - 1, &r, &id, err, sizeof(err)), -1);
    assert_non_null(id);
    assert_string_equal(id->valuestring, "q");
    cJSON_Delete(id);
}

static void test_response(void **st)
{
    (void)st;
    cJSON *id = cJSON_CreateNumber(4);
    cJSON *r = mnc_resp_deny(id, MNC_R_EXPIRED, "recv denied: %s", "expired");
    size_t n;
    char *l = mnc_resp_line(r, &n);
    assert_non_null(l);
    assert_int_equal(l[n - 1], '\n');
    assert_int_equal(strlen(l), n);
    assert_non_null(strstr(l, "\"id\":4,\"ok\":false,\"decision\":\"deny\",\"reason\":\"expired\""));
    free(l);
    cJSON_Delete(r);
    cJSON_Delete(id);
    assert_string_equal(mnc_verb_name(MNC_V_MEM_GET), "mem.get");
    assert_int_equal(mnc_verb_from_name("audit"), MNC_V_AUDIT);
    assert_true(mnc_verb_is_admin(MNC_V_REVOKE));
    assert_true(mnc_verb_is_admin(MNC_V_WORKSPACE_CLEAR));
    assert_int_equal(mnc_verb_from_name("workspace.clear"), MNC_V_WORKSPACE_CLEAR);
    mnc_request q;
    char e[256];
    assert_int_equal(parse("{\"verb\":\"workspace.clear\",\"path\":\"/srv/ws\"}", &q, e), 0);
    assert_string_equal(q.path, "/srv/ws");
    mnc_request_free(&q);
    assert_int_equal(parse("{\"verb\":\"agent.register\",\"agent\":\"a\",\"cgroup\":\"/c\",\"workspaces\":[\"/w\"],"
                           "\"tainted_dirs\":[\"/w/s\"]}",
                           &q, e),
                     0);
    assert_int_equal(cJSON_GetArraySize(q.tainted_dirs), 1);
    mnc_request_free(&q);
    assert_false(mnc_verb_is_admin(MNC_V_SEND));
}

static double elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t), 0);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* mnc_spin_readable: bounded (gives up after its budget on a silent fd), returns at once when
 * data or a hang-up is there; mnc_client_call_spin answers like mnc_client_call. */
static void test_spin(void **st)
{
    (void)st;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct timespec t0;
    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
    assert_false(mnc_spin_readable(sv[0], 2000000L)); /* 2 ms, nothing sent */
    double ms = elapsed_ms(&t0);
    assert_true(ms >= 2.0 && ms < 2000.0);
    assert_false(mnc_spin_readable(sv[0], 0)); /* no budget: one poll */

    /* the peer's answer is already there: the call returns it (spin or not) */
    static const char answer[] = "{\"ok\":true,\"n\":1}\n";
    assert_int_equal(write(sv[1], answer, sizeof(answer) - 1), (ssize_t)sizeof(answer) - 1);
    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
    assert_true(mnc_spin_readable(sv[0], 5000000000L)); /* 5 s budget, returns at once */
    assert_true(elapsed_ms(&t0) < 1000.0);
    cJSON *req = cJSON_Parse("{\"verb\":\"whoami\"}"), *resp = NULL;
    char err[128];
    assert_non_null(req);
    assert_int_equal(mnc_client_call_spin(sv[0], req, 30000L, &resp, err, sizeof(err)), 0);
    assert_int_equal(cJSON_GetObjectItem(resp, "n")->valueint, 1);
    cJSON_Delete(resp);
    char sent[64];
    ssize_t n = read(sv[1], sent, sizeof(sent));
    assert_true(n > 0 && memchr(sent, '\n', (size_t)n) != NULL); /* the request went out as one line */

    /* a peer that went away: the spin ends at once, the call fails with a message */
    assert_int_equal(shutdown(sv[1], SHUT_WR), 0);
    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
    assert_true(mnc_spin_readable(sv[0], 5000000000L));
    assert_true(elapsed_ms(&t0) < 1000.0);
    assert_int_equal(mnc_client_call_spin(sv[0], req, 30000L, &resp, err, sizeof(err)), -1);
    assert_null(resp);
    assert_non_null(strstr(err, "closed"));
    cJSON_Delete(req);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),    cmocka_unit_test(test_invalid), cmocka_unit_test(test_quarantine_put),
        cmocka_unit_test(test_response), cmocka_unit_test(test_spin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
