// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* epoll_watch_agent - the agent's eventfd watched from outside by an epoll instance that is
 * not the agent's, after the outsider let go of its own fd on the eventfd. Before its recv the
 * agent passes a copy of an eventfd of its own to an outsider (uid 65534, DIR/ew.sock), which
 * registers it with an epoll instance of its own (EPOLL_CTL_ADD) and closes its fd on it: a
 * watch lives as long as the watched file, which the agent keeps. The outsider holds no fd, no
 * mapping, nothing of the agent's but the watch. After the taint the agent signals the canary
 * one bit per step: the eventfd readable (a write) or not (read back).
 * Verifier: at each of the agent's syncs the outsider polls its epoll instance (timeout 0);
 * after 48 bits the orchestrator compares what it decoded with the canary.
 * Blocks it: mncd's fd scan reads the fdinfo of every outside epoll instance (its watches:
 * target fd, inode, device) and compares each watch of an anonymous-inode file with the
 * agent's open file (kcmp KCMP_EPOLL_TFD): held_outside. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "atk_variants.h"

static int sample(int ep)
{
    struct epoll_event ev;
    return epoll_wait(ep, &ev, 1, 0) == 1;
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int fd = atkv_keeper_take_as_nobody(path, ans);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        _exit(4);
    close(fd); /* the watch is all it keeps */
    atkv_keeper_bits(cmd, ans, ep, sample);
}

static void set(int fd, int bit)
{
    uint64_t v = 1;
    if (bit)
        (void)!write(fd, &v, sizeof(v));
    else
        (void)!read(fd, &v, sizeof(v)); /* EAGAIN when already clear */
}

static int make(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
static void use(struct atk_ctx *c, int fd) { atkv_bits_agent(c, fd, set); }
static void on_sync(struct atk_ctx *c, const char *tag)
{
    atkv_bits_on_sync(c, tag, "the readiness of the agent's eventfd, watched by the outsider's epoll instance");
}
static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "ew", outsider, "1 drop, 2 listen, 3 take, 4 epoll");
}
static int agent(struct atk_ctx *c) { return atkv_object_out_agent(c, "ew", "eventfd", make, use); }

static const struct atk A = {"epoll_watch_agent",
                             "an outside epoll instance watching the agent's eventfd",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
