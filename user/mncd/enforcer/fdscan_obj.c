// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fdscan_obj.c - what both phases of the fd scan share (fdscan_int.h): the agent's processes
 * and objects looked up, workspaces, and the finding. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fdscan_int.h"

int mncd_fds_cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

bool mncd_fds_is_agent(const scan *s, pid_t p)
{
    return s->npids && bsearch(&p, s->pids, (size_t)s->npids, sizeof(pid_t), mncd_fds_cmp_pid);
}

bool mncd_fds_is_launcher(const scan *s, pid_t p)
{
    for (int i = 0; i < s->nl; i++)
        if (s->launchers[i] == p)
            return true;
    return false;
}

int mncd_fds_cmp_obj(const void *a, const void *b)
{
    const fobj *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

fobj *mncd_fds_find(scan *s, dev_t dev, ino_t ino, int *n)
{
    *n = 0;
    if (!s->no)
        return NULL;
    fobj key = {.dev = dev, .ino = ino};
    fobj *o = bsearch(&key, s->o, (size_t)s->no, sizeof(*s->o), mncd_fds_cmp_obj);
    if (!o)
        return NULL;
    while (o > s->o && mncd_fds_cmp_obj(o - 1, &key) == 0)
        o--;
    while (o + *n < s->o + s->no && mncd_fds_cmp_obj(o + *n, &key) == 0)
        (*n)++;
    return o;
}

/* path is dir itself or below it: it equals dir or goes on with '/' (never ' ': "WS x" is a
 * sibling of WS; a deleted file's " (deleted)" suffix comes after its own name, below WS/). */
bool mncd_fds_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

const char *mncd_fds_in_any_workspace(const scan *s, const char *path)
{
    for (int c = 0; c < s->ncg; c++)
        for (int i = 0; i < s->cgs[c].n_ws; i++)
            if (mncd_fds_under(path, s->cgs[c].ws[i]))
                return s->cgs[c].ws[i];
    return NULL;
}

bool mncd_fds_on_ws_fs(const scan *s, dev_t dev)
{
    for (int c = 0; c < s->ncg; c++)
        for (int i = 0; i < s->cgs[c].n_ws; i++) {
            struct stat ws;
            if (stat(s->cgs[c].ws[i], &ws) == 0 && ws.st_dev == dev)
                return true;
        }
    return false;
}

static uid_t uid_of(pid_t pid)
{
    char p[64];
    struct stat st;
    snprintf(p, sizeof(p), "/proc/%d", (int)pid);
    return stat(p, &st) == 0 ? st.st_uid : (uid_t)-1;
}

int mncd_fds_found_path(scan *s, const char *what, pid_t holder, int holder_fd, const char *via)
{
    s->hit->kind = "held_outside";
    s->hit->pid = -1;
    s->hit->fd = holder_fd;
    snprintf(s->hit->what, sizeof(s->hit->what), "%.299s", what);
    s->hit->holder = holder;
    s->hit->holder_fd = holder_fd;
    s->hit->holder_uid = uid_of(holder);
    s->hit->via = via;
    return 1;
}

int mncd_fds_found(scan *s, const fobj *o, pid_t holder, int holder_fd, const char *via)
{
    s->hit->kind = "held_outside";
    s->hit->pid = o->pid;
    s->hit->fd = o->fd;
    snprintf(s->hit->what, sizeof(s->hit->what), "%s", o->what);
    s->hit->holder = holder;
    s->hit->holder_fd = holder_fd;
    s->hit->holder_uid = uid_of(holder);
    s->hit->via = via;
    return 1;
}
