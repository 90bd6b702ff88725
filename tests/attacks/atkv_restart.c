// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_restart.c - principals keep their names (the restart_* attacks): a private mncd restarted on an
 * edited policy while its agent runs tainted.
 * Contracts in atkv_restart.h; linked into every attack (atk_variants.h). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"
#include "atk_variants.h"

/* ---- principals keep their names (restart_*): a private mncd */

static struct {
    pid_t pid;
    int calfd;
    char dir[700], sock[760], state[760], policy[760], cal[760], log[760];
    char pin[200], tree[100];
} dmn = {.pid = -1, .calfd = -1};

/* The policy text with @CAL@ and @OUT@ replaced, written to dmn.policy (atomically). */
static int dmn_policy(struct atk_ctx *c, const char *policy)
{
    static char out[16384];
    size_t o = 0;
    for (const char *p = policy; *p && o + 800 < sizeof(out);) {
        if (strncmp(p, "@CAL@", 5) == 0) {
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", dmn.cal);
            p += 5;
        } else if (strncmp(p, "@OUT@", 5) == 0) {
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", atk_arg(c, "c_unix") ? atk_arg(c, "c_unix") : "");
            p += 5;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = 0;
    char tmp[800];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dmn.policy);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || atk_write_all(fd, out, o) < 0 || close(fd) < 0)
        return -1;
    return rename(tmp, dmn.policy);
}

/* How many daemon.start records the private mncd's audit log holds. */
static int dmn_starts(void)
{
    char p[800];
    snprintf(p, sizeof(p), "%s/audit.jsonl", dmn.state);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    static char buf[1 << 20];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    int k = 0;
    for (char *s = buf; n > 0 && (s = memmem(s, (size_t)(buf + n - s), "\"op\":\"daemon.start\"", 19)); s += 19)
        k++;
    return k;
}

/* Waits (up to 60 s: the guest is slow) until the private mncd has started more than `starts`
 * times and answers. 0 or -1. */
static int dmn_wait(int starts)
{
    for (int i = 0; i < 1200; i++) {
        if (dmn.pid > 0 && waitpid(dmn.pid, NULL, WNOHANG) == dmn.pid) {
            dmn.pid = -1;
            return -1;
        }
        if (dmn_starts() > starts) {
            int fd = atk_unix(SOCK_STREAM, dmn.sock);
            if (fd >= 0) {
                close(fd);
                return 0;
            }
        }
        usleep(50000);
    }
    return -1;
}

static int dmn_spawn(void)
{
    const char *mncd = getenv("ATK_MNCD");
    char def[800];
    if (!mncd || !*mncd) {
        const char *ctl = getenv("MNCCTL");
        const char *sl = ctl ? strrchr(ctl, '/') : NULL;
        snprintf(def, sizeof(def), "%.*s/mncd", sl ? (int)(sl - ctl) : 1, sl ? ctl : ".");
        mncd = def;
    }
    const char *kernel = getenv("ATK_KERNEL") && *getenv("ATK_KERNEL") ? getenv("ATK_KERNEL") : "cgroup";
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int l = open(dmn.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (l < 0 || dn < 0 || dup2(dn, 0) < 0 || dup2(l, 1) < 0 || dup2(l, 2) < 0)
            _exit(127);
        execl(mncd, "mncd", "--socket", dmn.sock, "--state-dir", dmn.state, "--policy", dmn.policy, "--kernel", kernel,
              "--pin-root", dmn.pin, "--cgroup-tree", dmn.tree, (char *)NULL);
        _exit(127);
    }
    dmn.pid = pid;
    return 0;
}

/* Replaces (or adds) the kv key=val. */
static void kv_replace(struct atk_ctx *c, const char *key, const char *val)
{
    size_t kl = strlen(key);
    for (int i = 0; i < c->nkv; i++)
        if (strncmp(c->kv[i], key, kl) == 0 && c->kv[i][kl] == '=') {
            size_t n = kl + strlen(val) + 2;
            char *s = malloc(n);
            if (!s)
                return;
            snprintf(s, n, "%s=%s", key, val);
            c->kv[i] = s;
            return;
        }
    atk_set(c, key, "%s", val);
}

int atkv_daemon_start(struct atk_ctx *c, const char *policy)
{
    snprintf(dmn.dir, sizeof(dmn.dir), "%s/mncd", c->dir);
    snprintf(dmn.sock, sizeof(dmn.sock), "%s/mncd.sock", c->dir);
    snprintf(dmn.state, sizeof(dmn.state), "%s/state", dmn.dir);
    snprintf(dmn.policy, sizeof(dmn.policy), "%s/policy.json", dmn.dir);
    snprintf(dmn.cal, sizeof(dmn.cal), "%s/cal.sock", c->dir);
    snprintf(dmn.log, sizeof(dmn.log), "%s/mncd.log", dmn.dir);
    snprintf(dmn.pin, sizeof(dmn.pin), "/sys/fs/bpf/mnc-atkr-%d", (int)getpid());
    snprintf(dmn.tree, sizeof(dmn.tree), "mnc-atkr-%d", (int)getpid());
    if (mkdir(dmn.dir, 0700) < 0) {
        snprintf(c->notes, sizeof(c->notes), "mkdir %s: %s", dmn.dir, strerror(errno));
        return -1;
    }
    /* the in-scope sink: a listener nobody reads (a connect to it is allowed, and harmless) */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", dmn.cal);
    dmn.calfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (dmn.calfd < 0 || bind(dmn.calfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(dmn.cal, 0666) < 0 ||
        listen(dmn.calfd, 64) < 0 || dmn_policy(c, policy) < 0 || dmn_spawn() < 0 || dmn_wait(0) < 0) {
        snprintf(c->notes, sizeof(c->notes), "private mncd did not start (%s; log %s)", strerror(errno), dmn.log);
        return -1;
    }
    setenv("MNC_SOCKET", dmn.sock, 1);
    setenv("MNC_PIN_ROOT", dmn.pin, 1);
    setenv("ATK_TREE", dmn.tree, 1);
    kv_replace(c, "sock", dmn.sock);
    return 0;
}

int atkv_daemon_restart(struct atk_ctx *c, const char *policy, int sighup)
{
    int starts = dmn_starts();
    if (!sighup && dmn.pid > 0) {
        kill(dmn.pid, SIGTERM);
        waitpid(dmn.pid, NULL, 0);
        dmn.pid = -1;
    }
    if (dmn_policy(c, policy) < 0)
        return -1;
    if (sighup)
        kill(dmn.pid, SIGHUP);
    else if (dmn_spawn() < 0)
        return -1;
    if (dmn_wait(starts) < 0) {
        atk_note(c, "[orchestrator: the private mncd did not come back: %s]", dmn.log);
        return -1;
    }
    return 0;
}

void atkv_daemon_stop(struct atk_ctx *c)
{
    (void)c;
    if (dmn.pid > 0) {
        kill(dmn.pid, SIGTERM);
        waitpid(dmn.pid, NULL, 0);
        dmn.pid = -1;
    }
    if (dmn.calfd >= 0)
        close(dmn.calfd);
    dmn.calfd = -1;
    if (dmn.pin[0]) {
        const char *const args[] = {"detach", "--purge", NULL};
        atk_kern(c, args);
    }
    if (dmn.tree[0]) {
        char base[400];
        snprintf(base, sizeof(base), "%s/%s", getenv("ATK_CG2") ? getenv("ATK_CG2") : "", dmn.tree);
        DIR *d = opendir(base);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.' || e->d_type != DT_DIR)
                continue;
            char p[700];
            snprintf(p, sizeof(p), "%s/%s/cgroup.kill", base, e->d_name);
            int fd = open(p, O_WRONLY | O_CLOEXEC);
            if (fd >= 0) {
                if (write(fd, "1", 1) < 0) { /* best effort */
                }
                close(fd);
            }
            usleep(100000);
            snprintf(p, sizeof(p), "%s/%s", base, e->d_name);
            rmdir(p);
        }
        if (d)
            closedir(d);
        rmdir(base);
    }
}

int atkv_restart_agent(struct atk_ctx *c)
{
    atk_sync(c, "restart");
    int s = (int)atk_try(c, "connect collector (unix)", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (s >= 0) {
        atk_try(c, "write", write(s, c->secret, strlen(c->secret)));
        close(s);
    }
    atk_inet(c, "tcp4", AF_INET, SOCK_STREAM, 0, "127.0.0.1", (int)atk_argl(c, "tcp4"), 0);
    printf("%s\n", c->secret);
    fflush(stdout);
    if (atk_arg(c, "restart_disclose")) {
        char req[600], resp[4096];
        int fd = atk_mncd(c);
        snprintf(req, sizeof(req),
                 "{\"verb\":\"disclose\",\"contract\":\"relay\",\"state\":{\"fields\":{\"selected_slot\":\"%s\"}}}",
                 c->secret);
        if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0)
            atk_note(c, "disclose: no answer");
        else
            atk_note(c, "disclose relay: %s", strstr(resp, "\"ok\":true") ? "ok" : "refused");
        if (fd >= 0)
            close(fd);
    }
    return 0;
}

void atkv_daemon_fresh_state(void)
{
    size_t l = strlen(dmn.state);
    snprintf(dmn.state + l, sizeof(dmn.state) - l, ".2");
}

/* a comma-separated list as JSON strings or objects: fmt is "\"%s\"" or "{\"name\": \"%s\"}" */
static size_t json_list(char *out, size_t n, const char *csv, const char *fmt)
{
    size_t o = 0;
    char item[64];
    for (const char *p = csv; *p && o < n;) {
        size_t l = strcspn(p, ",");
        snprintf(item, sizeof(item), "%.*s", (int)(l < sizeof(item) - 1 ? l : sizeof(item) - 1), p);
        o += (size_t)snprintf(out + o, n - o, "%s", o ? ", " : "");
        if (o < n)
            o += (size_t)snprintf(out + o, n - o, fmt, item);
        p += l + (p[l] == ',');
    }
    return o;
}

#define RESTART_CONTRACT(ID, ISSUERS, RECIPIENT, SINKS)                                                                \
    "{\"id\": \"" ID "\", \"purpose\": \"" ID "\", \"issuers\": [" ISSUERS "], \"recipient\": \"" RECIPIENT            \
    "\", \"fields\": [\"selected_slot\"], \"lifetime\": {\"seconds\": 300}, \"sinks\": [" SINKS                        \
    "], \"memory\": false, \"family\": \"forms\", \"failure\": [\"abstain\"]}"

const char *atkv_restart_policy_wide(const char *agents, const char *sinks, const char *in_scope,
                                     const char *relay_issuers, const char *wide_sink, int wide_first)
{
    static char out[8192];
    char ag[1024], sk[2048] = "", is[512], cal[512], relay[1024], wide[512] = "";
    json_list(ag, sizeof(ag), agents, "{\"name\": \"%s\"}");
    json_list(is, sizeof(is), relay_issuers, "\"%s\"");
    size_t o = 0;
    for (const char *p = sinks; *p && o < sizeof(sk);) { /* NAME:CLASS:CAL|OUT */
        size_t l = strcspn(p, ",");
        char name[64] = "", cls[32] = "", where[8] = "";
        char one[128];
        snprintf(one, sizeof(one), "%.*s", (int)(l < sizeof(one) - 1 ? l : sizeof(one) - 1), p);
        if (sscanf(one, "%63[^:]:%31[^:]:%7s", name, cls, where) == 3)
            o += (size_t)snprintf(sk + o, sizeof(sk) - o,
                                  "%s{\"name\": \"%s\", \"class\": \"%s\", \"address\": \"unix:@%s@\"}", o ? ", " : "",
                                  name, cls, where);
        p += l + (p[l] == ',');
    }
    snprintf(cal, sizeof(cal), RESTART_CONTRACT("cal_scope", "\"worker\"", "coordinator", "\"%s\""), in_scope);
    snprintf(relay, sizeof(relay), RESTART_CONTRACT("relay", "%s", "bystander", ""), is);
    if (wide_sink)
        snprintf(wide, sizeof(wide), RESTART_CONTRACT("wide", "\"worker\"", "coordinator", "\"%s\"") ",\n  ",
                 wide_sink);
    snprintf(
        out, sizeof(out),
        "{\"mnc_policy\": 1, \"name\": \"restart\", \"agents\": [%s], \"sinks\": [%s],\n"
        " \"fields\": [{\"name\": \"selected_slot\", \"weight\": 0.1}, {\"name\": \"slot_feasible\", \"weight\": "
        "0.05}],\n"
        " \"families\": [{\"name\": \"forms\", \"forms\": [{\"name\": \"receipt\", \"fields\": [\"selected_slot\"], "
        "\"template\": \"selected slot {selected_slot}\"}]}],\n"
        " \"contracts\": [%s%s,\n  %s%s],\n"
        " \"risk\": {\"model\": \"weights\"}}",
        ag, sk, wide_first ? wide : "", cal, wide_first ? "" : wide, relay);
    return out;
}

const char *atkv_restart_policy(const char *agents, const char *sinks, const char *in_scope, const char *relay_issuers)
{
    return atkv_restart_policy_wide(agents, sinks, in_scope, relay_issuers, NULL, 0);
}

int atkv_restart_start(struct atk_ctx *c, const char *policy)
{
    c->contract = "cal_scope";
    return atkv_daemon_start(
        c, policy ? policy : atkv_restart_policy(ATKV_RESTART_AGENTS, ATKV_RESTART_SINKS, "calendar", "coordinator"));
}
