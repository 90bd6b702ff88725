// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* timerfd_shared - a timerfd the agent made, held outside too. Before its recv the agent passes
 * a timerfd of its own to an outsider (uid 65534, DIR/tf.sock) and keeps its copy. After the
 * taint it arms the timer with timerfd_settime: an hour's it_value, and an interval of hi
 * seconds and lo nanoseconds (the canary's 48 bits, 24 in each). Nothing about a timer is
 * judged by a hook.
 * Verifier: the outsider, asked after the agent exited, reads the interval back with
 * timerfd_gettime (it is state of the open file both hold).
 * Blocks it: mncd's fd scan (held_outside): the outsider holds the same open file (kcmp). */
#include <sys/timerfd.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int fd = atkv_keeper_take_as_nobody(path, ans);
    atkv_keeper_wait_asked(cmd);
    struct itimerspec it;
    char buf[32];
    int n = 0;
    if (timerfd_gettime(fd, &it) == 0)
        n = snprintf(buf, sizeof(buf), "mk%06llx%06llx", (unsigned long long)it.it_interval.tv_sec,
                     (unsigned long long)it.it_interval.tv_nsec);
    atkv_keeper_answer(ans, buf, (size_t)(n > 0 ? n : 0));
}

static int make(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC); }

static void use(struct atk_ctx *c, int fd)
{
    unsigned long long v = atkv_canary_value(c->secret);
    struct itimerspec it = {.it_value = {3600, 0}, .it_interval = {(time_t)(v >> 24), (long)(v & 0xffffff)}};
    atk_try(c, "arm the timer with the canary as its interval", timerfd_settime(fd, 0, &it, NULL));
}

static int prepare(struct atk_ctx *c) { return atkv_keeper_start_at(c, "tf", outsider, "1 drop, 2 listen, 3 take"); }
static int agent(struct atk_ctx *c) { return atkv_object_out_agent(c, "tf", "timerfd", make, use); }
static void verify(struct atk_ctx *c) { atkv_keeper_verify(c, "the interval of a timerfd the outsider also holds"); }

static const struct atk A = {
    "timerfd_shared",   "a timerfd passed out before the taint, armed after", ATK_NO_RECV, prepare, agent, NULL, verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
