// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fdscan_host.c - the fd scan's pass over every process outside the agent (contract in
 * fdscan.h; state in fdscan_int.h): does anyone else hold what the agent holds? */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fdscan_int.h"

/* Does link name /proc/<agent pid>[/...] (the agent's memory, fds, environment: an fd the agent
 * opened on its own /proc entry and handed out keeps the access checked at its open - attack
 * proc_mem_passed_out)? */
static bool agent_proc(const scan *s, const char *link)
{
    if (strncmp(link, "/proc/", 6) != 0 || !isdigit((unsigned char)link[6]))
        return false;
    char *end;
    long p = strtol(link + 6, &end, 10);
    return (*end == '/' || *end == 0) && p > 0 && p <= INT_MAX && mncd_fds_is_agent(s, (pid_t)p);
}

/* the kernel's dev_t in /proc text (major << 20 | minor) -> dev_t */
static dev_t kdev(unsigned v) { return makedev(v >> 20, v & 0xfffff); }

static bool kind_is(const fobj *o, const char *kind) { return o->anon && strcmp(o->kind, kind) == 0; }

/* The agent's object that an outside reference to (dev, ino) reaches, if any: by inode; an
 * object held as a description only if same(o) says it is that description (NULL: cannot
 * tell, then only an ID_KIND object of the kind counts); kind: the outside file's anonymous
 * kind ("" if none). */
typedef struct ref {
    pid_t task; /* the outside task whose fd table holds fd */
    int fd;
    const struct kcmp_epoll_slot *slot; /* an epoll target: compare with KCMP_EPOLL_TFD */
} ref;

static bool same_desc(scan *s, const fobj *o, const ref *r)
{
    if (o->copy < 0 || !r)
        return false;
    s->st->kcmp++;
    long k = r->slot ? syscall(SYS_kcmp, getpid(), r->task, KCMP_EPOLL_TFD, o->copy, (unsigned long)r->slot)
                     : syscall(SYS_kcmp, getpid(), r->task, KCMP_FILE, o->copy, r->fd);
    return k == 0;
}

static const fobj *match(scan *s, dev_t dev, ino_t ino, const char *kind, const ref *r)
{
    int n;
    fobj *o = mncd_fds_find(s, dev, ino, &n);
    for (int i = 0; i < n; i++) {
        if (o[i].how == ID_INODE)
            return &o[i];
        if (o[i].anon && kind && kind[0] && !kind_is(&o[i], kind))
            continue; /* another kind of object: never the same file */
        if (o[i].how == ID_KIND || (o[i].how == ID_DESC && same_desc(s, &o[i], r)))
            return &o[i];
    }
    return NULL;
}

/* Any anonymous-inode object of the agent of this kind (NULL kind: any at all): for references
 * the kernel gives no exact way to compare (fail closed). */
static const fobj *any_of_kind(const scan *s, const char *kind)
{
    for (int i = 0; i < s->no; i++)
        if (s->o[i].anon && (!kind || kind_is(&s->o[i], kind)))
            return &s->o[i];
    return NULL;
}

/* A mark of an outsider's inotify or fanotify instance (one line of its fdinfo) on a workspace
 * inode: the instance reports what happens there (created names, opens, writes) to whoever
 * holds it. The agent itself may have made the mark and handed the instance out (attack
 * workspace_inotify_out). The line carries the inode's file handle; mncd opens it on the
 * filesystem of a workspace (open_by_handle_at, root) and asks where it is. */
static const char *mark_in_workspace(const scan *s, const char *line, dev_t mdev, char *path, size_t n)
{
    unsigned bytes = 0;
    int type = 0;
    const char *h = strstr(line, "fhandle-bytes:");
    if (!h || sscanf(h, "fhandle-bytes:%x fhandle-type:%x", &bytes, &type) != 2 || bytes == 0 || bytes > 128)
        return NULL;
    const char *hex = strstr(h, "f_handle:");
    if (!hex)
        return NULL;
    hex += 9;
    union {
        struct file_handle fh;
        unsigned char raw[sizeof(struct file_handle) + 128];
    } u;
    u.fh.handle_bytes = bytes;
    u.fh.handle_type = type;
    for (unsigned i = 0; i < bytes; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return NULL;
        u.raw[offsetof(struct file_handle, f_handle) + i] = (unsigned char)v;
    }
    for (int c = 0; c < s->ncg; c++)
        for (int i = 0; i < s->cgs[c].n_ws; i++) {
            struct stat ws;
            if (stat(s->cgs[c].ws[i], &ws) != 0 || ws.st_dev != mdev)
                continue;
            int root = open(s->cgs[c].ws[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* not O_PATH: EBADF */
            if (root < 0)
                continue;
            int fd = open_by_handle_at(root, &u.fh, O_PATH | O_CLOEXEC);
            close(root);
            if (fd < 0)
                continue; /* another filesystem, or gone */
            char p[64];
            snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
            ssize_t l = readlink(p, path, n - 1);
            close(fd);
            if (l < 0 || (size_t)l >= n - 1) { /* its path cannot be read: fail closed */
                snprintf(path, n, "an inode (handle type %d) on %s's filesystem whose path cannot be read", type,
                         s->cgs[c].ws[i]);
                return path;
            }
            path[l] = 0;
            if (path[0] == '/' && mncd_fds_in_any_workspace(s, path))
                return path;
        }
    return NULL;
}

/* fdinfo of fd `fd` of an outside task: /proc/PID/fdinfo/FD, or the thread's own table's */
static FILE *open_fdinfo(pid_t pid, pid_t task, int fd)
{
    char p[96];
    if (task == pid)
        snprintf(p, sizeof(p), "/proc/%d/fdinfo/%d", (int)pid, fd);
    else
        snprintf(p, sizeof(p), "/proc/%d/task/%d/fdinfo/%d", (int)pid, (int)task, fd);
    return fopen(p, "re");
}

/* An outsider's inotify or fanotify instance: a mark on an inode of the agent's objects (a
 * watch on its pipe reports every write: IN_MODIFY), on the inode every anonymous-inode object
 * shares (cannot tell which: fail closed), or on a workspace inode. */
static int outsider_marks(scan *s, pid_t pid, pid_t task, int fd)
{
    FILE *f = open_fdinfo(pid, task, fd);
    if (!f)
        return 0;
    char line[512], wp[PATH_MAX], what[PATH_MAX + 40];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        bool ino_ = strncmp(line, "inotify wd:", 11) == 0, fan = strncmp(line, "fanotify ino:", 13) == 0;
        if (!ino_ && !fan)
            continue;
        const char *i = strstr(line, " ino:"), *d = strstr(line, "sdev:");
        unsigned long ino;
        unsigned sdev;
        if (fan)
            i = line + 8;
        if (!i || !d || sscanf(i, " ino:%lx", &ino) != 1 || sscanf(d, "sdev:%x", &sdev) != 1)
            continue;
        dev_t dev = kdev(sdev);
        const fobj *o = match(s, dev, (ino_t)ino, NULL, NULL);
        if (!o && s->dv.anon && dev == s->dv.anon)
            o = any_of_kind(s, NULL); /* the one inode all of them share: fires for any of them */
        if (o)
            rc = mncd_fds_found(s, o, pid, fd, "an inotify or fanotify mark on its inode");
        else if (s->any_ws && mark_in_workspace(s, line, dev, wp, sizeof(wp))) {
            snprintf(what, sizeof(what), "a watch on %s", wp);
            rc = mncd_fds_found_path(s, what, pid, fd, "an inotify or fanotify mark");
        }
    }
    fclose(f);
    return rc;
}

/* An outsider's epoll instance watching one of the agent's objects: it reports the object's
 * readiness (a write into the agent's pipe or eventfd, a read back) to whoever holds the
 * instance, after the outsider closed its own fd on the object (an epoll watch lives as long as
 * the watched file). By inode, or for a description by KCMP_EPOLL_TFD. */
static int outsider_epoll(scan *s, pid_t pid, pid_t task, int fd)
{
    FILE *f = open_fdinfo(pid, task, fd);
    if (!f)
        return 0;
    char line[256];
    int rc = 0, seen[256], nseen = 0, counts[256];
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        int tfd;
        unsigned long ino;
        unsigned sdev;
        const char *i = strstr(line, " ino:"), *d = strstr(line, "sdev:");
        if (sscanf(line, "tfd: %d", &tfd) != 1 || !i || !d || sscanf(i, " ino:%lx", &ino) != 1 ||
            sscanf(d, "sdev:%x", &sdev) != 1)
            continue;
        /* toff: how many earlier watches carry the same tfd (the kernel's order is the listing's);
         * past the table's size it cannot be told: any description there counts (fail closed) */
        int toff = 0, k;
        for (k = 0; k < nseen && seen[k] != tfd; k++)
            ;
        if (k < nseen)
            toff = counts[k]++;
        else if (nseen < (int)(sizeof(seen) / sizeof(seen[0]))) {
            seen[nseen] = tfd;
            counts[nseen++] = 1;
        }
        struct kcmp_epoll_slot slot = {.efd = (unsigned)fd, .tfd = (unsigned)tfd, .toff = (unsigned)toff};
        ref r = {task, fd, &slot};
        dev_t dev = kdev(sdev);
        const fobj *o = match(s, dev, (ino_t)ino, NULL, &r);
        if (!o && k == (int)(sizeof(seen) / sizeof(seen[0])))
            o = any_of_kind(s, NULL) && s->dv.anon == dev ? any_of_kind(s, NULL) : NULL;
        if (o)
            rc = mncd_fds_found(s, o, pid, fd, "a watch of its epoll instance");
    }
    fclose(f);
    return rc;
}

/* seq_file_path's escapes (" \t\n\\" as \ooo) undone in place, so the name reads as readlink
 * gives it */
static void unescape(char *p)
{
    char *w = p;
    for (const char *r = p; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
}

/* An outsider's io_uring: its registered files (IORING_REGISTER_FILES) are held by the ring,
 * in no fd table, and read and written by the ring's requests. The kernel names them in the
 * ring's fdinfo ("UserFiles:", then "N: name"): a pipe or socket by its inode, a workspace file
 * by its path; an anonymous-inode object by its kind only (any of the agent's of that kind
 * counts: fail closed). The list is printed only while the ring's lock is free: one that
 * cannot be read after a few tries counts as holding every object (fail closed). */
static int outsider_uring(scan *s, pid_t pid, pid_t task, int fd)
{
    char line[PATH_MAX + 32];
    for (int attempt = 0; attempt < 4; attempt++) {
        FILE *f = open_fdinfo(pid, task, fd);
        if (!f)
            return 0; /* closed meanwhile */
        bool listed = false, files = false;
        int rc = 0;
        while (rc == 0 && fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\n")] = 0;
            if (strncmp(line, "UserFiles:", 10) == 0) {
                listed = files = true;
                continue;
            }
            if (strncmp(line, "UserBufs:", 9) == 0 || strncmp(line, "PollList:", 9) == 0)
                files = false;
            unsigned idx;
            int off = 0;
            if (!files || sscanf(line, " %u: %n", &idx, &off) != 1 || off == 0)
                continue;
            char *name = line + off;
            unescape(name);
            char kind[24];
            const fobj *o = NULL;
            if (strncmp(name, "anon_inode:", 11) == 0) {
                snprintf(kind, sizeof(kind), "%.23s", name + 11);
                o = any_of_kind(s, kind);
            } else {
                for (int k = 0; k < s->no && !o; k++) /* pipe:[N], socket:[N], the agent's own name */
                    if (strcmp(s->o[k].what, name) == 0)
                        o = &s->o[k];
            }
            if (o)
                rc = mncd_fds_found(s, o, pid, fd, "a registered file of its io_uring");
            else if (name[0] == '/' && mncd_fds_in_any_workspace(s, name))
                rc = mncd_fds_found_path(s, name, pid, fd, "a registered file of its io_uring");
        }
        fclose(f);
        if (rc || listed)
            return rc;
        struct timespec ts = {0, 500 * 1000};
        nanosleep(&ts, NULL);
    }
    return mncd_fds_found_path(s, "every object the agent holds (an io_uring whose registered files cannot be read)",
                               pid, fd, "an io_uring instance (fail closed)");
}

/* Do the agent's objects or workspaces give an outsider's anonymous-inode file of this kind
 * anything to look at? */
static int outsider_anon(scan *s, pid_t pid, pid_t task, int fd, const char *kind)
{
    if (!strcmp(kind, "[eventpoll]"))
        return s->no ? outsider_epoll(s, pid, task, fd) : 0;
    if (!strcmp(kind, "inotify") || !strcmp(kind, "[fanotify]"))
        return s->no || s->any_ws ? outsider_marks(s, pid, task, fd) : 0;
    if (!strcmp(kind, "[io_uring]"))
        return outsider_uring(s, pid, task, fd);
    return 0;
}

/* The fds in dp (/proc/PID/fd, or a thread's own table: /proc/PID/task/TID/fd) of task. */
static int outsider_fds(scan *s, pid_t pid, pid_t task, const char *dp)
{
    DIR *d = opendir(dp);
    if (!d)
        return 0;
    int dfd = dirfd(d), rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        int fdn = atoi(e->d_name); /* e lives in d's buffer: gone after closedir */
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, 0) != 0)
            continue; /* closed meanwhile */
        s->st->host_fds++;
        char link[PATH_MAX], kind[24] = "";
        bool pathless = S_ISSOCK(st.st_mode) || (s->dv.pipe && st.st_dev == s->dv.pipe) ||
                        (s->dv.memfd && st.st_dev == s->dv.memfd) || (s->dv.pidfs && st.st_dev == s->dv.pidfs);
        if (!pathless) {
            /* what has a name: a file or directory of a workspace, the agent's /proc entries,
             * and the kind of an anonymous-inode file */
            ssize_t ln = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
            if (ln < 0 && errno != ENAMETOOLONG)
                continue; /* closed (or the process gone) since the fstatat */
            if ((ln < 0 || (size_t)ln >= sizeof(link) - 1) && mncd_fds_on_ws_fs(s, st.st_dev)) {
                rc = mncd_fds_found_path(s, "a file on a workspace's filesystem whose path cannot be read", pid, fdn,
                                         "an fd"); /* ENAMETOOLONG: fail closed */
                break;
            }
            if (ln > 0 && (size_t)ln < sizeof(link) - 1) {
                link[ln] = 0;
                if (link[0] == '/' && (mncd_fds_in_any_workspace(s, link) || agent_proc(s, link))) {
                    rc = mncd_fds_found_path(s, link, pid, fdn, "an fd");
                    break;
                }
                if (strncmp(link, "anon_inode:", 11) == 0)
                    snprintf(kind, sizeof(kind), "%.23s", link + 11);
            }
        } else if (s->dv.pidfs && st.st_dev == s->dv.pidfs) {
            snprintf(kind, sizeof(kind), "[pidfd]");
        }
        ref r = {task, fdn, NULL};
        const fobj *o = match(s, st.st_dev, st.st_ino, kind, &r);
        if (o)
            rc = mncd_fds_found(s, o, pid, fdn, task == pid ? "an fd" : "an fd in a thread's own table");
        else if (kind[0])
            rc = outsider_anon(s, pid, task, fdn, kind);
    }
    closedir(d);
    return rc;
}

/* The working and root directories of task dir `base` (/proc/PID or /proc/PID/task/TID) of pid:
 * inside a workspace, they list the names the agent creates there (getdents) and open its files
 * by relative path with no fd to find (attack workspace_cwd_handed: the outsider fchdir()ed into
 * a directory the agent handed it and closed the fd). A path that cannot be read (too long) on a
 * workspace's filesystem counts too (fail closed). */
static int outsider_dirs(scan *s, pid_t pid, const char *base)
{
    static const char *const which[] = {"cwd", "root"};
    for (int i = 0; i < 2 && s->any_ws; i++) {
        char p[128], link[PATH_MAX], what[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", base, which[i]);
        ssize_t ln = readlink(p, link, sizeof(link) - 1);
        struct stat st;
        if (ln < 0 && errno == ENAMETOOLONG && stat(p, &st) == 0 && mncd_fds_on_ws_fs(s, st.st_dev)) {
            snprintf(what, sizeof(what), "its %s, on a workspace's filesystem, whose path cannot be read", which[i]);
            return mncd_fds_found_path(s, what, pid, -1, "a directory");
        }
        if (ln <= 0 || (size_t)ln >= sizeof(link) - 1)
            continue; /* a kernel thread or a zombie has none */
        link[ln] = 0;
        if (link[0] == '/' && mncd_fds_in_any_workspace(s, link)) {
            snprintf(what, sizeof(what), "its %s: %s", which[i], link);
            return mncd_fds_found_path(s, what, pid, -1, "a directory");
        }
    }
    return 0;
}

/* The mappings of pid: an object of the agent mapped (by inode; an anonymous-inode file by its
 * kind: a mapping gives no fd to compare, fail closed), or a workspace file. */
static int outsider_maps(scan *s, pid_t pid)
{
    char p[64], line[PATH_MAX + 128];
    snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    int rc = 0;
    while (f && rc == 0 && fgets(line, sizeof(line), f)) {
        unsigned maj, min;
        unsigned long long ino;
        int off = 0;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino, &off) < 3 || ino == 0)
            continue;
        char *nl = strchr(line + off, '\n');
        if (nl)
            *nl = 0;
        const char *name = off > 0 ? line + off : "";
        dev_t dev = makedev(maj, min);
        int n;
        const fobj *o = mncd_fds_find(s, dev, (ino_t)ino, &n), *hit = NULL;
        for (int i = 0; i < n && !hit; i++)
            if (o[i].how == ID_INODE ||
                (o[i].anon && strncmp(name, "anon_inode:", 11) == 0 && strcmp(o[i].kind, name + 11) == 0))
                hit = &o[i]; /* a read-only file held as a description shares no offset by a mapping */
        if (hit)
            rc = mncd_fds_found(s, hit, pid, -1, "a mapping");
        else if (name[0] == '/' && mncd_fds_in_any_workspace(s, name))
            rc = mncd_fds_found_path(s, name, pid, -1, "a mapping");
    }
    if (f)
        fclose(f);
    return rc;
}

/* Does process pid (outside the agent) hold one of the objects: in its fd table, in the table of
 * a thread that unshared its own (CLONE_FILES off: attack outsider_thread_fds), as a working or
 * root directory (its own, or a thread's that unshared CLONE_FS), or mapped? */
static int outsider(scan *s, pid_t pid)
{
    char dp[96], exe[8];
    snprintf(dp, sizeof(dp), "/proc/%d/exe", (int)pid);
    if (readlink(dp, exe, sizeof(exe)) < 0 && errno == ENOENT)
        return 0; /* a kernel thread (or a zombie): no fd table, no mappings, nothing to hold */
    snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    int rc = outsider_fds(s, pid, pid, dp);
    snprintf(dp, sizeof(dp), "/proc/%d", (int)pid);
    if (rc == 0)
        rc = outsider_dirs(s, pid, dp);
    snprintf(dp, sizeof(dp), "/proc/%d/task", (int)pid);
    struct stat ts; /* procfs gives a task directory 2 + threads links: one thread, nothing more */
    DIR *t = rc == 0 && stat(dp, &ts) == 0 && ts.st_nlink > 3 ? opendir(dp) : NULL;
    for (struct dirent *e; t && rc == 0 && (e = readdir(t));) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == pid)
            continue;
        char tp[96];
        if (syscall(SYS_kcmp, pid, tid, KCMP_FILES, 0, 0) != 0) { /* not the leader's table, seen above */
            snprintf(tp, sizeof(tp), "/proc/%d/task/%d/fd", (int)pid, (int)tid);
            rc = outsider_fds(s, pid, tid, tp);
        }
        if (rc == 0 && syscall(SYS_kcmp, pid, tid, KCMP_FS, 0, 0) != 0) {
            snprintf(tp, sizeof(tp), "/proc/%d/task/%d", (int)pid, (int)tid);
            rc = outsider_dirs(s, tid, tp);
        }
    }
    if (t)
        closedir(t);
    return rc ? rc : outsider_maps(s, pid);
}

int mncd_fds_host_scan(scan *s)
{
    DIR *d = opendir("/proc");
    if (!d) {
        snprintf(s->err, s->errlen, "open /proc: %s", strerror(errno));
        return -1;
    }
    pid_t self = getpid();
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t p = (pid_t)atoi(e->d_name);
        if (p == self || mncd_fds_is_agent(s, p) || mncd_fds_is_launcher(s, p))
            continue; /* the agent itself, and its launcher (mncctl run, root, relays its stdio) */
        s->st->host_pids++;
        rc = outsider(s, p);
    }
    closedir(d);
    return rc;
}
