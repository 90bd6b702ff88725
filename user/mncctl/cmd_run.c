/* cmd_run.c - `mncctl run`: launch an agent under kernel enforcement.
 *
 *   mncctl [--socket PATH] run --agent NAME [--policy FILE]... [--workspace DIR]... [--pin-root DIR]
 *          [--kernel-only] -- CMD [ARGS...]
 *
 * 1. Opens the pinned kernel state (refuses if the programs are not attached: an agent never
 *    runs unenforced by accident).
 * 2. Resolves the agent id (policy, else the pinned names map) and its workspace (--workspace,
 *    else the policy's). Refuses a workspace that contains, or lies inside, a log or memory
 *    sink: by the policy's paths and by (dev, ino) against the file_sinks map, so hard links
 *    to a sink inside the workspace are found too.
 * 3. Creates <tree>/<agent>.<pid> and has mncd register it (admin verb agent.register: mncd
 *    checks the caller, resolves the cgroup id itself, writes cgroup id -> agent and an
 *    untainted taint entry if the agent has none, and from then on knows the agent by that
 *    cgroup) BEFORE any agent process runs in it. If mncd cannot be reached the launch is
 *    refused (fail closed: nobody would maintain the agent's taint), unless --kernel-only asks
 *    for a launch under the kernel programs alone, which registers directly in the maps.
 * 4. Forks; the child enters the cgroup, sets no_new_privs, applies Landlock (writes only in the
 *    workspace and a few device nodes; no abstract UNIX sockets or signals outside its domain)
 *    and a seccomp filter (SysV msg/shm, POSIX mqueues and AF_PACKET sockets -> EPERM; bpf,
 *    perf_event_open, the mount family, module and kexec loading, port I/O, clock setting,
 *    swap and reboot -> EPERM, so a root agent cannot rewrite its taint or the enforcement),
 *    then execs CMD. If any confinement step fails, CMD is not executed.
 * 5. When CMD exits, kills what is left in the cgroup and removes it; mncd sees the cgroup go
 *    and drops the registration (and the taint with the agent's last instance). With
 *    --kernel-only the launcher does that itself. Exit status: CMD's (128 + signal if it was
 *    killed), 1 on a launcher error. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "util.h"

#define MAX_WS MNC_MAX_WORKSPACE
#define WALK_LIMIT 200000

static const char *const dev_writable[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx",
                                           "/dev/pts"};

/* ---- workspace checks */
static mnc_kern *walk_kern;
static const char *walk_bad;
static char walk_bad_path[PATH_MAX];
static long walk_count;

static int walk_fn(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag, (void)ftw;
    if (++walk_count > WALK_LIMIT) {
        walk_bad = "too many entries to verify (limit 200000)";
        return 1;
    }
    struct mnc_file_key k = {.dev = ((uint64_t)major(st->st_dev) << 20) | minor(st->st_dev), .ino = st->st_ino};
    struct mnc_sink s;
    if (mnc_kern_sink_file_lookup(walk_kern, &k, &s) == 0 &&
        (s.cls == MNC_SINK_LOG || s.cls == MNC_SINK_MEMORY)) {
        walk_bad = s.cls == MNC_SINK_LOG ? "contains a registered log sink" : "contains a registered memory sink";
        snprintf(walk_bad_path, sizeof(walk_bad_path), "%s", path);
        return 1;
    }
    return 0;
}

static bool path_within(const char *inner, const char *outer)
{
    size_t n = strlen(outer);
    if (n == 1 && outer[0] == '/')
        return true;
    return strncmp(inner, outer, n) == 0 && (inner[n] == '/' || inner[n] == 0);
}

/* 0 if `ws` (a realpath) is acceptable; prints why not otherwise. */
static int check_workspace(mnc_kern *k, const mnc_policy *p, const char *ws)
{
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
    walk_kern = k;
    walk_bad = NULL;
    walk_count = 0;
    walk_bad_path[0] = 0;
    /* No FTW_MOUNT: a mount inside the workspace (a bind mount of a sink directory from
     * another filesystem) is exactly what must be seen - Landlock's rule for the workspace
     * covers everything mounted beneath it. WALK_LIMIT bounds the cost. */
    if (nftw(ws, walk_fn, 32, FTW_PHYS) < 0) {
        mncctl_err("cannot scan workspace %s: %s", ws, strerror(errno));
        return -1;
    }
    if (walk_bad) {
        mncctl_err("workspace %s %s%s%s: refused", ws, walk_bad, walk_bad_path[0] ? ": " : "", walk_bad_path);
        return -1;
    }
    return 0;
}

/* ---- Landlock */
static int landlock_confine(char *const *ws, int n_ws, char *why, size_t whylen)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        snprintf(why, whylen, "Landlock unavailable (%s): file writes cannot be confined", strerror(errno));
        return -1;
    }
    __u64 fs = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2)
        fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    struct landlock_ruleset_attr attr = {.handled_access_fs = fs};
    size_t attr_size = offsetof(struct landlock_ruleset_attr, handled_access_net);
    if (abi >= 6) {
        /* abstract UNIX sockets have no path to label: keep them inside the agent's domain */
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        attr_size = sizeof(attr);
    }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) {
        snprintf(why, whylen, "landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < n_ws + (int)(sizeof(dev_writable) / sizeof(dev_writable[0])); i++) {
        const char *path = i < n_ws ? ws[i] : dev_writable[i - n_ws];
        bool is_ws = i < n_ws;
        int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
            if (!is_ws)
                continue; /* a device node this host lacks */
            snprintf(why, whylen, "open workspace %.400s: %s", path, strerror(errno));
            close(rs);
            return -1;
        }
        struct stat st;
        __u64 allowed = fs;
        if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
            allowed &= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE; /* file rules take file rights */
        else if (!is_ws)
            allowed &= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE; /* /dev/pts: write ttys only */
        struct landlock_path_beneath_attr pb = {.allowed_access = allowed, .parent_fd = fd};
        int rc = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
        int e = errno;
        close(fd);
        if (rc != 0) {
            snprintf(why, whylen, "landlock_add_rule %.400s: %s", path, strerror(e));
            close(rs);
            return -1;
        }
    }
    int rc = (int)syscall(SYS_landlock_restrict_self, rs, 0);
    int e = errno;
    close(rs);
    if (rc != 0) {
        snprintf(why, whylen, "landlock_restrict_self: %s", strerror(e));
        return -1;
    }
    return 0;
}

/* ---- seccomp */
static int seccomp_confine(char *why, size_t whylen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(why, whylen, "seccomp_init failed");
        return -1;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    /* SysV message queues and shared memory, POSIX message queues: IPC channels between agents
     * that neither the socket hooks nor Landlock see */
    static const char *const denied[] = {"msgget", "msgsnd", "msgrcv", "msgctl", "shmget", "shmat", "shmdt",
                                         "shmctl", "mq_open", "mq_timedsend", "mq_timedreceive", "mq_notify",
                                         "mq_getsetattr", "mq_unlink"};
    for (size_t i = 0; rc == 0 && i < sizeof(denied) / sizeof(denied[0]); i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not on this architecture */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    /* The enforcement itself. Agents may run as root (the launcher does not change uid), and a
     * root agent could otherwise rewrite its own taint through bpf(BPF_OBJ_GET) on the pinned
     * map (Landlock does not see bpf(); bpffs permission checks pass for root), detach the
     * programs, cover a sink or its own workspace with a mount (Landlock rules follow the mount
     * tree), load a kernel module, or move the wall clock that object lifetimes are measured
     * by. None of these is something an agent needs. */
    static const char *const kernel[] = {
        "bpf", "perf_event_open", "mount", "umount2", "pivot_root", "move_mount", "open_tree",
        "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "init_module",
        "finit_module", "delete_module", "kexec_load", "kexec_file_load", "iopl", "ioperm",
        "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "swapon", "swapoff",
        "reboot"};
    for (size_t i = 0; rc == 0 && i < sizeof(kernel) / sizeof(kernel[0]); i++) {
        int nr = seccomp_syscall_resolve_name(kernel[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not on this architecture */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    /* packet sockets: the cgroup sock_create hook only sees IP sockets */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_PACKET));
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(why, whylen, "seccomp filter: %s", strerror(-rc));
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t child_pid;
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

/* agent.register through mncd. 0, or -1 after printing why. */
static int register_via_mncd(const char *sock, const char *agent, const char *cg, uint32_t agent_id)
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
    if (!req || !cJSON_AddStringToObject(req, "verb", "agent.register") ||
        !cJSON_AddStringToObject(req, "agent", agent) || !cJSON_AddStringToObject(req, "cgroup", cg)) {
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
                       "policy/names map (%u): policies differ", agent, agent_id);
        else
            rc = 0;
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    close(fd);
    return rc;
}

static int cmd_run(int argc, char **argv, const mncctl_global *g)
{
    const char *agent = NULL, *root = NULL;
    bool kernel_only = false;
    const char *policies[16];
    int n_pol = 0;
    char *ws_arg[MAX_WS];
    int n_ws = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
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
        mncctl_err("usage: run --agent NAME [--policy FILE]... [--workspace DIR]... [--pin-root DIR] [--kernel-only] "
                   "-- CMD [ARGS...]");
        return 2;
    }
    char **cmd = argv + i;

    mnc_kern *k = NULL;
    mnc_policy *pol = NULL;
    char err[512] = "";
    char *ws[MAX_WS] = {0};
    int rc = 1;
    char cg[PATH_MAX] = "";
    uint64_t cgid = 0;
    bool registered = false;
    uint32_t agent_id = 0;

    if (mnc_kern_open(root, &k, err, sizeof(err)) != 0) {
        mncctl_err("run refused: kernel enforcement is not available: %s", err);
        return 1;
    }
    mnc_kern_status st;
    if (mnc_kern_status_get(k, &st) != 0 || st.n_links != st.n_links_expected || !mnc_kern_tree(k)[0]) {
        mncctl_err("run refused: the enforcement programs are not (all) attached under %s%s%s; run `mncctl kern attach`",
                   mnc_kern_root(k), st.missing[0] ? ": missing " : "", st.missing);
        goto out;
    }

    /* agent id and workspace */
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
    } else if (mnc_kern_name_find(k, agent, &agent_id, NULL) != 0) {
        mncctl_err("run: unknown agent \"%s\": pass --policy FILE, or register it with `mncctl kern name ID %s agent`",
                   agent, agent);
        goto out;
    }
    if (agent_id >= MNC_SELFTEST_AGENT_BASE) {
        mncctl_err("run: agent id %u is reserved", agent_id);
        goto out;
    }
    for (int w = 0; w < n_ws; w++) {
        if (ws_arg[w][0] != '/') {
            mncctl_err("run: workspace %s is not an absolute path", ws_arg[w]);
            goto out;
        }
        if (!(ws[w] = realpath(ws_arg[w], NULL))) {
            mncctl_err("run: workspace %s: %s", ws_arg[w], strerror(errno));
            goto out;
        }
        if (check_workspace(k, pol, ws[w]) != 0)
            goto out;
    }

    /* cgroup, registered before anything runs in it */
    if (strchr(agent, '/') || strcmp(agent, ".") == 0 || strcmp(agent, "..") == 0) {
        mncctl_err("run: bad agent name \"%s\"", agent);
        goto out;
    }
    snprintf(cg, sizeof(cg), "%s/%s.%d", mnc_kern_tree(k), agent, (int)getpid());
    if (mkdir(cg, 0755) != 0) {
        mncctl_err("run: create cgroup %s: %s", cg, strerror(errno));
        cg[0] = 0;
        goto out;
    }
    if (!kernel_only) {
        /* mncd registers it and owns it from now on (taint, exit cleanup) */
        if (register_via_mncd(g->socket, agent, cg, agent_id) != 0)
            goto out;
    } else {
        int r = mnc_cgroup_id(cg, &cgid);
        if (r == 0)
            r = mnc_kern_taint_ensure(k, agent_id);
        if (r == 0)
            r = mnc_kern_register_cgroup(k, cgid, agent_id, MNC_AGENT_F_LAUNCHED);
        if (r != 0) {
            mncctl_err("run: register cgroup %s: %s", cg, strerror(-r));
            goto out;
        }
        registered = true;
    }

    int sync_pipe[2];
    if (pipe2(sync_pipe, O_CLOEXEC) != 0) {
        mncctl_err("run: pipe: %s", strerror(errno));
        goto out;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        mncctl_err("run: fork: %s", strerror(errno));
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        goto out;
    }
    if (pid == 0) {
        close(sync_pipe[0]);
        char why[600] = "";
        char procs[PATH_MAX + 32];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
        int e = mnc_write_file(procs, "0");
        if (e)
            snprintf(why, sizeof(why), "enter cgroup %.400s: %s", cg, strerror(-e));
        else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            snprintf(why, sizeof(why), "no_new_privs: %s", strerror(errno));
        else if (landlock_confine(ws, n_ws, why, sizeof(why)) == 0 && seccomp_confine(why, sizeof(why)) == 0) {
            execvp(cmd[0], cmd);
            snprintf(why, sizeof(why), "exec %.400s: %s", cmd[0], strerror(errno));
        }
        /* report the failure to the parent; the write end closes on exec otherwise */
        ssize_t wn = write(sync_pipe[1], why, strlen(why));
        (void)wn;
        _exit(127);
    }
    close(sync_pipe[1]);
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
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            status = 127 << 8;
            break;
        }
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
    mnc_policy_free(pol);
    mnc_kern_close(k);
    return rc;
}

MNCCTL_COMMAND(run_cmd, "run",
               "run --agent NAME [--policy FILE]... [--workspace DIR]... [--pin-root DIR] [--kernel-only] -- CMD...",
               cmd_run)
