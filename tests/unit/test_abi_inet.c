// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_abi_inet.c - IP destinations in the ABI (mnc_abi.h): the IPv4-mapped normalisation
 * (mnc_inet_key_set6) and the sock_inet lookup order (mnc_inet_lookup_key), both written once
 * and compiled into the BPF hooks and into user space. The user-space lookup mncd's sweep uses
 * (mnc_inet_sink_lookup) runs against a real kernel hash map filled from a table, and every
 * query's answer is compared with the table of cases below, as test_abi does for mnc_decide.
 * Needs CAP_BPF (make test runs as root); a missing capability fails, it never skips. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "mnc_abi.h"
#include "mnc_kern.h"

/* "1.2.3.4" or an IPv6 literal, and a port -> a normalised key (as the hooks build it). */
static struct mnc_inet_key key_of(const char *addr, unsigned port)
{
    struct mnc_inet_key k;
    memset(&k, 0, sizeof(k));
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1) {
        k.family = MNC_AF_INET;
        memcpy(k.addr, &a4, 4);
    } else {
        assert_int_equal(inet_pton(AF_INET6, addr, &a6), 1);
        mnc_inet_key_set6(&k, a6.s6_addr);
    }
    k.port = (__u16)port;
    return k;
}

/* ---- the normalisation */

static const struct {
    const char *v6;
    int v4;            /* expected family: 1 IPv4, 0 IPv6 */
    const char *as_v4; /* the IPv4 address it becomes */
} norm_cases[] = {
    {"::ffff:10.0.0.1", 1, "10.0.0.1"},
    {"::ffff:127.0.0.1", 1, "127.0.0.1"},
    {"::ffff:0.0.0.0", 1, "0.0.0.0"},
    {"::ffff:255.255.255.255", 1, "255.255.255.255"},
    {"::1", 0, NULL},
    {"::", 0, NULL},
    {"::fffe:10.0.0.1", 0, NULL},   /* not the mapped prefix */
    {"::1:ffff:10.0.0.1", 0, NULL}, /* a non-zero byte before ffff */
    {"64:ff9b::10.0.0.1", 0, NULL}, /* NAT64 is not IPv4-mapped */
    {"::10.0.0.1", 0, NULL},        /* IPv4-compatible (deprecated): not mapped either */
    {"fe80::1", 0, NULL},
    {"ffff::ffff:10.0.0.1", 0, NULL},
};

static void t_normalise(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(norm_cases) / sizeof(norm_cases[0]); i++) {
        struct in6_addr a6;
        assert_int_equal(inet_pton(AF_INET6, norm_cases[i].v6, &a6), 1);
        struct mnc_inet_key k;
        memset(&k, 0xa5, sizeof(k)); /* every byte must be written */
        k.port = 4242;
        mnc_inet_key_set6(&k, a6.s6_addr);
        assert_int_equal(k.port, 4242); /* the port is the caller's */
        assert_int_equal(mnc_ipv6_is_v4mapped(a6.s6_addr), norm_cases[i].v4);
        if (norm_cases[i].v4) {
            struct in_addr a4;
            assert_int_equal(inet_pton(AF_INET, norm_cases[i].as_v4, &a4), 1);
            unsigned char want[16] = {0};
            memcpy(want, &a4, 4);
            if (k.family != MNC_AF_INET || memcmp(k.addr, want, 16) != 0) {
                print_error("%s: not normalised to IPv4 %s\n", norm_cases[i].v6, norm_cases[i].as_v4);
                fail();
            }
        } else if (k.family != MNC_AF_INET6 || memcmp(k.addr, a6.s6_addr, 16) != 0) {
            print_error("%s: should stay IPv6, unchanged\n", norm_cases[i].v6);
            fail();
        }
    }
}

/* ---- the lookup order */

/* What the policy registered: one map entry each (id = the sink). */
static const struct {
    const char *addr;
    unsigned port;
    unsigned id, cls;
} sinks[] = {
    {"10.0.0.1", 80, 1, MNC_SINK_AGENT},                                           /* exact */
    {"10.0.0.1", 0, 2, MNC_SINK_TOOL},                                             /* the whole host */
    {"0.0.0.0", 443, 3, MNC_SINK_EXTERNAL},                                        /* port 443 on every IPv4 address */
    {"::1", 8080, 4, MNC_SINK_AGENT},       {"::", 53, 5, MNC_SINK_TOOL},          /* port 53 on every IPv6 address */
    {"2001:db8::7", 0, 6, MNC_SINK_LOG},    {"10.0.0.9", 443, 7, MNC_SINK_MEMORY}, /* exact beats the any-address 443 */
};

#define NONE 0u /* -ENOENT: unregistered, the hooks treat it as external */

/* Queries and the sink that must answer, by the order exact > whole host > port on any address. */
static const struct {
    const char *addr;
    unsigned port;
    unsigned want; /* sink id, or NONE */
} lookups[] = {
    {"10.0.0.1", 80, 1},  /* exact */
    {"10.0.0.1", 81, 2},  /* whole host */
    {"10.0.0.1", 443, 2}, /* whole host beats port-on-any-address */
    {"10.0.0.1", 0, 2},   /* port 0: step 0 already is the whole-host key */
    {"10.0.0.2", 443, 3}, /* port on any address */
    {"10.0.0.9", 443, 7}, /* exact beats port-on-any-address */
    {"10.0.0.9", 444, NONE},
    {"10.0.0.2", 80, NONE},
    {"::ffff:10.0.0.1", 80, 1}, /* IPv4-mapped: the IPv4 entries answer */
    {"::ffff:10.0.0.3", 443, 3},
    {"::1", 8080, 4},
    {"::1", 443, NONE}, /* the IPv4 any-address entry is not IPv6's */
    {"::2", 53, 5},
    {"2001:db8::7", 9, 6}, /* whole IPv6 host */
    {"2001:db8::8", 9, NONE},
    {"0.0.0.0", 443, 3},
    {"127.0.0.1", 53, NONE}, /* the IPv6 any-address entry is not IPv4's */
};

/* the loopback peer shortcut (cgroup_skb) only for unicast loopback addresses */
static void t_loopback_unicast(void **state)
{
    (void)state;
    static const struct {
        const char *addr;
        int want;
    } cases[] = {
        {"127.0.0.1", 1},
        {"127.1.2.3", 1},
        {"127.255.255.254", 1},
        {"127.255.255.255", 0},
        {"127.0.0.0", 0},
        {"127.10.0.255", 0},
        {"10.0.0.1", 0},
        {"224.0.0.1", 0},
        {"255.255.255.255", 0},
        {"0.0.0.0", 0},
        {"::1", 1},
        {"::", 0},
        {"ff02::1", 0},
        {"::ffff:127.0.0.1", 1},
        {"::ffff:127.255.255.255", 0},
        {"fe80::1", 0},
        {"::2", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mnc_inet_key k;
        memset(&k, 0, sizeof(k));
        unsigned char a6[16];
        if (strchr(cases[i].addr, ':')) {
            assert_int_equal(inet_pton(AF_INET6, cases[i].addr, a6), 1);
            mnc_inet_key_set6(&k, a6); /* v4-mapped becomes IPv4, as every hook does */
        } else {
            k.family = AF_INET;
            assert_int_equal(inet_pton(AF_INET, cases[i].addr, k.addr), 1);
        }
        if (mnc_inet_loopback_unicast(&k) != cases[i].want)
            fail_msg("%s: want %d", cases[i].addr, cases[i].want);
    }
}

/* the sender mark of loopback packets: round trip, ids too large are not marked, foreign marks
 * (0, another tag) name no agent */
static void t_skb_mark(void **state)
{
    (void)state;
    __u32 id = 77;
    static const __u32 ids[] = {0, 1, 2, 4242, 0xffff};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        __u32 m = mnc_skb_mark_of(ids[i]);
        assert_int_equal(mnc_skb_mark_agent(m, &id), 1);
        assert_int_equal(id, ids[i]);
    }
    assert_int_equal(mnc_skb_mark_of(0x10000), 0);
    assert_int_equal(mnc_skb_mark_of(MNC_SELFTEST_AGENT_BASE | 5), 0);
    id = 77;
    assert_int_equal(mnc_skb_mark_agent(0, &id), 0);
    assert_int_equal(mnc_skb_mark_agent(0x12340001, &id), 0);
    assert_int_equal(mnc_skb_mark_agent(0xffffffff, &id), 0);
    assert_int_equal(id, 77);
}

static void t_lookup_order(void **state)
{
    (void)state;
    int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_sock_inet", sizeof(struct mnc_inet_key), sizeof(struct mnc_sink), 64,
                            NULL);
    if (fd < 0) {
        print_error("bpf_map_create: %s (needs CAP_BPF: run as root)\n", strerror(errno));
        fail();
    }
    for (size_t i = 0; i < sizeof(sinks) / sizeof(sinks[0]); i++) {
        struct mnc_inet_key k = key_of(sinks[i].addr, sinks[i].port);
        struct mnc_sink v = {.id = sinks[i].id, .cls = sinks[i].cls};
        assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
    }
    for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
        struct mnc_inet_key k = key_of(lookups[i].addr, lookups[i].port);
        struct mnc_sink got = {0, 0};
        int rc = mnc_inet_sink_lookup(fd, &k, &got);
        unsigned id = rc == 0 ? got.id : NONE;
        if (rc != 0 && rc != -ENOENT) {
            print_error("%s:%u: lookup failed: %s\n", lookups[i].addr, lookups[i].port, strerror(-rc));
            fail();
        }
        if (id != lookups[i].want) {
            print_error("%s:%u: answered by sink %u, want %u\n", lookups[i].addr, lookups[i].port, id, lookups[i].want);
            fail();
        }
        if (rc == 0)
            for (size_t j = 0; j < sizeof(sinks) / sizeof(sinks[0]); j++)
                if (sinks[j].id == got.id)
                    assert_int_equal(got.cls, sinks[j].cls);
    }
    close(fd);
}

/* The steps themselves: which keys, in which order, and that step 1 is skipped for port 0. */
static void t_lookup_steps(void **state)
{
    (void)state;
    struct mnc_inet_key k = key_of("10.1.2.3", 8443), q;
    assert_int_equal(mnc_inet_lookup_key(&k, 0, &q), 1);
    assert_memory_equal(&q, &k, sizeof(k));
    assert_int_equal(mnc_inet_lookup_key(&k, 1, &q), 1);
    assert_int_equal(q.port, 0);
    assert_memory_equal(q.addr, k.addr, 16);
    assert_int_equal(mnc_inet_lookup_key(&k, 2, &q), 1);
    assert_int_equal(q.port, 8443);
    assert_int_equal(q.family, MNC_AF_INET);
    static const unsigned char zero[16];
    assert_memory_equal(q.addr, zero, 16);
    assert_int_equal(mnc_inet_lookup_key(&k, 3, &q), 0);
    assert_int_equal(mnc_inet_lookup_key(&k, -1, &q), 0);
    k.port = 0;
    assert_int_equal(mnc_inet_lookup_key(&k, 1, &q), 0);
    assert_int_equal(MNC_INET_LOOKUP_STEPS, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_normalise),        cmocka_unit_test(t_lookup_steps), cmocka_unit_test(t_lookup_order),
        cmocka_unit_test(t_loopback_unicast), cmocka_unit_test(t_skb_mark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
