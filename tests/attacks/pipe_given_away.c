// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pipe_given_away - a pipe of the agent's own with its read end also held outside. Before its
 * recv the agent makes a pipe and passes a copy of the read end to an outsider (uid 65534,
 * DIR/pg.sock), keeping both ends (to the sweep and a look at its own fds it is an internal
 * pipe). After the taint it writes the canary into the write end: write(2) on a pipe meets no
 * hook.
 * Verifier: the outsider, asked after the agent exited, reads the pipe.
 * Blocks it: mncd's fd scan (held_outside): a pipe is its inode, and the outsider holds it. */
#include <fcntl.h>

#include "atk_variants.h"

static int wr = -1;

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int fd = atkv_keeper_take_as_nobody(path, ans);
    atkv_keeper_wait_asked(cmd);
    char buf[256];
    if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        _exit(4);
    ssize_t n = read(fd, buf, sizeof(buf));
    atkv_keeper_answer(ans, buf, (size_t)(n > 0 ? n : 0));
}

static int make(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    wr = p[1];
    return p[0];
}

static void use(struct atk_ctx *c, int fd)
{
    (void)fd;
    atk_try(c, "write the canary into the pipe", write(wr, c->secret, strlen(c->secret)));
}

static int prepare(struct atk_ctx *c) { return atkv_keeper_start_at(c, "pg", outsider, "1 drop, 2 listen, 3 take"); }
static int agent(struct atk_ctx *c) { return atkv_object_out_agent(c, "pg", "pipe", make, use); }
static void verify(struct atk_ctx *c) { atkv_keeper_verify(c, "a pipe whose read end the outsider also holds"); }

static const struct atk A = {"pipe_given_away",
                             "a pipe's read end passed out before the taint, written after",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
