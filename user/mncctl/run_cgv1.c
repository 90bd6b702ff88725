// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_cgv1.c - the agent's own cgroup in every mounted cgroup v1 hierarchy (contract in
 * run_cgv1.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run_cgv1.h"
#include "mnc_util.h"

/* Is every comma-separated item of `want` one of the comma-separated items of `have`? */
static bool all_listed(const char *want, const char *have)
{
    const char *w = want;
    while (*w) {
        size_t wl = strcspn(w, ",");
        bool found = false;
        for (const char *h = have; *h && !found;) {
            size_t hl = strcspn(h, ",");
            found = hl == wl && strncmp(h, w, wl) == 0;
            h += hl + (h[hl] == ',');
        }
        if (!found)
            return false;
        w += wl + (w[wl] == ',');
    }
    return true;
}

/* Where the v1 hierarchy with these controllers ("memory", "cpu,cpuacct", "name=systemd") is
 * mounted, from /proc/self/mountinfo. 1 found, 0 not mounted, -1 with why (unreadable, or a
 * path this code does not decode). */
static int find_mount(const char *ctrls, char *mnt, size_t mntlen, char *why, size_t whylen)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) {
        snprintf(why, whylen, "cgroup v1: /proc/self/mountinfo: %s", strerror(errno));
        return -1;
    }
    char line[4096];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
        char m[PATH_MAX];
        if (sscanf(line, "%*s %*s %*s %*s %4095s", m) != 1)
            continue;
        char *sep = strstr(line, " - ");
        if (!sep)
            continue;
        char fstype[32], src[256], super[1024];
        if (sscanf(sep + 3, "%31s %255s %1023s", fstype, src, super) != 3 || strcmp(fstype, "cgroup") != 0 ||
            !all_listed(ctrls, super))
            continue;
        if (strchr(m, '\\')) { /* an octal escape: a space or newline in it */
            snprintf(why, whylen, "cgroup v1 (%s): mount point %.200s: escaped characters", ctrls, m);
            rc = -1;
            break;
        }
        snprintf(mnt, mntlen, "%s", m);
        rc = 1;
    }
    fclose(f);
    return rc;
}

/* Copies a cpuset setting from the parent (a new cpuset has none, and takes no task then). */
static int copy_cpuset(const char *parent, const char *child, const char *name, char *why, size_t whylen)
{
    char pf[PATH_MAX + 32], cf[PATH_MAX + 32], val[4096];
    snprintf(pf, sizeof(pf), "%s/cpuset.%s", parent, name);
    snprintf(cf, sizeof(cf), "%s/cpuset.%s", child, name);
    if (access(pf, F_OK) != 0) { /* mounted with noprefix */
        snprintf(pf, sizeof(pf), "%s/%s", parent, name);
        snprintf(cf, sizeof(cf), "%s/%s", child, name);
    }
    int e = mnc_read_file(pf, val, sizeof(val));
    if (e == 0) {
        val[strcspn(val, "\n")] = 0;
        e = val[0] ? mnc_write_file(cf, val) : -EINVAL;
    }
    if (e) {
        snprintf(why, whylen, "cgroup v1 cpuset: %s of %.300s: %s", name, parent, strerror(-e));
        return -1;
    }
    return 0;
}

/* Removes the empty "mnc-NAME.PID" directories under parent whose launcher PID is gone: a
 * launcher killed with SIGKILL cannot remove its own (the v2 one goes with mncd's cleanup). A
 * directory that still has tasks is not empty, and rmdir leaves it. */
static void remove_stale(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *dot = strrchr(e->d_name, '.');
        if (strncmp(e->d_name, "mnc-", 4) != 0 || !dot)
            continue;
        char *end;
        long pid = strtol(dot + 1, &end, 10);
        if (*end || pid <= 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof(p), "%s/%s", parent, e->d_name) < (int)sizeof(p))
            (void)rmdir(p);
    }
    closedir(d);
}

/* Makes dir (mode 0700; an existing one is set to 0700) and, in a cpuset hierarchy, gives it
 * from's cpus and mems. 0, or -1 with why. */
static int make_dir(const char *ctrls, const char *dir, const char *from, bool may_exist, char *why, size_t whylen)
{
    if (mkdir(dir, 0700) != 0 && !(may_exist && errno == EEXIST)) {
        snprintf(why, whylen, "cgroup v1 (%s): create %.300s: %s", ctrls, dir, strerror(errno));
        return -1;
    }
    if (chmod(dir, 0700) != 0) {
        snprintf(why, whylen, "cgroup v1 (%s): chmod 0700 %.300s: %s", ctrls, dir, strerror(errno));
        return -1;
    }
    if (all_listed("cpuset", ctrls) &&
        (copy_cpuset(from, dir, "cpus", why, whylen) != 0 || copy_cpuset(from, dir, "mems", why, whylen) != 0))
        return -1;
    return 0;
}

int run_cgv1_create(run_cgv1 *v, const char *tree, const char *leaf, char *why, size_t whylen)
{
    v->n = 0;
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) {
        snprintf(why, whylen, "cgroup v1: /proc/self/cgroup: %s", strerror(errno));
        return -1;
    }
    char line[4096];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        /* ID:CONTROLLERS:PATH; ID 0 is the unified (v2) hierarchy */
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || strncmp(line, "0:", 2) == 0)
            continue;
        *c2 = 0;
        const char *ctrls = c1 + 1;
        if (!ctrls[0])
            continue;
        char mnt[PATH_MAX];
        int m = find_mount(ctrls, mnt, sizeof(mnt), why, whylen);
        if (m < 0) {
            rc = -1;
            break;
        }
        if (m == 0)
            continue;
        if (v->n == RUN_CGV1_MAX) {
            snprintf(why, whylen, "cgroup v1: more than %d hierarchies", RUN_CGV1_MAX);
            rc = -1;
            break;
        }
        /* At the top of what the mount shows, not under the launcher's cgroup: a v1 cgroup's
         * memory.stat, usage and max usage count its whole subtree and are 0444, so a readable
         * ancestor other than the root (host-wide figures, as /proc/meminfo) would show the
         * agent's memory to every user (attack cgroup_v1_parent_memstat). */
        int pl = snprintf(v->parent[v->n], sizeof(v->parent[v->n]), "%s/%s", mnt, tree);
        int dl = snprintf(v->dir[v->n], sizeof(v->dir[v->n]), "%s/%s/%s", mnt, tree, leaf);
        if (pl < 0 || (size_t)pl >= sizeof(v->parent[v->n]) || dl < 0 || (size_t)dl >= sizeof(v->dir[v->n])) {
            snprintf(why, whylen, "cgroup v1 (%s): path too long", ctrls);
            rc = -1;
            break;
        }
        /* another launcher removing the (empty) parent as we come: make it again, a few times */
        int tries = 0, e = 0;
        for (;;) {
            if (make_dir(ctrls, v->parent[v->n], mnt, true, why, whylen) != 0) {
                rc = -1;
                break;
            }
            remove_stale(v->parent[v->n]);
            e = mkdir(v->dir[v->n], 0700) == 0 ? 0 : errno;
            if (e != ENOENT || ++tries == 3)
                break;
        }
        if (rc != 0)
            break;
        if (e) { /* EEXIST too: never share a directory with whoever made it */
            snprintf(why, whylen, "cgroup v1 (%s): create %.300s: %s", ctrls, v->dir[v->n], strerror(e));
            rc = -1;
            break;
        }
        v->n++; /* ours from here: removed on failure */
        if (make_dir(ctrls, v->dir[v->n - 1], v->parent[v->n - 1], true, why, whylen) != 0) {
            rc = -1;
            break;
        }
    }
    fclose(f);
    if (rc != 0)
        run_cgv1_remove(v);
    return rc;
}

int run_cgv1_enter(const run_cgv1 *v, char *why, size_t whylen)
{
    for (int i = 0; i < v->n; i++) {
        char procs[PATH_MAX + 16];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", v->dir[i]);
        int e = mnc_write_file(procs, "0");
        if (e) {
            snprintf(why, whylen, "enter cgroup v1 %.400s: %s", v->dir[i], strerror(-e));
            return -1;
        }
    }
    return 0;
}

void run_cgv1_remove(run_cgv1 *v)
{
    for (int i = v->n - 1; i >= 0; i--) {
        int e = 0;
        for (int t = 0; t < 200; t++) { /* the v2 cgroup.kill's victims may still be reaped */
            if (rmdir(v->dir[i]) == 0 || errno == ENOENT) {
                e = 0;
                break;
            }
            e = errno;
            if (e != EBUSY)
                break;
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (e)
            fprintf(stderr, "mncctl: could not remove cgroup v1 %s: %s\n", v->dir[i], strerror(e));
        (void)rmdir(v->parent[i]); /* the tree's v1 twin, once no agent is left in it */
    }
    v->n = 0;
}
