// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_self_write - the agent's own /proc files that it may write and every user may read:
 * the task name through /proc/self/comm and /proc/thread-self/comm (proc_comm tries
 * prctl(PR_SET_NAME), which the seccomp filter refuses; these are the same value by another
 * path), and /proc/self/oom_score_adj (world-readable; 0..1000 carries ~10 bits; here the
 * canary's last two hex digits). Also tried: /proc/self/attr/current and /proc/self/attr/exec
 * (LSM attributes, shown in /proc/PID/attr/ to everyone).
 * Verifier: uid 65534 scans /proc/N/comm and /proc/N/task/T/comm for the canary (the first 15
 * bytes are kept: the canary is 14) while the agent waits; oom_score_adj is only noted.
 * Blocks it: Landlock (/proc is in the read-only system rules: no write open). */
#include <dirent.h>
#include <fcntl.h>

#include "atk.h"

static void put(struct atk_ctx *c, const char *path, const char *val)
{
    char what[128];
    snprintf(what, sizeof(what), "write %s", path);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        atk_try(c, what, -1);
        return;
    }
    atk_try(c, what, write(fd, val, strlen(val)));
    close(fd);
}

static int agent(struct atk_ctx *c)
{
    put(c, "/proc/self/comm", c->secret);
    put(c, "/proc/thread-self/comm", c->secret);
    char adj[16];
    snprintf(adj, sizeof(adj), "%ld", strtol(c->secret + 12, NULL, 16));
    put(c, "/proc/self/oom_score_adj", adj);
    put(c, "/proc/self/attr/current", c->secret);
    put(c, "/proc/self/attr/exec", c->secret);
    atk_sync(c, "written");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    if (atk_scan_proc("comm", c->canary, out, n) == 1)
        return 1;
    DIR *d = opendir("/proc");
    struct dirent *e;
    int hit = 0;
    while (d && !hit && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char td[300];
        snprintf(td, sizeof(td), "/proc/%s/task", e->d_name);
        DIR *t = opendir(td);
        struct dirent *te;
        while (t && !hit && (te = readdir(t))) {
            if (te->d_name[0] < '0' || te->d_name[0] > '9')
                continue;
            char p[600];
            snprintf(p, sizeof(p), "%s/%s/comm", td, te->d_name);
            if (atk_file_has(p, c->canary) == 1) {
                snprintf(out, n, "%s", p);
                hit = 1;
            }
        }
        if (t)
            closedir(t);
    }
    if (d)
        closedir(d);
    return hit;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char out[700];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "uid 65534 read the canary in %s", out);
}

static const struct atk A = {"proc_self_write",
                             "the agent's own writable /proc files (comm, oom_score_adj, attr)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
