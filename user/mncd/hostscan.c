/* hostscan.c - the pass over processes outside a tainted agent (contract in hostscan.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hostscan.h"

#define MAX_WS 64 /* workspaces judged per sweep (all instances of one agent) */

typedef struct wsref {
    const char *path;
    size_t len;
    bool by_uid; /* an unprivileged instance with a known uid: its files are owned by it */
    uint32_t uid;
    dev_t dev;
} wsref;

typedef struct hctx {
    mncd_hostscan *hs;
    const uint32_t *interest;
    int ninterest;
    wsref ws[MAX_WS];
    int nws;
} hctx;

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool has(const uint32_t *v, int n, uint32_t x)
{
    return n > 0 && bsearch(&x, v, (size_t)n, sizeof(*v), cmp_u32);
}

/* "socket:[12345]" -> 12345; 0 if not a socket */
static uint32_t socket_ino(const char *link)
{
    unsigned long v;
    char tail;
    if (sscanf(link, "socket:[%lu%c", &v, &tail) != 2 || tail != ']' || v == 0 || v > UINT32_MAX)
        return 0;
    return (uint32_t)v;
}

static bool in_ws_path(const hctx *c, const char *p)
{
    for (int i = 0; i < c->nws; i++) {
        const wsref *w = &c->ws[i];
        if (strncmp(p, w->path, w->len) == 0 && (p[w->len] == 0 || p[w->len] == '/' || w->len == 1))
            return true;
    }
    return false;
}

static void ws_held(hctx *c, pid_t pid, const char *what, const char *path)
{
    mncd_hostscan *hs = c->hs;
    hs->n_ws_held++;
    if (hs->nws >= MNCD_WSHELD_MAX)
        return;
    mncd_wsheld *w = &hs->ws[hs->nws++];
    w->pid = pid;
    snprintf(w->what, sizeof(w->what), "%s", what);
    snprintf(w->path, sizeof(w->path), "%s", path);
}

static int add_holder(mncd_hostscan *hs, uint32_t ino, pid_t pid, int fd)
{
    if (hs->nh == hs->ch) {
        int n = hs->ch ? hs->ch * 2 : 64;
        mncd_holder *t = realloc(hs->h, (size_t)n * sizeof(*t));
        if (!t)
            return -ENOMEM;
        hs->h = t;
        hs->ch = n;
    }
    hs->h[hs->nh++] = (mncd_holder){ino, pid, fd};
    return 0;
}

/* Is this open file a workspace file owned by an unprivileged instance's uid? (a workspace
 * file can be reached through another name: a hard link, a bind mount, a renamed directory) */
static bool ws_by_uid(const hctx *c, int dfd, const char *name)
{
    bool any = false;
    for (int i = 0; i < c->nws && !any; i++)
        any = c->ws[i].by_uid;
    if (!any)
        return false;
    struct stat st;
    if (fstatat(dfd, name, &st, 0) != 0)
        return false; /* closed meanwhile */
    for (int i = 0; i < c->nws; i++)
        if (c->ws[i].by_uid && st.st_uid == c->ws[i].uid && st.st_dev == c->ws[i].dev)
            return true;
    return false;
}

static int scan_fd_dir(hctx *c, pid_t pid)
{
    char dp[64];
    snprintf(dp, sizeof(dp), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dp);
    if (!d)
        return errno == ENOENT || errno == ESRCH ? 1 : -errno;
    int dfd = dirfd(d), rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char link[PATH_MAX];
        ssize_t n = readlinkat(dfd, e->d_name, link, sizeof(link) - 1);
        if (n < 0)
            continue; /* closed meanwhile */
        link[n] = 0;
        c->hs->fds++;
        if (link[0] == 's') {
            uint32_t ino = socket_ino(link);
            if (ino && has(c->interest, c->ninterest, ino) && (rc = add_holder(c->hs, ino, pid, atoi(e->d_name))) != 0)
                break;
            continue;
        }
        if (link[0] != '/')
            continue; /* pipe:, anon_inode: ... */
        if (in_ws_path(c, link) ||
            (strncmp(link, "/proc/", 6) && strncmp(link, "/sys/", 5) && strncmp(link, "/dev/", 5) &&
             ws_by_uid(c, dfd, e->d_name))) {
            char what[24];
            snprintf(what, sizeof(what), "fd %.12s", e->d_name);
            ws_held(c, pid, what, link);
        }
    }
    closedir(d);
    return rc;
}

static void scan_link(hctx *c, pid_t pid, const char *which)
{
    char p[64], link[PATH_MAX];
    snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, which);
    ssize_t n = readlink(p, link, sizeof(link) - 1);
    if (n <= 0)
        return;
    link[n] = 0;
    if (link[0] == '/' && in_ws_path(c, link))
        ws_held(c, pid, which, link);
}

static void scan_maps(hctx *c, pid_t pid)
{
    char p[64], line[PATH_MAX + 128];
    snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return;
    char last[PATH_MAX] = "";
    while (fgets(line, sizeof(line), f)) {
        char *s = strchr(line, '/');
        if (!s)
            continue; /* anonymous, [heap], [stack]... */
        s[strcspn(s, "\n")] = 0;
        if (strcmp(s, last) == 0)
            continue; /* the next segment of the same file */
        snprintf(last, sizeof(last), "%s", s);
        if (in_ws_path(c, s))
            ws_held(c, pid, "mapping", s);
    }
    fclose(f);
}

int mncd_hostscan_run(mncd_hostscan *hs, const uint32_t *skip, int nskip, const uint32_t *interest, int ninterest,
                      const mncd_sweep_cg *cgs, int ncg, char *err, size_t errlen)
{
    long t0 = now_us();
    memset(hs, 0, sizeof(*hs));
    hctx c = {.hs = hs, .interest = interest, .ninterest = ninterest};
    for (int i = 0; i < ncg; i++)
        for (int j = 0; j < cgs[i].n_ws; j++) {
            const char *w = cgs[i].ws[j];
            if (!w || w[0] != '/')
                continue;
            if (c.nws == MAX_WS) {
                snprintf(err, errlen, "more than %d workspaces", MAX_WS);
                return -1;
            }
            wsref *r = &c.ws[c.nws++];
            r->path = w;
            r->len = strlen(w);
            while (r->len > 1 && w[r->len - 1] == '/')
                r->len--;
            struct stat st;
            r->by_uid = cgs[i].uid_known && !cgs[i].root && cgs[i].uid != 0 && stat(w, &st) == 0;
            r->uid = cgs[i].uid;
            r->dev = r->by_uid ? st.st_dev : 0;
        }
    DIR *d = opendir("/proc");
    if (!d) {
        snprintf(err, errlen, "list /proc: %s", strerror(errno));
        return -1;
    }
    pid_t self = getpid();
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) && !rc;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid > INT_MAX || pid == self || has(skip, nskip, (uint32_t)pid))
            continue;
        int r = scan_fd_dir(&c, (pid_t)pid);
        if (r == 1)
            continue; /* exited */
        if (r == -EACCES || r == -EPERM) {
            snprintf(err, errlen, "list /proc/%ld/fd: %s", pid, strerror(-r));
            rc = -1;
            break;
        }
        if (r) {
            snprintf(err, errlen, "host scan of pid %ld: %s", pid, strerror(-r));
            rc = -1;
            break;
        }
        hs->pids++;
        if (c.nws) {
            scan_link(&c, (pid_t)pid, "cwd");
            scan_link(&c, (pid_t)pid, "root");
            scan_maps(&c, (pid_t)pid);
        }
    }
    closedir(d);
    if (hs->nh)
        qsort(hs->h, (size_t)hs->nh, sizeof(*hs->h), cmp_u32); /* ino is the first member */
    hs->us = now_us() - t0;
    return rc;
}

const mncd_holder *mncd_hostscan_holder(const mncd_hostscan *hs, uint32_t ino)
{
    mncd_holder key = {.ino = ino};
    return hs->nh ? bsearch(&key, hs->h, (size_t)hs->nh, sizeof(*hs->h), cmp_u32) : NULL;
}

void mncd_hostscan_free(mncd_hostscan *hs)
{
    free(hs->h);
    hs->h = NULL;
    hs->nh = hs->ch = 0;
}
