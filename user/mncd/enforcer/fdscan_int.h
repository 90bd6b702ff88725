/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* fdscan_int.h - internal to the fd scan (fdscan.h): the state its two phases share.
 *
 * Files, bottom up: fdscan_obj.c (what both phases share: lookups, the finding), fdscan_host.c
 * (the pass over every other process, run after the thaw: who else holds those objects),
 * fdscan.c (the API, and the agent's side, run while the agent is frozen: its fds and mappings,
 * judged and turned into a table of objects). Contract of each function: its comment. */
#ifndef MNCD_FDSCAN_INT_H
#define MNCD_FDSCAN_INT_H

#include <stdbool.h>
#include <sys/types.h>

#include "fdscan.h"

/* How an object of the agent is recognised in another process. */
enum fd_ident {
    /* the inode is the object (a pipe, FIFO, memfd, socket, workspace file): any holder of the
     * inode counts, by fd, mapping, epoll watch or fsnotify mark */
    ID_INODE,
    /* the open file description is the object: an anonymous-inode object (eventfd, epoll,
     * timerfd, signalfd, inotify...: every such file on the host shares one inode), a pidfd
     * (every pidfd of one process shares its pidfs inode), or a read-only file whose offset is
     * the shared state. A holder is a file kcmp(KCMP_FILE) says is the same, compared against
     * mncd's own copy (pidfd_getfd, taken while the agent was frozen: its fd numbers may move
     * once it runs again) */
    ID_DESC,
    /* an anonymous-inode object the agent holds only as a shared mapping (an io_uring ring
     * whose fd it closed): no fd to compare, so any outside file of the same kind counts */
    ID_KIND,
};

typedef struct fobj {
    dev_t dev;
    ino_t ino;
    pid_t pid; /* an agent process holding it, and its fd (-1: a mapping) */
    int fd;
    int copy; /* ID_DESC: mncd's copy of the open file; -1 otherwise */
    unsigned char how;
    bool anon;     /* on the anonymous-inode filesystem */
    char kind[24]; /* anon: the kernel's name after "anon_inode:" ("[eventfd]", "inotify") */
    char what[200];
} fobj;

/* Filesystems learned from objects mncd makes itself (the kernel's own devices, never names). */
typedef struct fs_devs {
    dev_t anon, pidfs, pipe, memfd;
} fs_devs;

struct mncd_fdscan_state {
    pid_t *pids; /* the agent's processes, sorted */
    int npids, cpids;
    fobj *o; /* the objects to look for outside, sorted by (dev, ino) once phase A is done */
    int no, co;
    pid_t launchers[16]; /* the agent's launchers (mncctl run): trusted, not outsiders */
    int nl;
    struct {
        dev_t dev;
        ino_t ino;
        pid_t pid;
        int fd;
    } ex[48]; /* the launchers' stdio: the operator's, governed by the stdio relay */
    int nex;
    const mncd_sweep_cg *cgs; /* the caller's, for the workspaces: alive until mncd_fdscan_free */
    int ncg;
    bool any_ws; /* some instance has a workspace */
    bool agent_done;
    fs_devs dv;
    long agent_us;
    /* per call */
    mncd_fdscan_hit *hit;
    mncd_fdscan_stats *st;
    char *err;
    size_t errlen;
};
typedef struct mncd_fdscan_state scan;

/* ---- shared helpers (fdscan_obj.c) */

/* qsort orders: pids; objects by (dev, ino) */
int mncd_fds_cmp_pid(const void *a, const void *b);
int mncd_fds_cmp_obj(const void *a, const void *b);

/* Is p one of the agent's processes / launchers? */
bool mncd_fds_is_agent(const scan *s, pid_t p);
bool mncd_fds_is_launcher(const scan *s, pid_t p);
/* path is dir or below it ('/'), never a string prefix ("WS x" is not below WS). */
bool mncd_fds_under(const char *path, const char *dir);
/* The first workspace of any instance that path is in, or NULL. */
const char *mncd_fds_in_any_workspace(const scan *s, const char *path);
/* Is dev the filesystem of one of the agent's workspaces? */
bool mncd_fds_on_ws_fs(const scan *s, dev_t dev);
/* The objects with this (dev, ino): *n of them from the returned one (sorted table), or NULL. */
fobj *mncd_fds_find(scan *s, dev_t dev, ino_t ino, int *n);
/* Fills s->hit: `what` of the agent's object o (or a description), held outside by holder in
 * the way `via` says; returns 1. */
int mncd_fds_found(scan *s, const fobj *o, pid_t holder, int holder_fd, const char *via);
int mncd_fds_found_path(scan *s, const char *what, pid_t holder, int holder_fd, const char *via);

/* ---- the host pass (fdscan_host.c) */

/* Walks /proc (every process but the agent's, its launchers' and mncd's own): 0, 1 (s->hit
 * filled), -1 (err). */
int mncd_fds_host_scan(scan *s);

#endif
