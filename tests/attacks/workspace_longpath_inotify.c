// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_longpath_inotify - workspace_inotify_out under a path longer than a page. After the
 * launch and before its recv the agent (untainted) makes WS/ + 24 nested directories of 200
 * characters (relative mkdirat/openat), creates an inotify instance watching the deepest one
 * for IN_CREATE (through /proc/self/fd/N of a directory fd: inotify_add_watch takes a path, and
 * the magic link is short), hands the instance to an outsider (uid 65534, DIR/wn.sock) and
 * closes its copy. mncd's host scan finds an outsider's inotify/fanotify marks on workspace
 * inodes by opening each mark's file handle and comparing readlink() of it with the workspace
 * paths (fdscan.c mark_in_workspace); for a directory deeper than a page readlink() fails
 * (ENAMETOOLONG) and the mark is not counted. After the taint the agent creates a file named
 * after the canary in that directory; the IN_CREATE event carries the name to the outsider
 * (255 bytes per file, at file-creation rate).
 * Verifier: the outsider reads its instance after the agent exited and hands the events over.
 * What would block it: deciding "inside a workspace" by ancestry of the inode (walk up with
 * "..", or compare with the workspace's (dev, ino) chain) rather than by the text of a path,
 * and failing closed on a mark whose place cannot be named. */
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

#define DEPTH 24

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int in = atkv_keeper_take_asked(path, cmd, ans);
    if (fcntl(in, F_SETFL, O_NONBLOCK) < 0)
        _exit(1);
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t r = read(in, buf, sizeof(buf));
    for (ssize_t off = 0; r > 0 && off < r;) {
        struct inotify_event *e = (struct inotify_event *)(buf + off);
        if (e->len && write(ans, e->name, strnlen(e->name, e->len)) < 0)
            _exit(1);
        off += (ssize_t)sizeof(*e) + e->len;
    }
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/wn.sock", c->dir);
    atk_set(c, "wn", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the fd");
}

static int agent(struct atk_ctx *c)
{
    int d = (int)atk_try(c, "make WS/<24 x 200>/", atkv_deep_dir(c, DEPTH, 1));
    if (d < 0)
        return 0;
    int in = (int)atk_try(c, "inotify_init1", inotify_init1(IN_CLOEXEC));
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", d);
    if (in < 0 || atk_try(c, "inotify_add_watch(deep dir, IN_CREATE)", inotify_add_watch(in, p, IN_CREATE)) < 0)
        return 0;
    close(d);
    int s = (int)atk_try(c, "connect the outsider (untainted)", atk_unix(SOCK_STREAM, atk_arg(c, "wn")));
    if (s < 0)
        return 0;
    if (atk_try(c, "pass the inotify fd out", atk_send_fds(s, 'I', &in, 1)) < 0)
        return 0;
    char x;
    atk_try(c, "outsider's ack", read(s, &x, 1) == 1 ? 0 : -1);
    close(in);
    close(s);
    atk_recv(c); /* tainted now */
    d = (int)atk_try(c, "reopen the deep dir", atkv_deep_dir(c, DEPTH, 0));
    if (d < 0)
        return 0;
    int f = (int)atk_try(c, "create <deep>/<canary>", openat(d, c->secret, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    if (f >= 0)
        close(f);
    close(d);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(
        c, "the outsider read the canary as a file name from its inotify watch on a long-path workspace dir");
}

static void cleanup(struct atk_ctx *c) { atkv_deep_cleanup(c, DEPTH); }

static const struct atk A = {"workspace_longpath_inotify",
                             "an inotify watch on a long-path workspace dir handed out (mark readlink ENAMETOOLONG)",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
