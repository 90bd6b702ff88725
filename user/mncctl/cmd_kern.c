// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_kern.c - `mncctl kern ...`: admin commands on the kernel layer's pinned state, so that
 * admins (and tests) can attach, inspect and drive the maps without mncd.
 *
 *   mncctl kern [--pin-root DIR] attach [--tree NAME|PATH] [--backend auto|cgroup|lsm] [--no-selftest]
 *   mncctl kern [--pin-root DIR] detach [--purge]
 *   mncctl kern [--pin-root DIR] status | selftest | counters
 *   mncctl kern [--pin-root DIR] events [--count N] [--timeout MS]
 *   mncctl kern [--pin-root DIR] name ID NAME CLASS
 *   mncctl kern [--pin-root DIR] taint AGENT [show]
 *   mncctl kern [--pin-root DIR] taint AGENT set|hold [--sinks ID,..] [--may-log] [--may-memory]
 *                                              [--may-forward] [--may-external] [--untainted]
 *   mncctl kern [--pin-root DIR] taint AGENT clear
 *   mncctl kern [--pin-root DIR] sink add unix|inet|file ADDR ID|NAME CLASS
 *   mncctl kern [--pin-root DIR] sink del unix|inet|file ADDR
 *   mncctl kern [--pin-root DIR] register CGROUP_DIR AGENT | unregister CGROUP_DIR
 * AGENT / sink ids are a number or a name registered with `kern name`. A unix ADDR is an absolute
 * canonical path, or TYPE:@name (stream, dgram, seqpacket) for an abstract name. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc_kern.h"
#include "mncctl.h"

#define ERRLEN 512

static int parse_u32(const char *s, uint32_t *v)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(s, &end, 0);
    if (!*s || *end || errno || x > 0xffffffffUL || s[0] == '-')
        return -EINVAL;
    *v = (uint32_t)x;
    return 0;
}

/* a number, or a principal name from the names map */
static int resolve_id(mnc_kern *k, const char *s, uint32_t *id)
{
    if (parse_u32(s, id) == 0)
        return 0;
    if (mnc_kern_name_find(k, s, id, NULL) == 0)
        return 0;
    mncctl_err("unknown principal \"%s\" (a number, or a name set with `mncctl kern name`)", s);
    return -ENOENT;
}

static int open_or_fail(const char *root, mnc_kern **k)
{
    char err[ERRLEN] = "";
    int rc = mnc_kern_open(root, k, err, sizeof(err));
    if (rc)
        mncctl_err("%s", err);
    return rc;
}

static void print_selftest(const mnc_selftest *st)
{
    for (int i = 0; i < st->n; i++)
        printf("  %s %s (want %s, got %s)\n", st->c[i].pass ? "pass" : "FAIL", st->c[i].name,
               st->c[i].want ? strerror(st->c[i].want) : "success",
               st->c[i].got < 0 ? "not run"
               : st->c[i].got   ? strerror(st->c[i].got)
                                : "success");
    if (st->error[0])
        printf("  error: %s\n", st->error);
}

static int do_attach(const char *root, int argc, char **argv)
{
    mnc_kern_opts o = {.pin_root = root};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tree") == 0 && i + 1 < argc) {
            o.tree = argv[++i];
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            const char *b = argv[++i];
            if (strcmp(b, "auto") == 0)
                o.backend = 0;
            else if (strcmp(b, "cgroup") == 0)
                o.backend = MNC_BACKEND_CGROUP;
            else if (strcmp(b, "lsm") == 0)
                o.backend = MNC_BACKEND_LSM;
            else {
                mncctl_err("unknown backend \"%s\" (auto, cgroup, lsm)", b);
                return 2;
            }
        } else if (strcmp(argv[i], "--no-selftest") == 0) {
            o.skip_selftest = true;
        } else {
            mncctl_err("kern attach: unknown argument %s", argv[i]);
            return 2;
        }
    }
    mnc_kern *k;
    mnc_selftest st;
    memset(&st, 0, sizeof(st));
    char err[ERRLEN] = "";
    int rc = mnc_kern_attach(&o, &k, &st, err, sizeof(err));
    if (rc) {
        mncctl_err("kern attach refused: %s", err);
        if (st.n || st.error[0])
            print_selftest(&st);
        return 1;
    }
    if (mnc_kern_notice(k)[0])
        printf("notice: %s\n", mnc_kern_notice(k));
    mnc_kern_status ks;
    printf("attached: backend %s, tree %s, pinned under %s\n",
           mnc_kern_status_get(k, &ks) == 0 && ks.cfg.backend == MNC_BACKEND_LSM ? "lsm" : "cgroup", mnc_kern_tree(k),
           mnc_kern_root(k));
    if (o.skip_selftest) {
        printf("self-test: skipped (--no-selftest): enforcement NOT verified\n");
    } else {
        printf("self-test: pass (%d cases)\n", st.n);
        print_selftest(&st);
    }
    mnc_kern_close(k);
    return 0;
}

static int do_status(const char *root, bool json)
{
    mnc_kern *k;
    if (open_or_fail(root, &k))
        return 1;
    mnc_kern_status s;
    int rc = mnc_kern_status_get(k, &s);
    if (rc) {
        mncctl_err("status: %s", strerror(-rc));
        mnc_kern_close(k);
        return 1;
    }
    uint64_t c[MNC_K__COUNT];
    int crc = mnc_kern_counters(k, c);
    if (json) {
        printf("{\"pin_root\":\"%s\",\"abi\":%u,\"backend\":\"%s\",\"tree\":\"%.*s\",\"tree_cgroup_id\":%" PRIu64
               ",\"links\":%d,\"links_expected\":%d,\"agents\":%u,\"taints\":%u,\"sock_unix\":%u,"
               "\"sock_inet\":%u,\"file_sinks\":%u,\"names\":%u",
               mnc_kern_root(k), s.cfg.abi_version,
               s.cfg.backend == MNC_BACKEND_CGROUP ? "cgroup"
               : s.cfg.backend == MNC_BACKEND_LSM  ? "lsm"
                                                   : "none",
               (int)sizeof(s.cfg.tree_path), s.cfg.tree_path, (uint64_t)s.cfg.tree_cgroup_id, s.n_links,
               s.n_links_expected, s.n_agents, s.n_taints, s.n_unix, s.n_inet, s.n_files, s.n_names);
        if (crc == 0) {
            printf(",\"counters\":{");
            for (int r = 0; r < MNC_K__COUNT; r++)
                if (mnc_kreason_name((unsigned)r)[0] != '?')
                    printf("%s\"%s\":%" PRIu64, r ? "," : "", mnc_kreason_name((unsigned)r), c[r]);
            printf("}");
        }
        printf("}\n");
    } else {
        printf("pin root:  %s (ABI %u)\n", mnc_kern_root(k), s.cfg.abi_version);
        printf("backend:   %s\n", s.cfg.backend == MNC_BACKEND_CGROUP ? "cgroup"
                                  : s.cfg.backend == MNC_BACKEND_LSM  ? "lsm"
                                                                      : "none");
        printf("tree:      %.*s (cgroup id %" PRIu64 ")\n", (int)sizeof(s.cfg.tree_path), s.cfg.tree_path,
               (uint64_t)s.cfg.tree_cgroup_id);
        printf("links:     %d of %d pinned%s%s\n", s.n_links, s.n_links_expected, s.missing[0] ? "; missing: " : "",
               s.missing);
        printf("entries:   agents %u, taints %u, sock_unix %u, sock_inet %u, file_sinks %u, names %u\n", s.n_agents,
               s.n_taints, s.n_unix, s.n_inet, s.n_files, s.n_names);
        if (crc == 0) {
            printf("counters: ");
            for (int r = 0; r < MNC_K__COUNT; r++)
                if (c[r])
                    printf(" %s=%" PRIu64, mnc_kreason_name((unsigned)r), c[r]);
            printf("\n");
        }
    }
    mnc_kern_close(k);
    return s.n_links == s.n_links_expected ? 0 : 1;
}

static int print_event(const struct mnc_event *ev, void *ctx)
{
    (void)ctx;
    char buf[2048];
    if (mnc_kern_event_json(ev, buf, sizeof(buf)) > 0)
        printf("%s\n", buf);
    fflush(stdout);
    return 0;
}

static int do_events(mnc_kern *k, int argc, char **argv)
{
    long count = -1, timeout = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            timeout = strtol(argv[++i], NULL, 10);
        else {
            mncctl_err("kern events: unknown argument %s", argv[i]);
            return 2;
        }
    }
    long seen = 0;
    for (;;) {
        int n = mnc_kern_poll_events(k, (int)timeout, print_event, NULL);
        if (n < 0) {
            mncctl_err("events: %s", strerror(-n));
            return 1;
        }
        seen += n;
        if (n == 0 || (count >= 0 && seen >= count))
            break;
    }
    return 0;
}

static int parse_sinks(const char *s, uint64_t w[MNC_SET_WORDS_ABI], mnc_kern *k)
{
    memset(w, 0, sizeof(uint64_t) * MNC_SET_WORDS_ABI);
    char buf[2048];
    if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
        return -EINVAL;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint32_t id;
        if (resolve_id(k, t, &id) != 0)
            return -EINVAL;
        if (id >= MNC_SET_WORDS_ABI * 64) {
            mncctl_err("sink id %u out of range (0..255)", id);
            return -EINVAL;
        }
        w[id / 64] |= (uint64_t)1 << (id % 64);
    }
    return 0;
}

static void print_taint(uint32_t agent, const struct mnc_taint *t)
{
    printf("agent %u: %s, generation %" PRIu64 ", may_log %u, may_memory %u, may_forward %u, may_external %u, sinks {",
           agent, t->tainted ? "tainted" : "untainted", (uint64_t)t->generation, t->may_log, t->may_memory,
           t->may_forward, t->may_external);
    int first = 1;
    for (unsigned id = 0; id < MNC_SET_WORDS_ABI * 64; id++)
        if (mnc_set_has_abi(t->sinks, id)) {
            printf("%s%u", first ? "" : ",", id);
            first = 0;
        }
    printf("}\n");
}

static int do_taint(mnc_kern *k, int argc, char **argv)
{
    if (argc < 2) {
        mncctl_err("usage: kern taint AGENT [show|set|hold|clear] ...");
        return 2;
    }
    uint32_t agent;
    if (resolve_id(k, argv[1], &agent))
        return 1;
    const char *verb = argc > 2 ? argv[2] : "show";
    if (strcmp(verb, "show") == 0) {
        struct mnc_taint t;
        int rc = mnc_kern_taint_get(k, agent, &t);
        if (rc) {
            mncctl_err("agent %u: no taint entry (%s)", agent, strerror(-rc));
            return 1;
        }
        print_taint(agent, &t);
        return 0;
    }
    if (strcmp(verb, "clear") == 0) {
        int rc = mnc_kern_clear_agent(k, agent);
        if (rc) {
            mncctl_err("clear agent %u: %s", agent, strerror(-rc));
            return 1;
        }
        return 0;
    }
    if (strcmp(verb, "set") != 0 && strcmp(verb, "hold") != 0) {
        mncctl_err("kern taint: unknown verb \"%s\" (show, set, hold, clear)", verb);
        return 2;
    }
    uint64_t sinks[MNC_SET_WORDS_ABI] = {0};
    bool ml = false, mm = false, mf = false, me = false, untainted = false;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--sinks") == 0 && i + 1 < argc) {
            if (parse_sinks(argv[++i], sinks, k))
                return 2;
        } else if (strcmp(argv[i], "--may-log") == 0) {
            ml = true;
        } else if (strcmp(argv[i], "--may-memory") == 0) {
            mm = true;
        } else if (strcmp(argv[i], "--may-forward") == 0) {
            mf = true;
        } else if (strcmp(argv[i], "--may-external") == 0) {
            me = true;
        } else if (strcmp(argv[i], "--untainted") == 0) {
            untainted = true;
        } else {
            mncctl_err("kern taint: unknown argument %s", argv[i]);
            return 2;
        }
    }
    int rc;
    if (strcmp(verb, "hold") == 0) {
        rc = mnc_kern_taint_hold(k, agent, sinks, ml, mm, mf, me, NULL);
    } else {
        struct mnc_taint t, old;
        memset(&t, 0, sizeof(t));
        memcpy(t.sinks, sinks, sizeof(t.sinks));
        t.may_log = ml, t.may_memory = mm, t.may_forward = mf, t.may_external = me;
        t.tainted = !untainted;
        t.generation = mnc_kern_taint_get(k, agent, &old) == 0 ? old.generation + 1 : 1;
        rc = mnc_kern_taint_set(k, agent, &t);
    }
    if (rc) {
        mncctl_err("taint %s agent %u: %s", verb, agent, strerror(-rc));
        return 1;
    }
    struct mnc_taint t;
    if (mnc_kern_taint_get(k, agent, &t) == 0)
        print_taint(agent, &t);
    return 0;
}

static int do_sink(mnc_kern *k, int argc, char **argv)
{
    if (argc < 4) {
        mncctl_err("usage: kern sink add unix|inet|file ADDR ID CLASS | kern sink del unix|inet|file ADDR");
        return 2;
    }
    const char *verb = argv[1], *kind = argv[2], *addr = argv[3];
    bool add = strcmp(verb, "add") == 0;
    if (!add && strcmp(verb, "del") != 0) {
        mncctl_err("kern sink: unknown verb \"%s\" (add, del)", verb);
        return 2;
    }
    uint32_t id = 0;
    int cls = 0;
    if (add) {
        if (argc != 6) {
            mncctl_err("usage: kern sink add unix|inet|file ADDR ID CLASS");
            return 2;
        }
        if (strcmp(argv[4], "none") == 0)
            id = MNC_ID_NONE;
        else if (resolve_id(k, argv[4], &id))
            return 1;
        cls = mnc_sink_class_parse(argv[5]);
        if (cls < 0) {
            mncctl_err("unknown class \"%s\" (agent, log, memory, tool, external, mncd)", argv[5]);
            return 2;
        }
    }
    int rc;
    if (strcmp(kind, "unix") == 0)
        rc = add ? mnc_kern_sink_unix_add(k, addr, id, (unsigned)cls) : mnc_kern_sink_unix_del(k, addr);
    else if (strcmp(kind, "inet") == 0)
        rc = add ? mnc_kern_sink_inet_add(k, addr, id, (unsigned)cls) : mnc_kern_sink_inet_del(k, addr);
    else if (strcmp(kind, "file") == 0)
        rc = add ? mnc_kern_sink_file_add(k, addr, id, (unsigned)cls) : mnc_kern_sink_file_del(k, addr);
    else {
        mncctl_err("kern sink: unknown kind \"%s\" (unix, inet, file)", kind);
        return 2;
    }
    if (rc) {
        mncctl_err("sink %s %s %s: %s%s", verb, kind, addr, strerror(-rc),
                   rc == -EINVAL
                       ? (strcmp(kind, "unix") == 0   ? " (an absolute canonical path, or stream:@name, dgram:@name or "
                                                        "seqpacket:@name for an abstract name; < 108 bytes)"
                          : strcmp(kind, "inet") == 0 ? " (a.b.c.d:port or [v6]:port)"
                                                      : "")
                   : rc == -EEXIST ? " (another UNIX sink's key has the same sock_unix hash; nothing was changed)"
                                   : "");
        return 1;
    }
    return 0;
}

static int cmd_kern(int argc, char **argv, const mncctl_global *g)
{
    const char *root = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--pin-root") == 0 && i + 1 < argc)
            root = argv[++i];
        else {
            mncctl_err("kern: unknown option %s", argv[i]);
            return 2;
        }
    }
    if (i >= argc) {
        mncctl_err("usage: kern [--pin-root DIR] "
                   "attach|detach|status|selftest|counters|events|name|taint|sink|register|unregister ...");
        return 2;
    }
    argc -= i;
    argv += i;
    const char *sub = argv[0];
    char err[ERRLEN] = "";
    if (strcmp(sub, "attach") == 0)
        return do_attach(root, argc, argv);
    if (strcmp(sub, "detach") == 0) {
        bool purge = argc > 1 && strcmp(argv[1], "--purge") == 0;
        if (argc > 2 || (argc == 2 && !purge)) {
            mncctl_err("usage: kern detach [--purge]");
            return 2;
        }
        if (mnc_kern_detach(root, purge, err, sizeof(err)) != 0) {
            mncctl_err("detach: %s", err);
            return 1;
        }
        printf("detached%s: %s\n", purge ? " and purged" : " (maps kept)", mnc_kern_pin_root(root));
        return 0;
    }
    if (strcmp(sub, "status") == 0)
        return do_status(root, g->json);

    mnc_kern *k;
    if (open_or_fail(root, &k))
        return 1;
    int rc = 2;
    if (strcmp(sub, "selftest") == 0) {
        mnc_selftest st;
        int r = mnc_kern_selftest(k, &st);
        printf("self-test: %s\n", r == 0 ? "pass" : "FAIL");
        print_selftest(&st);
        rc = r == 0 ? 0 : 1;
    } else if (strcmp(sub, "counters") == 0) {
        uint64_t c[MNC_K__COUNT];
        int r = mnc_kern_counters(k, c);
        if (r == 0)
            for (int j = 0; j < MNC_K__COUNT; j++)
                if (mnc_kreason_name((unsigned)j)[0] != '?')
                    printf("%-20s %" PRIu64 "\n", mnc_kreason_name((unsigned)j), c[j]);
        rc = r == 0 ? 0 : 1;
    } else if (strcmp(sub, "events") == 0) {
        rc = do_events(k, argc, argv);
    } else if (strcmp(sub, "name") == 0) {
        uint32_t id;
        int cls;
        if (argc != 4 || parse_u32(argv[1], &id) != 0 || (cls = mnc_sink_class_parse(argv[3])) < 0) {
            mncctl_err("usage: kern name ID NAME CLASS (class: agent, log, memory, tool, external, mncd)");
        } else if (mnc_kern_name_set(k, id, argv[2], (unsigned)cls) != 0) {
            mncctl_err("name %u %s: %s", id, argv[2], strerror(errno));
            rc = 1;
        } else {
            rc = 0;
        }
    } else if (strcmp(sub, "taint") == 0) {
        rc = do_taint(k, argc, argv);
    } else if (strcmp(sub, "sink") == 0) {
        rc = do_sink(k, argc, argv);
    } else if (strcmp(sub, "register") == 0 || strcmp(sub, "unregister") == 0) {
        bool reg = sub[0] == 'r';
        uint64_t cgid;
        uint32_t agent = 0;
        if (argc != (reg ? 3 : 2)) {
            mncctl_err("usage: kern register CGROUP_DIR AGENT | kern unregister CGROUP_DIR");
        } else if (mnc_cgroup_id(argv[1], &cgid) != 0) {
            mncctl_err("%s: not a cgroup v2 directory (%s)", argv[1], strerror(errno));
            rc = 1;
        } else if (reg && resolve_id(k, argv[2], &agent) != 0) {
            rc = 1;
        } else {
            int r = reg ? mnc_kern_register_cgroup(k, cgid, agent, 0) : mnc_kern_unregister_cgroup(k, cgid);
            if (r == 0 && reg)
                r = mnc_kern_taint_ensure(k, agent);
            if (r)
                mncctl_err("%s %s: %s", sub, argv[1], strerror(-r));
            rc = r ? 1 : 0;
        }
    } else {
        mncctl_err("kern: unknown subcommand \"%s\"", sub);
    }
    mnc_kern_close(k);
    return rc;
}

MNCCTL_COMMAND(kern_cmd, "kern",
               "kern [--pin-root DIR] attach|detach|status|selftest|counters|events|name|taint|sink|register ...",
               cmd_kern)
