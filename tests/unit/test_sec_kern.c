// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_sec_kern.c - the loader refuses pinned maps whose layout is not this build's.
 *
 * A pin root is found by path: maps left there by another build (or planted) are opened by
 * name. Before this check, mnc_kern_open read the settings map (and later the taint map) into
 * this build's structs whatever the pinned value size was: a larger value was copied past the
 * end of the caller's struct by the kernel, a smaller one was taken as garbage. Each case pins
 * a full set of maps under a private root, one of them with a wrong layout, and expects a
 * refusal that names the map. Needs root and bpffs (the real kernel; no mocks). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "fixture.h"
#include "mnc_abi.h"
#include "mnc_kern.h"

struct spec {
    const char *name;
    enum bpf_map_type type;
    __u32 key, value, max;
};

static const struct spec good[] = {
    {"agents", BPF_MAP_TYPE_HASH, sizeof(struct mnc_agent_key), sizeof(struct mnc_agent), 16},
    {"taint", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_taint), 16},
    {"sock_unix", BPF_MAP_TYPE_HASH, sizeof(struct mnc_unix_hkey), sizeof(struct mnc_unix_sink), 16},
    {"sock_inet", BPF_MAP_TYPE_HASH, sizeof(struct mnc_inet_key), sizeof(struct mnc_sink), 16},
    {"file_sinks", BPF_MAP_TYPE_HASH, sizeof(struct mnc_file_key), sizeof(struct mnc_sink), 16},
    {"names", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_name), 16},
    {"settings", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct mnc_config), 1},
    {"counters", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(__u64), MNC_K__COUNT},
    {"events", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096},
    {"principals", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct mnc_bind), 16},
};
#define N_SPEC (sizeof(good) / sizeof(good[0]))

static char root[128];

static void purge(void)
{
    char p[256];
    for (size_t i = 0; i < N_SPEC; i++) {
        snprintf(p, sizeof(p), "%s/%s", root, good[i].name);
        unlink(p);
    }
    rmdir(root);
}

/* Pins the full set; map `bad` (or none) gets value size `bad_value`. 0 or -errno. */
static int pin_set(const char *bad, __u32 bad_value)
{
    purge();
    if (mkdir(root, 0700) != 0)
        return -errno;
    for (size_t i = 0; i < N_SPEC; i++) {
        __u32 v = bad && strcmp(bad, good[i].name) == 0 ? bad_value : good[i].value;
        int fd = bpf_map_create(good[i].type, good[i].name, good[i].key, v, good[i].max, NULL);
        if (fd < 0)
            return -errno;
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", root, good[i].name);
        int rc = bpf_obj_pin(fd, p);
        int e = errno;
        close(fd);
        if (rc != 0)
            return -e;
    }
    return 0;
}

/* Pins the full set with the right layouts under a private root and opens it: the right layout
 * opens (settings all zero: no tree recorded yet). Skips without root. */
static mnc_kern *open_good_set(void)
{
    if (geteuid() != 0) {
        print_message("SKIP: needs root to create and pin BPF maps\n");
        skip();
    }
    snprintf(root, sizeof(root), "/sys/fs/bpf/mnc-sec-unit-%d", (int)getpid());
    char err[512];
    mnc_kern *k = NULL;
    int rc = pin_set(NULL, 0);
    if (rc != 0) {
        print_message("cannot pin maps under %s: %s\n", root, strerror(-rc));
        purge();
        fail();
    }
    assert_int_equal(mnc_kern_open(root, &k, err, sizeof(err)), 0);
    return k;
}

static void t_layout(void **state)
{
    (void)state;
    char err[512];
    mnc_kern *k = open_good_set();
    mnc_kern_close(k);
    int rc;

    static const struct {
        const char *map;
        __u32 value;
    } bad[] = {
        {"settings", sizeof(struct mnc_config) + 64}, /* read before the ABI check: overflow */
        {"settings", 8},
        {"taint", sizeof(struct mnc_taint) + 8},
        {"taint", sizeof(struct mnc_taint) - 8},
        {"agents", 4},
        {"names", sizeof(struct mnc_name) * 2},
        {"sock_unix", sizeof(struct mnc_sink)}, /* ABI 7's value: a sink without its key */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rc = pin_set(bad[i].map, bad[i].value);
        if (rc != 0) {
            print_message("cannot pin maps under %s: %s\n", root, strerror(-rc));
            purge();
            fail();
        }
        k = NULL;
        err[0] = 0;
        rc = mnc_kern_open(root, &k, err, sizeof(err));
        if (rc == 0) {
            print_message("map %s with value size %u was accepted\n", bad[i].map, bad[i].value);
            mnc_kern_close(k);
            purge();
            fail();
        }
        assert_int_equal(rc, -EPROTO);
        assert_non_null(strstr(err, bad[i].map));
    }
    purge();
}

/* sock_unix keyed by hash (mnc_unix_hkey): a registered path is found, updated and removed by
 * its own key; an entry of another key under the same hash (planted here, as a collision would
 * leave it) is neither found for the path, nor overwritten, nor removed through it. */
static void t_unix_hash(void **state)
{
    (void)state;
    char p[256];
    mnc_kern *k = open_good_set();
    snprintf(p, sizeof(p), "%s/sock_unix", root);
    int fd = bpf_obj_get(p);
    assert_true(fd >= 0);

    union mnc_unix_buf b;
    memset(&b, 0, sizeof(b));
    assert_int_equal(mnc_kern_unix_key("/run/peer.sock", &b.key), 0);
    struct mnc_sink got;
    assert_int_equal(mnc_unix_sink_lookup(fd, &b, &got), -ENOENT);
    assert_int_equal(mnc_kern_sink_unix_add(k, "/run/peer.sock", 3, MNC_SINK_AGENT), 0);
    assert_int_equal(mnc_unix_sink_lookup(fd, &b, &got), 0);
    assert_int_equal(got.id, 3);
    assert_int_equal(got.cls, MNC_SINK_AGENT);
    struct mnc_unix_hkey hk = {.hash = mnc_unix_key_hash(&b)};
    struct mnc_unix_sink v;
    assert_int_equal(bpf_map_lookup_elem(fd, &hk, &v), 0); /* stored under its hash, key and all */
    assert_string_equal(v.key.path, "/run/peer.sock");
    assert_int_equal(mnc_kern_sink_unix_add(k, "/run/peer.sock", 4, MNC_SINK_TOOL), 0); /* relabel */
    assert_int_equal(mnc_unix_sink_lookup(fd, &b, &got), 0);
    assert_int_equal(got.id, 4);
    assert_int_equal(mnc_kern_sink_unix_del(k, "/run/peer.sock"), 0);
    assert_int_equal(mnc_unix_sink_lookup(fd, &b, &got), -ENOENT);
    assert_int_equal(mnc_kern_sink_unix_del(k, "/run/peer.sock"), -ENOENT);

    /* a collision: another key stored under /run/peer.sock's hash */
    struct mnc_unix_sink other = {.sink = {.id = 9, .cls = MNC_SINK_LOG}};
    assert_int_equal(mnc_kern_unix_key("/run/other.sock", &other.key), 0);
    assert_int_equal(bpf_map_update_elem(fd, &hk, &other, BPF_ANY), 0);
    assert_int_equal(mnc_unix_sink_lookup(fd, &b, &got), -ENOENT); /* not the path's sink */
    assert_int_equal(mnc_kern_sink_unix_add(k, "/run/peer.sock", 3, MNC_SINK_AGENT), -EEXIST);
    assert_int_equal(mnc_kern_sink_unix_del(k, "/run/peer.sock"), -ENOENT);
    assert_int_equal(bpf_map_lookup_elem(fd, &hk, &v), 0); /* the other sink is intact */
    assert_string_equal(v.key.path, "/run/other.sock");
    assert_int_equal(v.sink.id, 9);
    /* a bad path changes nothing */
    assert_int_equal(mnc_kern_sink_unix_add(k, "/run//peer.sock", 3, MNC_SINK_AGENT), -EINVAL);
    close(fd);
    mnc_kern_close(k);
    purge();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_layout),
        cmocka_unit_test(t_unix_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
