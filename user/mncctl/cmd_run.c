// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_run.c - `mncctl run`: launch an agent under kernel enforcement.
 *
 *   mncctl [--socket PATH] run --agent NAME [--policy FILE]... [--workspace DIR]... [--read PATH]...
 *          [--keep-fd N]... [--uid N | --as-root] [--server] [--netns] [--pin-root DIR]
 *          [--kernel-only] -- CMD [ARGS...]
 *
 * 1. Opens the pinned kernel state (refuses if the programs are not attached: an agent never
 *    runs unenforced by accident).
 * 2. Resolves the agent id (policy, else the pinned names map), the uid it runs as (--uid,
 *    else RUN_UID_BASE + agent id; --as-root: uid 0 with reduced capabilities, warned) and its
 *    workspaces (--workspace, else the policy's). Refuses a workspace that contains, or lies
 *    inside, a log or memory sink (by the policy's paths and by (dev, ino) against the
 *    file_sinks map, so hard links are found too), one that holds a FIFO or a device node it
 *    did not create, one the agent's uid cannot reach, and "/" or a top-level directory.
 *    Then gives each workspace to the agent: owner root, group its gid, mode 0770 (it cannot chmod
 *    it open); --as-root: root:root 0700.
 * 3. Creates <tree>/<agent>.<pid> and has mncd register it (admin verb agent.register with the
 *    uid, --as-root and the workspaces: mncd checks the caller, resolves the cgroup id itself,
 *    writes cgroup id -> agent and an untainted taint entry if the agent has none) BEFORE any
 *    agent process runs in it. If mncd cannot be reached the launch is refused (fail closed:
 *    nobody would maintain the agent's taint), unless --kernel-only asks for a launch under
 *    the kernel programs alone, which registers directly in the maps.
 * 4. Forks; the child confines itself (run_confine.h: cgroup + cgroup namespace, inherited fds
 *    closed, new session, uid/capabilities, no_new_privs, Landlock, seccomp allowlist) and
 *    execs CMD. If any confinement step fails, CMD is not executed.
 * 5. When CMD exits, kills what is left in the cgroup and removes it; mncd sees the cgroup go
 *    and drops the registration (and the taint with the agent's last instance). With
 *    --kernel-only the launcher does that itself. Exit status: CMD's (128 + signal if it was
 *    killed), 1 on a launcher error. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mnc/policy.h"
#include "mnc/protocol.h"
#include "mnc_kern.h"
#include "mncctl.h"
#include "run_confine.h"
#include "run_gate.h"
#include "run_labels.h"
#include "run_relay.h"
#include "util.h"
#include "workspace.h"

#define MAX_WS MNC_MAX_WORKSPACE
#define WALK_LIMIT 200000

/* ---- workspace checks (the walk over every entry is mncctl_ws_give's, workspace.h) */
static bool path_within(const char *inner, const char *outer)
{
    size_t n = strlen(outer);
    if (n == 1 && outer[0] == '/')
        return true;
    return strncmp(inner, outer, n) == 0 && (inner[n] == '/' || inner[n] == 0);
}

/* Every ancestor of path (a realpath) must let the agent's uid through: it runs without
 * capabilities, so a 0700 parent (a home directory) would make the path unusable to it, and the
 * agent would fail later with a less helpful EACCES. 0, or -1 after printing why. */
static int check_reachable(const char *what, const char *path, uid_t uid)
{
    if (uid == 0)
        return 0;
    char anc[PATH_MAX];
    snprintf(anc, sizeof(anc), "%s", path);
    for (char *slash = strrchr(anc, '/'); slash; slash = strrchr(anc, '/')) {
        *slash = 0;
        const char *dir = anc[0] ? anc : "/";
        struct stat st;
        if (stat(dir, &st) != 0) {
            mncctl_err("%s %s: stat %s: %s", what, path, dir, strerror(errno));
            return -1;
        }
        bool pass = st.st_uid == uid   ? (st.st_mode & S_IXUSR)
                    : st.st_gid == uid ? (st.st_mode & S_IXGRP)
                                       : (st.st_mode & S_IXOTH);
        if (!pass) {
            mncctl_err("%s %s is not reachable by the agent's uid %u: %s is mode %04o (give others search "
                       "permission, e.g. chmod o+x %s, or put it elsewhere)",
                       what, path, (unsigned)uid, dir, (unsigned)(st.st_mode & 07777), dir);
            return -1;
        }
        if (!anc[0])
            break;
    }
    return 0;
}

/* 0 if `ws` (a realpath) is acceptable for an agent running as uid; prints why not otherwise. */
static int check_workspace(mnc_kern *k, const mnc_policy *p, const char *ws, uid_t uid)
{
    /* "/" or a top-level directory (/tmp, /home, /srv...) would be chowned to the agent */
    const char *second = strchr(ws + 1, '/');
    if (strcmp(ws, "/") == 0 || !second || !second[1]) {
        mncctl_err("workspace %s: refused, a workspace must be at least two levels deep (it becomes the "
                   "agent's: root-owned, its group, mode 0770)",
                   ws);
        return -1;
    }
    if (check_reachable("workspace", ws, uid) != 0)
        return -1;
    if (p) {
        for (int i = 0; i < p->n_principals; i++) {
            const mnc_principal *s = &p->principals[i];
            if ((s->cls != MNC_SINK_LOG && s->cls != MNC_SINK_MEMORY) || !s->path[0])
                continue;
            char real[PATH_MAX];
            const char *sp = realpath(s->path, real) ? real : s->path;
            if (path_within(sp, ws) || path_within(ws, sp)) {
                mncctl_err("workspace %s %s %s sink \"%s\" (%s): refused, it must stay reachable through mncd only", ws,
                           path_within(sp, ws) ? "contains" : "lies inside", mnc_sink_class_name(s->cls), s->name, sp);
                return -1;
            }
        }
    }
    /* the workspace and its ancestors must not be sinks (a workspace inside a memory dir) */
    char anc[PATH_MAX];
    snprintf(anc, sizeof(anc), "%s", ws);
    for (;;) {
        struct mnc_file_key fk;
        struct mnc_sink s;
        if (mnc_kern_file_key(anc, &fk) == 0 && mnc_kern_sink_file_lookup(k, &fk, &s) == 0 &&
            (s.cls == MNC_SINK_LOG || s.cls == MNC_SINK_MEMORY)) {
            mncctl_err("workspace %s lies inside registered %s sink %s: refused", ws, mnc_sink_class_name(s.cls), anc);
            return -1;
        }
        char *slash = strrchr(anc, '/');
        if (!slash || slash == anc)
            break;
        *slash = 0;
    }
    return 0;
}

static volatile sig_atomic_t child_pid;
static run_cgv1 cgv1; /* the agent's v1 cgroups (128 KiB of paths: not on the stack) */
static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

static void remove_cgroup(const char *cg)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/cgroup.kill", cg);
    mnc_write_file(p, "1"); /* leftovers (daemonised children) go with the agent; ignore if absent */
    for (int i = 0; i < 200; i++) {
        if (rmdir(cg) == 0 || errno == ENOENT)
            return;
        if (errno != EBUSY)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    mncctl_err("could not remove cgroup %s: %s", cg, strerror(errno));
}

/* agent.register through mncd. 0, or -1 after printing why. *netns is set when mncd's policy
 * says "confinement": "netns" for the agent (mncd refuses deliveries to it otherwise), *server
 * when it says "server": true (the policy mncd enforces, not only a --policy the caller gave). */
static int register_via_mncd(const char *sock, const char *agent, const char *cg, uint32_t agent_id, uid_t uid,
                             bool as_root, char *const *ws, int n_ws, const cJSON *tainted, bool stdio_pass,
                             bool *netns, bool *server, char *const *rd, int n_read, const int *keep, int n_keep)
{
    char err[512];
    int fd = mnc_client_connect(sock, err, sizeof(err));
    if (fd < 0) {
        mncctl_err("run refused: mncd is not reachable (%s): nobody would maintain the agent's taint; "
                   "start mncd, or pass --kernel-only to launch under the kernel programs alone",
                   err);
        return -1;
    }
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    int rc = -1;
    cJSON *wsa = req ? cJSON_AddArrayToObject(req, "workspaces") : NULL;
    bool built = wsa && cJSON_AddStringToObject(req, "verb", "agent.register") &&
                 cJSON_AddStringToObject(req, "agent", agent) && cJSON_AddStringToObject(req, "cgroup", cg) &&
                 cJSON_AddNumberToObject(req, "uid", (double)uid) && cJSON_AddBoolToObject(req, "root", as_root) &&
                 cJSON_AddStringToObject(req, "stdio", stdio_pass ? "passthrough" : "relay");
    for (int i = 0; built && i < n_ws; i++) {
        cJSON *w = cJSON_CreateString(ws[i]);
        built = w && cJSON_AddItemToArray(wsa, w);
    }
    /* subdirectories an earlier instance used as its workspace and left tainted (found by
     * mncctl_ws_give's walk): mncd reads each record itself (docs/kernel.md, "Workspace taint") */
    cJSON *td = built ? cJSON_Duplicate(tainted, 1) : NULL;
    built = td && cJSON_AddItemToObject(req, "tainted_dirs", td);
    if (!built && td)
        cJSON_Delete(td);
    built = built && run_labels_request(req, rd, n_read, keep, n_keep, stdio_pass) == 0; /* run_labels.h */
    if (!built) {
        mncctl_err("run: out of memory");
    } else if (mnc_client_call(fd, req, &resp, err, sizeof(err)) != 0) {
        mncctl_err("run refused: agent.register: %s", err);
    } else {
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(resp, "ok");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(resp, "agent_id");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");
        if (!cJSON_IsTrue(ok))
            mncctl_err("run refused: mncd did not register the cgroup: %s",
                       cJSON_IsString(e) ? e->valuestring : "(no reason given)");
        else if (!cJSON_IsNumber(id) || (uint32_t)id->valuedouble != agent_id)
            mncctl_err("run refused: mncd knows agent \"%s\" under another id than the launcher's "
                       "policy/names map (%u): policies differ",
                       agent, agent_id);
        else
            rc = 0;
        const cJSON *cf = cJSON_GetObjectItemCaseSensitive(resp, "confinement");
        if (cJSON_IsString(cf) && strcmp(cf->valuestring, "netns") == 0)
            *netns = true;
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "server")))
            *server = true;
        run_labels_note(resp, agent);
        const cJSON *inh = cJSON_GetObjectItemCaseSensitive(resp, "inherits_taint_from");
        const cJSON *it;
        cJSON_ArrayForEach(it, inh)
        {
            char sh[PATH_MAX + 64];
            if (cJSON_IsString(it))
                mncctl_err("note: agent \"%s\" starts tainted: its workspace %s carries the taint of an earlier "
                           "instance (`mncctl workspace show`; an admin clears it with `mncctl workspace clear`)",
                           agent, mnc_ws_shown(it->valuestring, ws, n_ws, sh, sizeof(sh)));
        }
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    close(fd);
    return rc;
}

#define RUN_USAGE                                                                                                      \
    "run --agent NAME [--policy FILE]... [--workspace DIR]... [--read PATH]... [--keep-fd N]... "                      \
    "[--uid N | --as-root] [--server] [--netns] [--stdio relay|passthrough] [--pin-root DIR] [--kernel-only] "         \
    "-- CMD..."

/* Where execvp would find name: itself when it holds a '/', else the first PATH entry (default
 * "/usr/bin:/bin") with an executable regular file of that name. 0, or -1 when there is none. */
static int resolve_cmd(const char *name, char *out, size_t n)
{
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int w = snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", name);
        struct stat st;
        if (w > 0 && (size_t)w < n && stat(out, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
            return 0;
        if (!end)
            return -1;
        p = end;
    }
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v > max || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

static int cmd_run(int argc, char **argv, const mncctl_global *g)
{
    const char *agent = NULL, *root = NULL;
    bool kernel_only = false, as_root = false, server = false, uid_given = false, stdio_pass = false, netns = false;
    const char *policies[16];
    int n_pol = 0;
    char *ws_arg[MAX_WS];
    int n_ws = 0;
    const char *read_arg[RUN_MAX_READ];
    int n_read = 0;
    int keep[RUN_MAX_KEEP];
    int n_keep = 0;
    unsigned long uid_arg = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        unsigned long v;
        if (strcmp(argv[i], "--agent") == 0 && i + 1 < argc) {
            agent = argv[++i];
        } else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
            if (n_pol == 16) {
                mncctl_err("run: at most 16 --policy files");
                return 2;
            }
            policies[n_pol++] = argv[++i];
        } else if (strcmp(argv[i], "--workspace") == 0 && i + 1 < argc) {
            if (n_ws == MAX_WS) {
                mncctl_err("run: at most %d --workspace paths", MAX_WS);
                return 2;
            }
            ws_arg[n_ws++] = argv[++i];
        } else if (strcmp(argv[i], "--read") == 0 && i + 1 < argc) {
            if (n_read == RUN_MAX_READ) {
                mncctl_err("run: at most %d --read paths", RUN_MAX_READ);
                return 2;
            }
            read_arg[n_read++] = argv[++i];
        } else if (strcmp(argv[i], "--keep-fd") == 0 && i + 1 < argc) {
            if (n_keep == RUN_MAX_KEEP || parse_uint(argv[++i], 1u << 20, &v) != 0 || v < 3) {
                mncctl_err("run: --keep-fd takes an open fd number >= 3 (0, 1 and 2 are always kept), at most %d",
                           RUN_MAX_KEEP);
                return 2;
            }
            keep[n_keep++] = (int)v;
        } else if (strcmp(argv[i], "--uid") == 0 && i + 1 < argc) {
            if (parse_uint(argv[++i], 4294967294ul, &uid_arg) != 0 || uid_arg == 0) {
                mncctl_err("run: --uid takes a uid 1..4294967294 (uid 0 needs --as-root)");
                return 2;
            }
            uid_given = true;
        } else if (strcmp(argv[i], "--as-root") == 0) {
            as_root = true;
        } else if (strcmp(argv[i], "--stdio") == 0 && i + 1 < argc) { /* run_relay.h */
            stdio_pass = strcmp(argv[++i], "passthrough") == 0;
            if (!stdio_pass && strcmp(argv[i], "relay") != 0) {
                mncctl_err("run: --stdio takes relay (default) or passthrough");
                return 2;
            }
        } else if (strcmp(argv[i], "--server") == 0) {
            server = true;
        } else if (strcmp(argv[i], "--netns") == 0) { /* run_confine.c, enter_netns */
            netns = true;
        } else if (strcmp(argv[i], "--pin-root") == 0 && i + 1 < argc) {
            root = argv[++i];
        } else if (strcmp(argv[i], "--kernel-only") == 0) {
            kernel_only = true;
        } else {
            mncctl_err("run: unknown argument %s", argv[i]);
            return 2;
        }
    }
    if (!agent || i >= argc) {
        mncctl_err("usage: " RUN_USAGE);
        return 2;
    }
    if (as_root && uid_given) {
        mncctl_err("run: --uid and --as-root exclude each other");
        return 2;
    }
    for (int k2 = 0; k2 < n_keep; k2++)
        if (fcntl(keep[k2], F_GETFD) < 0) {
            mncctl_err("run: --keep-fd %d: not an open fd of the launcher", keep[k2]);
            return 2;
        }
    char **cmd = argv + i;

    mnc_kern *k = NULL;
    mnc_policy *pol = NULL;
    char err[512] = "";
    char *ws[MAX_WS] = {0};
    char *rd[RUN_MAX_READ] = {0};
    int rc = 1;
    char cg[PATH_MAX] = "";
    uint64_t cgid = 0;
    bool registered = false;
    uint32_t agent_id = 0;
    uid_t uid = 0;
    cJSON *tainted = NULL; /* agent.register's "tainted_dirs" */

    if (mnc_kern_open(root, &k, err, sizeof(err)) != 0) {
        mncctl_err("run refused: kernel enforcement is not available: %s", err);
        return 1;
    }
    mnc_kern_status st;
    if (mnc_kern_status_get(k, &st) != 0 || st.n_links != st.n_links_expected || !mnc_kern_tree(k)[0]) {
        mncctl_err(
            "run refused: the enforcement programs are not (all) attached under %s%s%s; run `mncctl kern attach`",
            mnc_kern_root(k), st.missing[0] ? ": missing " : "", st.missing);
        goto out;
    }

    /* agent id, workspace, server role */
    if (n_pol) {
        if (!(pol = mncctl_load_policies(policies, n_pol)))
            goto out;
        int id = mnc_policy_agent(pol, agent);
        if (id < 0) {
            mncctl_err("run: agent \"%s\" is not an agent of the policy", agent);
            goto out;
        }
        agent_id = (uint32_t)id;
        if (mnc_kern_name_set(k, agent_id, agent, MNC_SINK_AGENT) != 0)
            mncctl_err("warning: could not record the agent's name in the names map: %s", strerror(errno));
        if (n_ws == 0)
            for (int w = 0; w < pol->principals[id].n_workspace && n_ws < MAX_WS; w++)
                ws_arg[n_ws++] = pol->principals[id].workspace[w];
        server |= pol->principals[id].server;           /* the policy declares it a server */
        netns |= pol->principals[id].confinement_netns; /* "confinement": "netns" */
    } else if (mnc_kern_name_find(k, agent, &agent_id, NULL) != 0) {
        mncctl_err("run: unknown agent \"%s\": pass --policy FILE, or register it with `mncctl kern name ID %s agent`",
                   agent, agent);
        goto out;
    }
    if (agent_id >= MNC_SELFTEST_AGENT_BASE) {
        mncctl_err("run: agent id %u is reserved", agent_id);
        goto out;
    }
    uid = as_root ? 0 : uid_given ? (uid_t)uid_arg : (uid_t)(RUN_UID_BASE + agent_id);
    if (as_root)
        mncctl_err("warning: agent \"%s\" runs as root (--as-root): uid 0 with a reduced capability set; "
                   "prefer its own uid",
                   agent);
    if (stdio_pass)
        mncctl_err("warning: agent \"%s\" writes to the caller's stdout/stderr directly (--stdio passthrough): "
                   "its output is not governed by its taint",
                   agent);
    for (int w = 0; w < n_ws; w++) {
        if (ws_arg[w][0] != '/') {
            mncctl_err("run: workspace %s is not an absolute path", ws_arg[w]);
            goto out;
        }
        if (!(ws[w] = realpath(ws_arg[w], NULL))) {
            mncctl_err("run: workspace %s: %s", ws_arg[w], strerror(errno));
            goto out;
        }
        if (check_workspace(k, pol, ws[w], uid) != 0)
            goto out;
    }
    for (int r = 0; r < n_read; r++) {
        if (!(rd[r] = realpath(read_arg[r], NULL))) {
            mncctl_err("run: --read %s: %s", read_arg[r], strerror(errno));
            goto out;
        }
        if (check_reachable("--read", rd[r], uid) != 0)
            goto out;
    }
    /* The workspaces become the agent's alone: nobody else may enter, and nothing reached before
     * the launch (bind mounts, directory fds, cwds, hard links, open files, fds in flight,
     * inotify marks) still leads in. The top directory stays OWNED BY ROOT, with the agent's
     * group and mode 0770: the agent reads, creates and removes in it but cannot chmod it open
     * (only the owner may); what was inside before becomes root's too, same group, no bits for
     * others, so an outsider's earlier reference to a directory or file meets DAC and the agent
     * cannot chmod it open either. What the agent creates is its own, reachable only through
     * directories outsiders cannot search. --as-root: root:root, and seccomp denies chmod. */
    if (!(tainted = cJSON_CreateArray())) {
        mncctl_err("run: out of memory");
        goto out;
    }
    /* the give step replaces the workspace's directories by fresh inodes: a caller working
     * inside one is left in a deleted directory, so the agent starts where the caller was, by
     * name, once it is given */
    char cwd[PATH_MAX];
    bool have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;
    if (n_ws > 0 && mncctl_ws_give(k, agent, ws, n_ws, uid, tainted) != 0)
        goto out;
    if (have_cwd && chdir(cwd) != 0) {
        mncctl_err("warning: the working directory %s is gone: the agent starts in / (%s)", cwd, strerror(errno));
        if (chdir("/") != 0)
            goto out;
    }
    /* CMD found on the caller's PATH here, once: the agent execs that file or fails saying so,
     * rather than the next match its Landlock rules let through (pyenv's python3 silently
     * becoming /usr/bin/python3) */
    char exe[PATH_MAX];
    if (resolve_cmd(cmd[0], exe, sizeof(exe)) != 0) {
        mncctl_err("run: %s: not found on PATH", cmd[0]);
        goto out;
    }

    /* cgroup, registered before anything runs in it */
    if (strchr(agent, '/') || strcmp(agent, ".") == 0 || strcmp(agent, "..") == 0) {
        mncctl_err("run: bad agent name \"%s\"", agent);
        goto out;
    }
    snprintf(cg, sizeof(cg), "%s/%s.%d", mnc_kern_tree(k), agent, (int)getpid());
    /* 0700: the files of a cgroup report what its processes do (cgroup.threads, cpu.stat, the
     * pressure files), outside /proc and so past hidepid: readable by others, the agent's thread
     * count would be a channel (attack cgroup_thread_count) */
    if (mkdir(cg, 0700) != 0) {
        mncctl_err("run: create cgroup %s: %s", cg, strerror(errno));
        cg[0] = 0;
        goto out;
    }
    /* and one of its own in every mounted v1 hierarchy, for the same reason (run_cgv1.h) */
    {
        char leaf[NAME_MAX + 1], why[600];
        const char *tree = strrchr(mnc_kern_tree(k), '/');
        snprintf(leaf, sizeof(leaf), "mnc-%.200s.%d", agent, (int)getpid());
        if (run_cgv1_create(&cgv1, tree ? tree + 1 : mnc_kern_tree(k), leaf, why, sizeof(why)) != 0) {
            mncctl_err("run: %s", why);
            goto out;
        }
    }
    if (!kernel_only) {
        /* mncd registers it and owns it from now on (taint, exit cleanup) */
        if (register_via_mncd(g->socket, agent, cg, agent_id, uid, as_root, ws, n_ws, tainted, stdio_pass, &netns,
                              &server, rd, n_read, keep, n_keep) != 0)
            goto out;
    } else {
        int r = mnc_cgroup_id(cg, &cgid);
        if (r == 0)
            r = mnc_kern_taint_ensure(k, agent_id);
        if (r == 0)
            r = mnc_kern_register_cgroup(k, cgid, agent_id,
                                         MNC_AGENT_F_LAUNCHED | (as_root ? MNC_AGENT_F_ROOT : 0u) |
                                             (stdio_pass ? MNC_AGENT_F_STDIO_PASS : 0u));
        if (r != 0) {
            mncctl_err("run: register cgroup %s: %s", cg, strerror(-r));
            goto out;
        }
        registered = true;
    }

    run_relay relay; /* the agent's stdout/stderr are pipes the launcher relays by taint */
    if (run_relay_open(&relay, stdio_pass, cg) != 0)
        goto out;
    run_tty tty; /* and on terminals of their own when the caller's are terminals (run_tty.h) */
    run_tty_plan(&tty, relay.active);
    int sync_pipe[2], gate_sp[2] = {-1, -1};
    if (pipe2(sync_pipe, O_CLOEXEC) != 0) {
        mncctl_err("run: pipe: %s", strerror(errno));
        goto out;
    }
    /* the agent's locks, and a server's bind/listen/autobind, are answered by us from its taint
     * (run_gate.h) */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, gate_sp) != 0) {
        mncctl_err("run: socketpair: %s", strerror(errno));
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        goto out;
    }
    /* its /dev/shm (run_mntns.h) */
    char shm[PATH_MAX + 16];
    if (n_ws > 0) {
        char why[600];
        if (run_mntns_prepare_shm(ws[0], uid, shm, sizeof(shm), why, sizeof(why)) != 0) {
            mncctl_err("run: %s", why);
            close(sync_pipe[0]);
            close(sync_pipe[1]);
            goto out;
        }
    }
    run_mntns mnt = {.agent = agent,
                     .agent_id = agent_id,
                     .uid = uid,
                     .home = n_ws > 0 ? ws[0] : NULL,
                     .shm_src = n_ws > 0 ? shm : NULL};
    /* temporary files go to the agent's own workspace (it cannot write /tmp) */
    if (n_ws > 0 && setenv("TMPDIR", ws[0], 1) != 0) {
        mncctl_err("run: setenv: %s", strerror(errno));
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        goto out;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        mncctl_err("run: fork: %s", strerror(errno));
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        for (int j = 0; j < 2; j++)
            if (gate_sp[j] >= 0)
                close(gate_sp[j]);
        goto out;
    }
    if (pid == 0) {
        close(sync_pipe[0]);
        if (gate_sp[0] >= 0)
            close(gate_sp[0]);
        char why[600] = "";
        run_confine c = {.cgroup = cg,
                         .cgv1 = &cgv1,
                         .uid = uid,
                         .as_root = as_root,
                         .server = server,
                         .netns = netns,
                         .ws = ws,
                         .n_ws = n_ws,
                         .read = rd,
                         .n_read = n_read,
                         .keep = keep,
                         .n_keep = n_keep,
                         .report_fd = sync_pipe[1],
                         .mntns = &mnt,
                         .tty = &tty,
                         .gate_sock = gate_sp[1]};
        if (run_relay_child(&relay, why, sizeof(why)) == 0 && run_confine_apply(&c, why, sizeof(why)) == 0) {
            execv(exe, cmd);
            int e = errno;
            snprintf(why, sizeof(why), "exec %.400s%s%.100s%s: %s%s", exe,
                     strcmp(exe, cmd[0]) ? " (found on PATH for " : "", strcmp(exe, cmd[0]) ? cmd[0] : "",
                     strcmp(exe, cmd[0]) ? ")" : "", strerror(e),
                     e == EACCES ? ": the agent reads and executes only the system directories, its workspaces and "
                                   "--read grants (docs/compat.md)"
                                 : "");
        }
        /* report the failure to the parent; the write end closes on exec otherwise */
        ssize_t wn = write(sync_pipe[1], why, strlen(why));
        (void)wn;
        _exit(127);
    }
    close(sync_pipe[1]);
    int gate = -1;
    if (gate_sp[1] >= 0) {
        close(gate_sp[1]);
        int master[2];
        run_tty_receive(&tty, gate_sp[0], pid, master); /* first: the child hands them over first */
        run_relay_use_tty(&relay, master);
        gate = run_gate_recv_fd(gate_sp[0], pid); /* -1: the child failed before its filter (reported) */
        close(gate_sp[0]);
    }
    run_relay_parent(&relay);
    child_pid = pid;
    struct sigaction sa = {.sa_handler = forward_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    char why[600];
    ssize_t wn;
    while ((wn = read(sync_pipe[0], why, sizeof(why) - 1)) < 0 && errno == EINTR)
        ;
    close(sync_pipe[0]);
    int status = 0;
    run_relay_loop(&relay, k, agent, agent_id, kernel_only ? NULL : g->socket, pid, gate, &status);
    if (gate >= 0)
        close(gate);
    if (wn > 0) {
        why[wn] = 0;
        mncctl_err("run: agent not started: %s", why);
        rc = 1;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    }

out:
    if (cg[0])
        remove_cgroup(cg);
    run_cgv1_remove(&cgv1); /* after the v2 cgroup.kill: its tasks were these */
    if (registered) {
        mnc_kern_unregister_cgroup(k, cgid);
        /* taint is sticky for the agent's lifetime: drop it only when no instance is left */
        if (mnc_kern_agent_cgroups(k, agent_id) == 0) {
            struct mnc_taint t;
            if (mnc_kern_taint_get(k, agent_id, &t) == 0 && mnc_kern_clear_agent(k, agent_id) != 0)
                mncctl_err("warning: could not clear agent %u's taint", agent_id);
        }
    }
    for (int w = 0; w < MAX_WS; w++)
        free(ws[w]);
    for (int r = 0; r < RUN_MAX_READ; r++)
        free(rd[r]);
    cJSON_Delete(tainted);
    mnc_policy_free(pol);
    mnc_kern_close(k);
    return rc;
}

MNCCTL_COMMAND(run_cmd, "run", RUN_USAGE, cmd_run)
