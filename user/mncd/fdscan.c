// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fdscan.c - the agent's non-socket objects that lead outside (contract in fdscan.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/kcmp.h>
#include <fcntl.h>
#include <limits.h>
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

#include "fdscan.h"
#include "mnc_util.h"

#define MAX_AGENT_PIDS 65536

typedef struct obj {
    dev_t dev;
    ino_t ino;
    pid_t pid; /* an agent process holding it, and its fd (-1: mapping) */
    int fd;
    bool desc; /* only this open file description counts (kcmp): a read-only fd, whose offset is
                  the shared state; else any holder of the inode */
    char what[200];
} obj;

typedef struct scan {
    pid_t *pids; /* the agent's processes, sorted */
    int npids, cpids;
    obj *o; /* objects to look for outside */
    int no, co;
    pid_t launchers[16]; /* the agent's launchers (mncctl run): trusted, not outsiders */
    int nl;
    obj ex[48]; /* the launchers' stdio: the operator's, governed by the stdio relay */
    int nex;
    const mncd_sweep_cg *cgs; /* for the workspaces */
    int ncg;
    mncd_fdscan_hit *hit;
    mncd_fdscan_stats *st;
    char *err;
    size_t errlen;
} scan;

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

static bool is_agent(const scan *s, pid_t p)
{
    return s->npids && bsearch(&p, s->pids, (size_t)s->npids, sizeof(pid_t), cmp_pid);
}

static int add_obj_as(scan *s, dev_t dev, ino_t ino, pid_t pid, int fd, const char *what, bool desc)
{
    for (int i = 0; i < s->no; i++) {
        obj *x = &s->o[i];
        if (x->dev != dev || x->ino != ino)
            continue;
        if (!x->desc)
            return 0; /* any holder of the inode counts already */
        if (!desc) {  /* now any holder counts */
            x->desc = false;
            return 0;
        }
        if (x->pid == pid && x->fd == fd)
            return 0;
    }
    if (s->no == s->co) {
        int c = s->co ? s->co * 2 : 32;
        obj *t = realloc(s->o, (size_t)c * sizeof(*t));
        if (!t)
            return -ENOMEM;
        s->o = t;
        s->co = c;
    }
    obj *o = &s->o[s->no++];
    o->dev = dev;
    o->ino = ino;
    o->pid = pid;
    o->fd = fd;
    o->desc = desc;
    snprintf(o->what, sizeof(o->what), "%.199s", what);
    return 0;
}

static int add_obj(scan *s, dev_t dev, ino_t ino, pid_t pid, int fd, const char *what)
{
    return add_obj_as(s, dev, ino, pid, fd, what, false);
}

static bool exempt(const scan *s, dev_t dev, ino_t ino)
{
    for (int i = 0; i < s->nex; i++)
        if (s->ex[i].dev == dev && s->ex[i].ino == ino)
            return true;
    return false;
}

static bool is_launcher(const scan *s, pid_t p)
{
    for (int i = 0; i < s->nl; i++)
        if (s->launchers[i] == p)
            return true;
    return false;
}

/* The object an outsider's fd (pid, fd; -1: a mapping) on (dev, ino) shares with the agent:
 * any one held as an inode, or one held as a description that kcmp says is the same. */
static const obj *find_obj(const scan *s, dev_t dev, ino_t ino, pid_t pid, int fd)
{
    for (int i = 0; i < s->no; i++) {
        const obj *o = &s->o[i];
        if (o->dev != dev || o->ino != ino)
            continue;
        if (!o->desc)
            return o;
        if (fd >= 0 && syscall(SYS_kcmp, o->pid, pid, KCMP_FILE, o->fd, fd) == 0)
            return o;
    }
    return NULL;
}

int mncd_cg_each_id(const mncd_sweep_cg *cgs, int ncg, const char *file,
                    int (*fn)(void *arg, pid_t id, char *err, size_t errlen), void *arg, char *err, size_t errlen)
{
    for (int i = 0; i < ncg; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s", cgs[i].path, file);
        FILE *f = fopen(p, "re");
        if (!f) {
            if (errno == ENOENT)
                continue; /* the instance is gone */
            snprintf(err, errlen, "read %.300s: %s", p, strerror(errno));
            return -1;
        }
        long v;
        int rc = 0;
        while (rc == 0 && fscanf(f, "%ld", &v) == 1)
            if (v > 0 && v <= INT_MAX)
                rc = fn(arg, (pid_t)v, err, errlen);
        if (rc == 0 && ferror(f)) {
            snprintf(err, errlen, "read %.300s: %s", p, strerror(errno));
            rc = -1;
        }
        fclose(f);
        if (rc)
            return rc;
    }
    return 0;
}

static int add_pid(void *arg, pid_t pid, char *err, size_t errlen)
{
    scan *s = arg;
    if (s->npids >= MAX_AGENT_PIDS) {
        snprintf(err, errlen, "too many processes in the agent's cgroups");
        return -1;
    }
    if (s->npids == s->cpids) {
        int c = s->cpids ? s->cpids * 2 : 64;
        pid_t *t = realloc(s->pids, (size_t)c * sizeof(*t));
        if (!t) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        s->pids = t;
        s->cpids = c;
    }
    s->pids[s->npids++] = pid;
    return 0;
}

static int read_pids(scan *s, const mncd_sweep_cg *cgs, int ncg)
{
    if (mncd_cg_each_id(cgs, ncg, "cgroup.procs", add_pid, s, s->err, s->errlen) != 0)
        return -1;
    if (s->npids)
        qsort(s->pids, (size_t)s->npids, sizeof(pid_t), cmp_pid);
    return 0;
}

/* "flags:\t0100002" from /proc/PID/fdinfo/FD -> the open flags, or -1 */
static long fd_flags(pid_t pid, const char *fd)
{
    char p[400], line[128];
    snprintf(p, sizeof(p), "/proc/%d/fdinfo/%.300s", (int)pid, fd);
    FILE *f = fopen(p, "re");
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "flags:", 6) == 0) {
            v = strtol(line + 6, NULL, 8);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* path is dir itself or below it: it equals dir or goes on with '/' (never ' ': "WS x" is a
 * sibling of WS; a deleted file's " (deleted)" suffix comes after its own name, below WS/). */
static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

static bool in_workspace(const char *path, const mncd_sweep_cg *cg)
{
    for (int i = 0; i < cg->n_ws; i++)
        if (under(path, cg->ws[i]))
            return true;
    return false;
}

/* An object that lives in memory, not in a directory anyone can open: whoever holds it shares
 * it. (Anything reopened through /proc/PID/fd keeps its identity, so the mode does not matter.)
 * "pipe:" and "anon_inode:" cannot be a path (a path starts with '/'); a memfd is told by its
 * identity (a regular file no directory links: nlink 0), not by the name "/memfd:", which an
 * outsider's own mount namespace can give a file on disk. */
static bool in_memory(const char *link, const struct stat *st)
{
    return strncmp(link, "pipe:", 5) == 0 || strncmp(link, "anon_inode:", 11) == 0 || S_ISFIFO(st->st_mode) ||
           (strncmp(link, "/memfd:", 7) == 0 && S_ISREG(st->st_mode) && st->st_nlink == 0);
}

static pid_t parent_of(pid_t pid)
{
    char p[64], buf[512];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    if (mnc_read_file(p, buf, sizeof(buf)) != 0)
        return -1;
    const char *rp = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
    int ppid;
    if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
        return -1;
    return ppid;
}

/* The first ancestor of an agent process that is not in the agent: the launcher (a process
 * the agent forked inherits the same stdio). -1 if there is none (reparented to init). */
static pid_t launcher_of(const scan *s, pid_t pid)
{
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        pid_t pp = parent_of(pid);
        if (pp <= 1)
            return -1;
        if (!is_agent(s, pp))
            return pp;
        pid = pp;
    }
    return -1;
}

static bool same_as_launcher_fd(const scan *s, pid_t pid, int fd, const struct stat *st)
{
    pid_t l = launcher_of(s, pid);
    if (l <= 0)
        return false;
    char p[64];
    struct stat ls;
    snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)l, fd);
    return stat(p, &ls) == 0 && ls.st_dev == st->st_dev && ls.st_ino == st->st_ino;
}

/* /dev/null, /dev/zero, /dev/full by what they are (char 1:3, 1:5, 1:7), never by the name /proc
 * prints: a path is relative to the root of its mount namespace, and an outsider with a mount
 * namespace of its own names any file of its "/dev/null". */
static bool dev_allowed(const struct stat *st)
{
    unsigned mi = minor(st->st_rdev);
    return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && (mi == 3 || mi == 5 || mi == 7);
}

/* A terminal: tty/console (4), /dev/tty, /dev/console, ptmx (5), /dev/pts slaves (136-143). */
static bool is_terminal(const struct stat *st)
{
    unsigned maj = major(st->st_rdev);
    return S_ISCHR(st->st_mode) && (maj == 4 || maj == 5 || (maj >= 136 && maj <= 143));
}

static bool root_terminal(const struct stat *st)
{
    unsigned maj = major(st->st_rdev), mi = minor(st->st_rdev);
    /* 4: tty/console, 5:0 /dev/tty, 5:1 /dev/console, 136-143: /dev/pts slaves: the operator's if
     * root owns them. Never a pty master: it stats as root's /dev/ptmx (5:2) whoever opened it,
     * and whoever holds its slave reads what is written into it. */
    return S_ISCHR(st->st_mode) && st->st_uid == 0 &&
           (maj == 4 || (maj == 5 && (mi == 0 || mi == 1)) || (maj >= 136 && maj <= 143));
}

static int agent_fds(scan *s, pid_t pid, const mncd_sweep_cg *cg)
{
    char dp[64];
    snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dp);
    if (!d)
        return errno == ENOENT || errno == ESRCH ? 0 : -errno;
    int dfd = dirfd(d), rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char link[PATH_MAX];
        ssize_t n = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
        int lerr = errno;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, 0) != 0)
            continue; /* closed meanwhile */
        /* an fd whose name cannot be read (a path longer than the page the kernel builds it in:
         * ENAMETOOLONG) is judged unnamed: never inside a workspace nor exempt by a name */
        bool named = n > 0 && n < (ssize_t)sizeof(link) - 1;
        if (named)
            link[n] = 0;
        else
            snprintf(link, sizeof(link), "(unnamed: readlink: %s)", n < 0 ? strerror(lerr) : "too long");
        if (S_ISSOCK(st.st_mode)) {
            /* where it leads is the socket sweep's; who else holds it is ours: a socket (any
             * family) also held outside the agent is read or written there (mncd's end of an
             * agent's connection is another inode) */
            if (!exempt(s, st.st_dev, st.st_ino))
                rc = add_obj(s, st.st_dev, st.st_ino, pid, atoi(e->d_name), link);
            continue;
        }
        s->st->fds++;
        int fd = atoi(e->d_name);
        if (in_memory(link, &st)) {
            if (!exempt(s, st.st_dev, st.st_ino))
                rc = add_obj(s, st.st_dev, st.st_ino, pid, fd, link);
            continue;
        }
        long fl = fd_flags(pid, e->d_name);
        bool writable = fl < 0 || (fl & O_ACCMODE) != O_RDONLY;
        /* a terminal's settings (termios: control characters, flags, window size) are set
         * through an fd of any mode and read back by whoever holds the terminal: a read-only
         * fd on an outsider's pty is a way out too (attack foreign_tty_ro_termios) */
        if (!writable && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
            /* read-only: harmless unless its open file description is shared with an outsider,
             * whose offset the agent moves with lseek (attack foreign_ro_offset) */
            if (!exempt(s, st.st_dev, st.st_ino)) /* the operator's stdin, shared by design */
                rc = add_obj_as(s, st.st_dev, st.st_ino, pid, fd, named ? link : "(unnamed)", true);
            continue;
        }
        if ((!writable && !is_terminal(&st)) || S_ISDIR(st.st_mode))
            continue;
        if (named && in_workspace(link, cg)) { /* its own file: an outsider must not hold it too */
            rc = add_obj(s, st.st_dev, st.st_ino, pid, fd, link);
            continue;
        }
        if (dev_allowed(&st) || root_terminal(&st) || (fd <= 2 && same_as_launcher_fd(s, pid, fd, &st)))
            continue;
        s->hit->kind = "foreign_file";
        s->hit->pid = pid;
        s->hit->fd = fd;
        snprintf(s->hit->what, sizeof(s->hit->what), "%.299s", link);
        rc = 1;
    }
    closedir(d);
    return rc;
}

static int foreign_map(scan *s, pid_t pid, const char *what)
{
    s->hit->kind = "foreign_file";
    s->hit->pid = pid;
    s->hit->fd = -1;
    snprintf(s->hit->what, sizeof(s->hit->what), "%.299s", what);
    return 1;
}

typedef struct maybe_w {
    unsigned long start;
    bool named; /* a file reachable by a name (foreign_file if it may become writable) */
    dev_t dev;
    ino_t ino;
    char what[200];
} maybe_w;

/* The shared mappings of an agent process (a memfd mapped, then its fd closed; a file mapped).
 * In memory (no name leads to it) and writable: an object to look for outside. A file outside
 * the workspaces that is writable now, or may become so (VM_MAYWRITE: mprotect adds PROT_WRITE
 * without any open), is a foreign_file like a writable fd on it. VmFlags come from smaps, read
 * only when a shared mapping that is not writable now needs them (cost). */
static int agent_maps(scan *s, pid_t pid, const mncd_sweep_cg *cg)
{
    char p[64], line[PATH_MAX + 128];
    snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    int rc = 0, nm = 0, cm = 0;
    maybe_w *m = NULL;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char range[64], perms[8];
        unsigned maj, min;
        unsigned long long ino;
        int off = 0;
        if (sscanf(line, "%63s %7s %*s %x:%x %llu %n", range, perms, &maj, &min, &ino, &off) < 5 || ino == 0 ||
            perms[3] != 's')
            continue;
        char *nl = strchr(line + off, '\n');
        if (nl)
            *nl = 0;
        const char *name = off > 0 ? line + off : "";
        char mp[128];
        struct stat ms;
        snprintf(mp, sizeof(mp), "/proc/%d/map_files/%s", (int)pid, range);
        int sr = stat(mp, &ms);
        if (sr != 0 && (errno == ENOENT || errno == ESRCH))
            continue; /* unmapped meanwhile */
        if (sr != 0 || ms.st_ino != (ino_t)ino)
            ms = (struct stat){.st_mode = S_IFREG, .st_nlink = 1}; /* cannot tell: a named file */
        bool named = S_ISSOCK(ms.st_mode) ? false : S_ISREG(ms.st_mode) && ms.st_nlink == 0 ? false : !dev_allowed(&ms);
        if (named && name[0] == '/' && in_workspace(name, cg))
            named = false; /* its own file: an object to look for outside */
        if (perms[1] == 'w') {
            rc = named ? foreign_map(s, pid, name) : add_obj(s, makedev(maj, min), (ino_t)ino, pid, -1, name);
            continue;
        }
        if (nm == cm) {
            int c = cm ? cm * 2 : 8;
            maybe_w *t = realloc(m, (size_t)c * sizeof(*t));
            if (!t) {
                rc = -ENOMEM;
                break;
            }
            m = t;
            cm = c;
        }
        m[nm] = (maybe_w){.start = strtoul(range, NULL, 16), .named = named, .dev = makedev(maj, min), .ino = ino};
        snprintf(m[nm].what, sizeof(m[nm].what), "%.199s", name);
        nm++;
    }
    fclose(f);
    if (rc == 0 && nm > 0) {
        snprintf(p, sizeof(p), "/proc/%d/smaps", (int)pid);
        f = fopen(p, "re");
        const maybe_w *cur = NULL;
        while (f && rc == 0 && fgets(line, sizeof(line), f)) {
            unsigned long a, b;
            char c;
            if (sscanf(line, "%lx-%lx %c", &a, &b, &c) == 3 && strchr(line, '-') < strchr(line, ' ')) {
                cur = NULL;
                for (int k = 0; k < nm; k++)
                    if (m[k].start == a)
                        cur = &m[k];
                continue;
            }
            if (!cur || strncmp(line, "VmFlags:", 8) != 0)
                continue;
            if (strstr(line, " mw"))
                rc = cur->named ? foreign_map(s, pid, cur->what) : add_obj(s, cur->dev, cur->ino, pid, -1, cur->what);
            cur = NULL;
        }
        if (f)
            fclose(f);
        else if (errno != ENOENT && errno != ESRCH) /* cannot tell: fail closed */
            rc = m[0].named ? foreign_map(s, pid, m[0].what) : add_obj(s, m[0].dev, m[0].ino, pid, -1, m[0].what);
    }
    free(m);
    return rc;
}

static uid_t uid_of(pid_t pid)
{
    char p[64];
    struct stat st;
    snprintf(p, sizeof(p), "/proc/%d", (int)pid);
    return stat(p, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* A path inside any of the agent's workspaces (an outsider holding it reads what the agent
 * writes there, whether or not the agent holds it right now). */
static const char *in_any_workspace(const scan *s, const char *path)
{
    for (int c = 0; c < s->ncg; c++)
        for (int i = 0; i < s->cgs[c].n_ws; i++)
            if (under(path, s->cgs[c].ws[i]))
                return s->cgs[c].ws[i];
    return NULL;
}

/* Is dev the filesystem of one of the agent's workspaces? For an object whose path cannot be read
 * (longer than a page: ENAMETOOLONG), which is then taken as inside the workspace: fail closed. */
static bool on_ws_fs(const scan *s, dev_t dev)
{
    for (int c = 0; c < s->ncg; c++)
        for (int i = 0; i < s->cgs[c].n_ws; i++) {
            struct stat ws;
            if (stat(s->cgs[c].ws[i], &ws) == 0 && ws.st_dev == dev)
                return true;
        }
    return false;
}

/* Does link name /proc/<agent pid>[/...] (the agent's memory, fds, environment: an fd the agent
 * opened on its own /proc entry and handed out keeps the access checked at its open - attack
 * proc_mem_passed_out)? */
static bool agent_proc(const scan *s, const char *link)
{
    if (strncmp(link, "/proc/", 6) != 0 || !isdigit((unsigned char)link[6]))
        return false;
    char *end;
    long p = strtol(link + 6, &end, 10);
    return (*end == '/' || *end == 0) && p > 0 && p <= INT_MAX && is_agent(s, (pid_t)p);
}

static int found_path(scan *s, const char *path, pid_t holder, int fd)
{
    s->hit->kind = "held_outside";
    s->hit->pid = -1;
    s->hit->fd = fd;
    snprintf(s->hit->what, sizeof(s->hit->what), "%.299s", path);
    s->hit->holder = holder;
    s->hit->holder_uid = uid_of(holder);
    return 1;
}

/* A mark of an outsider's inotify or fanotify instance (one line of its fdinfo) on a workspace
 * inode: the instance reports what happens there (created names, opens, writes) to whoever
 * holds it. The agent itself may have made the mark and handed the instance out (attack
 * workspace_inotify_out). The line carries the inode's file handle; mncd opens it on the
 * filesystem of a workspace (open_by_handle_at, root) and asks where it is. */
static const char *mark_in_workspace(const scan *s, const char *line, char *path, size_t n)
{
    unsigned bytes = 0, kdev = 0;
    int type = 0;
    const char *sd = strstr(line, "sdev:");
    if (!sd || sscanf(sd, "sdev:%x", &kdev) != 1)
        return NULL;
    /* the kernel's dev_t (major << 20 | minor): only marks on a workspace's filesystem are opened */
    dev_t mdev = makedev(kdev >> 20, kdev & 0xfffff);
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
            if (path[0] == '/' && in_any_workspace(s, path))
                return path;
        }
    return NULL;
}

/* Does fd `fd` of outsider pid (an inotify or fanotify instance) watch a workspace inode? */
static int outsider_marks(scan *s, pid_t pid, const char *fd, char *path, size_t n)
{
    char p[320], line[512];
    snprintf(p, sizeof(p), "/proc/%d/fdinfo/%.255s", (int)pid, fd);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    int hit = 0;
    while (!hit && fgets(line, sizeof(line), f))
        if ((strncmp(line, "inotify wd:", 11) == 0 || strncmp(line, "fanotify ino:", 13) == 0) &&
            mark_in_workspace(s, line, path, n))
            hit = 1;
    fclose(f);
    return hit;
}

static int found(scan *s, const obj *o, pid_t holder)
{
    s->hit->kind = "held_outside";
    s->hit->pid = o->pid;
    s->hit->fd = o->fd;
    snprintf(s->hit->what, sizeof(s->hit->what), "%s", o->what);
    s->hit->holder = holder;
    s->hit->holder_uid = uid_of(holder);
    return 1;
}

/* Does process pid (outside the agent, not root) hold one of the objects? */
/* The fds in dp (/proc/PID/fd, or a thread's own table: /proc/PID/task/TID/fd) of task pid. */
static int outsider_fds(scan *s, pid_t pid, const char *dp)
{
    DIR *d = opendir(dp);
    if (d) {
        int dfd = dirfd(d);
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            int fdn = atoi(e->d_name); /* e lives in d's buffer: gone after closedir */
            char link[PATH_MAX];
            ssize_t ln = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
            /* The outsider is not frozen: the fd may have been closed since readdir and its
             * number reused by the next open (an exec's first files, a loop of opens), so that
             * fstatat below would find a file whose path was never unreadable. Read the link
             * again; if the number is still free, nothing is held there. */
            if (ln < 0 && errno == ENOENT)
                ln = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
            if (ln < 0 && errno == ENOENT)
                continue;
            struct stat st;
            if ((ln < 0 || (size_t)ln >= sizeof(link) - 1) && fstatat(dfd, e->d_name, &st, 0) == 0 &&
                on_ws_fs(s, st.st_dev)) { /* a path too long to read (ENAMETOOLONG): fail closed */
                closedir(d);
                return found_path(s, "a file on a workspace's filesystem whose path cannot be read", pid, fdn);
            }
            if (ln > 0 && (size_t)ln < sizeof(link) - 1) {
                link[ln] = 0;
                if (link[0] == '/' && (in_any_workspace(s, link) || agent_proc(s, link))) {
                    closedir(d);
                    return found_path(s, link, pid, fdn);
                }
                char wp[PATH_MAX];
                if ((!strcmp(link, "anon_inode:inotify") || !strcmp(link, "anon_inode:[fanotify]")) &&
                    outsider_marks(s, pid, e->d_name, wp, sizeof(wp))) {
                    closedir(d);
                    char what[PATH_MAX + 40];
                    snprintf(what, sizeof(what), "a watch on %s", wp);
                    return found_path(s, what, pid, fdn);
                }
            }
            if (fstatat(dfd, e->d_name, &st, 0) != 0)
                continue;
            const obj *o = find_obj(s, st.st_dev, st.st_ino, pid, fdn);
            if (o) {
                closedir(d);
                return found(s, o, pid);
            }
        }
        closedir(d);
    }
    return 0;
}

/* The working and root directories of task dir `base` (/proc/PID or /proc/PID/task/TID) of pid:
 * inside a workspace, they list the names the agent creates there (getdents) and open its files
 * by relative path with no fd to find (attack workspace_cwd_handed: the outsider fchdir()ed into
 * a directory the agent handed it and closed the fd). A path that cannot be read (too long) on a
 * workspace's filesystem counts too (fail closed). */
static int outsider_dirs(scan *s, pid_t pid, const char *base)
{
    static const char *const which[] = {"cwd", "root"};
    for (int i = 0; i < 2; i++) {
        char p[128], link[PATH_MAX], what[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", base, which[i]);
        ssize_t ln = readlink(p, link, sizeof(link) - 1);
        struct stat st;
        if (ln < 0 && errno == ENAMETOOLONG && stat(p, &st) == 0 && on_ws_fs(s, st.st_dev)) {
            snprintf(what, sizeof(what), "its %s, on a workspace's filesystem, whose path cannot be read", which[i]);
            return found_path(s, what, pid, -1);
        }
        if (ln <= 0 || (size_t)ln >= sizeof(link) - 1)
            continue; /* a kernel thread or a zombie has none */
        link[ln] = 0;
        if (link[0] == '/' && in_any_workspace(s, link)) {
            snprintf(what, sizeof(what), "its %s: %s", which[i], link);
            return found_path(s, what, pid, -1);
        }
    }
    return 0;
}

/* Does process pid (outside the agent) hold one of the objects: in its fd table, in the table of
 * a thread that unshared its own (CLONE_FILES off: attack outsider_thread_fds), as a working or
 * root directory (its own, or a thread's that unshared CLONE_FS), or mapped? */
static int outsider(scan *s, pid_t pid)
{
    char dp[96];
    snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    int rc = outsider_fds(s, pid, dp);
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
            rc = outsider_fds(s, tid, tp);
        }
        if (rc == 0 && syscall(SYS_kcmp, pid, tid, KCMP_FS, 0, 0) != 0) {
            snprintf(tp, sizeof(tp), "/proc/%d/task/%d", (int)pid, (int)tid);
            rc = outsider_dirs(s, tid, tp);
        }
    }
    if (t)
        closedir(t);
    if (rc)
        return rc;
    char p[64], line[PATH_MAX + 128];
    snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    while (f && rc == 0 && fgets(line, sizeof(line), f)) {
        unsigned maj, min;
        unsigned long long ino;
        int off = 0;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino, &off) < 3 || ino == 0)
            continue;
        char *nl = strchr(line + off, '\n');
        if (nl)
            *nl = 0;
        const obj *o = find_obj(s, makedev(maj, min), (ino_t)ino, pid, -1);
        if (o)
            rc = found(s, o, pid);
        else if (off > 0 && line[off] == '/' && in_any_workspace(s, line + off))
            rc = found_path(s, line + off, pid, -1);
    }
    if (f)
        fclose(f);
    return rc;
}

static int host_scan(scan *s)
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
        if (p == self || is_agent(s, p) || is_launcher(s, p))
            continue; /* the agent itself, and its launcher (mncctl run, root, relays its stdio) */
        s->st->host_pids++;
        rc = outsider(s, p);
    }
    closedir(d);
    return rc;
}

/* The launchers of the agent's processes and what they hold on fds 0-2 (the operator's stdio:
 * pipes a test harness or a shell holds the other end of). Sharing those is not a way out. */
static void collect_launchers(scan *s)
{
    for (int i = 0; i < s->npids; i++) {
        pid_t l = launcher_of(s, s->pids[i]);
        if (l <= 0 || is_launcher(s, l) || s->nl == (int)(sizeof(s->launchers) / sizeof(s->launchers[0])))
            continue;
        s->launchers[s->nl++] = l;
        for (int fd = 0; fd <= 2 && s->nex < (int)(sizeof(s->ex) / sizeof(s->ex[0])); fd++) {
            char p[64];
            struct stat st;
            snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)l, fd);
            if (stat(p, &st) == 0)
                s->ex[s->nex++] = (obj){.dev = st.st_dev, .ino = st.st_ino, .pid = l, .fd = fd};
        }
    }
}

int mncd_fdscan(const mncd_sweep_cg *cgs, int ncg, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err,
                size_t errlen)
{
    mncd_fdscan_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof(*st));
    memset(hit, 0, sizeof(*hit));
    hit->holder = -1;
    long t0 = now_us();
    scan s = {.cgs = cgs, .ncg = ncg, .hit = hit, .st = st, .err = err, .errlen = errlen};
    int rc = read_pids(&s, cgs, ncg);
    if (rc == 0)
        collect_launchers(&s);
    /* one pass per cgroup's processes, so each fd is judged against its instance's workspaces */
    for (int c = 0; rc == 0 && c < ncg; c++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/cgroup.procs", cgs[c].path);
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        long v;
        while (rc == 0 && fscanf(f, "%ld", &v) == 1) {
            if (v <= 0 || v > INT_MAX)
                continue;
            rc = agent_fds(&s, (pid_t)v, &cgs[c]);
            if (rc == 0)
                rc = agent_maps(&s, (pid_t)v, &cgs[c]);
            if (rc < 0) {
                snprintf(err, errlen, "list the fds of pid %ld: %s", v, strerror(-rc));
                rc = -1;
            }
        }
        fclose(f);
    }
    st->shared = s.no;
    bool any_ws = false;
    for (int c = 0; c < ncg; c++)
        any_ws |= cgs[c].n_ws > 0;
    if (rc == 0 && (s.no > 0 || any_ws))
        rc = host_scan(&s);
    free(s.pids);
    free(s.o);
    st->total_us = now_us() - t0;
    return rc;
}
