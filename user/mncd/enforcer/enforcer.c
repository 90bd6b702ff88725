// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* enforcer.c - the enforcer's event loop (enforcer.h; docs/privsep.md).
 *
 * One thread, epoll: the monitor's end of the pair, the admin socket and its connections, the
 * kernel layer's fds, and a signalfd. Every message is checked by psp_check before anything
 * looks at it; a malformed one is answered REFUSED and logged on stderr (the journal, which the
 * monitor cannot write), and the enforcer goes on. It never signals the monitor (a process of
 * another uid; it holds no CAP_KILL): on SIGTERM it sends STOP and waits for the monitor to
 * exit. When the monitor is gone (exit, crash, kill -9) the enforcer exits too, with the
 * monitor's status, and leaves everything pinned: systemd restarts both.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../privdrop.h"
#include "enforcer.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

enum tag { T_MON = 1, T_SIG, T_ADMIN_LISTEN, T_ADMIN, T_KERN };
#define TAG(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))
#define STOP_WAIT_MS 30000 /* after STOP, how long the monitor may take to exit */

static void log_refusal(ek *e, const char *who, int t, const char *why)
{
    /* a monitor that sends garbage is broken or compromised: said in the journal, rate-limited */
    if (e->n_malformed <= 100 || e->n_malformed % 1000 == 0)
        fprintf(stderr, "mncd enforcer: refused a %s from %s (%llu so far): %s\n",
                t == -EPERM ? "message out of sequence" : "malformed message", who, (unsigned long long)e->n_malformed,
                why);
}

static void seal(ek *e, uint32_t seq)
{
    static struct psp_started s;
    memset(&s, 0, sizeof(s));
    psp_hdr_init(&s.h, PSP_STARTED, seq);
    char why[1024] = "";
    if (e->start_failed || ek_prepare(e, why, sizeof(why)) != 0 || ek_kern_start(e, &s, why, sizeof(why)) != 0) {
        if (e->start_failed && !why[0])
            snprintf(why, sizeof(why), "out of memory (configuration)");
        if (why[0])
            fprintf(stderr, "mncd: refusing to start: %s\n", why);
        ek_refuse(e, seq, PSP_NO_INTERNAL, 0, "%s", why[0] ? why : "the kernel layer did not start");
        e->start_failed = e->stopping = true; /* the monitor exits on it; so do we */
        return;
    }
    s.n_sinkfds = ek_sinkfds(e);
    int fds[PSP_MAX_FDS] = {e->state_fd, e->listen_fd, -1};
    int audit_fd = -1;
    s.n_fds = 2;
    if (s.flags & PSP_SF_LLAUDIT) {
        audit_fd = ek_kern_audit_fd(e);
        fds[2] = audit_fd;
        s.n_fds = 3;
    }
    if (e->pidfd_creds)
        s.flags |= PSP_SF_PIDFD;
    if (ek_reply(e, &s, fds, (int)s.n_fds) != 0)
        return;
    /* handed over: the monitor holds the state dir and the listener now (the socket closes when
     * the monitor closes its copy: connect() is refused from then on) */
    close(e->listen_fd);
    close(e->state_fd);
    e->listen_fd = e->state_fd = -1;
    if (audit_fd >= 0)
        ek_kern_audit_fd_done(e);
    e->sealed = true;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG(T_ADMIN_LISTEN, 0)};
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, e->admin_fd, &ev) != 0)
        fprintf(stderr, "mncd enforcer: the admin socket is not served: %s\n", strerror(errno));
    int kf[EK_KERN_MAX_FDS];
    int nk = ek_kern_fds(e, kf);
    for (int i = 0; i < nk; i++) {
        ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = TAG(T_KERN, kf[i])};
        if (epoll_ctl(e->ep, EPOLL_CTL_ADD, kf[i], &ev) != 0)
            fprintf(stderr, "mncd enforcer: kernel fd %d not watched: %s\n", kf[i], strerror(errno));
    }
    if (geteuid() == 0 && psp_caps_limit(PSP_CAPS_RUN, why, sizeof(why)) != 0) {
        fprintf(stderr, "mncd enforcer: cannot drop to the run capabilities: %s; stopping\n", why);
        ek_stop(e);
    }
}

static void from_monitor(ek *e, psp_buf *b, ssize_t len, int *fds, int nfds)
{
    char why[300];
    int t = psp_check(&e->cx, b, (size_t)len, nfds, why, sizeof(why));
    psp_close_fds(fds, nfds); /* nothing the monitor sends carries an fd */
    if (t < 0) {
        e->n_malformed++;
        log_refusal(e, "the monitor", t, why);
        ek_refuse(e, len >= (ssize_t)sizeof(struct psp_hdr) ? b->h.seq : 0,
                  t == -EPERM ? PSP_NO_STATE : PSP_NO_MALFORMED, 0, "%s", why);
        return;
    }
    psp_advance(&e->cx, b);
    switch (t) {
    case PSP_OPEN:
        ek_open(e, (void *)b);
        break;
    case PSP_CONFIG:
        e->start_failed |= ek_config(e, (void *)b) != 0;
        break;
    case PSP_PRINCIPAL:
        e->start_failed |= ek_principal_add(e, (void *)b) != 0;
        break;
    case PSP_IDMAP:
        e->start_failed |= ek_idmap_add(e, (void *)b) != 0;
        break;
    case PSP_SEAL:
        seal(e, b->h.seq);
        break;
    case PSP_HOLD:
        ek_kern_hold(e, (void *)b);
        break;
    case PSP_REG_BEGIN:
        ek_kern_reg_begin(e, (void *)b);
        break;
    case PSP_REG_PATH:
        ek_kern_reg_path(e, (void *)b);
        break;
    case PSP_REG_COMMIT:
        ek_kern_reg_commit(e, (void *)b);
        break;
    case PSP_TAINT_GET:
        ek_kern_taint_get(e, (void *)b);
        break;
    case PSP_STATUS:
        ek_kern_status(e, (void *)b);
        break;
    }
}

/* ---- the admin socket */

/* Is the peer of an admin connection the admin? The kernel says who connected (SO_PEERCRED);
 * the connecting process must still be alive (its pidfd, so that its pid names it) and, like an
 * admin of the agent socket, be neither an agent (by uid or by cgroup) nor inside the mnc tree. */
static bool admin_peer(ek *e, int fd, char *why, size_t n)
{
    struct ucred uc;
    socklen_t l = sizeof(uc);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) != 0 || l != sizeof(uc)) {
        snprintf(why, n, "the kernel gave no peer credentials");
        return false;
    }
    if (uc.uid != e->cfg.admin_uid) {
        snprintf(why, n, "uid %u is not the admin uid %u", (unsigned)uc.uid, e->cfg.admin_uid);
        return false;
    }
    for (uint32_t i = 0; i < e->n_idm; i++)
        if (e->idm[i].kind == PSP_IDMAP_UID && e->idm[i].uid == uc.uid) {
            snprintf(why, n, "uid %u is agent %s's", (unsigned)uc.uid, ek_name(e, e->idm[i].agent));
            return false;
        }
    char cg[PSP_CGROUP_MAX];
    int pidfd = -1;
    l = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) != 0)
        pidfd = -1;
    int r = ek_proc_cgroup(uc.pid, pidfd, cg, sizeof(cg));
    if (pidfd >= 0)
        close(pidfd);
    if (r != 0) {
        snprintf(why, n, "pid %d: its cgroup cannot be read (exited?)", (int)uc.pid);
        return false;
    }
    for (uint32_t i = 0; i < e->n_idm; i++)
        if (e->idm[i].kind == PSP_IDMAP_CGROUP && strcmp(e->idm[i].cgroup, cg) == 0) {
            snprintf(why, n, "pid %d is agent %s (cgroup %.200s)", (int)uc.pid, ek_name(e, e->idm[i].agent), cg);
            return false;
        }
    int a = ek_kern_cgroup_agent(e, cg);
    if (a != -2) {
        snprintf(why, n, "pid %d is inside the mnc cgroup tree (%.200s%s%s)", (int)uc.pid, cg, a >= 0 ? ", agent " : "",
                 a >= 0 ? ek_name(e, (uint32_t)a) : "");
        return false;
    }
    return true;
}

static void admin_close(ek *e, int i)
{
    epoll_ctl(e->ep, EPOLL_CTL_DEL, e->admin[i].fd, NULL);
    close(e->admin[i].fd);
    e->admin[i].fd = -1;
}

static void admin_accept(ek *e)
{
    for (;;) {
        int fd = accept4(e->admin_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int i = 0;
        while (i < EK_MAX_ADMIN && e->admin[i].fd >= 0)
            i++;
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG(T_ADMIN, i)};
        if (i == EK_MAX_ADMIN || epoll_ctl(e->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            ek_refuse_to(fd, 0, PSP_NO_STATE, EBUSY, "too many admin connections");
            close(fd);
            continue;
        }
        e->admin[i].fd = fd;
        psp_ctx_init(&e->admin[i].cx, PSP_PH_ADMIN);
    }
}

static void admin_ready(ek *e, int i)
{
    static psp_buf b;
    int fds[PSP_MAX_FDS], nfds;
    ssize_t len = psp_recv(e->admin[i].fd, &b, fds, &nfds, true);
    if (len == -EAGAIN)
        return;
    if (len <= 0) {
        psp_close_fds(fds, nfds);
        admin_close(e, i);
        return;
    }
    char why[300];
    int t = psp_check(&e->admin[i].cx, &b, (size_t)len, nfds, why, sizeof(why));
    psp_close_fds(fds, nfds);
    uint32_t seq = len >= (ssize_t)sizeof(struct psp_hdr) ? b.h.seq : 0;
    if (t < 0) {
        ek_refuse_to(e->admin[i].fd, seq, t == -EPERM ? PSP_NO_STATE : PSP_NO_MALFORMED, 0, "%s", why);
        admin_close(e, i);
        return;
    }
    if (!admin_peer(e, e->admin[i].fd, why, sizeof(why))) {
        ek_audit(e, t == PSP_ADM_RESET ? PSP_A_TAINT_RESET : PSP_A_WORKSPACE_CLEAR, PSP_D_DENY, PSP_NONE, PSP_NONE,
                 NULL, "not_admin", "%s refused on the admin socket: %s (admin verb)", psp_type_name((uint32_t)t), why);
        ek_refuse_to(e->admin[i].fd, seq, PSP_NO_NOT_ADMIN, EPERM, "not the admin: %s", why);
        admin_close(e, i);
        return;
    }
    if (t == PSP_ADM_RESET)
        ek_kern_adm_reset(e, e->admin[i].fd, (void *)&b);
    else
        ek_kern_adm_ws_clear(e, e->admin[i].fd, (void *)&b);
}

/* ---- life and death */

void ek_stop(ek *e)
{
    if (e->stopping)
        return;
    e->stopping = true;
    if (e->mon_fd >= 0) {
        struct psp_stop s;
        memset(&s, 0, sizeof(s));
        psp_hdr_init(&s.h, PSP_STOP, 0);
        ek_notice(e, &s, false);
    }
}

/* The monitor exited: its status is ours. */
static bool reaped(ek *e)
{
    int st;
    pid_t p = waitpid(e->mon_pid, &st, WNOHANG);
    if (p != e->mon_pid)
        return false;
    if (WIFEXITED(st)) {
        e->exit_code = WEXITSTATUS(st);
    } else {
        fprintf(stderr,
                "mncd enforcer: the monitor (pid %d) was killed by signal %d; stopping (enforcement stays "
                "pinned)\n",
                (int)e->mon_pid, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        e->exit_code = 1;
    }
    if (e->exit_code && e->sealed && !e->stopping)
        fprintf(stderr, "mncd enforcer: the monitor exited with status %d; stopping\n", e->exit_code);
    return true;
}

__attribute__((noreturn)) static void finish(ek *e)
{
    ek_kern_stop(e);
    for (int i = 0; i < EK_MAX_ADMIN; i++)
        if (e->admin[i].fd >= 0)
            close(e->admin[i].fd);
    if (e->mon_fd >= 0)
        close(e->mon_fd);
    ek_out_free(e);
    ek_boot_cleanup(e);
    fflush(stderr);
    _exit(e->exit_code);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ek_main(int mon_fd, pid_t mon_pid)
{
    static ek e; /* large; one per process */
    memset(&e, 0, sizeof(e));
    e.mon_fd = mon_fd;
    e.mon_pid = mon_pid;
    e.state_fd = e.listen_fd = e.admin_fd = -1;
    e.exit_code = 1;
    for (int i = 0; i < EK_MAX_ADMIN; i++)
        e.admin[i].fd = -1;
    psp_ctx_init(&e.cx, PSP_PH_BOOT);
    char why[400];
    if (geteuid() == 0 && psp_caps_limit(PSP_CAPS_START, why, sizeof(why)) != 0) {
        fprintf(stderr, "mncd enforcer: %s\n", why);
        close(mon_fd); /* the monitor sees EOF and exits; so do we, once it is reaped */
        e.mon_fd = -1;
        e.stopping = true;
    }
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGCHLD);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGHUP);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC);
    e.ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG(T_SIG, 0)};
    if (sfd < 0 || e.ep < 0 || epoll_ctl(e.ep, EPOLL_CTL_ADD, sfd, &ev) != 0) {
        fprintf(stderr, "mncd enforcer: signalfd/epoll: %s\n", strerror(errno));
        finish(&e); /* the monitor dies with us (its death signal) */
    }
    ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = TAG(T_MON, 0)};
    if (e.mon_fd >= 0 && epoll_ctl(e.ep, EPOLL_CTL_ADD, e.mon_fd, &ev) != 0) {
        fprintf(stderr, "mncd enforcer: epoll: %s\n", strerror(errno));
        finish(&e);
    }
    int64_t stop_at = -1;
    for (;;) {
        if (e.stopping && stop_at < 0)
            stop_at = now_ms() + STOP_WAIT_MS;
        /* notices waiting for room: wait for EPOLLOUT on the pair */
        bool want_out = e.q_head && e.mon_fd >= 0;
        if (want_out != e.q_epollout && e.mon_fd >= 0) {
            ev = (struct epoll_event){.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.u64 = TAG(T_MON, 0)};
            if (epoll_ctl(e.ep, EPOLL_CTL_MOD, e.mon_fd, &ev) == 0)
                e.q_epollout = want_out;
        }
        struct epoll_event evs[32];
        int timeout = stop_at < 0 ? -1 : (int)(stop_at - now_ms() > 0 ? stop_at - now_ms() : 0);
        int n = epoll_wait(e.ep, evs, 32, timeout);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "mncd enforcer: epoll_wait: %s\n", strerror(errno));
            finish(&e);
        }
        if (n == 0 && stop_at >= 0 && now_ms() >= stop_at) {
            fprintf(stderr, "mncd enforcer: the monitor did not stop within %d s; exiting (it dies with us)\n",
                    STOP_WAIT_MS / 1000);
            finish(&e);
        }
        for (int i = 0; i < n; i++) {
            uint32_t kind = (uint32_t)(evs[i].data.u64 >> 32), idx = (uint32_t)evs[i].data.u64;
            if (kind == T_SIG) {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                    if (si.ssi_signo == SIGCHLD) {
                        if (reaped(&e))
                            finish(&e);
                    } else if (si.ssi_signo != SIGHUP) {
                        ek_stop(&e);
                    }
                }
            } else if (kind == T_MON && e.mon_fd >= 0) {
                if (evs[i].events & EPOLLOUT)
                    ek_flush(&e, false);
                if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                    continue;
                for (int k = 0; k < 64 && e.mon_fd >= 0; k++) { /* bounded: the rest next turn */
                    static psp_buf b;
                    int fds[PSP_MAX_FDS], nfds;
                    ssize_t len = psp_recv(e.mon_fd, &b, fds, &nfds, true);
                    if (len == -EAGAIN)
                        break;
                    if (len <= 0) { /* EOF: the monitor is going; wait for SIGCHLD */
                        if (len < 0 && len != -ECONNRESET) {
                            e.n_malformed++;
                            log_refusal(&e, "the monitor", -EBADMSG, strerror((int)-len));
                            if (len == -EMSGSIZE)
                                continue;
                        }
                        epoll_ctl(e.ep, EPOLL_CTL_DEL, e.mon_fd, NULL);
                        close(e.mon_fd);
                        e.mon_fd = -1;
                        ek_out_free(&e);
                        e.stopping = true;
                        break;
                    }
                    from_monitor(&e, &b, len, fds, nfds);
                }
            } else if (kind == T_ADMIN_LISTEN) {
                admin_accept(&e);
            } else if (kind == T_ADMIN && idx < EK_MAX_ADMIN && e.admin[idx].fd >= 0) {
                admin_ready(&e, (int)idx);
            } else if (kind == T_KERN) {
                ek_kern_ready(&e, (int)idx);
            }
        }
        if (e.mon_fd >= 0 && e.q_head)
            ek_flush(&e, false);
    }
}
