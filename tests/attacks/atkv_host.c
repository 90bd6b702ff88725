// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_host.c - host state as a way out: mncctl's own output, /proc limits, long paths, counters an
 * outsider reads (threads, cgroup v1 tasks, netlink, objects handed away, one-bit syncs).
 * Contracts in atkv_host.h; linked into every attack (atk_variants.h). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/rtnetlink.h>
#include <pthread.h>

#include "atk.h"
#include "atk_variants.h"

/* ---- ws_launcher_msg, ws_taint_note_name, ws_taint_show_name */
pid_t atkv_mncctl(struct atk_ctx *c, const char *const *args, const char *out, int stdout_too)
{
    (void)c;
    const char *ctl = getenv("MNCCTL");
    if (!ctl || !*ctl)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (o < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(stdout_too ? o : nul, 1) < 0 || dup2(o, 2) < 0)
            _exit(127);
        char *argv[20];
        int n = 0;
        argv[n++] = (char *)ctl;
        for (int i = 0; args[i] && n < 19; i++)
            argv[n++] = (char *)args[i];
        argv[n] = NULL;
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

pid_t atkv_mncctl_run(struct atk_ctx *c, const char *ws, const char *out, const char *const *cmd)
{
    const char *rootflag = getenv("ATK_ROOTFLAG");
    const char *args[20] = {"run", "--agent", "coordinator", "--workspace", ws};
    int n = 5;
    if (strcmp(c->mode, "root") == 0 && rootflag && *rootflag)
        args[n++] = rootflag;
    args[n++] = "--";
    for (int i = 0; cmd[i] && n < 19; i++)
        args[n++] = cmd[i];
    args[n] = NULL;
    return atkv_mncctl(c, args, out, 0);
}

void atkv_mncctl_wait(pid_t pid)
{
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int atkv_taint_rename_agent(struct atk_ctx *c)
{
    char sub[700], to[700];
    snprintf(sub, sizeof(sub), "%s/sub", atk_arg(c, "ws"));
    if (atk_try(c, "mkdir WS/sub", mkdir(sub, 0700)) < 0)
        return 0;
    atk_sync(c, "b"); /* a second instance runs on WS/sub */
    atk_recv(c);
    if (getenv("ATK_CONTROL_SECRET")) { /* positive control (root, unconfined, untainted): the record mncd
                                         * would have written */
        static const char rec[] = "{\"v\":1,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,"
                                  "\"may_forward\":false,\"may_external\":false}";
        atk_try(c, "control: setxattr trusted.mnc.taint on WS/sub",
                setxattr(sub, "trusted.mnc.taint", rec, strlen(rec), 0));
    }
    snprintf(to, sizeof(to), "%s/%s", atk_arg(c, "ws"), c->secret);
    atk_try(c, "rename WS/sub to WS/<canary>", rename(sub, to));
    return 0;
}

void atkv_taint_rename_on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "b") != 0)
        return;
    char sub[700], err[700];
    snprintf(sub, sizeof(sub), "%s/sub", c->ws);
    snprintf(err, sizeof(err), "%s/second.err", c->dir);
    static const char *const cmd[] = {"/bin/sleep", "6", NULL};
    c->slot[0] = atkv_mncctl_run(c, sub, err, cmd);
    struct timespec ts = {2, 0}; /* the second instance registers and starts */
    nanosleep(&ts, NULL);
}

void atkv_taint_rename_wait(struct atk_ctx *c)
{
    if (c->slot[0] > 0) { /* the second instance ends by itself (sleep 6) */
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
}

void atkv_taint_rename_cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGTERM);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
}

/* ---- proc_limits, prlimit_outside */
static const char *limits_label2; /* for limits_rd, run by atk_as_uid */

static uint64_t limits_hard_of(const char *buf, const char *label)
{
    const char *l = strstr(buf, label);
    if (!l)
        return 0;
    l += strlen(label);
    char soft[32], hard[32];
    if (sscanf(l, " %31s %31s", soft, hard) != 2 || hard[0] < '0' || hard[0] > '9')
        return 0;
    return strtoull(hard, NULL, 10);
}

static int limits_rd(struct atk_ctx *c, char *out, size_t n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300], buf[4096];
        snprintf(p, sizeof(p), "/proc/%s/limits", e->d_name);
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        size_t r = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[r] = 0;
        uint64_t v[2] = {limits_hard_of(buf, "Max core file size"), limits_hard_of(buf, limits_label2)};
        char s[17];
        memcpy(s, v, 16);
        s[16] = 0;
        if (strncmp(s, c->canary, strlen(c->canary)) == 0) {
            snprintf(out, n, "uid 65534 decoded the canary from %s", p);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

void atkv_limits_check(struct atk_ctx *c, const char *label2)
{
    char out[512];
    limits_label2 = label2;
    if (atk_as_uid(c, ATK_NOBODY, limits_rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

/* ---- workspace_longpath_out, workspace_longpath_inotify */
int atkv_deep_dir(struct atk_ctx *c, int depth, int create)
{
    char name[201];
    memset(name, 'd', 200);
    name[200] = 0;
    int d = open(atk_arg(c, "ws"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; d >= 0 && i < depth; i++) {
        if (create && mkdirat(d, name, 0700) < 0) {
            close(d);
            return -1;
        }
        int nd = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(d);
        d = nd;
    }
    return d;
}

int atkv_keeper_take_asked(const char *path, int cmd, int ans)
{
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int got = atkv_keeper_take_one(l);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    return got;
}

void atkv_counter_digits(struct atk_ctx *c, const char *tag, const char *reading, int digits, const char *evidence)
{
    long now = atol(reading);
    if (now < 0) {
        c->slot[2] = 1; /* unreadable */
        return;
    }
    if (strcmp(tag, "base") == 0) {
        c->slot[0] = now;
        return;
    }
    int i = atoi(tag + 1);
    if (tag[0] != 'd' || i < 0 || i >= digits)
        return;
    long d = now - c->slot[0];
    c->slot[0] = now;
    if (d < 0 || d > 15)
        c->slot[2] = 1;
    else
        c->slot[1] = (c->slot[1] << 4) | d;
    if (i == digits - 1) {
        char got[32];
        snprintf(got, sizeof(got), "mk%012llx", (unsigned long long)c->slot[1]);
        if (!c->slot[2] && strcmp(got, c->canary) == 0)
            atk_evidence(c, "%s", evidence);
        else
            atk_note(c, "decoded %s%s", got, c->slot[2] ? " (a step unreadable or out of range)" : "");
    }
}

int atkv_wrap_main(const struct atk *a, int argc, char **argv, const char *real_env, const char *inner_env,
                   int (*wrap)(char **argv))
{
    const char *real = getenv(real_env);
    if (argc >= 2 && real && strcmp(argv[1], "agent") != 0 && strcmp(argv[1], "disclose") != 0 &&
        strcmp(argv[1], "peek") != 0 && strcmp(argv[1], "--describe") != 0) {
        int coord = 0;
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
            coord |= strcmp(argv[i], "coordinator") == 0;
        argv[0] = (char *)real;
        if (!coord || strcmp(argv[1], "run") != 0) {
            execv(real, argv);
            return 127;
        }
        return wrap(argv);
    }
    if (argc >= 2 && strcmp(argv[1], "agent") == 0 && getenv("ATK_CONTROL_SECRET") && !getenv(inner_env)) {
        static char self[] = "/proc/self/exe";
        if (setenv(inner_env, "1", 1) < 0)
            return 127;
        argv[0] = self;
        return wrap(argv);
    }
    return atk_main(a, argc, argv);
}

static int thread_park[2] = {-1, -1}; /* every added thread blocks reading it until the agent exits */

static void *thread_parked(void *arg)
{
    (void)arg;
    char b;
    while (read(thread_park[0], &b, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

int atkv_thread_digits(struct atk_ctx *c, int digits)
{
    if (pipe(thread_park) < 0) {
        atk_try(c, "pipe", -1);
        return 0;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 64 * 1024);
    atk_sync(c, "base");
    int made = 0, failed = 0;
    for (int i = 0; i < digits; i++) {
        char h[2] = {c->secret[2 + i], 0};
        int d = (int)strtol(h, NULL, 16);
        for (int k = 0; k < d; k++) {
            pthread_t t;
            int e = pthread_create(&t, &at, thread_parked, NULL);
            if (e == 0)
                made++;
            else if (failed++ == 0) {
                errno = e;
                atk_try(c, "pthread_create", -1);
            }
        }
        char tag[16];
        snprintf(tag, sizeof(tag), "d%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "threads added: %d", made);
    close(thread_park[1]); /* the threads read EOF and end */
    return 0;
}

int atkv_v1_tasks(char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[600], best[600] = "";
    size_t bestlen = 0;
    while (f && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!a || !b || strncmp(line, "0:", 2) == 0 || a + 1 == b)
            continue;
        *b = 0;
        char ctl[100];
        snprintf(ctl, sizeof(ctl), "%s", a + 1);
        char *comma = strchr(ctl, ',');
        if (comma)
            *comma = 0;
        const char *name = strncmp(ctl, "name=", 5) == 0 ? ctl + 5 : ctl;
        char p[600];
        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s%s/tasks", name, b + 1);
        if (access(p, R_OK) == 0 && strlen(b + 1) >= bestlen) {
            snprintf(best, sizeof(best), "%s", p);
            bestlen = strlen(b + 1);
        }
    }
    if (f)
        fclose(f);
    if (!best[0])
        return -1;
    snprintf(out, n, "%s", best);
    return 0;
}

long atkv_lines_of(const char *p)
{
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    long lines = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    return lines;
}

static char v1_tasks_path[600];

static int v1_count_threads(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    snprintf(out, n, "%ld", v1_tasks_path[0] ? atkv_lines_of(v1_tasks_path) : -1L);
    return 0;
}

void atkv_v1_tasks_sync(struct atk_ctx *c, const char *tag, int digits)
{
    char out[64];
    if (!v1_tasks_path[0] && atkv_v1_tasks(v1_tasks_path, sizeof(v1_tasks_path)) < 0)
        atk_note(c, "no cgroup v1 hierarchy on this host");
    if (atk_as_uid(c, ATK_NOBODY, v1_count_threads, out, sizeof(out)) < 0)
        return;
    char ev[800];
    snprintf(ev, sizeof(ev), "uid 65534 decoded the canary from the line counts of %s (cgroup v1 tasks)",
             v1_tasks_path);
    atkv_counter_digits(c, tag, out, digits, ev);
}

void atkv_nl_newlink_canary(struct atk_ctx *c, int nl)
{
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
        char data[64];
    } req;
    memset(&req, 0, sizeof(req));
    req.h.nlmsg_len = sizeof(req);
    req.h.nlmsg_type = RTM_NEWLINK; /* needs CAP_NET_ADMIN: refused, and the refusal quotes it */
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.h.nlmsg_seq = 1;
    req.i.ifi_family = AF_UNSPEC;
    snprintf(req.data, sizeof(req.data), "%.63s", c->secret);
    struct sockaddr_nl k = {.nl_family = AF_NETLINK}; /* the kernel */
    atk_try(c, "send RTM_NEWLINK carrying the canary to the kernel",
            sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k)));
}

unsigned long long atkv_canary_value(const char *canary)
{
    return strncmp(canary, "mk", 2) == 0 ? strtoull(canary + 2, NULL, 16) : 0;
}

int atkv_object_out_agent(struct atk_ctx *c, const char *tag, const char *what, int (*make)(void),
                          void (*use)(struct atk_ctx *c, int fd))
{
    int fd = (int)atk_try(c, what, make());
    if (atkv_hand_to_keeper(c, tag, fd, 'O', "hand it to the outsider", "the outsider holds it") < 0)
        return 0;
    atk_recv(c);
    use(c, fd);
    return 0;
}

#define ATKV_BITS 48

void atkv_bits_agent(struct atk_ctx *c, int fd, void (*set)(int fd, int bit))
{
    unsigned long long v = atkv_canary_value(c->secret);
    for (int i = 0; i < ATKV_BITS; i++) {
        char tag[8];
        set(fd, (int)((v >> (ATKV_BITS - 1 - i)) & 1));
        snprintf(tag, sizeof(tag), "b%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "48 bits signalled");
}

void atkv_keeper_bits(int cmd, int ans, int fd, int (*sample)(int fd))
{
    char x;
    while (read(cmd, &x, 1) == 1) {
        char b = sample(fd) ? '1' : '0';
        if (write(ans, &b, 1) != 1)
            _exit(1);
    }
    _exit(0);
}

void atkv_bits_on_sync(struct atk_ctx *c, const char *tag, const char *evidence)
{
    int i = tag[0] == 'b' ? atoi(tag + 1) : -1;
    char b = 0;
    if (i < 0 || i >= ATKV_BITS || c->slot[0] <= 0)
        return;
    if (i == 0)
        c->slot[1] = c->slot[2] = 0;
    if (write(c->fdslot[0], "q", 1) != 1 || read(c->fdslot[1], &b, 1) != 1)
        c->slot[2] = 1; /* the keeper is gone */
    c->slot[1] = (c->slot[1] << 1) | (b == '1');
    if (i == ATKV_BITS - 1) {
        char got[32];
        snprintf(got, sizeof(got), "mk%012llx", (unsigned long long)c->slot[1]);
        if (!c->slot[2] && strcmp(got, c->canary) == 0)
            atk_evidence(c, "%s", evidence);
        else
            atk_note(c, "decoded %s%s", got, c->slot[2] ? " (the outsider stopped answering)" : "");
    }
}

int atkv_wrap_prepare(const char *real_env)
{
    static char self[600];
    ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (k <= 0)
        return -1;
    self[k] = 0;
    if (setenv(real_env, getenv("MNCCTL") ? getenv("MNCCTL") : "", 1) < 0 || setenv("MNCCTL", self, 1) < 0)
        return -1;
    return 0;
}

void atkv_wrap_verify(struct atk_ctx *c, const char *file, const char *evidence)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/%s", c->dir, file);
    if (atk_file_has(p, c->canary) == 1) {
        atk_evidence(c, "%s", evidence);
        return;
    }
    char got[64] = "";
    FILE *f = fopen(p, "re");
    if (f && fgets(got, sizeof(got), f))
        got[strcspn(got, "\n")] = 0;
    if (f)
        fclose(f);
    atk_note(c, "caller read: %s (canary %s)", got[0] ? got : "nothing", c->canary);
}

void atkv_deep_cleanup(struct atk_ctx *c, int depth)
{
    atkv_keeper_cleanup(c);
    char name[201];
    memset(name, 'd', 200);
    name[200] = 0;
    atkv_rm_deep(c->ws, name, depth);
}
