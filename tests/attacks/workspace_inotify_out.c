// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_inotify_out - the agent's own inotify instance, watching its workspace, handed to
 * an outsider. After the launch and before its recv the agent (untainted: it may talk to
 * anyone) creates an inotify instance, watches its workspace for IN_CREATE (it may read its
 * workspace), hands the inotify fd to an outsider (uid 65534, DIR/wi.sock) and closes its
 * copy. The outsider's fd reads "anon_inode:inotify", no workspace path: mncd's fd scan
 * (held_outside: outside fds and maps on workspace paths) does not count it, and the mark scan
 * that refuses an outsider's watch on the workspace runs at the launch only
 * (workspace_inotify). After the taint the agent creates WS/<canary>; the IN_CREATE event,
 * with the name, goes to the outsider's fd (255 bytes per file, at file-creation rate).
 * Verifier: the outsider reads the events as they come and hands over the names.
 * Blocks it: mncd's fd scan at each delivery reads the marks of outside inotify/fanotify fds
 * and refuses when one is on a workspace inode (its file handle opened with open_by_handle_at);
 * LEAKED on both backends before. Parked in flight instead, the instance stays unseen, like
 * workspace_fd_passed_out ([open]). */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int m = atkv_keeper_take_one(l);
    static char buf[1 << 16], names[4096];
    size_t nn = 0;
    for (;;) { /* read the events as they come, keep the names */
        struct pollfd pf[2] = {{.fd = m, .events = POLLIN}, {.fd = cmd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            _exit(1);
        if (pf[0].revents & POLLIN) {
            ssize_t r = read(m, buf, sizeof(buf));
            for (ssize_t i = 0; r > 0 && i + (ssize_t)sizeof(struct inotify_event) <= r;) {
                struct inotify_event *e = (struct inotify_event *)(buf + i);
                size_t nl = e->len ? strnlen(e->name, e->len) : 0;
                if (nl && nn + nl + 1 < sizeof(names)) {
                    memcpy(names + nn, e->name, nl);
                    nn += nl;
                    names[nn++] = ' ';
                }
                i += (ssize_t)(sizeof(*e) + e->len);
            }
            continue;
        }
        if (pf[1].revents & (POLLIN | POLLHUP))
            break;
    }
    if (nn > 0 && write(ans, names, nn) < 0)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/wi.sock", c->dir);
    atk_set(c, "wi", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the inotify fd");
}

static int agent(struct atk_ctx *c)
{
    int in = (int)atk_try(c, "inotify_init1", inotify_init1(IN_CLOEXEC));
    if (in < 0 || atk_try(c, "watch WS for IN_CREATE", inotify_add_watch(in, atk_arg(c, "ws"), IN_CREATE)) < 0)
        return 0;
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "wi")));
    if (s < 0)
        return 0;
    atk_try(c, "hand the inotify fd to the outsider", atk_send_fds(s, 'L', &in, 1));
    char ack;
    atk_try(c, "outsider holds it", read(s, &ack, 1));
    close(s);
    close(in);
    atk_recv(c);
    atkv_canary_name_agent(c);
    sleep(1);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c,
                       "IN_CREATE names from the agent's own inotify instance, read by the outsider it was handed to");
}

static const struct atk A = {
    "workspace_inotify_out",
    "the agent's inotify instance on its workspace handed to an outsider; file names carry the canary",
    ATK_NO_RECV,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
