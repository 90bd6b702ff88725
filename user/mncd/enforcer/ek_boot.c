// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_boot.c - the enforcer's start-up (enforcer.h; docs/privsep.md, "Start-up"): files opened
 * for the monitor until the seal, the configuration tables, the state dir handed to the
 * monitor's user, the agent and admin sockets. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "enforcer.h"

#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif

void ek_open(ek *e, const struct psp_open *m)
{
    /* O_NONBLOCK: a FIFO named as a policy must not hang the enforcer; a regular file ignores it */
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    int err = fd < 0 ? errno : fstat(fd, &st) != 0 ? errno : 0;
    const char *why = err                         ? strerror(err)
                      : !S_ISREG(st.st_mode)      ? "not a regular file"
                      : st.st_size > EK_OPEN_MAX  ? "larger than 16 MiB"
                      : fcntl(fd, F_SETFL, 0) < 0 ? strerror(errno)
                                                  : NULL;
    if (why) {
        if (fd >= 0)
            close(fd);
        ek_refuse(e, m->h.seq, PSP_NO_INVALID, err, "%s", why);
        return;
    }
    struct psp_opened r;
    memset(&r, 0, sizeof(r));
    psp_hdr_init(&r.h, PSP_OPENED, m->h.seq);
    r.size = (uint64_t)st.st_size;
    ek_reply(e, &r, &fd, 1);
    close(fd);
}

int ek_config(ek *e, const struct psp_config *m)
{
    e->cfg = *m;
    e->pr = calloc(m->n_principals, sizeof(*e->pr));
    e->names = calloc(m->n_principals, sizeof(*e->names));
    e->idm = calloc(m->n_idmap ? m->n_idmap : 1, sizeof(*e->idm));
    return e->pr && e->names && e->idm ? 0 : -ENOMEM;
}

int ek_principal_add(ek *e, const struct psp_principal *m)
{
    if (!e->pr || !e->names || m->id >= e->cfg.n_principals) /* psp_check keeps ids in order and in range */
        return -EINVAL;
    ek_principal *p = &e->pr[m->id];
    memcpy(p->name, m->name, sizeof(p->name));
    memcpy(e->names[m->id], m->name, sizeof(e->names[m->id]));
    p->cls = m->cls;
    p->flags = m->flags;
    p->addr = m->addr;
    p->ukey = m->ukey;
    p->ikey = m->ikey;
    p->path = strdup(m->path);
    return p->path ? 0 : -ENOMEM;
}

int ek_idmap_add(ek *e, const struct psp_idmap *m)
{
    if (!e->idm || e->n_idm >= e->cfg.n_idmap)
        return -EINVAL;
    ek_idmap *x = &e->idm[e->n_idm++];
    x->kind = m->kind;
    x->agent = m->agent;
    x->uid = m->uid;
    memcpy(x->cgroup, m->cgroup, sizeof(x->cgroup));
    return 0;
}

const char *ek_name(const ek *e, uint32_t id)
{
    return e->pr && id < e->cfg.n_principals && e->pr[id].name[0] ? e->pr[id].name : NULL;
}

/* ---- the state dir */

/* Hands fd's entry name (not through a link) to the monitor's user. */
static int give(const ek *e, int dfd, const char *name, char *why, size_t n)
{
    if (fchownat(dfd, name, e->cfg.monitor_uid, e->cfg.monitor_gid, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(why, n, "state dir %.400s: hand %s to uid %u: %s", e->cfg.state_dir, name, e->cfg.monitor_uid,
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* What the monitor writes: the directory itself, its regular files (journals, ledger, audit log,
 * lock and temporary files: a state dir written by a root mncd before the split, or files a
 * test planted, become the monitor's), and the quarantine directory with its files. Sinks
 * inside the state dir (logs/, a memory directory) stay root's: the monitor never writes them. */
static int hand_over(const ek *e, int dfd, const char *sub, char *why, size_t n)
{
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        snprintf(why, n, "state dir %.400s%s%s: %s", e->cfg.state_dir, sub ? "/" : "", sub ? sub : "", strerror(errno));
        return -1;
    }
    int rc = 0;
    for (struct dirent *x; rc == 0 && (x = readdir(d));) {
        if (strcmp(x->d_name, ".") == 0 || strcmp(x->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dfd, x->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile */
        if (S_ISREG(st.st_mode)) {
            rc = give(e, dfd, x->d_name, why, n);
        } else if (S_ISDIR(st.st_mode) && !sub && strcmp(x->d_name, "quarantine") == 0) {
            int q = openat(dfd, x->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = q < 0 ? (snprintf(why, n, "state dir quarantine: %s", strerror(errno)), -1)
                       : give(e, dfd, x->d_name, why, n) ?: hand_over(e, q, "quarantine", why, n);
            if (q >= 0)
                close(q);
        }
    }
    closedir(d);
    return rc;
}

static int state_dir(ek *e, char *why, size_t n)
{
    const char *p = e->cfg.state_dir;
    if (mkdir(p, 0700) != 0 && errno != EEXIST) {
        snprintf(why, n, "cannot create state dir %.400s: %s", p, strerror(errno));
        return -1;
    }
    e->state_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (e->state_fd < 0 || fstat(e->state_fd, &st) != 0) {
        snprintf(why, n, "cannot open state dir %.400s: %s", p, strerror(errno));
        return -1;
    }
    /* mode first: once the directory is the monitor's, root (without CAP_FOWNER) may not chmod
     * it; one a previous start handed over is taken back for that (CAP_CHOWN) */
    if ((st.st_uid != 0 && fchown(e->state_fd, 0, 0) != 0) || fchmod(e->state_fd, 0700) != 0 ||
        fchown(e->state_fd, e->cfg.monitor_uid, e->cfg.monitor_gid) != 0) {
        snprintf(why, n, "state dir %.400s: hand it to uid %u: %s", p, e->cfg.monitor_uid, strerror(errno));
        return -1;
    }
    return hand_over(e, e->state_fd, NULL, why, n);
}

/* ---- sockets */

static int bind_unix(int fd, const char *path, char *why, size_t n)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
        return 0;
    if (errno != EADDRINUSE) {
        snprintf(why, n, "cannot listen on %s: %s", path, strerror(errno));
        return -1;
    }
    /* A live daemon answers a connect; a stale socket file does not. */
    int type = 0;
    socklen_t tl = sizeof(type);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
    int probe = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    bool live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    if (probe >= 0)
        close(probe);
    if (live) {
        snprintf(why, n, "another mncd is already listening on %s", path);
        return -1;
    }
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        snprintf(why, n, "cannot listen on %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The agent socket, as mncd always made it: anyone may connect (identity comes from the kernel
 * per request, not from file permissions), SO_PASSCRED and SO_PASSPIDFD set on the listener so
 * that accept() copies them before any byte can arrive unattributed. */
static int agent_socket(ek *e, char *why, size_t n)
{
    const char *path = e->cfg.socket;
    char dir[PSP_SOCK_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(why, n, "cannot create %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    e->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (e->listen_fd < 0 || bind_unix(e->listen_fd, path, why, n) != 0) {
        if (e->listen_fd < 0)
            snprintf(why, n, "socket: %s", strerror(errno));
        return -1;
    }
    snprintf(e->sock_path, sizeof(e->sock_path), "%s", path);
    int one = 1;
    if (setsockopt(e->listen_fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0) {
        snprintf(why, n, "SO_PASSCRED on %s: %s", path, strerror(errno));
        return -1;
    }
    e->pidfd_creds = setsockopt(e->listen_fd, SOL_SOCKET, SO_PASSPIDFD, &one, sizeof(one)) == 0;
    if (!e->pidfd_creds)
        fprintf(stderr,
                "mncd: SO_PASSPIDFD unsupported (%s; Linux < 6.5): senders are identified by SCM_CREDENTIALS "
                "alone\n",
                strerror(errno));
    if (chmod(path, 0666) != 0 || listen(e->listen_fd, 512) != 0) {
        snprintf(why, n, "cannot listen on %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The admin socket: only the admin uid may connect (the enforcer checks each peer again). */
static int admin_socket(ek *e, char *why, size_t n)
{
    snprintf(e->admin_path, sizeof(e->admin_path), "%s.admin", e->cfg.socket);
    e->admin_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (e->admin_fd < 0 || bind_unix(e->admin_fd, e->admin_path, why, n) != 0) {
        if (e->admin_fd < 0)
            snprintf(why, n, "socket: %s", strerror(errno));
        e->admin_path[0] = 0;
        return -1;
    }
    if (chmod(e->admin_path, 0600) != 0 || (e->cfg.admin_uid && chown(e->admin_path, e->cfg.admin_uid, (gid_t)-1)) ||
        listen(e->admin_fd, 16) != 0) {
        snprintf(why, n, "cannot listen on %s: %s", e->admin_path, strerror(errno));
        return -1;
    }
    return 0;
}

int ek_prepare(ek *e, char *why, size_t n)
{
    for (uint32_t i = 0; i < e->cfg.n_principals; i++)
        if (!e->pr[i].path) {
            snprintf(why, n, "out of memory (configuration)");
            return -1;
        }
    return state_dir(e, why, n) || agent_socket(e, why, n) || admin_socket(e, why, n) ? -1 : 0;
}

uint32_t ek_sinkfds(ek *e)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->cfg.n_principals; i++) {
        if (e->pr[i].cls != MNC_SINK_LOG || !e->pr[i].path || !e->pr[i].path[0])
            continue;
        /* as mncd always opened a log sink to append to it; a failure is the log verb's error */
        int fd = open(e->pr[i].path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0) {
            fprintf(stderr, "mncd: log sink %s (%s): %s: the log verb will refuse to write to it\n", e->pr[i].name,
                    e->pr[i].path, strerror(errno));
            continue;
        }
        struct psp_sinkfd m;
        memset(&m, 0, sizeof(m));
        psp_hdr_init(&m.h, PSP_SINKFD, 0);
        m.id = i;
        /* part of SEAL's answer: the monitor is waiting for STARTED, and reads */
        int rc = ek_flush(e, true) ?: psp_send(e->mon_fd, &m, &fd, 1, false);
        close(fd);
        if (rc)
            break;
        n++;
    }
    return n;
}

void ek_boot_cleanup(ek *e)
{
    if (e->listen_fd >= 0)
        close(e->listen_fd);
    if (e->admin_fd >= 0)
        close(e->admin_fd);
    if (e->state_fd >= 0)
        close(e->state_fd);
    e->listen_fd = e->admin_fd = e->state_fd = -1;
    if (e->sock_path[0])
        unlink(e->sock_path);
    if (e->admin_path[0])
        unlink(e->admin_path);
    e->sock_path[0] = e->admin_path[0] = 0;
    for (uint32_t i = 0; e->pr && i < e->cfg.n_principals; i++)
        free(e->pr[i].path);
    free(e->pr);
    free(e->names);
    free(e->idm);
    e->pr = NULL;
    e->names = NULL;
    e->idm = NULL;
}
