// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* outsider_thread_fds - memfd_shared, with the outsider keeping the memfd only in a thread that
 * has an fd table of its own. Before its recv the agent (untainted: it may talk to anyone)
 * creates a memfd and passes it to an outsider (uid 65534, DIR/ot.sock). The outsider starts a
 * thread with clone(CLONE_VM | CLONE_THREAD) without CLONE_FILES, which gets a copy of the fd
 * table, and closes the memfd in its main table: the memfd is now in the thread's table only.
 * mncd's host scan (an outside process holding an object the agent holds: held_outside) reads
 * /proc/PID/fd and /proc/PID/maps of every thread-group leader in /proc, which show the
 * leader's table; a thread's own table is /proc/PID/task/TID/fd. The agent's own processes
 * cannot do this (seccomp refuses CLONE_THREAD without CLONE_FILES: thread_private_fds), an
 * outsider is not confined. After the taint the agent writes the canary into the memfd.
 * Verifier: the outsider's thread, asked after the agent exited, preads the memfd.
 * Blocks it: mncd's host scan reads /proc/PID/task/TID/fd of every thread whose table differs
 * from its leader's (kcmp KCMP_FILES); LEAKED on both backends before. */
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "atk_variants.h"

static struct {
    int memfd, cmd, ans;
} th;

/* the outsider's thread: raw system calls only (it shares the leader's TLS) */
static int thread_main(void *arg)
{
    (void)arg;
    char x, buf[256];
    if (syscall(SYS_read, th.cmd, &x, 1) == 1) {
        long r = syscall(SYS_pread64, th.memfd, buf, sizeof(buf), 0);
        if (r > 0)
            syscall(SYS_write, th.ans, buf, r);
    }
    syscall(SYS_exit, 0); /* this thread only; its fd table goes with it, and ans reads EOF */
    return 0;
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    static char stack[64 * 1024] __attribute__((aligned(16)));
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int s;
    int m = atkv_keeper_take_held(l, ans, &s);
    th.memfd = m;
    th.cmd = cmd;
    th.ans = ans;
    if (clone(thread_main, stack + sizeof(stack), CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM,
              NULL) < 0)
        _exit(4);
    /* the leader's table: nothing of the agent's, not even the question and answer pipes */
    close(m);
    close(cmd);
    close(ans);
    atkv_keeper_ack(s, l); /* the agent may go on */
    for (;;)
        pause(); /* atkv_keeper_cleanup kills the thread group */
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "ot", outsider, "1 drop to 65534, 2 listen, 3 take the memfd, 4 clone");
}

static int agent(struct atk_ctx *c)
{
    return atkv_memfd_out_agent(c, "ot", "outsider moved it to a thread's own table");
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the memfd an outsider's thread keeps in an fd table of its own");
}

static const struct atk A = {"outsider_thread_fds",
                             "memfd passed out before the taint, kept by an outsider thread with its own fd table",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
