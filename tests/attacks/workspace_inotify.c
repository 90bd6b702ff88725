// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_inotify - names of files the agent creates in its workspace, seen through an
 * inotify watch an outsider placed on the workspace before the launch. inotify_add_watch needs
 * read access only when the watch is added: uid 65534 watches WS (0755 before `mncctl run`
 * closes it to root:agent 0770) for IN_CREATE | IN_MOVED_TO, and the watch outlives the
 * chmod. The agent creates WS/<canary>; the event carries the name (up to 255 bytes per file,
 * at file-creation rate). The watcher holds an inotify fd ("anon_inode:inotify"), no fd on a
 * workspace file, so mncd's sweep (fdscan's host pass: fd links and maps by path) never sees it.
 * Verifier: the watcher hands every event name to the orchestrator over a pipe.
 * Would block it: the sweep judging inotify marks of outside processes on workspace inodes
 * (/proc/PID/fdinfo/N of every inotify fd lists "inotify wd:.. ino:.. sdev:..") like held
 * files; or the launcher giving the agent a workspace nobody could have reached before. */
#include <fcntl.h>
#include <grp.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk_variants.h"

static void watcher(const char *ws, int out, int ready)
{
    atkv_keeper_nobody();
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, ws, IN_CREATE | IN_MOVED_TO) < 0)
        _exit(1);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    close(ready);
    char buf[1 << 16] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r <= 0)
            _exit(0);
        for (char *p = buf; p < buf + r;) {
            struct inotify_event *e = (struct inotify_event *)p;
            if (e->len > 0) {
                size_t l = strnlen(e->name, e->len);
                if (write(out, e->name, l) != (ssize_t)l || write(out, "\n", 1) != 1)
                    _exit(1);
            }
            p += sizeof(*e) + e->len;
        }
    }
}

static int prepare(struct atk_ctx *c) { return atkv_watcher_start(c, watcher, c->ws); }

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/%s", atk_arg(c, "ws"), c->secret);
    int fd = (int)atk_try(c, "create ws/<canary>", open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd >= 0)
        close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (c->slot[0] <= 0)
        return;
    usleep(100 * 1000);
    static char names[1 << 16];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(names) && (r = read(c->fdslot[0], names + n, sizeof(names) - n)) > 0)
        n += (size_t)r;
    if (atk_buf_has(names, n, c->canary))
        atk_evidence(c, "uid 65534's inotify watch on the workspace received the canary as a file name");
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    if (c->fdslot[0] > 0)
        close(c->fdslot[0]);
}

static const struct atk A = {"workspace_inotify",
                             "file names in the workspace, seen by an inotify watch placed before the launch",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
