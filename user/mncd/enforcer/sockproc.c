// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockproc.c - the agent's processes and their socket fds, for the pre-taint sweep
 * (sockscan_int.h). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mnc_util.h"
#include "sockscan_int.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define MAX_PIDS 65536

/* ---- small helpers */

int mncd_u32set_add(u32set *s, uint32_t x)
{
    if (s->n == s->cap) {
        int c = s->cap ? s->cap * 2 : 64;
        uint32_t *t = realloc(s->v, (size_t)c * sizeof(*t));
        if (!t)
            return -ENOMEM;
        s->v = t;
        s->cap = c;
    }
    s->v[s->n++] = x;
    s->sorted = false;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

bool mncd_u32set_has(u32set *s, uint32_t x)
{
    if (!s->sorted) {
        if (s->n)
            qsort(s->v, (size_t)s->n, sizeof(*s->v), cmp_u32);
        s->sorted = true;
    }
    return s->n && bsearch(&x, s->v, (size_t)s->n, sizeof(*s->v), cmp_u32);
}

/* ---- processes and their socket fds */

/* by inode, then pid and fd (a stable choice of which fd acts for a shared socket) */
int mncd_sfd_cmp(const void *a, const void *b)
{
    const sfd *x = a, *y = b;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->fd > y->fd) - (x->fd < y->fd);
}

/* Socket inodes in /proc/<pid>/fd. pid 0 = ourselves. -ENOENT/-ESRCH: the process is gone. */
static int scan_fds(scan *sc, pid_t pid, bool self)
{
    char dp[64];
    if (self)
        snprintf(dp, sizeof(dp), "/proc/self/fd");
    else
        snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dp);
    if (!d)
        return -errno;
    int dfd = dirfd(d), rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char link[64];
        ssize_t n = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
        if (n < 0)
            continue; /* closed meanwhile (the process is frozen; only mncd's own fds move) */
        link[n] = 0;
        uint32_t ino = mncd_socket_ino(link);
        if (!ino)
            continue;
        if (self) {
            if ((rc = mncd_u32set_add(&sc->mine, ino)) != 0)
                break;
            continue;
        }
        if ((rc = mncd_u32set_add(&sc->inos, ino)) != 0) /* duplicates are harmless for membership */
            break;
        if (sc->n == sc->cap) {
            int c = sc->cap ? sc->cap * 2 : 128;
            sfd *t = realloc(sc->s, (size_t)c * sizeof(*t));
            if (!t) {
                rc = -ENOMEM;
                break;
            }
            sc->s = t;
            sc->cap = c;
        }
        sc->s[sc->n++] = (sfd){pid, atoi(e->d_name), ino};
    }
    closedir(d);
    return rc;
}

int mncd_scan_cgroups(scan *sc, const mncd_sweep_cg *cgs, int ncg, char *err, size_t errlen)
{
    u32set pids = {0};
    int rc = 0, w = 0;
    for (int i = 0; i < ncg && !rc; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/cgroup.procs", cgs[i].path);
        FILE *f = fopen(p, "re");
        if (!f) {
            if (errno == ENOENT)
                continue; /* cgroup removed: its agent instance is gone */
            mnc_errf(err, errlen, 0, "read %s: %s", p, strerror(errno));
            rc = -1;
            break;
        }
        long pid;
        while (fscanf(f, "%ld", &pid) == 1) {
            if (pid <= 0 || pid > INT_MAX)
                continue;
            if (pids.n >= MAX_PIDS || mncd_u32set_add(&pids, (uint32_t)pid) != 0) {
                mnc_errf(err, errlen, 0, "too many processes in the agent's cgroups");
                rc = -1;
                break;
            }
        }
        if (ferror(f) && !rc) {
            mnc_errf(err, errlen, 0, "read %s: %s", p, strerror(errno));
            rc = -1;
        }
        fclose(f);
    }
    if (pids.n)
        qsort(pids.v, (size_t)pids.n, sizeof(*pids.v), cmp_u32);
    for (int i = 0; i < pids.n && !rc; i++) {
        if (i && pids.v[i] == pids.v[i - 1])
            continue;
        pids.v[w++] = pids.v[i]; /* unique, still sorted */
        int r = scan_fds(sc, (pid_t)pids.v[i], false);
        if (r == -ENOENT || r == -ESRCH)
            continue; /* exited (a frozen process can still be killed) */
        if (r) {
            mnc_errf(err, errlen, 0, "list /proc/%u/fd: %s", pids.v[i], strerror(-r));
            rc = -1;
            break;
        }
        sc->npids++;
    }
    pids.n = w;
    pids.sorted = true;
    sc->pids = pids;
    if (!rc) {
        int r = scan_fds(sc, 0, true);
        if (r) {
            mnc_errf(err, errlen, 0, "list /proc/self/fd: %s", strerror(-r));
            rc = -1;
        }
    }
    return rc;
}

/* A copy of the agent's fd, checked to still be the socket we listed (fd numbers can be
 * reused; the cgroup is frozen, so this is belt and braces). -errno on failure. */
int mncd_grab(pid_t pid, int fd, uint32_t ino)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return -errno;
    int c = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    int e = errno;
    close(pfd);
    if (c < 0)
        return -e;
    struct stat st;
    if (fstat(c, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_ino != ino) {
        close(c);
        return -ESTALE;
    }
    return c;
}
