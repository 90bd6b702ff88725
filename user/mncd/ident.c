/* ident.c - who is calling: SO_PEERCRED -> pid -> cgroup -> agent, else uid -> agent.
 *
 * Nothing the client sends is used to identify it. The kernel records the peer's credentials
 * at connect() time; we resolve them once, at accept(). To close the pid-reuse race between
 * reading SO_PEERCRED and reading /proc/PID/cgroup we also take a pidfd of the peer
 * (SO_PEERPIDFD, Linux 6.5+) and check after reading the cgroup that the pidfd still refers to
 * a live process: a pidfd pins the process identity, so if it is alive, the pid was not reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mncd.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

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
            return 0;
        }
    if (n_cg >= (int)(sizeof(cg_table) / sizeof(cg_table[0])))
        return -1;
    snprintf(cg_table[n_cg].path, sizeof(cg_table[n_cg].path), "%s", cgroup_path);
    cg_table[n_cg].agent = agent;
    n_cg++;
    return 0;
}

void mncd_ident_clear(void) { n_cg = 0; }

int mncd_ident_unregister_cgroup(const char *cgroup_path)
{
    for (int i = 0; i < n_cg; i++)
        if (strcmp(cg_table[i].path, cgroup_path) == 0) {
            cg_table[i] = cg_table[--n_cg]; /* order does not matter: paths are unique */
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

int mncd_ident_resolve(int fd, const mnc_policy *p, const mncd_config *c, mncd_ident *id)
{
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
        /* If the peer has exited (pidfd no longer signalable), the pid may already belong to
         * someone else: do not trust the cgroup we read. */
        if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0 && errno != ENOSYS)
            id->cgroup[0] = '\0';
    }
    if (pidfd >= 0)
        close(pidfd);

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
    /* A process the kernel placed in an agent's cgroup is that agent, even if it runs as the
     * admin uid (tests and `mncctl run` launch agents as root). */
    id->admin = id->uid == c->admin_uid && id->via != MNCD_VIA_CGROUP;
    return 0;
}
