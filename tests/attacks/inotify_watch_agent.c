// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* inotify_watch_agent - the agent's pipe watched from outside by an inotify mark, after the
 * outsider let go of its own fd on it. Before its recv the agent passes a copy of the read end
 * of a pipe of its own to an outsider (root: a mark needs read permission on the inode, and the
 * pipe is the agent's, 0600; a helper may run as anyone, DIR/iw.sock), which adds an inotify
 * watch on it (through /proc/self/fd: IN_MODIFY) and closes its fd: a mark lives on the pipe's inode,
 * which the agent keeps. After the taint the agent signals the canary one bit per step: a
 * write into the pipe (read back at once) or nothing.
 * Verifier: at each of the agent's syncs the outsider drains its inotify instance (any event:
 * 1); after 48 bits the orchestrator compares what it decoded with the canary.
 * Blocks it: mncd's fd scan reads the marks of every outside inotify and fanotify instance
 * (inode, device) and finds one on the agent's pipe: held_outside. */
#include <fcntl.h>
#include <sys/inotify.h>

#include "atk_variants.h"

static int rd = -1, wr = -1;

static int sample(int in)
{
    char buf[4096];
    int got = 0;
    while (read(in, buf, sizeof(buf)) > 0)
        got = 1;
    return got;
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int fd = atkv_keeper_take_one(l);
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (in < 0 || inotify_add_watch(in, p, IN_MODIFY) < 0)
        _exit(4);
    close(fd); /* the mark is all it keeps */
    atkv_keeper_bits(cmd, ans, in, sample);
}

static void set(int fd, int bit)
{
    char x = 'x';
    if (bit && write(fd, &x, 1) == 1)
        (void)!read(rd, &x, 1);
}

static int make(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    rd = p[0];
    wr = p[1];
    return rd; /* a copy of the read end goes out; the agent keeps both ends */
}

static void use(struct atk_ctx *c, int fd)
{
    (void)fd;
    atkv_bits_agent(c, wr, set);
}
static void on_sync(struct atk_ctx *c, const char *tag)
{
    atkv_bits_on_sync(c, tag, "writes into the agent's pipe, seen by the outsider's inotify mark");
}
static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "iw", outsider, "1 drop, 2 listen, 3 take, 4 inotify");
}
static int agent(struct atk_ctx *c) { return atkv_object_out_agent(c, "iw", "pipe", make, use); }

static const struct atk A = {
    "inotify_watch_agent", "an outside inotify mark on the agent's pipe", ATK_NO_RECV, prepare, agent, on_sync, NULL,
    atkv_keeper_cleanup};
ATK_MAIN(A)
