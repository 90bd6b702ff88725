// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fdscan.c - the agent's non-socket objects that lead outside (contract in fdscan.h): the
 * agent's side (phase 1, frozen) and the helpers both phases share; the host pass is in
 * fdscan_host.c (fdscan_int.h). */
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fdscan_int.h"
#include "mnc_util.h"

#define MAX_AGENT_PIDS 65536

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* The filesystems of objects mncd makes itself: the anonymous-inode one (an eventfd), pidfs (a
 * pidfd of itself; the anonymous-inode one before Linux 6.9), pipefs, and the internal mount of
 * memfds. Learned once: a device that cannot be learned stays 0 (never a real one) and the
 * names the kernel gives these objects ("anon_inode:", "pipe:") decide instead. */
static fs_devs learn_devs(void)
{
    static fs_devs dv;
    static bool done;
    if (done)
        return dv;
    struct stat st;
    int fd = eventfd(0, EFD_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0)
        dv.anon = st.st_dev;
    if (fd >= 0)
        close(fd);
    fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (fd >= 0 && fstat(fd, &st) == 0)
        dv.pidfs = st.st_dev;
    if (fd >= 0)
        close(fd);
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) == 0) {
        if (fstat(pp[0], &st) == 0)
            dv.pipe = st.st_dev;
        close(pp[0]);
        close(pp[1]);
    }
    fd = memfd_create("mncd-probe", MFD_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0)
        dv.memfd = st.st_dev;
    if (fd >= 0)
        close(fd);
    done = true;
    return dv;
}

/* "anon_inode:[eventfd]" -> "[eventfd]" into kind; false if link names no anonymous inode */
static bool anon_kind(const char *link, char *kind, size_t n)
{
    if (strncmp(link, "anon_inode:", 11) != 0)
        return false;
    snprintf(kind, n, "%.23s", link + 11);
    return true;
}

static void close_copies(scan *s)
{
    for (int i = 0; i < s->no; i++)
        if (s->o[i].copy >= 0) {
            close(s->o[i].copy);
            s->o[i].copy = -1;
        }
}

/* Adds an object of the agent (how: enum fd_ident). ID_DESC takes mncd's copy of the open file
 * (pidfd: the agent process's; the agent is frozen, so fd is still that file). 0 or -errno. */
static int add_obj(scan *s, const struct stat *st, pid_t pid, int pidfd, int fd, const char *link, int how,
                   const char *kind)
{
    for (int i = 0; i < s->no; i++) {
        fobj *x = &s->o[i];
        if (x->dev != st->st_dev || x->ino != st->st_ino || x->how != how)
            continue;
        if (how != ID_DESC || (x->pid == pid && x->fd == fd))
            return 0; /* any holder of the inode, or this very description, counts already */
    }
    if (mnc_grow((void **)&s->o, &s->co, s->no, sizeof(*s->o), 32) != 0)
        return -ENOMEM;
    fobj *o = &s->o[s->no];
    memset(o, 0, sizeof(*o));
    o->dev = st->st_dev;
    o->ino = st->st_ino;
    o->pid = pid;
    o->fd = fd;
    o->how = (unsigned char)how;
    o->copy = -1;
    o->anon = kind != NULL;
    snprintf(o->kind, sizeof(o->kind), "%s", kind ? kind : "");
    snprintf(o->what, sizeof(o->what), "%.199s", link);
    if (how == ID_DESC) {
        o->copy = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0) : -1;
        if (o->copy < 0)
            return errno == EBADF ? 0 : -errno; /* EBADF: closed meanwhile (a frozen task can be killed) */
        struct stat cs;                         /* belt and braces: the copy is the file that was listed */
        if (fstat(o->copy, &cs) != 0 || cs.st_dev != st->st_dev || cs.st_ino != st->st_ino) {
            close(o->copy);
            return -ESTALE;
        }
    }
    s->no++;
    return 0;
}

/* The launcher's stdio (its fds 0-2): the operator's, exempt. By inode, except an object whose
 * inode is not the object (anonymous inode, pidfd): that one only if it is the same open file. */
static bool exempt(const scan *s, const struct stat *st, pid_t pid, int fd, bool desc_only)
{
    for (int i = 0; i < s->nex; i++) {
        if (s->ex[i].dev != st->st_dev || s->ex[i].ino != st->st_ino)
            continue;
        if (!desc_only || syscall(SYS_kcmp, pid, s->ex[i].pid, KCMP_FILE, fd, s->ex[i].fd) == 0)
            return true;
    }
    return false;
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
    if (mnc_grow((void **)&s->pids, &s->cpids, s->npids, sizeof(*s->pids), 64) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->pids[s->npids++] = pid;
    return 0;
}

static int read_pids(scan *s, const mncd_sweep_cg *cgs, int ncg)
{
    if (mncd_cg_each_id(cgs, ncg, "cgroup.procs", add_pid, s, s->err, s->errlen) != 0)
        return -1;
    if (s->npids)
        qsort(s->pids, (size_t)s->npids, sizeof(pid_t), mncd_fds_cmp_pid);
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

static bool in_workspace(const char *path, const mncd_sweep_cg *cg)
{
    for (int i = 0; i < cg->n_ws; i++)
        if (mncd_fds_under(path, cg->ws[i]))
            return true;
    return false;
}

/* An object that lives in memory, not in a directory anyone can open, and whose inode is the
 * object: whoever holds the inode shares it. (Anything reopened through /proc/PID/fd keeps its
 * identity, so the mode does not matter.) "pipe:" cannot be a path (a path starts with '/'); a
 * memfd is told by its identity (a regular file no directory links: nlink 0), not by the name
 * "/memfd:", which an outsider's own mount namespace can give a file on disk. */
static bool in_memory(const char *link, const struct stat *st)
{
    return strncmp(link, "pipe:", 5) == 0 || S_ISFIFO(st->st_mode) ||
           (strncmp(link, "/memfd:", 7) == 0 && S_ISREG(st->st_mode) && st->st_nlink == 0);
}

/* An object whose inode is shared by objects that have nothing in common: every anonymous-inode
 * file on the host (eventfd, epoll, timerfd, signalfd, inotify, fanotify, io_uring, ... share
 * ONE inode; none of them can be reopened through /proc: ENXIO), every pidfd of one process
 * (its pidfs inode). The object is the open file description. */
static bool shared_inode(const scan *s, const char *link, const struct stat *st)
{
    return strncmp(link, "anon_inode:", 11) == 0 || (s->dv.anon && st->st_dev == s->dv.anon) ||
           (s->dv.pidfs && st->st_dev == s->dv.pidfs);
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
        if (!mncd_fds_is_agent(s, pp))
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
    int pidfd = -1, dfd = dirfd(d), rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, 0) != 0)
            continue; /* closed meanwhile */
        char link[PATH_MAX];
        bool named;
        if (S_ISSOCK(st.st_mode) || (s->dv.pipe && st.st_dev == s->dv.pipe)) {
            /* the kernel's own names for what has no path: no need to ask */
            snprintf(link, sizeof(link), "%s:[%llu]", S_ISSOCK(st.st_mode) ? "socket" : "pipe",
                     (unsigned long long)st.st_ino);
            named = true;
        } else {
            ssize_t n = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
            int lerr = errno;
            /* an fd whose name cannot be read (a path longer than the page the kernel builds it
             * in: ENAMETOOLONG) is judged unnamed: never inside a workspace nor exempt by a name */
            named = n > 0 && n < (ssize_t)sizeof(link) - 1;
            if (named)
                link[n] = 0;
            else
                snprintf(link, sizeof(link), "(unnamed: readlink: %s)", n < 0 ? strerror(lerr) : "too long");
        }
        if (S_ISSOCK(st.st_mode)) {
            /* where it leads is the socket sweep's; who else holds it is ours: a socket (any
             * family) also held outside the agent is read or written there (mncd's end of an
             * agent's connection is another inode) */
            if (!exempt(s, &st, pid, fd, false))
                rc = add_obj(s, &st, pid, -1, fd, link, ID_INODE, NULL);
            continue;
        }
        s->st->fds++;
        char kind[24];
        if (shared_inode(s, link, &st)) {
            if (pidfd < 0 && (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
                rc = errno == ESRCH ? 0 : -errno; /* exited */
                break;
            }
            if (!anon_kind(link, kind, sizeof(kind)))
                snprintf(kind, sizeof(kind), "(%u:%u)", major(st.st_dev), minor(st.st_dev));
            if (!exempt(s, &st, pid, fd, true))
                rc = add_obj(s, &st, pid, pidfd, fd, link, ID_DESC, kind);
            continue;
        }
        if (in_memory(link, &st)) {
            if (!exempt(s, &st, pid, fd, false))
                rc = add_obj(s, &st, pid, -1, fd, link, ID_INODE, NULL);
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
            if (exempt(s, &st, pid, fd, false)) /* the operator's stdin, shared by design */
                continue;
            if (pidfd < 0 && (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
                rc = errno == ESRCH ? 0 : -errno;
                break;
            }
            rc = add_obj(s, &st, pid, pidfd, fd, named ? link : "(unnamed)", ID_DESC, NULL);
            continue;
        }
        if ((!writable && !is_terminal(&st)) || S_ISDIR(st.st_mode))
            continue;
        if (named && in_workspace(link, cg)) { /* its own file: an outsider must not hold it too */
            rc = add_obj(s, &st, pid, -1, fd, link, ID_INODE, NULL);
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
    if (pidfd >= 0)
        close(pidfd);
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
    struct stat st;
    char what[200];
} maybe_w;

/* A shared mapping found writable (or possibly so): a foreign file, or an object to look for
 * outside: its inode, or - an anonymous-inode file, which a mapping gives no fd of to compare -
 * any outside file of its kind. */
static int shared_map(scan *s, pid_t pid, const maybe_w *m)
{
    if (m->named)
        return foreign_map(s, pid, m->what);
    char kind[24];
    if (shared_inode(s, m->what, &m->st)) {
        if (!anon_kind(m->what, kind, sizeof(kind)))
            snprintf(kind, sizeof(kind), "(%u:%u)", major(m->st.st_dev), minor(m->st.st_dev));
        return add_obj(s, &m->st, pid, -1, -1, m->what, ID_KIND, kind);
    }
    return add_obj(s, &m->st, pid, -1, -1, m->what, ID_INODE, NULL);
}

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
        maybe_w w = {.start = strtoul(range, NULL, 16)};
        w.named = S_ISSOCK(ms.st_mode)                      ? false
                  : shared_inode(s, name, &ms)              ? false
                  : S_ISREG(ms.st_mode) && ms.st_nlink == 0 ? false
                                                            : !dev_allowed(&ms);
        if (w.named && name[0] == '/' && in_workspace(name, cg))
            w.named = false; /* its own file: an object to look for outside */
        w.st = ms;
        w.st.st_dev = makedev(maj, min);
        w.st.st_ino = (ino_t)ino;
        snprintf(w.what, sizeof(w.what), "%.199s", name);
        if (perms[1] == 'w') {
            rc = shared_map(s, pid, &w);
            continue;
        }
        if (mnc_grow((void **)&m, &cm, nm, sizeof(*m), 8) != 0) {
            rc = -ENOMEM;
            break;
        }
        m[nm++] = w;
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
                rc = shared_map(s, pid, cur);
            cur = NULL;
        }
        if (f)
            fclose(f);
        else if (errno != ENOENT && errno != ESRCH) /* cannot tell: fail closed */
            rc = shared_map(s, pid, &m[0]);
    }
    free(m);
    return rc;
}

/* The launchers of the agent's processes and what they hold on fds 0-2 (the operator's stdio:
 * pipes a test harness or a shell holds the other end of). Sharing those is not a way out. */
static void collect_launchers(scan *s)
{
    for (int i = 0; i < s->npids; i++) {
        pid_t l = launcher_of(s, s->pids[i]);
        if (l <= 0 || mncd_fds_is_launcher(s, l) || s->nl == (int)(sizeof(s->launchers) / sizeof(s->launchers[0])))
            continue;
        s->launchers[s->nl++] = l;
        for (int fd = 0; fd <= 2 && s->nex < (int)(sizeof(s->ex) / sizeof(s->ex[0])); fd++) {
            char p[64];
            struct stat st;
            snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)l, fd);
            if (stat(p, &st) == 0) {
                s->ex[s->nex].dev = st.st_dev;
                s->ex[s->nex].ino = st.st_ino;
                s->ex[s->nex].pid = l;
                s->ex[s->nex++].fd = fd;
            }
        }
    }
}

static void begin(scan *s, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err, size_t errlen)
{
    s->hit = hit;
    s->st = st;
    s->err = err;
    s->errlen = errlen;
}

int mncd_fdscan_agent(mncd_fdscan_state **fsp, const mncd_sweep_cg *cgs, int ncg, mncd_fdscan_hit *hit,
                      mncd_fdscan_stats *st, char *err, size_t errlen)
{
    static mncd_fdscan_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof(*st));
    memset(hit, 0, sizeof(*hit));
    hit->holder = -1;
    hit->holder_fd = -1;
    long t0 = now_us();
    scan *s = calloc(1, sizeof(*s));
    *fsp = s;
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->cgs = cgs;
    s->ncg = ncg;
    s->dv = learn_devs();
    begin(s, hit, st, err, errlen);
    int rc = read_pids(s, cgs, ncg);
    if (rc == 0)
        collect_launchers(s);
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
            rc = agent_fds(s, (pid_t)v, &cgs[c]);
            if (rc == 0)
                rc = agent_maps(s, (pid_t)v, &cgs[c]);
            if (rc < 0) {
                snprintf(err, errlen, "list the fds of pid %ld: %s", v, strerror(-rc));
                rc = -1;
            }
        }
        fclose(f);
    }
    if (s->no)
        qsort(s->o, (size_t)s->no, sizeof(*s->o), mncd_fds_cmp_obj);
    for (int c = 0; c < ncg; c++)
        s->any_ws |= cgs[c].n_ws > 0;
    st->shared = s->no;
    s->agent_done = rc == 0;
    s->agent_us = st->agent_us = now_us() - t0;
    st->total_us = st->agent_us;
    return rc;
}

int mncd_fdscan_host(mncd_fdscan_state *s, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err, size_t errlen)
{
    static mncd_fdscan_stats dummy;
    if (!st)
        st = &dummy;
    if (!s || !s->agent_done) {
        snprintf(err, errlen, "the agent's side of the fd scan did not complete");
        return -1;
    }
    begin(s, hit, st, err, errlen);
    long t0 = now_us();
    int rc = 0;
    if (s->no > 0 || s->any_ws)
        rc = mncd_fds_host_scan(s);
    close_copies(s); /* done comparing: the agent's files are the agent's alone again */
    st->host_us = now_us() - t0;
    st->total_us = s->agent_us + st->host_us;
    return rc;
}

void mncd_fdscan_free(mncd_fdscan_state *s)
{
    if (!s)
        return;
    close_copies(s);
    free(s->pids);
    free(s->o);
    free(s);
}

int mncd_fdscan(const mncd_sweep_cg *cgs, int ncg, mncd_fdscan_hit *hit, mncd_fdscan_stats *st, char *err,
                size_t errlen)
{
    mncd_fdscan_state *fs = NULL;
    int rc = mncd_fdscan_agent(&fs, cgs, ncg, hit, st, err, errlen);
    if (rc == 0)
        rc = mncd_fdscan_host(fs, hit, st, err, errlen);
    mncd_fdscan_free(fs);
    return rc;
}
