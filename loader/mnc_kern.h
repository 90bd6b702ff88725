/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mnc_kern.h - the kernel enforcement layer's C API (loader/): attach, adopt, fill the maps,
 * read deny events. Used by mncctl (kern, run, doctor) and by mncd.
 *
 * State lives in bpffs under a pin root (default /sys/fs/bpf/mnc, or $MNC_PIN_ROOT, or the
 * pin_root argument):  <root>/{agents,taint,sock_unix,sock_inet,file_sinks,names,settings,
 * counters,events,principals}  (maps)  and  <root>/links/<program>  (cgroup links). Because the links are
 * pinned, enforcement outlives every process, mncd included; closing a handle never detaches.
 * The programs are attached to one cgroup v2 directory, the mnc tree (default
 * <cgroup2 mount>/mnc); only processes inside that tree are affected. Agents live in children
 * of the tree, created by `mncctl run`.
 *
 * Conventions: functions return 0 on success or a negative errno; those taking (err, errlen)
 * also write a one-line human-readable reason there on failure (never NULL-terminated beyond
 * errlen; errlen may be 0). No function prints. A handle is not thread-safe: use one per
 * thread, or serialise. Map updates are single syscalls, so each one is atomic for the
 * programs; read-modify-write helpers (mnc_kern_taint_hold) assume a single writer (mncd).
 */
#ifndef MNC_KERN_H
#define MNC_KERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc_abi.h"

#define MNC_PIN_ROOT_DEFAULT "/sys/fs/bpf/mnc"
#define MNC_TREE_DEFAULT "mnc"

typedef struct mnc_kern mnc_kern;

/* ---- feature probe */
typedef struct mnc_features {
    char kernel[200];       /* "Linux <release> <version>" */
    char lsm_list[256];     /* /sys/kernel/security/lsm, or "" if unreadable */
    bool lsm_list_known;    /* securityfs readable */
    bool lsm_has_bpf;       /* "bpf" is in the active LSM list */
    bool lsm_loads;         /* a trivial BPF LSM program loads (lsm backend possible) */
    int lsm_load_errno;     /* errno of that load when it fails */
    bool sock_addr_loads;   /* BPF_PROG_TYPE_CGROUP_SOCK_ADDR */
    bool sock_create_loads; /* BPF_PROG_TYPE_CGROUP_SOCK */
    bool ringbuf;           /* BPF_MAP_TYPE_RINGBUF */
    bool skb_loads;         /* BPF_PROG_TYPE_CGROUP_SKB (the egress re-check) */
    char cgroup2[256];      /* cgroup v2 mount point from /proc/mounts, "" if none */
    bool bpffs;             /* /sys/fs/bpf is a bpf filesystem */
    int landlock_abi;       /* >= 1, or -errno (EOPNOTSUPP: disabled, ENOSYS: absent) */
    bool seccomp_filter;    /* seccomp filter mode available */
} mnc_features;

/* Fills *f; never fails (fields say what is missing). */
void mnc_kern_probe(mnc_features *f);

/* Chooses the backend for `requested` (0 = auto, MNC_BACKEND_CGROUP, MNC_BACKEND_LSM).
 * Returns the backend, or -EOPNOTSUPP with the reason in err: an unavailable requested backend
 * is refused, never replaced by another one. Auto prefers lsm (loader/lsm_backend.h) when
 * mnc_lsm_available() passes; mnc_kern_attach then falls back to cgroup, with the reason in
 * mnc_kern_notice(), if the lsm functional self-test fails. */
int mnc_kern_choose_backend(const mnc_features *f, unsigned requested, char *err, size_t errlen);

/* One hook: its program, its attach point and what it covers (for doctor and docs). */
typedef struct mnc_hook_info {
    const char *program; /* pinned link name under <root>/links */
    const char *section; /* e.g. "cgroup/connect4" */
    const char *covers;  /* one sentence */
} mnc_hook_info;
/* The cgroup backend's hooks; *n gets their number. */
const mnc_hook_info *mnc_kern_hooks(int *n);

/* ---- names */
const char *mnc_kreason_name(unsigned reason); /* "deny_external", ...; "?" if unknown */
const char *mnc_sink_class_name(unsigned cls); /* "agent", "log", ...; "?" */
int mnc_sink_class_parse(const char *s);       /* inverse, or -EINVAL */
const char *mnc_hook_name(unsigned hook);      /* "connect4", ..., "file_open", ... (both backends) */

/* Effective pin root: `override` if non-NULL and non-empty, else $MNC_PIN_ROOT, else default. */
const char *mnc_kern_pin_root(const char *override);

/* cgroup v2 helpers. mnc_cgroup2_mount copies the mount point into buf (-ENOENT if none).
 * mnc_cgroup_id gets the 64-bit cgroup id (what bpf_get_current_cgroup_id returns) of the
 * cgroup directory `path`. */
int mnc_cgroup2_mount(char *buf, size_t len);
int mnc_cgroup_id(const char *path, uint64_t *id);

/* ---- attach / adopt / detach */
typedef struct mnc_kern_opts {
    const char *pin_root; /* NULL: mnc_kern_pin_root(NULL) */
    const char *tree;     /* cgroup of the mnc tree: a name under the cgroup2 mount, or an
                              absolute path inside it; NULL: MNC_TREE_DEFAULT. Created if absent. */
    unsigned backend;     /* 0 auto, MNC_BACKEND_CGROUP, MNC_BACKEND_LSM */
    bool skip_selftest;   /* tests only: do not run the functional self-test */
} mnc_kern_opts;

/* Loads the programs and makes them enforce:
 *  - probes and chooses the backend (refuses an unavailable requested backend);
 *  - maps are pinned by name under the pin root; existing pinned maps are REUSED with their
 *    contents (adopt, never wipe); a pinned map whose layout differs is an error (ABI change:
 *    detach --purge first);
 *  - each program's link: if <root>/links/<prog> exists, the new program replaces the old one
 *    atomically (bpf_link_update: no instant without enforcement) and as a compare-and-swap
 *    (BPF_F_REPLACE with the program read from the link: a concurrent attacher's program is
 *    never silently overwritten, the attach fails instead); otherwise it is attached to the
 *    tree and pinned. Links pinned for another tree are an error;
 *  - runs the functional self-test (unless skip_selftest). If it fails (or any later step
 *    does), the attach is undone and -ENOTRECOVERABLE is returned: new links are unpinned,
 *    replaced links get their previous programs back (compare-and-swap again), the settings
 *    map its previous value; err says so ("rolled back: ..."). If the undo itself fails, err
 *    says "ROLLBACK FAILED" and names the links still running the unverified programs (also
 *    printed to stderr). $MNC_TEST_SELFTEST_FAIL=<case name> (tests only) fails that case.
 * On success *out is an open handle (mnc_kern_close it). `st` (may be NULL) gets the self-test
 * results. */
typedef struct mnc_selftest_case {
    char name[64];
    int want; /* expected errno (0 = success) */
    int got;  /* observed errno (0 = success), or -1 if the case could not run */
    bool pass;
} mnc_selftest_case;

typedef struct mnc_selftest {
    int n;
    mnc_selftest_case c[24];
    bool pass;       /* every case passed and n > 0 */
    char error[480]; /* set when the test itself could not run */
    /* cases the host could not run, each with why (e.g. no IPv6 loopback): reported, never
     * counted as verified */
    int n_not_run;
    char not_run[4][96];
} mnc_selftest;

int mnc_kern_attach(const mnc_kern_opts *o, mnc_kern **out, mnc_selftest *st, char *err, size_t errlen);

/* Opens the pinned maps (no program load): for mncd restarts and mncctl. Fails with -ENOENT
 * if nothing is pinned, -EPROTO if the pinned ABI version differs. Does not modify anything. */
int mnc_kern_open(const char *pin_root, mnc_kern **out, char *err, size_t errlen);

/* Closes the handle's fds. Enforcement stays (everything is pinned). NULL is fine. */
void mnc_kern_close(mnc_kern *k);

/* Unpins the links (enforcement stops once no process holds them). With purge, also unpins
 * the maps (all registrations, taints and sinks are lost) and removes the pin directory. */
int mnc_kern_detach(const char *pin_root, bool purge, char *err, size_t errlen);

/* Runs the functional self-test against the attached programs: a scratch cgroup under the
 * tree, a forked child inside it, expected EPERMs and expected successes; then undoes
 * everything. Returns 0 if it passed, -ENOTRECOVERABLE if a case failed, other -errno if it
 * could not run. */
int mnc_kern_selftest(mnc_kern *k, mnc_selftest *st);

/* Status of the pinned state. */
typedef struct mnc_kern_status {
    struct mnc_config cfg;
    int n_links; /* pinned links present */
    int n_links_expected;
    char missing[256]; /* names of missing links, space separated */
    uint32_t n_agents, n_taints, n_unix, n_inet, n_files, n_names;
} mnc_kern_status;
int mnc_kern_status_get(mnc_kern *k, mnc_kern_status *s);

const char *mnc_kern_root(const mnc_kern *k); /* the handle's pin root */
/* After mnc_kern_attach with backend auto: why the lsm backend was not used ("" if it was, or
 * was never a candidate). Callers should print it: the fallback must not be silent. */
const char *mnc_kern_notice(const mnc_kern *k);
/* The tree's absolute path (from the settings map), "" before the first attach. */
const char *mnc_kern_tree(const mnc_kern *k);

/* ---- agents (cgroup registrations) */
int mnc_kern_register_cgroup(mnc_kern *k, uint64_t cgid, uint32_t agent_id, uint32_t flags);
int mnc_kern_unregister_cgroup(mnc_kern *k, uint64_t cgid);                  /* -ENOENT if absent */
int mnc_kern_lookup_cgroup(mnc_kern *k, uint64_t cgid, struct mnc_agent *a); /* -ENOENT */
/* Number of registered cgroups of agent_id (>= 0), or -errno. */
int mnc_kern_agent_cgroups(mnc_kern *k, uint32_t agent_id);

/* ---- taint */
/* Creates an untainted entry with no base rights if the agent has none; keeps an existing one
 * (taint is sticky). */
int mnc_kern_taint_ensure(mnc_kern *k, uint32_t agent_id);
/* Overwrites the entry (admin reset / tests). t->generation is stored as given. */
int mnc_kern_taint_set(mnc_kern *k, uint32_t agent_id, const struct mnc_taint *t);
int mnc_kern_taint_get(mnc_kern *k, uint32_t agent_id, struct mnc_taint *t); /* -ENOENT */
/* The agent now also holds a disclosure whose scope is (sinks, may_*): tightens the taint
 * (intersection of sinks, AND of the flags; an untainted entry is replaced by the scope) and
 * bumps the generation. Call it BEFORE delivering the object. *gen (may be NULL) gets the new
 * generation. Single writer assumed. */
int mnc_kern_taint_hold(mnc_kern *k, uint32_t agent_id, const uint64_t sinks[MNC_SET_WORDS_ABI], bool may_log,
                        bool may_memory, bool may_forward, bool may_external, uint64_t *gen);
/* Deletes the agent's taint and every cgroup registration of it (agent exited / admin reset).
 * Missing entries are not an error. */
int mnc_kern_clear_agent(mnc_kern *k, uint32_t agent_id);

/* ---- names (id -> principal name, for readable dumps and events) */
int mnc_kern_name_set(mnc_kern *k, uint32_t id, const char *name, unsigned cls);
/* name -> id; -ENOENT if absent. cls (may be NULL) gets the class. */
int mnc_kern_name_find(mnc_kern *k, const char *name, uint32_t *id, unsigned *cls);

/* ---- principal binding (kern_bind.c; docs/kernel.md, "Principals keep their names"): which
 * name and class each pinned principal id stands for (the principals map, struct mnc_bind).
 * Only mncd writes it, after the other maps are in the terms it describes. */
#define MNC_BIND_TRANSIT                                                                                               \
    0x80000000u /* principals keys | this: the old binding, kept while a
                                        renumbering runs (no plain keys meanwhile) */
#define MNC_BIND_TMP                                                                                                   \
    512u /* taint keys MNC_BIND_TMP + new id: the renumbering's
                                        temporary entries */
/* Reads the binding: tab[id] for every bound id < max (others zeroed: cls MNC_SINK_NONE), *n =
 * 1 + the highest bound id (0: nothing bound), *interrupted = MNC_BIND_TRANSIT keys exist (a
 * renumbering did not finish). 0 or -errno. */
int mnc_kern_bind_read(mnc_kern *k, struct mnc_bind *tab, int max, int *n, bool *interrupted);
/* Makes the binding exactly tab[0..n) (entries with cls MNC_SINK_NONE are left out; every other
 * key, MNC_BIND_TRANSIT ones included, is deleted after the new entries are in). 0 or -errno. */
int mnc_kern_bind_write(mnc_kern *k, const struct mnc_bind *tab, int n);
/* Deletes the whole binding (after an interrupted renumbering was cleaned up). */
int mnc_kern_bind_abandon(mnc_kern *k);
/* Is *id still the id of principal `name` of class cls? 0 (yes, or *id updated to the id the
 * binding gives that name now), 1 (nothing is bound: no mncd ever bound these maps; *id
 * unchanged), -ENOENT (the name is not bound, or a renumbering is running: the caller fails
 * closed), other -errno. For long-lived readers of the maps (mncctl run's stdio relay and
 * gate), which must not keep a number a restarted mncd gave to another principal. */
int mnc_kern_bind_check(mnc_kern *k, const char *name, unsigned cls, uint32_t *id);

typedef struct mnc_renum_stats {
    int taints_moved, taints_dropped;                 /* taint entries that changed key / went */
    int cgroups_kept, cgroups_moved, cgroups_dropped; /* agent cgroups (dropped: no new id) */
    int sinks_moved, sinks_dropped;                   /* sink entries renumbered / gone or id none */
} mnc_renum_stats;
/* Translates every pinned reference from the bound (old) ids to new ones: map[old] = new id, or
 * -1 for a principal the new numbering lacks (its bits are dropped, its socket sinks deleted,
 * its file and IPC sinks keep their class with id MNC_ID_NONE, a cgroup still registered to it
 * is unregistered: denied everything). Safe while agents run: every intermediate state gives
 * each agent at most what it had (kern_bind.c). Leaves the old binding under MNC_BIND_TRANSIT
 * keys; the caller then writes the new one (mnc_kern_bind_write). 0 or -errno with err. */
int mnc_kern_renumber(mnc_kern *k, const int *map, int n_map, mnc_renum_stats *st, char *err, size_t errlen);

/* After the policy's sinks are (re)registered: deletes every sink entry whose key is not one of
 * the policy's (u: sock_unix hash keys, in: sock_inet keys, f: file keys), except mncd's own
 * socket: an entry a previous policy left (a sink renamed, removed or moved to another address)
 * must not keep labelling a destination. *dropped counts them. 0 or -errno. */
int mnc_kern_sinks_prune(mnc_kern *k, const struct mnc_unix_hkey *u, int nu, const struct mnc_inet_key *in, int ni,
                         const struct mnc_file_key *f, int nf, int *dropped);
/* Deletes the names entries of ids >= n (a shorter policy's leftovers). 0 or -errno. */
int mnc_kern_names_prune(mnc_kern *k, int n);
/* The names map as a binding table (as mnc_kern_bind_read, epoch 0): what a start with no
 * binding pinned (state written by `mncctl run --kernel-only` alone) has to go by. */
int mnc_kern_names_read(mnc_kern *k, struct mnc_bind *tab, int max, int *n);

/* ---- file labels (lsm backend: <root>/file_labels; kern_labels.c). -ENOENT where the map is
 * not pinned (the cgroup backend decides labels at launch only). Key: mnc_kern_file_key. */
int mnc_kern_label_set(mnc_kern *k, const struct mnc_file_key *key, const struct mnc_label *l);
int mnc_kern_label_get(mnc_kern *k, const struct mnc_file_key *key, struct mnc_label *l);
int mnc_kern_label_del(mnc_kern *k, const struct mnc_file_key *key); /* absent: 0 */

/* ---- sinks. Adding an existing key overwrites it. */
/* UNIX: path must be absolute and canonical, or TYPE:@name (TYPE stream, dgram or seqpacket)
 * for the abstract address "\0name" of exactly 1 + strlen(name) bytes held by a socket of that
 * type (trailing NULs, or another type, make another socket, which this key does not match);
 * the path or "@name" < 108 bytes. -EINVAL otherwise, "@name" without a type included. */
int mnc_kern_unix_key(const char *path, struct mnc_unix_key *key);
/* sock_unix is keyed by a hash of the key (mnc_unix_hkey in mnc_abi.h). _add returns -EEXIST
 * if another registered key has the same hash (the map cannot hold both); _del -ENOENT if the
 * path is not registered. */
int mnc_kern_sink_unix_add(mnc_kern *k, const char *path, uint32_t id, unsigned cls);
int mnc_kern_sink_unix_del(mnc_kern *k, const char *path);
/* The sink that names the UNIX key b (as mnc_unix_key_build leaves it) in the sock_unix map
 * map_fd, as the BPF hooks look it up (mnc_sock_unix_lookup). 0 with *out filled, -ENOENT if
 * none does (unregistered: external), or another -errno if the lookup failed. */
int mnc_unix_sink_lookup(int map_fd, const union mnc_unix_buf *b, struct mnc_sink *out);
/* IP: "a.b.c.d:port", "[v6]:port" ("port" 0 = every port; address 0.0.0.0 / [::] = every
 * address). Returns -EINVAL on anything else. */
int mnc_kern_inet_key(const char *addr, struct mnc_inet_key *key);
int mnc_kern_sink_inet_add(mnc_kern *k, const char *addr, uint32_t id, unsigned cls);
int mnc_kern_sink_inet_del(mnc_kern *k, const char *addr);
/* The sink that names IP destination dst in the sock_inet map map_fd, looked up in the ABI's
 * order (mnc_inet_lookup_key in mnc_abi.h: exact, whole host, port on every address) - the
 * order the BPF hooks use. dst's family/addr must already be normalised (mnc_inet_key_set6).
 * Returns 0 with *out filled, -ENOENT if no step names a sink (unregistered: external), or
 * another -errno if a lookup failed. */
int mnc_inet_sink_lookup(int map_fd, const struct mnc_inet_key *dst, struct mnc_sink *out);
/* Files and directories by (dev, ino) of `path` as it is now (stat follows symlinks). */
int mnc_kern_file_key(const char *path, struct mnc_file_key *key);
int mnc_kern_sink_file_add(mnc_kern *k, const char *path, uint32_t id, unsigned cls);
int mnc_kern_sink_file_del(mnc_kern *k, const char *path);
/* Looks a file key up: 0 and *s filled, or -ENOENT. */
int mnc_kern_sink_file_lookup(mnc_kern *k, const struct mnc_file_key *key, struct mnc_sink *s);

/* ---- observability */
/* Sums the per-CPU counters: out[r] for every enum mnc_kreason r < MNC_K__COUNT. */
int mnc_kern_counters(mnc_kern *k, uint64_t out[MNC_K__COUNT]);
/* Called for each deny event; return non-zero to stop polling early. */
typedef int (*mnc_kern_event_fn)(const struct mnc_event *ev, void *ctx);
/* Waits up to timeout_ms (0: do not wait, -1: forever) and delivers the pending events.
 * Returns the number delivered or -errno. The ring buffer is created on first use. */
int mnc_kern_poll_events(mnc_kern *k, int timeout_ms, mnc_kern_event_fn fn, void *ctx);
/* An fd that becomes readable when events are pending (for mncd's epoll loop); -errno. */
int mnc_kern_events_fd(mnc_kern *k);
/* Formats one event as a JSON object (one line, no newline) into buf: the hook by name on
 * either backend; the destination as a UNIX path, an IP address and port, a socket's family and
 * type (sock_create), or - lsm file hooks and file_receive - the file's dev, ino and last name
 * (file_receive also its type and whether it was open for writing). Returns the length (as
 * snprintf) or -EINVAL. */
int mnc_kern_event_json(const struct mnc_event *ev, char *buf, size_t len);

#endif
