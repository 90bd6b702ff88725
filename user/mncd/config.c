// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* config.c - mncd's configuration: defaults, the JSON config file, command-line flags.
 *
 * Config file (all keys optional; unknown keys are errors):
 *   {"socket": "/run/mnc/mncd.sock", "state_dir": "/var/lib/mnc",
 *    "policies": ["/etc/mnc/scheduling.json"], "admin_uid": 0,
 *    "max_clients": 1024, "max_output": 8388608,
 *    "max_clients_per_agent": 64, "max_clients_per_uid": 256, "quarantine_max": 16777216,
 *    "audit_rotate_bytes": 67108864, "audit_rotate_age_s": 604800, "audit_keep": 0,
 *    "agents": {"worker": {"uid": 1001}},
 *    "cgroups": {"/mnc/worker": "worker"}}
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mncd.h"
#include "mnc_util.h"

#define MAX_CONFIG (1u << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mncd [--config FILE] [--socket PATH] [--state-dir DIR] [--policy FILE]...\n"
            "\n"
            "The MNC reference monitor. Runs in the foreground; stop it with SIGTERM.\n"
            "  --config FILE     JSON config (see docs/mncd.md)\n"
            "  --socket PATH     UNIX socket (default %s)\n"
            "  --state-dir DIR   durable state and audit log (default %s)\n"
            "  --policy FILE     policy file, repeatable (default: the bundled scheduling "
            "policy)\n"
            "  --kernel MODE     kernel enforcement: auto (default: the best backend this host\n"
            "                    runs; refuses to start if none), cgroup, lsm, or off (userspace\n"
            "                    monitor only; explicit, for unprivileged runs)\n"
            "  --pin-root DIR    bpffs pin root (default $MNC_PIN_ROOT or /sys/fs/bpf/mnc)\n"
            "  --cgroup-tree T   cgroup v2 tree of the agents (default mnc under the cgroup2 mount)\n"
            "  --privsep         two processes: a root enforcer holds the kernel layer, a monitor of\n"
            "                    user --user parses and serves (docs/privsep.md; off by default)\n"
            "  --user NAME       the monitor's user under --privsep (default mncd)\n"
            "  --version, --help\n",
            MNCD_DEFAULT_SOCKET, MNCD_DEFAULT_STATE);
}

static int set_str(char *dst, size_t n, const char *v, const char *what)
{
    if (strlen(v) >= n || !*v) {
        fprintf(stderr, "mncd: %s must be 1..%zu bytes: \"%s\"\n", what, n - 1, v);
        return -1;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int add_policy(mncd_config *c, const char *path)
{
    if (c->n_policies >= MNCD_MAX_POLICIES) {
        fprintf(stderr, "mncd: more than %d policy files\n", MNCD_MAX_POLICIES);
        return -1;
    }
    char *d = strdup(path);
    if (!d) {
        fprintf(stderr, "mncd: out of memory\n");
        return -1;
    }
    c->policies[c->n_policies++] = d;
    return 0;
}

static int get_u32(const cJSON *v, const char *where, uint32_t *out, uint32_t lo, uint32_t hi)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long long)v->valuedouble || v->valuedouble < lo ||
        v->valuedouble > hi) {
        fprintf(stderr, "mncd: config: %s must be an integer %u..%u\n", where, lo, hi);
        return -1;
    }
    *out = (uint32_t)v->valuedouble;
    return 0;
}

static int load_file(mncd_config *c, const char *path)
{
    /* through the opener: under --privsep the enforcer opens it (mon_kern_split) */
    int fd = mnc_open_ro(path);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        int e = fd < 0 ? -fd : errno;
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "mncd: config %s: %s\n", path, strerror(e));
        return -1;
    }
    char *buf = malloc(MAX_CONFIG + 1);
    size_t n = buf ? fread(buf, 1, MAX_CONFIG + 1, f) : 0;
    int ferr = ferror(f);
    fclose(f);
    if (!buf || ferr || n > MAX_CONFIG) {
        fprintf(stderr, "mncd: config %s: %s\n", path,
                !buf   ? "out of memory"
                : ferr ? "read error"
                       : "larger than 1 MiB");
        free(buf);
        return -1;
    }
    cJSON *j = cJSON_ParseWithLength(buf, n);
    free(buf);
    if (!cJSON_IsObject(j)) {
        fprintf(stderr, "mncd: config %s: not a JSON object (malformed JSON?)\n", path);
        cJSON_Delete(j);
        return -1;
    }
    int rc = 0;
    for (const cJSON *it = j->child; it && rc == 0; it = it->next) {
        const char *k = it->string;
        if (strcmp(k, "socket") == 0 || strcmp(k, "state_dir") == 0) {
            if (!cJSON_IsString(it)) {
                fprintf(stderr, "mncd: config %s: \"%s\" must be a string\n", path, k);
                rc = -1;
            } else if (k[1] == 'o') {
                rc = set_str(c->socket, sizeof(c->socket), it->valuestring, "socket");
            } else {
                rc = set_str(c->state_dir, sizeof(c->state_dir), it->valuestring, "state_dir");
            }
        } else if (strcmp(k, "policies") == 0) {
            if (!cJSON_IsArray(it)) {
                fprintf(stderr, "mncd: config %s: \"policies\" must be an array of paths\n", path);
                rc = -1;
            }
            for (const cJSON *p = it->child; p && rc == 0; p = p->next) {
                if (!cJSON_IsString(p)) {
                    fprintf(stderr, "mncd: config %s: policies[] must be strings\n", path);
                    rc = -1;
                } else {
                    rc = add_policy(c, p->valuestring);
                }
            }
        } else if (strcmp(k, "admin_uid") == 0) {
            rc = get_u32(it, "admin_uid", &c->admin_uid, 0, 4294967294u);
        } else if (strcmp(k, "max_clients") == 0) {
            uint32_t v;
            rc = get_u32(it, "max_clients", &v, 1, 65536);
            c->max_clients = v;
        } else if (strcmp(k, "max_clients_per_agent") == 0) {
            uint32_t v = 0;
            rc = get_u32(it, "max_clients_per_agent", &v, 1, 65536);
            c->max_clients_per_agent = v;
        } else if (strcmp(k, "max_clients_per_uid") == 0) {
            uint32_t v = 0;
            rc = get_u32(it, "max_clients_per_uid", &v, 1, 65536);
            c->max_clients_per_uid = v;
        } else if (strcmp(k, "max_output") == 0) {
            uint32_t v;
            rc = get_u32(it, "max_output", &v, 65536, 1u << 30);
            c->max_output = v;
        } else if (strcmp(k, "quarantine_max") == 0) { /* quarantine.c */
            uint32_t v;
            rc = get_u32(it, "quarantine_max", &v, 0, 1u << 30);
            c->quarantine_max = v;
        } else if (strcmp(k, "audit_rotate_bytes") == 0) { /* audit log rotation (mnc/audit.h) */
            uint32_t v;
            rc = get_u32(it, "audit_rotate_bytes", &v, 0, 4294967295u);
            c->audit_rotate_bytes = v;
        } else if (strcmp(k, "audit_rotate_age_s") == 0) {
            uint32_t v;
            rc = get_u32(it, "audit_rotate_age_s", &v, 0, 31536000u);
            c->audit_rotate_age_ms = (uint64_t)v * 1000;
        } else if (strcmp(k, "audit_keep") == 0) {
            rc = get_u32(it, "audit_keep", &c->audit_keep, 0, 1000000u);
        } else if (strcmp(k, "broker_timeout_ms") == 0) { /* MNC-D (mncd_failure.c) */
            rc = get_u32(it, "broker_timeout_ms", &c->broker_timeout_ms, 1, 86400000u);
        } else if (strcmp(k, "approval_timeout_ms") == 0) {
            rc = get_u32(it, "approval_timeout_ms", &c->approval_timeout_ms, 1, 2592000000u);
        } else if (strcmp(k, "agents") == 0 && cJSON_IsObject(it)) {
            for (const cJSON *a = it->child; a && rc == 0; a = a->next) {
                const cJSON *uid = cJSON_GetObjectItemCaseSensitive(a, "uid");
                if (!cJSON_IsObject(a) || !uid || cJSON_GetArraySize(a) != 1) {
                    fprintf(stderr, "mncd: config %s: agents.%s must be {\"uid\": N}\n", path, a->string);
                    rc = -1;
                } else if (c->n_uids >= MNCD_MAX_MAP) {
                    fprintf(stderr, "mncd: config %s: too many agents\n", path);
                    rc = -1;
                } else {
                    rc = set_str(c->uids[c->n_uids].agent, MNC_NAME_MAX, a->string, "agent name");
                    if (rc == 0)
                        rc = get_u32(uid, "agents.*.uid", &c->uids[c->n_uids].uid, 0, 4294967294u);
                    for (int i = 0; rc == 0 && i < c->n_uids; i++)
                        if (c->uids[i].uid == c->uids[c->n_uids].uid) {
                            fprintf(stderr, "mncd: config %s: uid %u mapped to two agents\n", path, c->uids[i].uid);
                            rc = -1;
                        }
                    if (rc == 0)
                        c->n_uids++;
                }
            }
        } else if (strcmp(k, "cgroups") == 0 && cJSON_IsObject(it)) {
            for (const cJSON *a = it->child; a && rc == 0; a = a->next) {
                if (!cJSON_IsString(a) || a->string[0] != '/') {
                    fprintf(stderr,
                            "mncd: config %s: cgroups maps an absolute cgroup path "
                            "(\"/mnc/worker\") to an agent name\n",
                            path);
                    rc = -1;
                } else if (c->n_cgroups >= MNCD_MAX_MAP) {
                    fprintf(stderr, "mncd: config %s: too many cgroups\n", path);
                    rc = -1;
                } else {
                    rc = set_str(c->cgroups[c->n_cgroups].path, 512, a->string, "cgroup path");
                    if (rc == 0)
                        rc = set_str(c->cgroups[c->n_cgroups].agent, MNC_NAME_MAX, a->valuestring, "agent name");
                    if (rc == 0)
                        c->n_cgroups++;
                }
            }
        } else if (strcmp(k, "ledger") == 0) { /* fleet mode (fleet.c) */
            rc = mncd_fleet_config(c, it, path);
        } else if (cJSON_IsString(it) && (rc = mncd_kern_option(c, k, it->valuestring, path)) != 1) {
            /* "kernel", "pin_root", "cgroup_tree" (kern.c): rc is 0 or -1 */
        } else {
            fprintf(stderr, "mncd: config %s: unknown or malformed key \"%s\"\n", path, k);
            rc = -1;
        }
    }
    cJSON_Delete(j);
    return rc;
}

/* The bundled policy: next to the binary in a source tree (BUILD/mncd -> policies/), or
 * installed. First existing file wins. */
static int default_policy(mncd_config *c)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    char cand[3][PATH_MAX + 64];
    int nc = 0;
    if (n > 0) {
        exe[n] = '\0';
        char *dir = dirname(exe);
        snprintf(cand[nc++], sizeof(cand[0]), "%s/../policies/scheduling.json", dir);
    }
    snprintf(cand[nc++], sizeof(cand[0]), "/usr/local/share/mnc/policies/scheduling.json");
    snprintf(cand[nc++], sizeof(cand[0]), "/usr/share/mnc/policies/scheduling.json");
    for (int i = 0; i < nc; i++) {
        int fd = mnc_open_ro(cand[i]); /* the opener: what the monitor may read (--privsep) */
        if (fd < 0)
            continue;
        close(fd);
        char *rp = realpath(cand[i], NULL);
        int rc = add_policy(c, rp ? rp : cand[i]);
        free(rp);
        return rc;
    }
    fprintf(stderr,
            "mncd: no --policy given and the bundled scheduling policy was not found "
            "(looked in %s, %s, %s)\n",
            cand[0], cand[1], nc > 2 ? cand[2] : "");
    return -1;
}

int mncd_config_load(mncd_config *c, int argc, char **argv)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->socket, sizeof(c->socket), "%s", MNCD_DEFAULT_SOCKET);
    snprintf(c->state_dir, sizeof(c->state_dir), "%s", MNCD_DEFAULT_STATE);
    c->admin_uid = 0;
    c->max_clients = MNCD_DEFAULT_MAX_CLIENTS;
    c->max_output = MNCD_DEFAULT_MAX_OUTPUT;
    c->max_clients_per_agent = MNCD_DEFAULT_MAX_CLIENTS_PER_AGENT;
    c->max_clients_per_uid = MNCD_DEFAULT_MAX_CLIENTS_PER_UID;
    c->quarantine_max = MNCD_DEFAULT_QUARANTINE_MAX;
    c->audit_rotate_bytes = 64u << 20;                /* 64 MiB */
    c->audit_rotate_age_ms = 7ull * 24 * 3600 * 1000; /* a week */

    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"socket", required_argument, NULL, 's'},
                                         {"state-dir", required_argument, NULL, 'd'},
                                         {"policy", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"kernel", required_argument, NULL, 'K'},
                                         {"pin-root", required_argument, NULL, 'P'},
                                         {"cgroup-tree", required_argument, NULL, 'T'},
                                         {"privsep", no_argument, NULL, 'S'},
                                         {"user", required_argument, NULL, 'U'},
                                         {NULL, 0, NULL, 0}};
    /* First pass: only --config (so flags override it regardless of order). */
    const char *config = NULL;
    optind = 1;
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (o == 'c')
            config = optarg;
        else if (o == 'h') {
            usage(stdout);
            return 1;
        } else if (o == 'V') {
            printf("mncd %s\n", MNCD_VERSION);
            return 1;
        } else if (o == '?') {
            fprintf(stderr, "mncd: unknown or incomplete option %s\n", argv[optind - 1]);
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mncd: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    if (config && load_file(c, config) != 0)
        return -1;
    bool cli_policy = false;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int rc = 0;
        if (o == 'S')
            c->privsep = true; /* main.c split already (mon_kern_split) */
        else if (o == 'U')
            rc = set_str(c->user, sizeof(c->user), optarg, "--user");
        else if (o == 's')
            rc = set_str(c->socket, sizeof(c->socket), optarg, "--socket");
        else if (o == 'd')
            rc = set_str(c->state_dir, sizeof(c->state_dir), optarg, "--state-dir");
        else if (o == 'K' || o == 'P' || o == 'T')
            rc = mncd_kern_option(c,
                                  o == 'K'   ? "kernel"
                                  : o == 'P' ? "pin_root"
                                             : "cgroup_tree",
                                  optarg,
                                  o == 'K'   ? "--kernel"
                                  : o == 'P' ? "--pin-root"
                                             : "--cgroup-tree");
        else if (o == 'p') {
            if (!cli_policy) { /* --policy replaces the config's list */
                for (int i = 0; i < c->n_policies; i++)
                    free(c->policies[i]);
                c->n_policies = 0;
                cli_policy = true;
            }
            rc = add_policy(c, optarg);
        }
        if (rc != 0)
            return -1;
    }
    if (c->n_policies == 0 && default_policy(c) != 0)
        return -1;
    return mncd_fleet_defaults(c);
}

void mncd_config_free(mncd_config *c)
{
    for (int i = 0; i < c->n_policies; i++)
        free(c->policies[i]);
    c->n_policies = 0;
}
