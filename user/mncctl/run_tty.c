// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_tty.c - the agent's stdout and stderr as private terminals (contract in run_tty.h). */
#include "run_tty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

void run_tty_plan(run_tty *t, bool relay_active)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; relay_active && i < 2; i++)
        t->want[i] = isatty(i + 1) && ioctl(i + 1, TIOCGWINSZ, &t->wsz[i]) == 0;
}

/* One message of the hand-over: the child's fd number of a master, or -1. */
static int say(int sock, int32_t num)
{
    ssize_t w;
    while ((w = send(sock, &num, sizeof(num), MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (w != (ssize_t)sizeof(num))
        return -1;
    char ack;
    ssize_t r;
    while ((r = recv(sock, &ack, 1, 0)) < 0 && errno == EINTR)
        ;
    return r == 1 ? 0 : -1;
}

/* A pty of the instance mounted on /dev/pts, its slave on fd `to`; the master, or -1. */
static int make_one(int to, const struct winsize *wsz)
{
    int m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0)
        return -1;
    int unlock = 0;
    int s = ioctl(m, TIOCSPTLCK, &unlock) == 0 ? ioctl(m, TIOCGPTPEER, O_WRONLY | O_NOCTTY | O_CLOEXEC) : -1;
    struct termios tio;
    bool ok = s >= 0 && tcgetattr(s, &tio) == 0;
    if (ok) {
        tio.c_oflag &= ~(tcflag_t)OPOST; /* the agent's bytes unchanged, as through a pipe */
        ok = tcsetattr(s, TCSANOW, &tio) == 0 && ioctl(s, TIOCSWINSZ, wsz) == 0 && dup2(s, to) == to;
    }
    if (s >= 0)
        close(s);
    if (!ok) {
        close(m);
        return -1;
    }
    return m;
}

int run_tty_child(const run_tty *t, int sock, char *why, size_t whylen)
{
    int n = (int)t->want[0] + (int)t->want[1];
    if (n == 0)
        return 0;
    char opts[96];
    snprintf(opts, sizeof(opts), "newinstance,mode=0600,ptmxmode=0600,max=%d", n);
    struct stat st;
    bool inst = stat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode) &&
                mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, opts) == 0;
    for (int i = 0; i < 2; i++) {
        if (!t->want[i])
            continue;
        int m = inst ? make_one(i + 1, &t->wsz[i]) : -1;
        int rc = say(sock, m);
        if (m >= 0)
            close(m); /* the launcher has its own copy now (or the hand-over failed) */
        if (rc != 0) {
            snprintf(why, whylen, "stdio: handing the terminal to the launcher failed: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

void run_tty_receive(const run_tty *t, int sock, pid_t child, int master[2])
{
    master[0] = master[1] = -1;
    for (int i = 0; i < 2; i++) {
        if (!t->want[i])
            continue;
        int32_t num = -1;
        ssize_t r;
        while ((r = recv(sock, &num, sizeof(num), 0)) < 0 && errno == EINTR)
            ;
        if (r != (ssize_t)sizeof(num))
            return; /* the child failed before: it reports why */
        if (num >= 0) {
            int pfd = (int)syscall(SYS_pidfd_open, child, 0);
            master[i] = pfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pfd, num, 0) : -1; /* O_CLOEXEC */
            if (pfd >= 0)
                close(pfd);
        }
        char ack = 't';
        if (send(sock, &ack, 1, MSG_NOSIGNAL) != 1)
            return;
    }
}
