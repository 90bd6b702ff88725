// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_protocol.c - request parsing/validation, response building, the client call's spin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <valgrind/valgrind.h>

#include "mnc/protocol.h"
#include "jtree.h"
#include "reqscan.h"

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

/* ---- the fast path (reqscan.c) against the full parser: the same result for every line */

static const char *str_or(const char *s) { return s ? s : "(null)"; }

static void same_json(const cJSON *a, const cJSON *b, const char *what, const char *line)
{
    char *pa = a ? cJSON_PrintUnformatted(a) : NULL, *pb = b ? cJSON_PrintUnformatted(b) : NULL;
    if ((a == NULL) != (b == NULL) || (pa && strcmp(pa, pb) != 0) || (a && b && a->type != b->type)) {
        print_message("line %s: %s differs: %s vs %s\n", line, what, pa ? pa : "NULL", pb ? pb : "NULL");
        fail();
    }
    cJSON_free(pa);
    cJSON_free(pb);
}

static void same_request(const mnc_request *a, const mnc_request *b, const char *line)
{
    const char *const *sa[] = {&a->as,      &a->object,    &a->to,         &a->channel, &a->contract,
                               &a->purpose, &a->recipient, &a->release,    &a->sink,    &a->tool,
                               &a->key,     &a->store,     &a->request_id, &a->failure, &a->agent,
                               &a->cgroup,  &a->path,      &a->stdio,      &a->stream,  &a->data};
    const char *const *sb[] = {&b->as,      &b->object,    &b->to,         &b->channel, &b->contract,
                               &b->purpose, &b->recipient, &b->release,    &b->sink,    &b->tool,
                               &b->key,     &b->store,     &b->request_id, &b->failure, &b->agent,
                               &b->cgroup,  &b->path,      &b->stdio,      &b->stream,  &b->data};
    assert_int_equal(a->verb, b->verb);
    for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++)
        if ((*sa[i] == NULL) != (*sb[i] == NULL) || (*sa[i] && strcmp(*sa[i], *sb[i]) != 0)) {
            print_message("line %s: string %zu: %s vs %s\n", line, i, str_or(*sa[i]), str_or(*sb[i]));
            fail();
        }
    assert_int_equal(a->memory, b->memory);
    assert_int_equal(a->deny, b->deny);
    assert_int_equal(a->max, b->max);
    assert_int_equal(a->uid, b->uid);
    assert_int_equal(a->run_as_root, b->run_as_root);
    assert_int_equal(a->lost, b->lost);
    same_json(a->id, b->id, "id", line);
    if (a->id && b->id) {
        assert_true(a->id->valuedouble == b->id->valuedouble || (a->id->valuedouble != a->id->valuedouble));
        assert_int_equal(a->id->valueint, b->id->valueint);
    }
    same_json(a->state, b->state, "state", line);
    same_json(a->candidates, b->candidates, "candidates", line);
    same_json(a->fields, b->fields, "fields", line);
    same_json(a->sinks, b->sinks, "sinks", line);
    same_json(a->lifetime, b->lifetime, "lifetime", line);
    same_json(a->receipt, b->receipt, "receipt", line);
    same_json(a->workspaces, b->workspaces, "workspaces", line);
    same_json(a->tainted_dirs, b->tainted_dirs, "tainted_dirs", line);
}

/* Parses line both ways; returns whether the fast path took it. */
static bool compare_line(const char *line, size_t len)
{
    mnc_request a, b, c;
    cJSON *ida = NULL, *idb = NULL;
    char ea[256], eb[256];
    char shown[600];
    snprintf(shown, sizeof(shown), "[%.*s] (%zu bytes)", (int)(len < 500 ? len : 500), line, len);
    int ra = mnc_request_parse(line, len, &a, &ida, ea, sizeof(ea));
    int rb = mnc_request_parse_tree(line, len, &b, &idb, eb, sizeof(eb));
    bool fast = mnc_reqscan(line, len, &c) == 1;
    if (ra != rb || (fast && rb != 0)) {
        print_message("line %s: parse %d, tree %d, fast %d\n", shown, ra, rb, fast);
        fail();
    }
    if (ra == 0) {
        same_request(&a, &b, shown);
        if (fast)
            same_request(&c, &b, shown);
        mnc_request_free(&a);
        mnc_request_free(&b);
    } else {
        if (strcmp(ea, eb) != 0) {
            print_message("line %s: error %s vs %s\n", shown, ea, eb);
            fail();
        }
        same_json(ida, idb, "error id", shown);
        cJSON_Delete(ida);
        cJSON_Delete(idb);
    }
    if (fast)
        mnc_request_free(&c);
    else
        assert_null(c.root);
    return fast;
}

static uint64_t rng_state = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static const char *pick(const char *const *v, size_t n) { return v[rnd((unsigned)n)]; }
#define PICK(v) pick(v, sizeof(v) / sizeof(v[0]))

/* A JSON string of n characters from set (a "bad" one also gets one byte from outside it). */
static size_t gen_string(char *p, size_t cap, unsigned n, const char *set, bool good)
{
    static const char odd[] = {' ', '/', '!', '\x7f', '\xc3', '#'};
    size_t o = 0, ns = strlen(set);
    if (cap < (size_t)n + 3)
        return 0;
    p[o++] = '"';
    for (unsigned i = 0; i < n; i++)
        p[o++] = set[rnd((unsigned)ns)];
    if (!good && n > 0)
        p[1 + rnd(n)] = odd[rnd(sizeof(odd))];
    p[o++] = '"';
    p[o] = '\0';
    return o;
}

static void test_fast_path(void **st)
{
    (void)st;
    static const char *const keys[] = {"verb",  "id",       "as", "object", "to",      "channel",   "purpose",
                                       "max",   "max",      "to", "object", "x",       "ma\\u0078", "Verb",
                                       "state", "contract", "",   "tool",   "purpose", "id"};
    static const char *const verbs[] = {"\"send\"",       "\"recv\"",    "\"send\"",  "\"recv\"", "\"disclose\"",
                                        "\"se\\u006ed\"", "\"SEND\"",    "\"sendx\"", "1",        "null",
                                        "\"whoami\"",     "\"forward\"", "\"\""};
    static const char *const vals[] = {
        "\"0123456789abcdef0123456789abcdef\"",
        "\"0123456789ABCDEF0123456789abcdef\"",
        "\"0123456789abcdef0123456789abcde\"",
        "\"0123456789abcdef0123456789abcdefa\"",
        "\"0123456789abcdef0123456789abcdeg\"",
        "\"coordinator\"",
        "\"worker\"",
        "\"a\"",
        "\"\"",
        "\"message\"",
        "\"tool\"",
        "\"Message\"",
        "\"a b\"",
        "\"a\\\"b\"",
        "\"co\\u006Frdinator\"",
        "\"caf\xc3\xa9\"",
        "\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk\"",  /* 63 */
        "\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl\"", /* 64 */
        "\"x:y.z-_9\"",
        "\"x/y\"",
        "1",
        "5",
        "1000",
        "1001",
        "0",
        "-1",
        "1.0",
        "1e2",
        "01",
        "99999",
        "123456789012",
        "1e20",
        "2.5",
        "true",
        "false",
        "null",
        "[]",
        "{}",
        "[\"a\"]",
        "{\"subject\":\"s\"}",
        "\"7\"",
        "7",
        "-0",
        "1E1",
        "3.",
        "\"\\u0000\"",
        "\"a\\nb\"",
        "\"\\ud800\"",
        "\"tab\there\"",
    };
    static const char *const spaces[] = {"",  "",   "",   "",   "",   "",   "",   " ",
                                         " ", "  ", "\t", "\r", "\n", "\v", "\f", "\x01"};
    static const char *const ends[] = {"",   "",   "",     "",   "",  "",  "",  " ",
                                       "\t", "\r", "\r\n", "\n", "x", "}", ",", " \r\t "};
    char line[2048];
    int n_fast = 0, n_ok = 0, n_lines = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t o = 0;
#define PUT(s) o += (size_t)snprintf(line + o, sizeof(line) - o, "%s", (s))
        if (rnd(50) == 0)
            PUT("\xef\xbb\xbf");
        PUT(PICK(spaces));
        PUT(rnd(40) ? "{" : "[");
        int nm = (int)rnd(7);
        bool verb_done = false;
        for (int m = 0; m < nm || !verb_done; m++) {
            if (m > 12)
                break;
            if (m > 0)
                PUT(rnd(60) ? "," : ";");
            PUT(PICK(spaces));
            const char *k = (!verb_done && rnd(3) == 0) || m + 1 >= nm ? "verb" : PICK(keys);
            if (strcmp(k, "verb") == 0 && verb_done && rnd(4))
                k = "to";
            if (strcmp(k, "verb") == 0)
                verb_done = true;
            PUT("\"");
            PUT(k);
            PUT("\"");
            PUT(PICK(spaces));
            PUT(rnd(60) ? ":" : "=");
            PUT(PICK(spaces));
            if (strcmp(k, "verb") == 0)
                PUT(PICK(verbs));
            else if (strcmp(k, "object") == 0 && rnd(4))
                o +=
                    gen_string(line + o, sizeof(line) - o, rnd(8) ? 32 : 30 + rnd(5), "0123456789abcdefABCDEF", rnd(8));
            else if ((strcmp(k, "to") == 0 || strcmp(k, "as") == 0 || strcmp(k, "purpose") == 0) && rnd(4))
                o += gen_string(line + o, sizeof(line) - o, rnd(4) ? 1 + rnd(8) : rnd(66),
                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-", rnd(8));
            else if (strcmp(k, "channel") == 0 && rnd(4))
                PUT(vals[9 + rnd(2)]);
            else if (strcmp(k, "max") == 0 && rnd(4))
                o += (size_t)snprintf(line + o, sizeof(line) - o, "%u", rnd(3) ? 1 + rnd(20) : rnd(1100));
            else if (strcmp(k, "id") == 0 && rnd(4))
                o += rnd(2) ? (size_t)snprintf(line + o, sizeof(line) - o, "%d", (int)rnd(2000000) - 1000000)
                            : gen_string(line + o, sizeof(line) - o, rnd(10) ? rnd(20) : 250 + rnd(10),
                                         "abcXYZ019 _-\\u0041n\"", rnd(2));
            else
                PUT(PICK(vals));
            PUT(PICK(spaces));
        }
        PUT(rnd(40) ? "}" : "");
        PUT(PICK(ends));
#undef PUT
        size_t len = o < sizeof(line) ? o : sizeof(line) - 1;
        line[len] = '\0';
        /* now and then a cut, a flipped byte or an embedded NUL */
        unsigned mut = rnd(20);
        if (mut == 0 && len > 0)
            len = rnd((unsigned)len);
        else if (mut == 1 && len > 0)
            line[rnd((unsigned)len)] ^= (char)(1u << rnd(8));
        else if (mut == 2 && len > 0)
            line[rnd((unsigned)len)] = '\0';
        n_lines++;
        mnc_request r;
        cJSON *id = NULL;
        char err[256];
        if (mnc_request_parse_tree(line, len, &r, &id, err, sizeof(err)) == 0) {
            n_ok++;
            mnc_request_free(&r);
        }
        cJSON_Delete(id);
        n_fast += compare_line(line, len);
    }
    /* Near-valid send and recv lines: every field well-formed but now and then one that is not
     * (lengths around the limits, a byte outside the set, a key of the other verb). */
    static const char *const names = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-";
    for (int iter = 0; iter < 100000; iter++) {
        const char *member[9];
        char vbuf[9][400];
        int nmem = 0;
        bool send = rnd(2);
#define NAMELEN (rnd(3) ? 1 + rnd(12) : 60 + rnd(6))
        snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"verb\":\"%s\"", rnd(50) ? (send ? "send" : "recv") : "forward");
        member[nmem] = vbuf[nmem];
        nmem++;
        for (int k = 0; k < 7; k++) {
            bool want = k == 0   ? (send ? rnd(30) != 0 : rnd(2))
                        : k == 1 ? (send ? rnd(30) != 0 : rnd(40) == 0)
                                 : rnd(2);
            if (!want)
                continue;
            char v[300];
            bool good = rnd(8) != 0;
            switch (k) {
            case 0:
                gen_string(v, sizeof(v), good ? 32 : 31 + rnd(3), "0123456789abcdefABCDEF", good || rnd(2));
                snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"object\":%s", v);
                break;
            case 1:
                gen_string(v, sizeof(v), NAMELEN, names, good);
                snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"to\":%s", v);
                break;
            case 2:
                gen_string(v, sizeof(v), NAMELEN, names, good);
                snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"as\":%s", v);
                break;
            case 3:
                gen_string(v, sizeof(v), NAMELEN, names, good);
                snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"purpose\":%s", v);
                break;
            case 4:
                snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"channel\":\"%s\"",
                         good ? (rnd(2) ? "message" : "tool") : (rnd(2) ? "tools" : "messag"));
                break;
            case 5:
                snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"max\":%u",
                         good ? 1 + rnd(MNC_PROTO_MAX_BATCH) : MNC_PROTO_MAX_BATCH - 2 + rnd(5));
                break;
            case 6:
                if (rnd(2))
                    snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"id\":%d", (int)rnd(100000) - 50000);
                else {
                    gen_string(v, sizeof(v), good ? rnd(30) : 250 + rnd(10), "abcXYZ019 _-", true);
                    snprintf(vbuf[nmem], sizeof(vbuf[0]), "\"id\":%s", v);
                }
                break;
            }
            member[nmem] = vbuf[nmem];
            nmem++;
        }
#undef NAMELEN
        for (int i = nmem - 1; i > 0; i--) { /* any order */
            int j = (int)rnd((unsigned)i + 1);
            const char *t = member[i];
            member[i] = member[j];
            member[j] = t;
        }
        size_t o = 0;
        o += (size_t)snprintf(line + o, sizeof(line) - o, "%s{", rnd(8) ? "" : " ");
        for (int i = 0; i < nmem; i++)
            o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", i ? (rnd(4) ? "," : ", ") : "", member[i]);
        o += (size_t)snprintf(line + o, sizeof(line) - o, "}%s", rnd(8) ? "" : " \r");
        n_lines++;
        n_fast += compare_line(line, o < sizeof(line) ? o : sizeof(line) - 1);
    }
    /* the generator reaches both paths */
    print_message("fast path: %d of %d lines (%d valid)\n", n_fast, n_lines, n_ok);
    assert_true(n_ok > 5000);
    assert_true(n_fast > 20000);
    /* the lines mncd and mncctl send take the fast path */
    static const char *const hot[] = {
        "{\"verb\":\"send\",\"object\":\"0123456789abcdef0123456789abcdef\",\"to\":\"coordinator\"}",
        "{\"verb\":\"recv\",\"max\":1}",
        "{\"verb\":\"recv\"}",
        "{\"id\":7,\"verb\":\"send\",\"as\":\"worker\",\"object\":\"0123456789ABCDEF0123456789abcdef\",\"to\":\"c\","
        "\"channel\":\"tool\",\"purpose\":\"p\"}",
        "{\"verb\": \"recv\", \"id\": \"a\\u0041\\n\", \"object\": \"0123456789abcdef0123456789abcdef\", \"max\": "
        "1000} \r",
        "{\"verb\":\"recv\",\"id\":-1.5e3}",
    };
    for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
        if (!compare_line(hot[i], strlen(hot[i]))) {
            print_message("not taken by the fast path: %s\n", hot[i]);
            fail();
        }
    }
    /* and these do not (the full parser decides) */
    static const char *const cold[] = {
        "{\"verb\":\"recv\",\"max\":1.0}",         "{\"verb\":\"recv\",\"max\":1001}",
        "{\"verb\":\"recv\",\"max\":1,\"max\":1}", "{\"verb\":\"send\",\"to\":\"c\"}",
        "{\"verb\":\"recv\",\"id\":null}",         "{\"verb\":\"recv\"}\n",
        "{\"verb\":\"recv\",\"to\":\"c\"}",        "{\"verb\":\"se\\u006ed\"}",
    };
    for (size_t i = 0; i < sizeof(cold) / sizeof(cold[0]); i++)
        assert_false(compare_line(cold[i], strlen(cold[i])));
}

/* ---- jtree.c against cJSON: a tree it builds is cJSON's, item for item */

static void same_tree(const cJSON *a, const cJSON *b, const char *text)
{
    if (a->type != b->type || (a->string == NULL) != (b->string == NULL) ||
        (a->string && strcmp(a->string, b->string) != 0) || (a->valuestring == NULL) != (b->valuestring == NULL) ||
        (a->valuestring && strcmp(a->valuestring, b->valuestring) != 0) || a->valueint != b->valueint ||
        !(a->valuedouble == b->valuedouble)) {
        print_message("text [%s]: item differs (type %d/%d, key %s/%s)\n", text, a->type, b->type, str_or(a->string),
                      str_or(b->string));
        fail();
    }
    const cJSON *x = a->child, *y = b->child, *px = NULL, *py = NULL;
    for (; x && y; px = x, py = y, x = x->next, y = y->next) {
        same_tree(x, y, text);
        /* prev links: the previous item, or (first child) the last one */
        assert_true((x->prev == NULL) == (y->prev == NULL));
        if (px)
            assert_ptr_equal(x->prev, px);
        if (py)
            assert_ptr_equal(y->prev, py);
    }
    assert_true(x == NULL && y == NULL);
    if (a->child) {
        assert_ptr_equal(a->child->prev, px);
        assert_ptr_equal(b->child->prev, py);
    }
}

static void gen_json(char *out, size_t cap, size_t *o, int depth)
{
#define J(str) (*o += (size_t)snprintf(out + *o, cap > *o ? cap - *o : 0, "%s", (str)))
    static const char *const ws[] = {"", "", "", " ", "\t", "\r\n", "\n ", "\v", "\f", "  "};
    static const char *const strs[] = {"\"a\"",           "\"\"",         "\"subject\"",   "\"Thu 10:00\"",
                                       "\"caf\xc3\xa9\"", "\"a\\\"b\"",   "\"tab\there\"", "\"\\u0041\"",
                                       "\"\x7f\"",        "\"\xff\xfe\"", "\"x y z\"",     "\"a/b\""};
    static const char *const keys[] = {"\"k\"", "\"subject\"",  "\"fields\"",  "\"\"",
                                       "\"k\"", "\"k\\u0062\"", "\"\xc3\xa9\""};
    static const char *const lits[] = {"true", "false", "null", "1", "-0.5", "1e3", "tru", "nul", "nulll", "truex"};
    if (*o >= cap - 64)
        return;
    J(ws[rnd(sizeof(ws) / sizeof(ws[0]))]);
    unsigned k = depth > 6 ? rnd(2) : rnd(5);
    if (k == 0) {
        J(strs[rnd(sizeof(strs) / sizeof(strs[0]))]);
    } else if (k == 1) {
        J(lits[rnd(sizeof(lits) / sizeof(lits[0]))]);
    } else {
        bool obj = k != 2;
        J(obj ? "{" : "[");
        unsigned n = rnd(5);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                J(rnd(40) ? "," : ";");
            J(ws[rnd(sizeof(ws) / sizeof(ws[0]))]);
            if (obj) {
                J(keys[rnd(sizeof(keys) / sizeof(keys[0]))]);
                J(ws[rnd(sizeof(ws) / sizeof(ws[0]))]);
                J(rnd(40) ? ":" : "");
            }
            gen_json(out, cap, o, depth + 1);
            J(ws[rnd(sizeof(ws) / sizeof(ws[0]))]);
        }
        if (rnd(30))
            J(obj ? "}" : "]");
    }
#undef J
}

static void test_jtree(void **st)
{
    (void)st;
    char text[4096];
    int n_fast = 0, n_cjson = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t o = 0;
        if (rnd(100) == 0)
            o += (size_t)snprintf(text, sizeof(text), "\xef\xbb\xbf");
        if (rnd(3)) { /* mostly objects at the top, as requests are */
            o += (size_t)snprintf(text + o, sizeof(text) - o, "{\"state\":");
            gen_json(text, sizeof(text), &o, 1);
            o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", rnd(20) ? "}" : "");
        } else {
            gen_json(text, sizeof(text), &o, 0);
        }
        if (rnd(4) == 0 && o < sizeof(text)) /* what follows the value: not part of it */
            o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", rnd(2) ? " " : "\t\r\n x");
        if (o >= sizeof(text))
            o = sizeof(text) - 1;
        if (rnd(10) == 0 && o > 0)
            text[rnd((unsigned)o)] ^= (char)(1u << rnd(8));
        if (rnd(10) == 0 && o > 0)
            o = rnd((unsigned)o);
        text[o] = '\0';
        const char *e1 = NULL, *e2 = NULL;
        cJSON *a = mnc_jtree_parse(text, o, &e1);
        cJSON *b = cJSON_ParseWithLengthOpts(text, o, &e2, false);
        n_cjson += b != NULL;
        if (a) {
            n_fast++;
            if (!b || e1 != e2) {
                print_message("text [%s]: jtree took it, cJSON %s (end %td vs %td)\n", text, b ? "too" : "did not",
                              e1 - text, b ? e2 - text : (ptrdiff_t)-1);
                fail();
            }
            same_tree(a, b, text);
        }
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    print_message("jtree: %d trees of %d cJSON parsed\n", n_fast, n_cjson);
    assert_true(n_fast > 20000);
    /* deeper than 64 levels: cJSON's; 60 levels: its own */
    for (int depth = 60; depth <= 70; depth += 10) {
        char deep[400];
        size_t o = (size_t)snprintf(deep, sizeof(deep), "{\"a\":");
        for (int i = 0; i < depth; i++)
            deep[o++] = '[';
        o += (size_t)snprintf(deep + o, sizeof(deep) - o, "\"x\"");
        for (int i = 0; i < depth; i++)
            deep[o++] = ']';
        deep[o++] = '}';
        deep[o] = '\0';
        const char *e1 = NULL, *e2 = NULL;
        cJSON *a = mnc_jtree_parse(deep, o, &e1), *b = cJSON_ParseWithLengthOpts(deep, o, &e2, false);
        assert_non_null(b);
        if (depth == 60) {
            assert_non_null(a);
            assert_ptr_equal(e1, e2);
            same_tree(a, b, deep);
        } else {
            assert_null(a);
        }
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    const char *e = NULL;
    /* a disclose's line is taken */
    const char *line =
        "{\"verb\":\"disclose\",\"contract\":\"c\",\"state\":{\"subject\":\"alice\",\"fields\":{\"a\":\"b\"}}}";
    cJSON *t = mnc_jtree_parse(line, strlen(line), &e);
    assert_non_null(t);
    assert_ptr_equal(e, line + strlen(line));
    cJSON_Delete(t);
}

/* test_client_waits_in_poll's peer: takes in the request 30 ms after it arrived (the client is
 * asleep by then), answers 30 ms later. */
static void *slow_peer(void *arg)
{
    int fd = *(int *)arg;
    char c, req[256];
    if (recv(fd, &c, 1, MSG_PEEK) != 1)
        return NULL;
    usleep(30000);
    if (read(fd, req, sizeof(req)) <= 0)
        return NULL;
    usleep(30000);
    static const char answer[] = "{\"ok\":true}\n";
    if (write(fd, answer, sizeof(answer) - 1) != (ssize_t)sizeof(answer) - 1)
        return NULL;
    return NULL;
}

/* Voluntary context switches of the calling thread (/proc/thread-self/status), or -1. */
static long my_nvcsw(void)
{
    FILE *f = fopen("/proc/thread-self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* The client sleeps once per call: in poll(POLLIN), which the peer taking in the request does
 * not wake. A reader blocked in read() is woken by that too (the freed send space) and sleeps
 * again: 2 switches, paid for by mncd on every request (docs/mncd.md, "Clients wait in poll()"). */
static void test_client_waits_in_poll(void **st)
{
    (void)st;
    cJSON *req = cJSON_Parse("{\"verb\":\"whoami\"}");
    assert_non_null(req);
    char err[128];
    for (int round = 0; round < 3; round++) {
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, slow_peer, &sv[1]), 0);
        cJSON *resp = NULL;
        long before = my_nvcsw();
        assert_int_equal(mnc_client_call(sv[0], req, &resp, err, sizeof(err)), 0);
        long slept = my_nvcsw() - before;
        assert_non_null(resp);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(resp, "ok")));
        cJSON_Delete(resp);
        pthread_join(th, NULL);
        close(sv[0]);
        close(sv[1]);
        printf("# round %d: the client slept %ld time(s) during the call\n", round, slept);
        assert_true(before >= 0);
        /* valgrind runs one thread at a time (a lock it hands over): it adds switches of its
         * own, so the count is checked in the plain and ASan runs */
        if (!RUNNING_ON_VALGRIND)
            assert_int_equal(slept, 1);
    }
    cJSON_Delete(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),          cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_quarantine_put), cmocka_unit_test(test_response),
        cmocka_unit_test(test_spin),           cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_jtree),          cmocka_unit_test(test_client_waits_in_poll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
