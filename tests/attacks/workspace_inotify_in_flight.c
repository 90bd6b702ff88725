// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_inotify_in_flight - workspace_inotify with the inotify fd parked in flight. Before
 * the launch (WS still 0755) uid 65534 adds an IN_CREATE | IN_MOVED_TO watch on WS, sends the
 * inotify fd over an AF_UNIX socketpair of its own (SCM_RIGHTS) and closes it: no process has
 * it in its fd table, so the launcher's walk of /proc/PID/fdinfo for outsiders' inotify marks
 * on workspace inodes does not see the mark, which outlives the chmod to root:agentgid 0770.
 * The agent creates WS/<canary> after its recv; the event queued on the mark carries the name.
 * Verifier: the outsider, asked after the agent exited, recvmsg()s the inotify fd and hands
 * every event name over a pipe.
 * Would block it: a workspace whose inodes no other uid could reach before the launch (fresh
 * directories made by the launcher, the content moved in: a mark stays on the old inode), or
 * the kernel's view of fds in flight in the launch check. Documented as open
 * (docs/threat-model.md, "the workspace"): this attack confirms it. */
#include <fcntl.h>
#include <grp.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *ws, int cmd, int ans)
{
    (void)c;
    atkv_keeper_nobody();
    int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (in >= 0 && inotify_add_watch(in, ws, IN_CREATE | IN_MOVED_TO) < 0)
        _exit(3);
    int got = atkv_keeper_park(in, cmd, ans);
    char buf[1 << 14] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t r;
    while ((r = read(got, buf, sizeof(buf))) > 0) {
        for (char *p = buf; p < buf + r;) {
            struct inotify_event *e = (struct inotify_event *)p;
            if (e->len > 0) {
                size_t l = strnlen(e->name, e->len);
                if (write(ans, e->name, l) != (ssize_t)l || write(ans, "\n", 1) != 1)
                    _exit(1);
            }
            p += sizeof(*e) + e->len;
        }
    }
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start(c, c->ws, outsider, "2 socketpair, 3 inotify/send, 4 recv");
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary as a file name from an inotify watch on the workspace whose "
                          "fd it kept in flight in its own socket");
}

static const struct atk A = {
    "workspace_inotify_in_flight",
    "an outsider's inotify watch on the workspace, its fd parked in flight in its own socketpair",
    0,
    prepare,
    atkv_canary_name_agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
