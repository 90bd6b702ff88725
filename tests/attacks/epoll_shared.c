// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* epoll_shared - an epoll instance the agent made, held outside too. Before its recv the agent
 * passes its epoll fd to an outsider (uid 65534, DIR/ep.sock) and keeps its copy. After the
 * taint it registers an eventfd of its own with the instance (EPOLL_CTL_ADD), the canary's
 * 48-bit value as the watch's user data: epoll_ctl meets no hook, and the kernel shows every
 * watch of an instance, data included, in the fdinfo of whoever holds it.
 * Verifier: at the agent's sync (the watch lives as long as the agent's eventfd), the outsider
 * reads /proc/self/fdinfo of its copy and decodes the "data:" of the watch.
 * Blocks it: mncd's fd scan (held_outside): the outsider holds the same open file (kcmp). */
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int fd = atkv_keeper_take_as_nobody(path, ans);
    atkv_keeper_wait_asked(cmd);
    char p[64], line[256], buf[64];
    int n = 0;
    snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(p, "re");
    while (f && n == 0 && fgets(line, sizeof(line), f)) {
        const char *d = strstr(line, "data:");
        unsigned long long v;
        if (strncmp(line, "tfd:", 4) == 0 && d && sscanf(d, "data: %llx", &v) == 1)
            n = snprintf(buf, sizeof(buf), "mk%012llx", v);
    }
    if (f)
        fclose(f);
    atkv_keeper_answer(ans, buf, (size_t)(n > 0 ? n : 0));
}

static int make(void) { return epoll_create1(EPOLL_CLOEXEC); }

static void use(struct atk_ctx *c, int fd)
{
    int e = (int)atk_try(c, "eventfd", eventfd(0, EFD_CLOEXEC));
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = atkv_canary_value(c->secret)};
    if (e >= 0)
        atk_try(c, "watch it with the canary as the watch's data", epoll_ctl(fd, EPOLL_CTL_ADD, e, &ev));
    atk_sync(c, "read");
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "read") == 0)
        atkv_keeper_verify(c, "the user data of a watch of an epoll instance the outsider also holds");
}

static int prepare(struct atk_ctx *c) { return atkv_keeper_start_at(c, "ep", outsider, "1 drop, 2 listen, 3 take"); }
static int agent(struct atk_ctx *c) { return atkv_object_out_agent(c, "ep", "epoll_create1", make, use); }

static const struct atk A = {"epoll_shared", "an epoll instance passed out before the taint, a watch added after",
                             ATK_NO_RECV,    prepare,
                             agent,          on_sync,
                             NULL,           atkv_keeper_cleanup};
ATK_MAIN(A)
