// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* blocked_read_outside - a pipe whose only outside reference is a read(2) in progress. Before
 * the agent's recv an outsider (uid 65534, DIR/br.sock) makes a pipe, starts a thread that
 * blocks in read() on the read end, closes that fd in its main thread (the read in progress
 * keeps its own reference to the open file: close(2) does not interrupt it) and hands the agent
 * the write end. No fd table, mapping, watch or mark of the outsider names the pipe now: mncd's
 * fd scan finds it held by nobody outside. After the taint the agent writes the canary into the
 * write end; the blocked read returns it.
 * Verifier: the outsider, asked after the agent exited, hands over what its thread read.
 * Open (ATK_OPEN; docs/threat-model.md, "Open byte channels"): a file held only by a system call
 * in progress is in no /proc table, on either backend (on the lsm backend the agent may receive
 * the fd before its taint like on the cgroup one). Bandwidth: one read per blocked thread, up to
 * the pipe's size (64 KiB by default, 1 MiB with F_SETPIPE_SZ). */
#include <fcntl.h>
#include <pthread.h>

#include "atk_variants.h"

static int rfd = -1;
static char got[256];
static volatile int got_n;

static void *reader(void *arg)
{
    (void)arg;
    ssize_t n = read(rfd, got, sizeof(got) - 1); /* blocks: nothing written yet */
    got_n = n > 0 ? (int)n : 0;
    return NULL;
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int p[2];
    pthread_t t;
    if (pipe2(p, O_CLOEXEC) != 0)
        _exit(4);
    rfd = p[0];
    if (pthread_create(&t, NULL, reader, NULL) != 0)
        _exit(4);
    usleep(100000); /* the thread is in read() */
    close(p[0]);    /* the read in progress is the only reference left */
    atkv_keeper_give_one(l, p[1], 0, ans);
    atkv_keeper_wait_asked(cmd);
    usleep(100000);
    atkv_keeper_answer(ans, got, (size_t)got_n);
}

static int agent(struct atk_ctx *c)
{
    int w = atkv_take_keeper_fd(c, "br", "take the outsider's pipe (write end)");
    if (w < 0)
        return 0;
    atk_recv(c);
    atk_try(c, "write the canary into the pipe", write(w, c->secret, strlen(c->secret)));
    return 0;
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "br", outsider, "1 drop, 2 listen, 3 give, 4 pipe");
}
static void verify(struct atk_ctx *c) { atkv_keeper_verify(c, "a read(2) in progress in an outsider's thread"); }

static const struct atk A = {"blocked_read_outside",
                             "a pipe held outside only by a read in progress",
                             ATK_NO_RECV | ATK_OPEN,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
