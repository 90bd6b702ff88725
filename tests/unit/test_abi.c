// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_abi.c - the kernel/user ABI: mnc_decide() exhaustively against an independent statement
 * of the rules (docs/kernel.md), the UNIX key builder and path canonicality check (against a
 * byte-wise oracle), the struct layouts that the
 * pinned maps depend on, and the loader's key parsers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "mnc/set.h"
#include "lsm_abi.h"
#include "mnc_abi.h"
#include "mnc_kern.h"

/* The rules, written as a spec table rather than as code shaped like mnc_decide. */
static int expect_allow(const struct mnc_taint *t, unsigned cls, unsigned id, int in_set)
{
    if (cls == MNC_SINK_MNCD)
        return 1; /* rule 1 */
    if (!t)
        return 0; /* rule 2 */
    if (cls == MNC_SINK_LOG)
        return t->may_log && in_set; /* rule 3 */
    if (cls == MNC_SINK_MEMORY)
        return t->may_memory && in_set; /* rule 3 */
    if (cls != MNC_SINK_AGENT && cls != MNC_SINK_TOOL && cls != MNC_SINK_EXTERNAL)
        return 0; /* rule 6 */
    if (!t->tainted)
        return 1; /* rule 4 */
    if (cls == MNC_SINK_EXTERNAL)
        return t->may_external || (id != MNC_ID_NONE && in_set); /* rule 5 */
    return in_set;                                               /* rule 5 */
}

static const unsigned ids[] = {0, 1, 63, 64, 65, 127, 128, 191, 192, 254, 255, 256, 1000, MNC_ID_NONE, 0xffffffffu};

static void test_decide_exhaustive(void **state)
{
    (void)state;
    long checked = 0;
    for (int null_t = 0; null_t < 2; null_t++)
        for (unsigned flags = 0; flags < 32; flags++)
            for (int setmode = 0; setmode < 3; setmode++) /* empty, all, only the id */
                for (unsigned cls = 0; cls < 9; cls++)
                    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
                        unsigned id = ids[i];
                        struct mnc_taint t;
                        memset(&t, 0, sizeof(t));
                        t.may_log = flags & 1, t.may_memory = (flags >> 1) & 1, t.may_forward = (flags >> 2) & 1;
                        t.may_external = (flags >> 3) & 1, t.tainted = (flags >> 4) & 1;
                        if (setmode == 1)
                            memset(t.sinks, 0xff, sizeof(t.sinks));
                        if (setmode == 2 && id < 256)
                            t.sinks[id / 64] |= 1ull << (id % 64);
                        int in_set = id < 256 && setmode != 0;
                        const struct mnc_taint *tp = null_t ? NULL : &t;
                        enum mnc_kreason r = mnc_decide(tp, cls, id);
                        int want = expect_allow(tp, cls, id, in_set);
                        if (mnc_kreason_allows(r) != want) {
                            print_error("cls %u id %u flags %#x set %d null %d: got %d (%s), want %d\n", cls, id, flags,
                                        setmode, null_t, (int)r, mnc_kreason_name(r), want);
                            fail();
                        }
                        checked++;
                    }
    assert_true(checked > 10000);
}

static void test_decide_reasons(void **state)
{
    (void)state;
    struct mnc_taint t;
    memset(&t, 0, sizeof(t));
    assert_int_equal(mnc_decide(NULL, MNC_SINK_MNCD, MNC_ID_NONE), MNC_K_ALLOW_MNCD);
    assert_int_equal(mnc_decide(NULL, MNC_SINK_EXTERNAL, MNC_ID_NONE), MNC_K_DENY_NO_TAINT);
    assert_int_equal(mnc_decide(&t, MNC_SINK_EXTERNAL, MNC_ID_NONE), MNC_K_ALLOW_UNTAINTED);
    assert_int_equal(mnc_decide(&t, MNC_SINK_LOG, 4), MNC_K_DENY_LOG); /* untainted: no base right */
    assert_int_equal(mnc_decide(&t, MNC_SINK_MEMORY, 4), MNC_K_DENY_MEMORY);
    assert_int_equal(mnc_decide(&t, MNC_SINK_NONE, 4), MNC_K_DENY_BAD_CLASS);
    t.tainted = 1;
    assert_int_equal(mnc_decide(&t, MNC_SINK_EXTERNAL, MNC_ID_NONE), MNC_K_DENY_EXTERNAL);
    assert_int_equal(mnc_decide(&t, MNC_SINK_AGENT, 7), MNC_K_DENY_SCOPE);
    assert_int_equal(mnc_decide(&t, MNC_SINK_TOOL, 7), MNC_K_DENY_SCOPE);
    t.sinks[0] = 1u << 7;
    assert_int_equal(mnc_decide(&t, MNC_SINK_AGENT, 7), MNC_K_ALLOW_SCOPE);
    assert_int_equal(mnc_decide(&t, MNC_SINK_LOG, 7), MNC_K_DENY_LOG); /* in φ but no may_log */
    t.may_log = 1;
    assert_int_equal(mnc_decide(&t, MNC_SINK_LOG, 7), MNC_K_ALLOW_SCOPE);
    t.may_external = 1;
    assert_int_equal(mnc_decide(&t, MNC_SINK_EXTERNAL, MNC_ID_NONE), MNC_K_ALLOW_SCOPE);
    assert_int_equal(mnc_decide(&t, MNC_SINK_MNCD, 0), MNC_K_ALLOW_MNCD);
    for (unsigned r = 0; r < MNC_K__COUNT; r++)
        assert_int_equal(mnc_kreason_allows(r), r < MNC_K_DENY_FIRST);
}

/* set.h and the ABI's bit layout agree (mncd builds taints with mnc_set) */
static void test_set_layout(void **state)
{
    (void)state;
    assert_int_equal(MNC_SET_WORDS_ABI, MNC_SET_WORDS);
    for (unsigned id = 0; id < 256; id++) {
        mnc_set s;
        mnc_set_clear(&s);
        mnc_set_add(&s, id);
        struct mnc_taint t;
        memset(&t, 0, sizeof(t));
        memcpy(t.sinks, s.w, sizeof(t.sinks));
        for (unsigned j = 0; j < 260; j++)
            assert_int_equal(mnc_set_has_abi(t.sinks, j), j == id);
    }
}

static int canon(const char *p) { return mnc_unix_path_canonical(p, (unsigned)strlen(p) + 1); }

static void test_path_canonical(void **state)
{
    (void)state;
    const char *good[] = {"/",       "/run/mnc/mncd.sock", "/a", "/a/b", "/.hidden", "/a/...", "/a/..b", "/a/b.",
                          "/a/.b/c", "/x/y/z.sock"};
    const char *bad[] = {"",        "rel", "./x",  "../x",  "//x",  "/a//b", "/a/./b",
                         "/a/../b", "/a/", "/a/.", "/a/..", "/./a", "/../a", "x/y"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (!canon(good[i])) {
            print_error("should be canonical: \"%s\"\n", good[i]);
            fail();
        }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (canon(bad[i])) {
            print_error("should not be canonical: \"%s\"\n", bad[i]);
            fail();
        }
    /* length-bounded (sun_path without a NUL) */
    char full[MNC_UNIX_PATH_MAX];
    memset(full, 'a', sizeof(full));
    full[0] = '/';
    assert_true(mnc_unix_path_canonical(full, sizeof(full)));
    assert_true(mnc_unix_path_canonical("/a/../b", 2));  /* only "/a" is looked at */
    assert_false(mnc_unix_path_canonical("/a/../b", 5)); /* "/a/.." */
    assert_false(mnc_unix_path_canonical("/a", 0));
}

/* An independent statement of canonicality for the word-wise mnc_unix_key_build: a byte-wise
 * state machine, the obvious way to write it (and the way the BPF side once ran it). */
static int oracle_canonical(const char *p, size_t n)
{
    size_t len = 0, comp = 0, dots = 0;
    for (size_t i = 0; i < n && p[i]; i++) {
        if (len == 0 && p[i] != '/')
            return 0; /* relative */
        len++;
        if (p[i] == '/') {
            if (len > 1 && comp == dots && dots <= 2)
                return 0; /* "//", "/./", "/../" */
            comp = dots = 0;
        } else {
            comp++;
            dots += p[i] == '.';
        }
    }
    if (len == 0)
        return 0;
    return len == 1 || !(comp == dots && dots <= 2); /* trailing "/", "/.", "/.." */
}

/* Builds raw[0..n) with mnc_unix_key_build, with junk after the n bytes (the BPF side copies
 * a fixed 108 bytes), and checks the key, the kind, canonicality against the oracle, and the
 * refusal decision: abstract names keep every byte, pathnames end at their first NUL. */
static void check_build(const char *raw, size_t n)
{
    union mnc_unix_buf b;
    memset(&b, 0xa5, sizeof(b));
    memcpy(b.key.path, raw, n);
    if (n < sizeof(b.key.path))
        b.key.path[n] = 0x2f; /* a '/' right past the end must not count */
    int kind = mnc_unix_key_build(&b, (__u32)n, SOCK_SEQPACKET);
    union mnc_unix_buf want;
    memset(&want, 0, sizeof(want));
    int want_kind, want_canon = 0;
    if (n == 0) {
        want_kind = MNC_UNIX_EMPTY;
    } else if (raw[0] == 0) {
        memcpy(want.key.path, raw, n);
        want.key.path[0] = '@';
        want.key.alen = (__u16)n; /* the length and type are part of an abstract name */
        want.key.type = SOCK_SEQPACKET;
        want_kind = MNC_UNIX_ABSTRACT;
    } else {
        for (size_t i = 0; i < n && raw[i]; i++)
            want.key.path[i] = raw[i];
        want_kind = MNC_UNIX_PATHNAME;
        want_canon = oracle_canonical(raw, n);
    }
    int canon = kind == MNC_UNIX_PATHNAME && mnc_unix_key_canonical(&b);
    int bad = kind != want_kind || memcmp(&b, &want, sizeof(want)) != 0 || canon != want_canon ||
              mnc_unix_path_canonical(raw, (__u32)n) != want_canon ||
              mnc_unix_refused(kind, 0, &b) !=
                  (want_kind == MNC_UNIX_EMPTY || (want_kind == MNC_UNIX_PATHNAME && !want_canon)) ||
              mnc_unix_refused(kind, 1, &b) != (want_kind == MNC_UNIX_EMPTY);
    if (bad) {
        char shown[4 * MNC_UNIX_PATH_MAX + 1];
        size_t j = 0;
        for (size_t i = 0; i < n; i++)
            j += (size_t)snprintf(shown + j, sizeof(shown) - j, raw[i] >= 0x20 && raw[i] < 0x7f ? "%c" : "\\%o",
                                  (unsigned char)raw[i]);
        print_error("\"%s\" (%zu bytes): kind %d (want %d), canonical %d (want %d)%s\n", shown, n, kind, want_kind,
                    canon, want_canon, memcmp(&b, &want, sizeof(want)) ? ", key differs" : "");
        fail();
    }
}

/* Every string of up to 7 characters over the characters that matter ('/', '.', NUL and one
 * other), at every offset that puts it across a word boundary, and random long ones. */
static void test_unix_key_build(void **state)
{
    (void)state;
    static const char alpha[] = {'/', '.', 'a', 0};
    char raw[MNC_UNIX_PATH_MAX];
    for (size_t len = 0; len <= 7; len++) {
        size_t total = 1;
        for (size_t i = 0; i < len; i++)
            total *= 4;
        for (size_t v = 0; v < total; v++) {
            char s[8];
            size_t x = v;
            for (size_t i = 0; i < len; i++, x /= 4)
                s[i] = alpha[x % 4];
            check_build(s, len);
            /* the same characters as the tail of "/" + 'b'... : components across words */
            for (size_t off = 1; off + len <= sizeof(raw); off += (off < 70 ? 1 : 13)) {
                memset(raw, 'b', off);
                raw[0] = '/';
                memcpy(raw + off, s, len);
                check_build(raw, off + len);
            }
        }
    }
    unsigned seed = 12345;
    for (int r = 0; r < 200000; r++) {
        size_t n = (seed = seed * 1103515245u + 12345u) >> 16;
        n %= sizeof(raw) + 1;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned c = (seed >> 16) % 16;
            raw[i] = c < 6 ? '/' : c < 11 ? '.' : c < 15 ? 'x' : (char)((seed >> 24) & 0xff);
        }
        if (n > 0 && r % 3)
            raw[0] = '/';
        check_build(raw, n);
    }
    char full[MNC_UNIX_PATH_MAX];
    memset(full, 'a', sizeof(full));
    full[0] = '/';
    check_build(full, sizeof(full)); /* 108 characters, no NUL: canonical */
    full[sizeof(full) - 1] = '/';
    check_build(full, sizeof(full)); /* trailing '/' at the last position */
    full[sizeof(full) - 2] = '/';
    full[sizeof(full) - 1] = '.';
    check_build(full, sizeof(full)); /* trailing "/." */
}

/* sock_unix's hash (mnc_unix_hkey): equal keys hash alike wherever the caller's bytes past
 * the address were; the words it mixes and the ones it skips; the comparison that settles a
 * shared hash. */
static void test_unix_key_hash(void **state)
{
    (void)state;
    union mnc_unix_buf a, b;
    memset(&a, 0x5a, sizeof(a));
    memset(&b, 0, sizeof(b));
    memcpy(a.key.path, "/run/x.sock", 11);
    memcpy(b.key.path, "/run/x.sock", 11);
    mnc_unix_key_build(&a, 11, SOCK_DGRAM);
    mnc_unix_key_build(&b, 11, SOCK_STREAM); /* a pathname's key has no type */
    assert_true(mnc_unix_key_hash(&a) == mnc_unix_key_hash(&b));
    assert_true(mnc_unix_key_same(&a, &b.key));
    /* every byte of a pathname counts, the last word's included */
    for (int i = 1; i < 11; i++) {
        b = a;
        b.key.path[i] ^= 1;
        assert_true(mnc_unix_key_hash(&a) != mnc_unix_key_hash(&b));
        assert_false(mnc_unix_key_same(&a, &b.key));
    }
    char full[MNC_UNIX_PATH_MAX];
    memset(full, 'a', sizeof(full));
    full[0] = '/';
    memset(&a, 0, sizeof(a));
    memcpy(a.key.path, full, sizeof(full));
    mnc_unix_key_build(&a, sizeof(full), 0);
    b = a;
    b.key.path[MNC_UNIX_PATH_MAX - 1] = 'b';
    assert_true(mnc_unix_key_hash(&a) != mnc_unix_key_hash(&b));
    /* an abstract name: its length and type count (word 13) unless a zero word comes first */
    memset(&a, 0, sizeof(a));
    a.key.path[1] = 'n';
    mnc_unix_key_build(&a, 2, SOCK_DGRAM);
    b = a;
    b.key.type = SOCK_STREAM;
    assert_false(mnc_unix_key_same(&a, &b.key));
    assert_true(mnc_unix_key_hash(&a) == mnc_unix_key_hash(&b)); /* word 1 is zero: skipped */
    memset(&a, 'x', sizeof(a));
    a.key.path[0] = 0;
    mnc_unix_key_build(&a, MNC_UNIX_PATH_MAX, SOCK_DGRAM);
    b = a;
    b.key.type = SOCK_STREAM;
    assert_true(mnc_unix_key_hash(&a) != mnc_unix_key_hash(&b)); /* no zero word: all mixed */
}

/* The pinned maps' layouts: changing any of these needs MNC_ABI_VERSION bumped. */
static void test_layouts(void **state)
{
    (void)state;
    assert_int_equal(MNC_ABI_VERSION, 9); /* 9: principals, file_labels, deny_label */
    assert_int_equal(MNC_K__COUNT, 24);
    assert_int_equal(sizeof(struct mnc_bind), 80);
    assert_int_equal(offsetof(struct mnc_bind, epoch), 72);
    assert_int_equal(sizeof(struct mnc_label), 48);
    assert_int_equal(offsetof(struct mnc_label, may_log), 32);
    assert_int_equal(offsetof(struct mnc_label, gen), 40);
    assert_int_equal(sizeof(struct mnc_agent_key), 8);
    assert_int_equal(sizeof(struct mnc_agent), 8);
    assert_int_equal(sizeof(struct mnc_taint), 48);
    assert_int_equal(offsetof(struct mnc_taint, may_log), 32);
    assert_int_equal(offsetof(struct mnc_taint, generation), 40);
    assert_int_equal(sizeof(struct mnc_unix_key), 112);
    assert_int_equal(offsetof(struct mnc_unix_key, alen), MNC_UNIX_PATH_MAX);
    assert_int_equal(offsetof(struct mnc_unix_key, type), MNC_UNIX_PATH_MAX + 2);
    assert_int_equal(sizeof(struct mnc_unix_hkey), 8);
    assert_int_equal(sizeof(struct mnc_unix_sink), 120);
    assert_int_equal(offsetof(struct mnc_unix_sink, key) % 8, 0); /* compared as words */
    assert_int_equal(sizeof(struct mnc_inet_key), 20);
    assert_int_equal(sizeof(struct mnc_sink), 8);
    assert_int_equal(sizeof(((struct mnc_sink *)0)->cls), 4); /* fixed width, not an enum */
    assert_int_equal(sizeof(struct mnc_file_key), 16);
    assert_int_equal(sizeof(struct mnc_name), 68);
    assert_int_equal(sizeof(struct mnc_event) % 8, 0);
    assert_int_equal(offsetof(struct mnc_event, path) + MNC_UNIX_PATH_MAX, offsetof(struct mnc_event, comm));
}

static void test_keys(void **state)
{
    (void)state;
    struct mnc_inet_key k;
    assert_int_equal(mnc_kern_inet_key("127.0.0.1:9000", &k), 0);
    assert_int_equal(k.family, AF_INET);
    assert_int_equal(k.port, 9000);
    assert_int_equal(k.addr[0], 127);
    assert_int_equal(k.addr[3], 1);
    assert_int_equal(k.addr[4], 0);
    assert_int_equal(mnc_kern_inet_key("[::1]:53", &k), 0);
    assert_int_equal(k.family, AF_INET6);
    assert_int_equal(k.addr[15], 1);
    assert_int_equal(mnc_kern_inet_key("[::ffff:10.0.0.2]:80", &k), 0); /* mapped -> IPv4 key */
    assert_int_equal(k.family, AF_INET);
    assert_int_equal(k.addr[0], 10);
    assert_int_equal(mnc_kern_inet_key("0.0.0.0:0", &k), 0);
    const char *bad[] = {"",       "1.2.3.4", "1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:-1", "1.2.3:80",
                         "::1:80", "[::1]80", "[::1]:",   "host:80",       "1.2.3.4:80x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (mnc_kern_inet_key(bad[i], &k) != -EINVAL) {
            print_error("accepted \"%s\"\n", bad[i]);
            fail();
        }
    struct mnc_unix_key u;
    assert_int_equal(mnc_kern_unix_key("/run/mnc/mncd.sock", &u), 0);
    assert_string_equal(u.path, "/run/mnc/mncd.sock");
    assert_int_equal(u.alen, 0);
    assert_int_equal(u.type, 0);
    assert_int_equal(mnc_kern_unix_key("dgram:@abstract", &u), 0);
    assert_int_equal(u.alen, 9); /* "\0abstract": the name with its leading NUL */
    assert_int_equal(u.type, SOCK_DGRAM);
    assert_int_equal(memcmp(u.path, "@abstract", 10), 0);
    assert_int_equal(mnc_kern_unix_key("stream:@abstract", &u), 0);
    assert_int_equal(u.type, SOCK_STREAM);
    assert_int_equal(mnc_kern_unix_key("seqpacket:@abstract", &u), 0);
    assert_int_equal(u.type, SOCK_SEQPACKET);
    /* an abstract name without its type, a type on a pathname, an unknown type: refused */
    assert_int_equal(mnc_kern_unix_key("@abstract", &u), -EINVAL);
    assert_int_equal(mnc_kern_unix_key("stream:/run/x.sock", &u), -EINVAL);
    assert_int_equal(mnc_kern_unix_key("raw:@abstract", &u), -EINVAL);
    assert_int_equal(mnc_kern_unix_key("stream:@", &u), -EINVAL);
    assert_int_equal(mnc_kern_unix_key("relative.sock", &u), -EINVAL);
    assert_int_equal(mnc_kern_unix_key("/a//b", &u), -EINVAL);
    assert_int_equal(mnc_kern_unix_key("@", &u), -EINVAL);
    char longp[200];
    memset(longp, 'a', sizeof(longp));
    longp[0] = '/';
    longp[sizeof(longp) - 1] = 0;
    assert_int_equal(mnc_kern_unix_key(longp, &u), -EINVAL);
    assert_int_equal(mnc_sink_class_parse("log"), MNC_SINK_LOG);
    assert_int_equal(mnc_sink_class_parse("none"), -EINVAL);
    assert_string_equal(mnc_kreason_name(MNC_K_DENY_EXTERNAL), "deny_external");
    assert_string_equal(mnc_kreason_name(999), "?");
    /* walk-depth denials have their own code and name (not deny_bad_class) */
    assert_int_not_equal(MNC_K_DENY_WALK_DEPTH, MNC_K_DENY_BAD_CLASS);
    assert_false(mnc_kreason_allows(MNC_K_DENY_WALK_DEPTH));
    assert_string_equal(mnc_kreason_name(MNC_K_DENY_WALK_DEPTH), "deny_walk_depth");
    assert_string_equal(mnc_kreason_name(MNC_K_DENY_BAD_CLASS), "deny_bad_class");
    for (unsigned r = 0; r < MNC_K__COUNT; r++)
        if (r < 5 || r >= MNC_K_DENY_FIRST) /* 5..7 are unused */
            assert_string_not_equal(mnc_kreason_name(r), "?");
}

static void test_event_json(void **state)
{
    (void)state;
    struct mnc_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.reason = MNC_K_DENY_EXTERNAL;
    ev.hook = MNC_HOOK_CONNECT_UNIX;
    ev.family = AF_UNIX;
    ev.agent_id = 3;
    ev.dst_id = MNC_ID_NONE;
    ev.dst_class = MNC_SINK_EXTERNAL;
    snprintf(ev.path, sizeof(ev.path), "/tmp/a\"b");
    snprintf(ev.comm, sizeof(ev.comm), "py\n");
    char buf[2048];
    int n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    assert_non_null(strstr(buf, "\"reason\":\"deny_external\""));
    assert_non_null(strstr(buf, "\"hook\":\"connect_unix\""));
    assert_non_null(strstr(buf, "\"path\":\"/tmp/a\\\"b\""));
    assert_non_null(strstr(buf, "\"comm\":\"py\\u000a\""));
    assert_non_null(strstr(buf, "\"dst_id\":-1"));
    /* an abstract name is shown with all its bytes: "\0name\0" is not "\0name" */
    memset(ev.path, 0, sizeof(ev.path));
    memcpy(ev.path, "@name", 5);
    ev.path_alen = 6;
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    assert_non_null(strstr(buf, "\"path\":\"@name\\u0000\""));
    ev.path_alen = 5;
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    assert_non_null(strstr(buf, "\"path\":\"@name\""));
    ev.path_alen = 0; /* a pathname: up to its NUL */
    ev.path[0] = '/';
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"path\":\"/name\""));
    /* lsm hooks by name; file hooks name the file, not an address */
    memset(&ev, 0, sizeof(ev));
    ev.hook = MNC_HOOK_LSM_FILE_RECEIVE;
    ev.reason = MNC_K_DENY_EXTERNAL;
    ev.dst_class = MNC_SINK_EXTERNAL;
    ev.dst_id = MNC_ID_NONE;
    uint64_t dev = makedev(8, 1), ino = 4242;
    memcpy(ev.addr, &dev, 8);
    memcpy(ev.addr + 8, &ino, 8);
    snprintf(ev.path, sizeof(ev.path), "given.out");
    ev.port = 0010; /* S_IFREG >> 12 */
    ev.protocol = 1;
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    assert_non_null(strstr(buf, "\"hook\":\"file_receive\""));
    assert_non_null(strstr(buf, "\"dev\":\"8:1\",\"ino\":4242,\"name\":\"given.out\""));
    assert_non_null(strstr(buf, "\"file_type\":\"regular\",\"writable\":true"));
    assert_null(strstr(buf, "\"addr\""));
    ev.port = 0001; /* a pipe */
    ev.protocol = 0;
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"file_type\":\"fifo\",\"writable\":false"));
    ev.hook = MNC_HOOK_LSM_FILE_PERMISSION;
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"hook\":\"file_permission\""));
    assert_non_null(strstr(buf, "\"ino\":4242"));
    assert_null(strstr(buf, "\"file_type\""));
    ev.hook = MNC_HOOK_LSM_TASK_KILL;
    n = mnc_kern_event_json(&ev, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"hook\":\"task_kill\""));
}

/* fds a tainted agent may receive: sockets, and read-only regular files or directories */
/* The control-message walk matches the C library's own (CMSG_FIRSTHDR/CMSG_NXTHDR) on real
 * control buffers, and stops on malformed lengths as the kernel refuses them. */
static void test_cmsg_walk(void **state)
{
    (void)state;
    assert_int_equal(MNC_CMSG_HDR, sizeof(struct cmsghdr));
    assert_int_equal(MNC_SOL_SOCKET, SOL_SOCKET);
    assert_int_equal(MNC_SCM_RIGHTS, SCM_RIGHTS);
    /* credentials, then 3 fds, then 1 fd: three headers */
    union {
        char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(3 * sizeof(int)) + CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr m = {.msg_control = u.b, .msg_controllen = sizeof(u.b)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    size_t lens[3] = {CMSG_LEN(sizeof(struct ucred)), CMSG_LEN(3 * sizeof(int)), CMSG_LEN(sizeof(int))};
    for (int i = 0; i < 3; i++, h = CMSG_NXTHDR(&m, h)) {
        assert_non_null(h);
        h->cmsg_len = lens[i];
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = i == 0 ? SCM_CREDENTIALS : SCM_RIGHTS;
    }
    __u64 off = 0;
    int n = 0;
    for (h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h), n++) {
        assert_int_equal(off, (char *)h - u.b);
        off = mnc_cmsg_next(h->cmsg_len, off, m.msg_controllen);
    }
    assert_int_equal(n, 3);
    assert_int_equal(off, 0); /* none after the last */
    /* malformed: shorter than a header, longer than what is left, offset past the end */
    assert_int_equal(mnc_cmsg_next(8, 0, 64), 0);
    assert_int_equal(mnc_cmsg_next(72, 0, 64), 0);
    assert_int_equal(mnc_cmsg_next(16, 80, 64), 0);
    /* a header that ends exactly where the buffer does has no next; 8-byte alignment */
    assert_int_equal(mnc_cmsg_next(16, 0, 16), 0);
    assert_int_equal(mnc_cmsg_next(20, 0, 40), 24);
    assert_int_equal(mnc_cmsg_next(20, 0, 39), 0);
}

static void test_fds_out_verdict(void **state)
{
    (void)state;
    assert_int_equal(mnc_fds_out_verdict(77, 77), MNC_K_ALLOW_OWN_FDS);
    assert_true(mnc_kreason_allows(MNC_K_ALLOW_OWN_FDS));
    assert_int_equal(mnc_fds_out_verdict(77, 78), MNC_K_DENY_FDS_OUT);
    assert_int_equal(mnc_fds_out_verdict(77, 0), MNC_K_DENY_FDS_OUT); /* peer unknown */
    assert_int_equal(mnc_fds_out_verdict(0, 0), MNC_K_DENY_FDS_OUT);
    assert_false(mnc_kreason_allows(MNC_K_DENY_FDS_OUT));
    assert_string_equal(mnc_kreason_name(MNC_K_DENY_FDS_OUT), "deny_fds_out");
    assert_string_equal(mnc_kreason_name(MNC_K_ALLOW_OWN_FDS), "allow_own_fds");
}

/* Options by their libc names: the switch list in mnc_abi.h is written in numbers (BPF has no
 * libc headers), so a wrong number there shows here. */
static void test_sockopt_verdict(void **state)
{
    (void)state;
    struct mnc_taint clean = {.tainted = 0}, held = {.tainted = 1};
    static const int allowed[][2] = {
        {SOL_SOCKET, SO_REUSEADDR},    {SOL_SOCKET, SO_BROADCAST},    {SOL_SOCKET, SO_KEEPALIVE},
        {SOL_SOCKET, SO_REUSEPORT},    {SOL_SOCKET, SO_RCVTIMEO_OLD}, {SOL_SOCKET, SO_SNDTIMEO_OLD},
        {SOL_SOCKET, SO_RCVTIMEO_NEW}, {SOL_SOCKET, SO_SNDTIMEO_NEW}, {IPPROTO_TCP, TCP_NODELAY},
        {IPPROTO_IPV6, IPV6_V6ONLY},
    };
    /* what sock_diag or /proc/net reports back, and the levels never allowed after the taint */
    static const int refused[][2] = {
        {IPPROTO_IP, IP_RECVERR}, /* the error queue counts in rx_queue (udp_errqueue_self_source) */
        {IPPROTO_IPV6, IPV6_RECVERR},
        {SOL_SOCKET, SO_INCOMING_CPU}, /* a lookup tie-breaker (udp_broadcast_self_peer) */
        {SOL_SOCKET, SO_SNDBUF},
        {SOL_SOCKET, SO_RCVBUF},
        {SOL_SOCKET, SO_SNDBUFFORCE},
        {SOL_SOCKET, SO_MAX_PACING_RATE},
        {SOL_SOCKET, SO_PRIORITY},
        {SOL_SOCKET, SO_LINGER},
        {SOL_SOCKET, SO_MARK},
        {SOL_SOCKET, SO_RCVLOWAT},
        {IPPROTO_IP, IP_TOS},
        {IPPROTO_IP, IP_TTL},
        {IPPROTO_IPV6, IPV6_TCLASS},
        {IPPROTO_TCP, TCP_MAXSEG},
        {IPPROTO_TCP, TCP_KEEPIDLE},
        {IPPROTO_TCP, TCP_KEEPINTVL},
        {IPPROTO_TCP, TCP_KEEPCNT},
        {IPPROTO_TCP, TCP_CONGESTION},
        {IPPROTO_TCP, TCP_NOTSENT_LOWAT},
        {IPPROTO_TCP, TCP_USER_TIMEOUT},
        {IPPROTO_TCP, TCP_WINDOW_CLAMP},
        {IPPROTO_UDP, 1 /* UDP_CORK */},
        {SOL_SOCKET + 1000, SO_REUSEADDR},
        {IPPROTO_TCP, SO_REUSEADDR /* 2 = TCP_MAXSEG: the level matters */},
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        assert_int_equal(mnc_sockopt_verdict(&held, allowed[i][0], allowed[i][1]), MNC_K_ALLOW_SCOPE);
        assert_int_equal(mnc_sockopt_verdict(&clean, allowed[i][0], allowed[i][1]), MNC_K_ALLOW_UNTAINTED);
    }
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        assert_int_equal(mnc_sockopt_verdict(&held, refused[i][0], refused[i][1]), MNC_K_DENY_SOCKOPT);
        assert_int_equal(mnc_sockopt_verdict(&clean, refused[i][0], refused[i][1]), MNC_K_ALLOW_UNTAINTED);
    }
    assert_int_equal(mnc_sockopt_verdict(NULL, SOL_SOCKET, SO_REUSEADDR), MNC_K_DENY_NO_TAINT);
    assert_false(mnc_kreason_allows(MNC_K_DENY_SOCKOPT));
    assert_string_equal(mnc_kreason_name(MNC_K_DENY_SOCKOPT), "deny_sockopt");
    assert_string_equal(mnc_hook_name(MNC_HOOK_SETSOCKOPT), "setsockopt");
    assert_string_equal(mnc_hook_name(MNC_HOOK_LSM_SOCKET_SETSOCKOPT), "socket_setsockopt");
}

/* file locks: an untainted agent locks freely; a tainted one takes, changes and drops none; no
 * taint entry fails closed */
static void test_lock_verdict(void **state)
{
    (void)state;
    struct mnc_taint clean = {.tainted = 0}, held = {.tainted = 1, .may_log = 1, .may_memory = 1};
    assert_int_equal(mnc_lock_verdict(&clean), MNC_K_ALLOW_UNTAINTED);
    assert_int_equal(mnc_lock_verdict(&held), MNC_K_DENY_LOCK);
    assert_int_equal(mnc_lock_verdict(NULL), MNC_K_DENY_NO_TAINT);
    assert_true(mnc_kreason_allows(mnc_lock_verdict(&clean)));
    assert_false(mnc_kreason_allows(MNC_K_DENY_LOCK));
    assert_string_equal(mnc_kreason_name(MNC_K_DENY_LOCK), "deny_lock");
    assert_string_equal(mnc_hook_name(MNC_HOOK_LSM_FILE_LOCK), "file_lock");
}

static void test_receive_harmless(void **state)
{
    (void)state;
    static const struct {
        unsigned mode;
        int writable, harmless;
    } c[] = {
        {S_IFSOCK | 0777, 1, 1},
        {S_IFSOCK, 0, 1},
        {S_IFREG | 0644, 0, 1},
        {S_IFDIR | 0755, 0, 1},
        {S_IFREG | 0644, 1, 0},
        {S_IFDIR, 1, 0},
        {S_IFIFO | 0600, 0, 0},
        {S_IFIFO | 0600, 1, 0},
        {S_IFCHR | 0666, 0, 0},
        {S_IFBLK | 0660, 0, 0},
        {S_IFLNK | 0777, 0, 0},
        {0600, 1, 0},
        {0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        assert_int_equal(mnc_receive_harmless(c[i].mode, c[i].writable), c[i].harmless);
    /* the ABI's constants are the kernel's */
    assert_int_equal(MNC_S_IFMT, S_IFMT);
    assert_int_equal(MNC_S_IFSOCK, S_IFSOCK);
    assert_int_equal(MNC_S_IFREG, S_IFREG);
    assert_int_equal(MNC_S_IFDIR, S_IFDIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_exhaustive), cmocka_unit_test(test_decide_reasons),
        cmocka_unit_test(test_set_layout),        cmocka_unit_test(test_path_canonical),
        cmocka_unit_test(test_unix_key_build),    cmocka_unit_test(test_unix_key_hash),
        cmocka_unit_test(test_layouts),           cmocka_unit_test(test_keys),
        cmocka_unit_test(test_event_json),        cmocka_unit_test(test_receive_harmless),
        cmocka_unit_test(test_cmsg_walk),         cmocka_unit_test(test_fds_out_verdict),
        cmocka_unit_test(test_sockopt_verdict),   cmocka_unit_test(test_lock_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
