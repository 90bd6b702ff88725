// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* thread_private_fds - a pre-taint UNIX connection to an outsider held only in the fd table of
 * a THREAD that does not share its process's fd table. clone(CLONE_VM | CLONE_THREAD ...)
 * without CLONE_FILES gives the thread a private copy of the table (kernel/fork.c, copy_files);
 * the thread connects to the collector before the taint. cgroup.procs lists thread group ids
 * and /proc/TGID/fd is the group leader's table: a sweep that reads only those never sees the
 * thread's socket (it is in /proc/TGID/task/TID/fd). After the delivery the leader hands the
 * canary to the thread through their shared memory, and the thread writes it to the
 * connection (a send on a connected socket: no cgroup hook).
 * Verifier: the collector's unix-stream listener.
 * Blocks it: mncd's sweep at delivery, if it finds every socket of every thread (each task's fd
 * table, /proc/PID/task/TID/fd), shuts the pre-taint connection to the outsider. */
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>

#include "atk.h"

static struct {
    const char *path;
    _Atomic int state; /* 0 start, 1 thread connected (fd in rc), -1 failed, 2 secret ready, 3 done */
    int rc, err;
    char secret[256];
} sh;

static void nap(void)
{
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
}

/* the thread: only raw system calls and its own stack (it shares the leader's TLS block) */
static int thread_fn(void *arg)
{
    (void)arg;
    int fd = atk_unix(SOCK_STREAM, sh.path);
    if (fd < 0) {
        sh.err = errno;
        atomic_store(&sh.state, -1);
        syscall(SYS_exit, 0);
    }
    sh.rc = fd;
    atomic_store(&sh.state, 1);
    while (atomic_load(&sh.state) != 2)
        nap();
    ssize_t w = write(fd, sh.secret, strlen(sh.secret));
    sh.rc = w < 0 ? -1 : 0;
    sh.err = w < 0 ? errno : 0;
    atomic_store(&sh.state, 3);
    syscall(SYS_exit, 0);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    static char stack[256 * 1024] __attribute__((aligned(16)));
    sh.path = atk_arg(c, "c_unix");
    int flags = CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM; /* no CLONE_FILES */
    if (atk_try(c, "clone a thread with a private fd table", clone(thread_fn, stack + sizeof(stack), flags, NULL)) <
        0) {
        atk_recv(c);
        return 0;
    }
    while (atomic_load(&sh.state) == 0)
        nap();
    if (atomic_load(&sh.state) < 0) {
        errno = sh.err;
        atk_try(c, "the thread's connect before the taint", -1);
        atk_recv(c);
        return 0;
    }
    atk_note(c, "the thread connected before the taint (its fd %d, not in the leader's table)", sh.rc);
    atk_recv(c);
    snprintf(sh.secret, sizeof(sh.secret), "%s", c->secret);
    atomic_store(&sh.state, 2);
    for (int i = 0; i < 5000 && atomic_load(&sh.state) != 3; i++)
        nap();
    errno = sh.err;
    atk_try(c, "the thread's write after the taint", atomic_load(&sh.state) == 3 ? sh.rc : -1);
    return 0;
}

static const struct atk A = {"thread_private_fds",
                             "a pre-taint UNIX connection held only by a thread with its own fd table",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
