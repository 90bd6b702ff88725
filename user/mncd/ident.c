// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ident.c - who is calling: kernel-recorded sender -> pid -> cgroup -> agent, else uid -> agent.
 *
 * Nothing the client sends is used to identify it. Identity is per request (see mncd.h): the
 * kernel attaches the writer's credentials to every chunk of a stream (SO_PASSCRED) and, on
 * Linux 6.5+, a pidfd of the writer (SO_PASSPIDFD). To close the pid-reuse race between the
 * credentials and reading /proc/PID/cgroup we check, after reading the cgroup, that the pidfd
 * still refers to a live process: a pidfd pins the process identity, so if it is alive, the
 * pid was not reused. Without SCM_PIDFD (Linux < 6.5, e.g. the 6.1 qemu guest) that check is
 * not possible and the narrow race remains (documented in docs/mncd.md).
 * The accept-time resolution (SO_PEERCRED / SO_PEERPIDFD) is kept for connection accounting.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mncd.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* PIDFD_GET_INFO (Linux 6.13+, <linux/pidfd.h>; older userspace headers lack it). The ioctl
 * encodes the struct size, so this version-0 layout (64 bytes) is accepted by newer kernels. */
struct mncd_pidfd_info {
    uint64_t mask;
    uint64_t cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    uint32_t spare0[1];
};
#define MNCD_PIDFD_GET_INFO _IOWR(0xFF, 11, struct mncd_pidfd_info)
#define MNCD_PIDFD_INFO_CGROUPID (1ULL << 2)

static uint64_t cg_gen = 1; /* bumped on every change of cg_table (invalidates caches) */

static struct {
    char path[512];
    int agent;
} cg_table[MNCD_MAX_MAP * 2];
static int n_cg;

int mncd_ident_register_cgroup(const char *cgroup_path, int agent)
{
    if (agent < 0 || strlen(cgroup_path) >= sizeof(cg_table[0].path))
        return -1;
    for (int i = 0; i < n_cg; i++)
        if (strcmp(cg_table[i].path, cgroup_path) == 0) {
            cg_table[i].agent = agent;
            cg_gen++;
            return 0;
        }
    if (n_cg >= (int)(sizeof(cg_table) / sizeof(cg_table[0])))
        return -1;
    snprintf(cg_table[n_cg].path, sizeof(cg_table[n_cg].path), "%s", cgroup_path);
    cg_table[n_cg].agent = agent;
    n_cg++;
    cg_gen++;
    return 0;
}

/* The mnc cgroup tree as /proc/PID/cgroup shows it; "" while the kernel layer is off. */
static char tree_rel[512];

int mncd_ident_set_tree(const char *tree)
{
    if (strlen(tree) >= sizeof(tree_rel))
        return -1;
    snprintf(tree_rel, sizeof(tree_rel), "%s", tree);
    cg_gen++;
    return 0;
}

void mncd_ident_tree_rule(mncd_ident *id)
{
    if (!tree_rel[0] || id->via == MNCD_VIA_CGROUP || !id->cgroup[0])
        return;
    size_t n = strlen(tree_rel);
    if (strncmp(id->cgroup, tree_rel, n) == 0 && (id->cgroup[n] == '/' || id->cgroup[n] == 0)) {
        id->agent = -1;
        id->via = MNCD_VIA_NONE;
        id->admin = false;
    }
}

void mncd_ident_clear(void)
{
    n_cg = 0;
    cg_gen++;
}

int mncd_ident_unregister_cgroup(const char *cgroup_path)
{
    for (int i = 0; i < n_cg; i++)
        if (strcmp(cg_table[i].path, cgroup_path) == 0) {
            cg_table[i] = cg_table[--n_cg]; /* order does not matter: paths are unique */
            cg_gen++;
            return 0;
        }
    return -1;
}

/* The cgroup v2 path of pid ("0::/path" line). Returns 0 or -1. */
static int read_cgroup(pid_t pid, char *out, size_t n)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    char line[1024];
    int rc = -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            if (strlen(line + 3) < n) {
                memcpy(out, line + 3, strlen(line + 3) + 1);
                rc = 0;
            }
            break;
        }
    }
    fclose(f);
    return rc;
}

/* Is the process behind pidfd still there? 1 alive, 0 gone, -1 cannot tell. A zombie counts
 * as alive: its pid cannot be reused before it is reaped. */
static int pidfd_alive(int pidfd)
{
    if (pidfd < 0)
        return -1;
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0)
        return 1;
    if (errno == ESRCH)
        return 0;
    if (errno == EPERM)
        return 1; /* exists, but an unprivileged mncd may not signal it */
    return -1;
}

/* The process's current cgroup id through its pidfd (Linux 6.13+). 0, or -1 (no such ioctl,
 * or the process is gone: ESRCH). */
static int pidfd_cgid(int pidfd, uint64_t *cgid)
{
    struct mncd_pidfd_info pi;
    memset(&pi, 0, sizeof(pi));
    pi.mask = MNCD_PIDFD_INFO_CGROUPID;
    if (pidfd < 0 || ioctl(pidfd, MNCD_PIDFD_GET_INFO, &pi) != 0 || !(pi.mask & MNCD_PIDFD_INFO_CGROUPID))
        return -1;
    *cgid = pi.cgroupid;
    return 0;
}

/* cgroup path (already read) and uid -> agent, via, admin. */
static void map_ident(const mnc_policy *p, const mncd_config *c, mncd_ident *id)
{
    id->agent = -1;
    id->via = MNCD_VIA_NONE;
    if (id->cgroup[0]) {
        for (int i = 0; i < n_cg; i++)
            if (strcmp(cg_table[i].path, id->cgroup) == 0) {
                id->agent = cg_table[i].agent;
                id->via = MNCD_VIA_CGROUP;
                break;
            }
    }
    if (id->agent < 0) {
        for (int i = 0; i < c->n_uids; i++)
            if (c->uids[i].uid == id->uid) {
                id->agent = mnc_policy_agent(p, c->uids[i].agent);
                break;
            }
        if (id->agent < 0)
            id->agent = mnc_policy_agent_by_uid(p, id->uid);
        if (id->agent >= 0)
            id->via = MNCD_VIA_UID;
    }
    /* An agent is never admin: a process the kernel placed in an agent's cgroup is that agent
     * even if it runs as the admin uid (`mncctl run --as-root`), and a uid that maps to an
     * agent is that agent. The mnc-tree rule (mncd_ident_tree_rule) removes admin from every other
     * process inside the tree. */
    id->admin = id->uid == c->admin_uid && id->agent < 0;
}

int mncd_ident_resolve(int fd, const mnc_policy *p, const mncd_config *c, mncd_ident *id, int *peer_pidfd)
{
    if (peer_pidfd)
        *peer_pidfd = -1;
    memset(id, 0, sizeof(*id));
    id->agent = -1;
    struct ucred uc;
    socklen_t len = sizeof(uc);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0 || len != sizeof(uc))
        return -1;
    id->pid = uc.pid;
    id->uid = uc.uid;
    id->gid = uc.gid;

    int pidfd = -1;
    len = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0)
        pidfd = -1;
    if (uc.pid > 0 && read_cgroup(uc.pid, id->cgroup, sizeof(id->cgroup)) == 0) {
        /* If the peer has exited, the pid may already belong to someone else: do not trust
         * the cgroup we read. */
        if (pidfd_alive(pidfd) == 0)
            id->cgroup[0] = '\0';
    }
    if (pidfd >= 0 && peer_pidfd)
        *peer_pidfd = pidfd;
    else if (pidfd >= 0)
        close(pidfd);
    map_ident(p, c, id);
    return 0;
}

void mncd_cred_inode(mncd_cred *cr)
{
    struct stat st;
    cr->ino = 0;
    /* pidfs (6.9+) gives every process its own inode; before it, pidfds share one anon inode,
     * which proves nothing: only a pidfd with an inode distinct from anon_inode's is used. The
     * cgroup-id ioctl (6.13+) succeeding is the proof that pidfs is there. */
    uint64_t cg = 0;
    cr->cgid = 0;
    if (cr->pidfd >= 0 && pidfd_cgid(cr->pidfd, &cg) == 0 && fstat(cr->pidfd, &st) == 0) {
        cr->ino = (uint64_t)st.st_ino;
        cr->cgid = cg;
    }
}

int mncd_peer_vouch(int peer_pidfd, pid_t peer_pid, pid_t chunk_pid, uint64_t *cgid)
{
    /* The connection exists only since the peer's connect(), so every writer of its bytes was
     * alive at some time after the peer was created. Two processes alive at the same time never
     * share a pid, and a pid is not handed out again before its process is reaped. So if the
     * peer is not reaped now (PIDFD_GET_INFO answers: a zombie still holds its pid) and the
     * chunk's pid is the peer's, the chunk's writer is the peer: the pidfd the kernel would
     * make for the chunk would be one of this process. */
    if (peer_pidfd < 0 || peer_pid <= 0 || chunk_pid != peer_pid)
        return 0;
    return pidfd_cgid(peer_pidfd, cgid) == 0;
}

bool mncd_cred_same(const mncd_cred *a, const mncd_cred *b)
{
    if (!a->known || !b->known)
        return false;
    if (a->pid != b->pid || a->uid != b->uid || a->gid != b->gid)
        return false;
    return !(a->ino && b->ino && a->ino != b->ino);
}

static bool pidfd_expected; /* the kernel attaches SCM_PIDFD (mncd_ident_expect_pidfd) */

void mncd_ident_expect_pidfd(void) { pidfd_expected = true; }

int mncd_ident_request(mncd *d, const mncd_cred *cr, mncd_ident_cache *cache, mncd_ident *id)
{
    memset(id, 0, sizeof(*id));
    id->agent = -1;
    if (!cr->known)
        return -1;
    id->pid = cr->pid;
    id->uid = cr->uid;
    id->gid = cr->gid;
    if (cr->gone || cr->pid <= 0)
        return 0; /* the writer has exited: its pid proves nothing any more; nobody */
    if (pidfd_expected && cr->pidfd < 0)
        return 0; /* neither its own pidfd nor the connector's: the pid is not proven; nobody */

    /* Fast path: the same process as the last request on this connection, still in the same
     * cgroup (by id, from the kernel), and no registration changed since. */
    uint64_t cg1 = cr->cgid; /* read with the chunk (mncd_cred_inode) */
    bool have_cg = cr->ino != 0 && cr->pidfd >= 0;
    if (cache && cache->valid && have_cg && cache->pid == cr->pid && cache->uid == cr->uid && cache->gid == cr->gid &&
        cache->ino == cr->ino && cache->cgid == cg1 && cache->gen == cg_gen) {
        *id = cache->id;
        return 0;
    }
    if (read_cgroup(cr->pid, id->cgroup, sizeof(id->cgroup)) != 0) {
        id->cgroup[0] = '\0';
        return 0; /* gone (or /proc hidden): nobody, fail closed */
    }
    /* Still the same process after the read (the pid was not reused), and (when the kernel can
     * say) still in the cgroup whose path we read. */
    uint64_t cg2 = 0;
    if (pidfd_alive(cr->pidfd) == 0 || (have_cg && (pidfd_cgid(cr->pidfd, &cg2) != 0 || cg2 != cg1))) {
        id->cgroup[0] = '\0';
        return 0;
    }
    map_ident(d->policy, &d->cfg, id);
    mncd_ident_tree_rule(id); /* unregistered cgroup in the mnc tree: nobody */
    if (cache) {
        cache->valid = have_cg;
        cache->pid = cr->pid;
        cache->uid = cr->uid;
        cache->gid = cr->gid;
        cache->ino = cr->ino;
        cache->cgid = cg1;
        cache->gen = cg_gen;
        cache->id = *id;
    }
    return 0;
}
