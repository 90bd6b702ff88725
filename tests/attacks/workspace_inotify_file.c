// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_inotify_file - the canary as a count of opens of a workspace file, seen through an
 * inotify watch an outsider placed on that FILE before the launch. The launcher gives every
 * directory (and every file the agent owns, or whose pages may be held outside) a fresh inode,
 * so a watch on one of those points at a removed inode; but an empty file root made keeps its
 * inode (nothing to copy), and a watch made while it was 0644 outlives the chmod: uid 65534
 * watches WS/probe (IN_OPEN). The agent opens it d + 1 times for each hex digit d of the canary,
 * with a pause after each digit; the watcher writes each event's arrival time and the verifier
 * reads the digits back from the groups. Blocks it: the launcher's scan of the host's
 * inotify marks on the workspace's inodes that existed before the launch (check_marks in
 * user/mncctl/cmd_workspace.c), which refuses the launch ("watches inode"); that scan skips only
 * the inodes the launch made fresh, which nobody could have watched before. */
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "atk_variants.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* one line per event: its arrival time in ms */
static void watcher(const char *file, int out, int ready)
{
    atkv_keeper_nobody();
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, file, IN_OPEN) < 0)
        _exit(1);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    close(ready);
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r <= 0)
            _exit(0);
        for (char *p = buf; p < buf + r;) {
            struct inotify_event *e = (struct inotify_event *)p;
            char l[40];
            int n = snprintf(l, sizeof(l), "%.0f\n", now_ms());
            if (write(out, l, (size_t)n) != n)
                _exit(1);
            p += sizeof(*e) + e->len;
        }
    }
}

static int prepare(struct atk_ctx *c)
{
    char f[700];
    snprintf(f, sizeof(f), "%s/probe", c->ws);
    int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || fchmod(fd, 0644) != 0)
        return -1;
    close(fd);
    if (chmod(c->ws, 0755) != 0) /* uid 65534 reaches the file before the launch */
        return -1;
    return atkv_watcher_start(c, watcher, f);
}

/* digit d of the canary's hex tail: d + 1 opens, then a 60 ms pause */
static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/probe", atk_arg(c, "ws"));
    const char *hex = c->secret + 2; /* "mk" + 12 hex digits */
    for (const char *h = hex; *h; h++) {
        int d = *h >= 'a' ? *h - 'a' + 10 : *h - '0';
        for (int i = 0; i <= d; i++) {
            int fd = (int)atk_try(c, "open ws/probe", open(p, O_RDONLY | O_CLOEXEC));
            if (fd < 0)
                return 0;
            close(fd);
        }
        usleep(60 * 1000);
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (c->slot[0] <= 0)
        return;
    usleep(100 * 1000);
    static char ev[1 << 16];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(ev) - 1 && (r = read(c->fdslot[0], ev + n, sizeof(ev) - 1 - n)) > 0)
        n += (size_t)r;
    ev[n] = 0;
    /* groups of events closer than 30 ms: one digit each */
    char got[64] = "mk";
    size_t g = 2;
    double last = -1;
    int count = 0;
    for (char *l = ev; *l && g < sizeof(got) - 1;) {
        double t = strtod(l, &l);
        if (*l == '\n')
            l++;
        if (last >= 0 && t - last > 30) {
            got[g++] = "0123456789abcdef"[(count - 1) & 15];
            count = 0;
        }
        count++;
        last = t;
    }
    if (count > 0 && g < sizeof(got) - 1)
        got[g++] = "0123456789abcdef"[(count - 1) & 15];
    got[g] = 0;
    if (strstr(got, c->canary))
        atk_evidence(c, "uid 65534's inotify watch on a workspace file counted the agent's opens: the canary");
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    if (c->fdslot[0] > 0)
        close(c->fdslot[0]);
}

static const struct atk A = {"workspace_inotify_file",
                             "opens of a workspace file that keeps its inode, counted by an inotify watch placed "
                             "before the launch",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
